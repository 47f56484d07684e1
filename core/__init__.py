"""The floor every layer shares: the trace and history formats (core/trace/), the
observable property catalogue (core/properties.py) and progress reporting
(core/progress.py).  Imports nothing of groupcheck but spec data."""
