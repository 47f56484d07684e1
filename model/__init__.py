"""Executable Python models mirroring the TLA+ specs, and the explorer."""
