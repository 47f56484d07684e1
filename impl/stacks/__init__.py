"""One module per protocol: the stack it is built of, the bytes its
messages are on the wire, and its ``DESCRIPTOR`` (what the
trace writer, the cluster and the history projection need to know of it,
impl/protocols.py).  The layers (impl/<protocol>.py) hold
only layer logic; the simulator (impl/sim.py and impl/sim_<protocol>.py)
and the UDP runtime (impl/runtime.py) run the stacks built here, unchanged.

| protocol | builder | codec type codes |
| --- | --- | --- |
| sequencer | ``sequencer.sequencer_stack`` | 1-2 (base codec) |
| flush | ``flush.flush_stack`` (``FlushStack``) | 20-25 |
| sequencerflush | ``sequencerflush.sequencer_flush_stack`` | FLUSH's and SEQUENCER's |
| stable | ``stable.stable_stack`` | 10-11 |
| raincore | ``raincore.raincore_layer`` | 30-31 |
"""

# every protocol's wire types registered with the codec as soon as any stack is built
from . import flush, raincore, sequencer, sequencerflush, stable  # noqa: E402,F401
