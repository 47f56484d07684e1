"""JGroups 2.12 as a target: the adapter (adapter.py), its scenarios
(scenarios.py) and the Java driver (HistoryDriver.java); docs/jgroups.md."""
