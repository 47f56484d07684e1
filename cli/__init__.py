"""The ``groupcheck`` command."""
