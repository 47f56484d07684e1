"""Replaying a trace through the model: the engine (engine.py), the protocol
registry (registry.py), the entry points that find a trace's protocol
(conform.py), the lock-step harness (lockstep.py) and one binding per
protocol (sequencer.py, flush.py, ...)."""
