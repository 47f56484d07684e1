"""The reference implementation: sans-I/O protocol layers, wire codec, node
stack, deterministic simulator and asyncio UDP runtime.  Never imports
groupcheck.model (the implementation is checked against the model)."""
