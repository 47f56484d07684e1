"""``groupcheck audit``: its stages (stages.py), the report (report.py, templates/)
and the sequence diagrams (diagram.py); docs/architecture.md, "The audit"."""
