"""The asyncio UDP runtime: the same sans-I/O stacks the simulator runs, on
real sockets (docs/impl.md, "The real cluster").

Theory of operation
-------------------
One OS process per node.  ``Node`` owns a stack (``sequencer_stack`` of
impl/stacks/sequencer.py or ``sequencer_flush_stack`` of impl/stacks/sequencerflush.py, unchanged) and a
UDP socket bound to 127.0.0.1 only.  It turns

* a datagram into ``Receive(src, frame)`` (after authentication),
* a timer the stack set into ``TimerFired`` (``loop.call_at``),
* a command of the cluster runner into ``AppSend`` / ``ViewChange`` /
  ``Suspect`` (the runner is the membership oracle until the Raincore ring
  is; docs/impl.md),

and is the UDP network policy of the effect engine (impl/engine.py), which
performs the stack's effects: ``Send``/``Multicast`` become ``sendto`` (a
multicast goes to every node, itself included, as in the simulator), a
timer armed in the engine's table is a loop timer that hands its token
back when due, ``Deliver`` is counted and ``Trace`` is written to the
node's own format-2 file with a vector clock (core/trace/writer.py
``NodeTraceWriter``).  Real time arrives as ``now``:
seconds since the run's start, which the runner hands every node, so the
nodes' clocks are comparable.

With ``--faults`` (the cluster's network items of the fault grammar) the
policy is ``FaultyNetwork`` around the node: the simulator's draws
(impl/faults.py ``fates``) on the real datagrams, seeded from the run's
seed and the node id.

Wire: every datagram is sealed by impl/auth.py (HMAC-SHA256, sender,
incarnation, sequence window) around ``kind:u8 vclen:u16 vc body``:
``kind`` 0 is a stack frame (``body`` the codec frame), 2 a bundle of them
(``body`` a codec BUNDLE, impl/codec.py), 1 a runner command or a node
report (``body`` JSON).  ``vc`` is the sender's vector clock as
compact JSON, piggybacked so the receiver's trace records happen after the
sender's (docs/trace-format.md, "Per-node files").  Anything that fails
authentication or framing is dropped and counted by reason; nothing a
datagram holds can stop the node.

The bundler: a frame the stack sends is not sent at once but queued for
its destination; the queue goes out as one datagram (a BUNDLE of its frames,
or the frame alone) when the next frame would take it past the MTU
(``Config.mtu``: the frames' bytes, BUNDLE_RESERVE of it left for the
envelope, vector clock and tag), and every queue goes out at the end of the
loop's turn (``_flush``, scheduled with ``call_soon`` by the first frame or
record of the turn).  A turn that reads a datagram reads on, up to
READ_TURN datagrams, until the socket would block, so the frames their steps
send share datagrams: the delay a frame waits is one turn of the loop,
bounded by READ_TURN steps.  A datagram carries the vector clock of the
moment it leaves, which counts every record of the steps before it.  A
node's frames to itself skip the socket and the seal: they are taken, in
order, at the next turn.

Order: the turn's trace records are written (each ticking the node's clock)
before its datagrams leave, so a datagram's clock always counts the record
of the step that sent it.  The records of a turn go out in one write
(``StepWriter``), before its first datagram: a node killed with SIGKILL
leaves each step whole or absent, never half a spec action, and no record is
lost whose step sent anything (the runner still cuts a partial last line,
should one appear: that step never finished, and no datagram of it left).
A node stopping, leaving or freezing sends what it has queued first, as it
would have sent it unbundled.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from groupcheck.core.trace import writer as tracefile
from groupcheck.impl import auth, codec, protocols

from .engine import EffectEngine
from .faults import NETWORK, fates, parse_faults
from .events import AppSend, Deliver, Receive, TimerFired, View, ViewChange
from .ringtransport import Suspected

HOST = "127.0.0.1"
RUNNER = 0                       # the runner's sender id on the wire
STACK, CONTROL, BUNDLE = 0, 1, 2
_HEAD = struct.Struct(">BH")
REPORT_EVERY = 0.1               # seconds between a node's status reports
BACKPRESSURE_POLL = 0.001        # seconds a blocked sender waits before it looks again
WINDOW = 256                     # frames in flight to one destination (the credits; impl/reliable.py)
ACK_EVERY = 16                   # frames per cumulative Ack on the real network (impl/reliable.py)
MAX_BACKLOG = 256                # frames held or queued before the sender waits: bounds its latency
SOCKET_BUFFER = 4 << 20          # bytes asked for the socket buffers (the kernel may cap it)
SHUNNED = 5                      # exit status of a node its ring has suspected (impl/ringtransport.py)
LEAVING_LIMIT = 5.0              # seconds a suspected node may spend settling its own frames before it exits
DRAIN_LIMIT = 4096               # datagrams read before a timer acts (a full receive buffer of small frames)
DRAIN_LATE = 0.1                 # seconds overdue: a Transport Manager timer this late drains first (a pause)
DRAIN_BUDGET = 0.05              # seconds a drain may take: under a steady inflow the socket is never empty
MTU = 1400                       # bytes of frames a datagram may carry (loopback; Config.mtu)
BUNDLE_RESERVE = 128             # of them, left for the envelope, the vector clock and the tag
SEND_TURN = 16                   # multicasts a sender behind its pace (unpaced) makes in one turn
READ_TURN = 64                   # datagrams read in one turn of the loop before the bundles go out


_VC = json.JSONEncoder(separators=(",", ":"), sort_keys=True)     # made once: json.dumps makes one a call


def frame(kind: int, vc: Optional[dict], body: bytes) -> bytes:
    v = _VC.encode(vc or {}).encode()
    return _HEAD.pack(kind, len(v)) + v + body


def unframe(data: bytes) -> tuple[int, dict, bytes]:
    """(kind, vc, body); ValueError on anything malformed."""
    if len(data) < _HEAD.size:
        raise ValueError("short frame")
    kind, n = _HEAD.unpack_from(data)
    if kind not in (STACK, CONTROL, BUNDLE) or len(data) < _HEAD.size + n:
        raise ValueError("bad frame head")
    vc = json.loads(data[_HEAD.size:_HEAD.size + n])
    if not isinstance(vc, dict) or not all(isinstance(k, str) and type(x) is int and x >= 0
                                           for k, x in vc.items()):
        raise ValueError("bad vector clock")
    return kind, vc, data[_HEAD.size + n:]


def build_stack(protocol: str, nid: int, members: tuple[int, ...], lossy: bool = False, universe=()):
    """The node's stack for ``protocol``: its descriptor's (impl/protocols.py
    ``ClusterRun.stack``), the stack the simulator runs with its defaults.
    ``universe``: every node that may ever be a member, when nodes may join
    (a ``nid`` outside ``members`` is a joiner)."""
    run = getattr(protocols.find(protocol), "cluster", None)
    if run is None:
        raise ValueError(f"no cluster stack for protocol {protocol!r} ({', '.join(protocols.cluster_protocols())})")
    return run.stack(nid, tuple(members), lossy, **({"universe": tuple(universe)} if universe else {}))


def ring_safe(stack, lossy: bool = False) -> bool:
    """Whether a node of FLUSH over the ring may crash now within
    spec/RaincoreFlush's abstraction (its CanCrash): not eating, no ring
    message of its own waiting for an ack (a token in transit), no join
    request queued (the abstraction has no Starving time-out to ask again),
    and no VIEW of FLUSH unacknowledged (FLUSH's I9: a VIEW is never lost).
    Within the abstraction also the Transport Manager's handshakes done
    (impl/ringtransport.py): no frame held for its sender's decision (the
    sender would count it delivered), none of its own undecided or untaken
    (its receiver would wait for a decision in vain and take itself for
    suspected).  Over the lossy ring (``lossy``: the spec's LossyRing) only
    FLUSH's I9: the ring may be anywhere, the holder may die with its token,
    a handshake may be cut in the middle (a token confirmed and never taken
    is lost, which the ring repairs; a receiver left without a decision
    leaves as suspected: the spec's FalseSuspicion and a crash)."""
    from .flush import ViewMsg
    ring, tm = stack.ring, stack.ring_part.layer("tm")
    rel = stack.fstack.layer("reliable")
    views = any(isinstance(b, ViewMsg) for u in (*rel.unacked.values(), *rel.pending.values()) for b in
                (u.values() if isinstance(u, dict) else u))
    if lossy:
        return ring.status == "Up" and not views
    return (ring.status == "Up" and ring.tokenState != "Eating" and not tm.pending and not tm.held
            and not ring.newNodes and not views)


def idle(stack) -> bool:
    """Nothing of this node is in flight: no frame unacknowledged, no
    forward-table entry, no flush running, no send held: each layer that
    can hold something says so itself (``idle()``).  FLUSH over the ring:
    its FLUSH stack idle and its ring in Agreement (the token goes round for
    ever: the ring is never idle otherwise)."""
    if hasattr(stack, "fstack"):
        return idle(stack.fstack) and stack.ring.viewState == "Agreement"
    return all(layer.idle() for layer in stack.layers if hasattr(layer, "idle"))


def flush_view(stack) -> Optional[list]:
    """``[vid, members]`` of the view the node's membership layer installed
    (the layer holding both: FLUSH's, over the ring too), None for a stack
    whose views come from the runner: the chaos runner reads it so that a
    kill never takes the last live member of the latest view (the specs'
    CanCrash), which a joiner still waiting to be admitted cannot replace."""
    for layer in getattr(stack, "fstack", stack).layers:
        if hasattr(layer, "vid") and hasattr(layer, "members"):
            return [layer.vid, list(layer.members)]
    return None


@dataclass
class Config:
    """What the runner tells a node (a JSON file, ``python -m
    groupcheck.impl.runtime CONFIG``)."""
    nid: int
    protocol: str
    members: list                # the first view, coordinator first
    ports: dict                  # str(nid) -> UDP port; "0" is the runner
    messages: int                # multicasts this node makes
    rate: float                  # multicasts per second
    trace: str                   # this node's trace file
    header: dict                 # the run's format-2 header
    start: float                 # the run's start (time.time())
    key_file: str
    incarnation: int = 1
    extra: dict = field(default_factory=dict)
    universe: list = field(default_factory=list)   # every node that may join too (nid outside members: a joiner)
    faults: str = ""             # network faults of the fault grammar (loss, dup, reorder, truncate)
    seed: int = 0                # the run's seed: this node's faults draw from (seed, nid)
    mtu: int = MTU               # bytes of frames per datagram (the bundler)
    backlog: int = MAX_BACKLOG   # frames held or queued before the sender waits (flow control)


class FaultyNetwork:
    """The fault plan's network faults on a node's real datagrams: a network
    policy (impl/engine.py) around the node's UDP one.  On the sending side,
    each stack datagram meets impl/faults.py's ``fates``, the simulator's own
    draws: lost, sent twice, held back up to ``reorder`` (a loop timer, so
    later datagrams overtake it) or cut short before it is sealed, so the
    receiver authenticates it and its codec counts and drops it.  The real
    network's own latency stands for the plan's base ``delay`` (0 here).
    The runner's commands and the nodes' reports are not touched."""

    def __init__(self, node: "Node", plan, rng) -> None:
        self.node, self.plan, self.rng = node, plan, rng
        self.counts = {"net.lost": 0, "net.duplicated": 0, "net.truncated": 0, "net.delayed": 0}

    @property
    def now(self) -> float:
        return self.node.now

    def schedule(self, at: float, nid: int, name: str):
        return self.node.schedule(at, nid, name)

    def send(self, src: int, dest: int, msg) -> None:
        copies = fates(self.rng, self.plan, msg)
        self.counts["net.lost"] += not copies
        self.counts["net.duplicated"] += max(0, len(copies) - 1)
        for delay, data, cut in copies:
            self.counts["net.truncated"] += cut
            if delay > 0:
                self.counts["net.delayed"] += 1
                self.node.loop.call_later(delay, self.node.send, src, dest, data)
            else:
                self.node.send(src, dest, data)

    def multicast(self, src: int, msg) -> None:
        for dest in self.node.peers:
            self.send(src, dest, msg)


class StepWriter:
    """The trace file after its header, as the writer's file object: the
    records of the steps of one turn of the loop are gathered and written
    with one ``os.write`` before the turn's first datagram leaves, so a node
    killed with SIGKILL leaves each step's records whole or absent (a step's
    records are one spec action: SEQUENCER over FLUSH logs a coordinator's
    Send and the FLUSH Multicast of its DATA as two records)."""

    def __init__(self, path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        self.parts: list[str] = []
        self.closed = False

    def write(self, text: str) -> None:
        self.parts.append(text)

    def commit(self) -> None:
        if not self.parts:
            return
        data = memoryview("".join(self.parts).encode())
        self.parts.clear()
        while data:
            data = data[os.write(self.fd, data):]

    flush = commit

    def close(self) -> None:
        if not self.closed:
            self.commit()
            os.close(self.fd)
            self.closed = True


class Node(asyncio.DatagramProtocol):
    def __init__(self, cfg: Config, key: bytes) -> None:
        self.cfg = cfg
        self.nid = cfg.nid
        self.members = tuple(cfg.members)
        self.ports = {int(k): int(v) for k, v in cfg.ports.items()}
        # the header says which ring the run's spec has (LossyRing: Raincore's own)
        self.lossy = bool(cfg.header.get("constants", {}).get("LossyRing", False))
        self.stack = build_stack(cfg.protocol, self.nid, self.members, self.lossy, cfg.universe)
        rel = getattr(self.stack, "fstack", self.stack).layer("reliable")
        if not rel.nakack:
            # a datagram costs two system calls here: one cumulative Ack per
            # ACK_EVERY frames (or ack_delay after the first), not one per frame;
            # the simulator keeps one per frame, as its campaigns were measured
            rel.ack_every = min(ACK_EVERY, rel.window)
            rel.max_backlog = cfg.backlog
            rel.window = max(rel.window, WINDOW)
        self.sealer = auth.Sealer(key, self.nid, cfg.incarnation)
        self.verifier = auth.Verifier(key)
        self.writer = tracefile.NodeTraceWriter(cfg.trace, cfg.header, self.nid)
        self.writer._f.close()                                # the header is on disk
        self.writer._f = self.out = StepWriter(cfg.trace)      # then one write per step: kill -9 safe
        self.net = self                                        # the UDP policy, or the faults' around it
        if cfg.faults:
            self.net = FaultyNetwork(self, parse_faults(cfg.faults, NETWORK, "the cluster", delay=(0.0, 0.0)),
                                     random.Random(f"{cfg.seed}:{self.nid}"))
        self.effects = EffectEngine({self.nid: self.stack}, self.net, self._record, self._deliver)
        self.timers: dict[str, asyncio.TimerHandle] = {}      # the loop's timer for each armed name
        self.due: dict[str, float] = {}                        # when each armed timer was due (its lateness)
        self._tokens = 0
        self.delivered = 0
        self.sent = 0
        self.backpressured = 0           # polls a sender spent waiting for credit
        self.after_leaving = 0           # datagrams dropped: due after the node left (SHUNNED)
        self.dropped: dict[str, int] = {}
        self.peers = [d for d in self.ports if d != RUNNER]     # a multicast's destinations, itself included
        self.room = max(1, cfg.mtu - BUNDLE_RESERVE)           # bytes of frames a bundle may hold
        self.bundles: dict[int, list] = {}                      # destination -> the frames queued for it
        self.bundled: dict[int, int] = {}                       # ... and their bytes
        self.flushing = False                                   # a _flush is scheduled for this turn
        self.reading = False                                    # a turn is reading the socket on
        self.datagrams = 0                                      # datagrams of stack frames sent
        self.frames = 0                                         # ... and the frames they carried
        self.transport: Optional[asyncio.DatagramTransport] = None
        self.sock: Optional[socket.socket] = None             # the endpoint's socket, read directly by _drain
        self.loop = asyncio.get_event_loop()
        self.done = asyncio.Event()
        self.workload: Optional[asyncio.Task] = None
        self.started = False
        self.freezing = self.frozen = False     # FLUSH over the ring: a kill waits for a safe point
        self.freeze_eating = False              # ... and, asked so, for the node to hold the token
        self.refused = False                    # ... or refused: it is alone in its FLUSH view
        self.shunned = False                    # the ring suspected this node: it has left

    # -- time ----------------------------------------------------------------
    @property
    def now(self) -> float:
        return max(0.0, time.time() - self.cfg.start)

    # -- I/O -----------------------------------------------------------------
    def connection_made(self, transport) -> None:
        self.transport = transport
        # A burst to the coordinator (every FORWARD, and its own DATA) overflows the default
        # receive buffer; a dropped frame then waits for the reliable layer's 50 ms retransmit.
        sock = transport.get_extra_info("socket")
        if sock is not None:
            for opt in (socket.SO_RCVBUF, socket.SO_SNDBUF):
                try:
                    sock.setsockopt(socket.SOL_SOCKET, opt, SOCKET_BUFFER)
                except OSError:
                    pass

    def error_received(self, exc) -> None:        # ICMP port unreachable: a peer is gone
        self.dropped["icmp"] = self.dropped.get("icmp", 0) + 1

    def datagram_received(self, data: bytes, addr) -> None:
        self._take(data)
        if not self.reading:
            # read on until the socket would block (READ_TURN at most): the
            # frames the steps send meanwhile share datagrams at the turn's end
            self.reading = True
            try:
                self._read(READ_TURN - 1)
            finally:
                self.reading = False

    def _read(self, most: int, until: Optional[float] = None) -> None:
        """Take up to ``most`` datagrams already in the socket, until it
        would block (or ``until``, time.monotonic(), has passed)."""
        if self.sock is None:
            return
        for _ in range(most):
            if self.done.is_set() or self.frozen or until is not None and time.monotonic() > until:
                return
            try:
                data, _addr = self.sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:                     # an ICMP error queued on the socket
                self.error_received(exc)
                continue
            self._take(data)

    def _take(self, data: bytes) -> None:
        if self.frozen:
            return                                # the node has crashed in all but name: the runner kills it
        opened = self.verifier.open(data)
        if opened is None:
            return                                # counted by reason in verifier.counts
        src, payload = opened
        try:
            kind, vc, body = unframe(payload)
        except (ValueError, UnicodeDecodeError):
            self.dropped["frame"] = self.dropped.get("frame", 0) + 1
            return
        if kind == CONTROL:
            if src != RUNNER:
                self.dropped["control_from_node"] = self.dropped.get("control_from_node", 0) + 1
                return
            self._command(vc, body)
        elif src in self.ports and src != RUNNER:   # the runner sends commands, never stack frames
            if kind == BUNDLE:
                try:
                    frames = codec.decode_bundle(body)
                except codec.DecodeError:
                    self.dropped["bundle"] = self.dropped.get("bundle", 0) + 1
                    return
            else:
                frames = (body,)
            self._frames(src, vc, frames)
        else:
            self.dropped["unknown_sender"] = self.dropped.get("unknown_sender", 0) + 1

    def _frames(self, src: int, vc: dict, frames) -> None:
        """The stack takes the frames of one datagram from ``src``, in order
        (its clock merged once: a merge again would change nothing)."""
        self.writer.on_receive(vc)
        for body in frames:
            if self.frozen:
                return
            self._step(Receive(src, body))

    def _closed(self) -> bool:
        """The node has left (SHUNNED) or its socket is closing: what would
        leave now is lost with the node, as a crashed node's datagrams in
        flight are (a copy the fault shim delayed past the node's leaving)."""
        closing = getattr(self.transport, "is_closing", None)     # a stand-in transport (tests) has none
        if self.shunned and self.done.is_set() or closing is not None and closing():
            self.after_leaving += 1
            return True
        return False

    def _sendto(self, dest: int, kind: int, body: bytes) -> None:
        """One datagram to ``dest`` now (a report to the runner; a bundle)."""
        port = self.ports.get(dest)
        if port is None or self.transport is None or self._closed():
            return
        self.out.commit()                          # the records it counts, on disk before it leaves
        self.transport.sendto(self.sealer.seal(frame(kind, self.writer.on_send(), body)), (HOST, port))

    def _queue(self, dest: int, body: bytes) -> None:
        """A frame for ``dest``: into its bundle (the bundler above)."""
        if dest not in self.ports or self.transport is None or self._closed():
            return
        q = self.bundles.get(dest)
        if not body:
            # an empty frame (a truncation fault's) cannot be bundled: alone, after what is queued
            if q:
                self._flush_one(dest)
            self.bundles[dest], self.bundled[dest] = [body], 0
            self._flush_one(dest)
            return
        if q is None:
            q = self.bundles[dest] = []
            self.bundled[dest] = 0
        elif self.bundled[dest] + 2 + len(body) > self.room:
            self._flush_one(dest)
            q = self.bundles[dest] = []
            self.bundled[dest] = 0
        q.append(body)
        self.bundled[dest] += 2 + len(body)
        self._later()

    def _later(self) -> None:
        if not self.flushing:
            self.flushing = True
            self.loop.call_soon(self._flush)

    def _flush(self) -> None:
        """The turn's end: its records on disk, then every bundle out."""
        self.flushing = False
        self.out.commit()
        for dest in list(self.bundles):
            self._flush_one(dest)

    def _flush_one(self, dest: int) -> None:
        frames = self.bundles.pop(dest)
        self.bundled.pop(dest, None)
        if not frames or self._closed():
            return
        self.out.commit()
        self.datagrams += 1
        self.frames += len(frames)
        if dest == self.nid:
            # to itself (a multicast's own copy, a coordinator's FORWARD to
            # itself): taken at the next turn, in order, without the socket
            self.loop.call_soon(self._frames, self.nid, self.writer.on_send(), frames)
            return
        port = self.ports.get(dest)
        if port is None:
            return
        kind, body = (STACK, frames[0]) if len(frames) == 1 else (BUNDLE, codec.encode_bundle(frames))
        self.transport.sendto(self.sealer.seal(frame(kind, self.writer.on_send(), body)), (HOST, port))

    def stats(self) -> dict:
        st = self.stack.stats if hasattr(self.stack, "stats") else {}
        if hasattr(self.stack, "fstack"):
            st = {**self.stack.fstack.stats, **self.stack.ring_part.stats}
        if self.net is not self:
            st = {**st, **{k: v for k, v in self.net.counts.items() if v}}
        st = {**st, "runtime.datagrams": self.datagrams, "runtime.frames": self.frames}
        return {**st, "runtime.backpressured": self.backpressured} if self.backpressured else st

    def report(self, what: str, **more) -> None:
        body = json.dumps({"ev": what, "nid": self.nid, "sent": self.sent, "delivered": self.delivered,
                           "idle": self.started and self.sent >= self.cfg.messages and not self.bundles
                                   and idle(self.stack),
                           "frozen": self.frozen, "refused": self.refused, "view": flush_view(self.stack),
                           "records": self.writer.records, **more}).encode()
        self._sendto(RUNNER, CONTROL, body)

    # -- an event in, its effects out (impl/engine.py) -------------------------
    def _step(self, event) -> None:
        if self.frozen:
            return
        self.effects.handle(self.nid, event)
        if self.out.parts:
            self._later()                          # its records at the turn's end, with its datagrams
        if self.shunned:
            self._left()
            return
        if self.freezing:
            self._try_freeze()

    def send(self, src: int, dest: int, msg) -> None:
        self._queue(dest, msg)

    def multicast(self, src: int, msg) -> None:
        for dest in self.peers:
            self._queue(dest, msg)

    def schedule(self, at: float, nid: int, name: str) -> int:
        old = self.timers.pop(name, None)
        if old:
            old.cancel()                           # re-armed: the earlier one never fires
        self._tokens += 1
        self.due[name] = at
        self.timers[name] = self.loop.call_later(max(0.0, at - self.now), self._fire, name, self._tokens)
        return self._tokens

    def _deliver(self, nid: int, eff) -> None:
        if isinstance(eff, Deliver):
            self.delivered += 1
        elif isinstance(eff, Suspected) and not self.shunned:
            self._shun(eff)

    def _shun(self, eff) -> None:
        """The ring has suspected this node (seed 004's failure detector, made
        final by the Transport Manager): it takes no further step, settles
        its own open Transport Manager frames (``RingStack.leave``: their
        receivers get their decision, within the Transport Manager's give-up
        time, LEAVING_LIMIT at most), then exits with SHUNNED, which the
        runner logs as the spec's LeaveSuspected; it comes back, if ever, as
        a new node (spec/RaincoreFlush's ShunSuspected)."""
        self.shunned = True
        getattr(self.stack, "leave", lambda: None)()
        why = (f"suspected by node {eff.by} (its {type(eff.msg).__name__} not taken)" if eff.msg is not None
               else "no token within the ring's quiet time-out (left out of the ring unknowingly)")
        print(f"node {self.nid}: {why}: leaving", file=sys.stderr, flush=True)
        self.loop.call_later(LEAVING_LIMIT, self.done.set)
        self._left()

    def _left(self) -> None:
        """A leaving node whose own frames are settled: it exits now."""
        if getattr(self.stack, "settled", True) and not self.done.is_set():
            self._cancel_timers()
            self._flush()                          # what its last steps sent leaves, as it would unbundled
            self.done.set()

    def _try_freeze(self) -> None:
        """Freeze at the first point the spec lets this node crash, or refuse
        if it is the only member of its FLUSH view: the specs' CanCrash keeps
        one live member of the latest view, and the runner's picture of the
        views lags (a coordinator that has just reported both others under
        load), so the node, which knows its view, says no and the kill is
        skipped."""
        view = flush_view(self.stack)
        if view is not None and list(view[1]) == [self.nid]:
            self.freezing, self.refused = False, True
            self.report("refused")
        elif self._may_freeze():
            self._freeze()

    def _may_freeze(self) -> bool:
        return ring_safe(self.stack, self.lossy) and (not self.freeze_eating or self.stack.ring.tokenState == "Eating")

    def _freeze(self) -> None:
        """Stop taking any step (the crash point the runner asked for), say
        so, and wait for the runner's SIGKILL."""
        self._flush()                              # what its steps sent leaves, as it would unbundled
        self.frozen = True
        self._cancel_timers()
        self.report("frozen")

    def _fire(self, name: str, token: int) -> None:
        self.timers.pop(name, None)
        # only a Transport Manager timer acts on what the socket may hold unread (an
        # ack: it would give up on a live receiver), and only after a pause: under a
        # steady overload a drain at every timer kept the loop reading for seconds,
        # so no other timer ran (the ring's Eating one: the token stuck, the node
        # never at a point where it may crash)
        if name.startswith("tm/") and self.now - self.due.pop(name, self.now) >= DRAIN_LATE:
            self._drain()
        if self.effects.expire(self.nid, name, token):     # not cancelled (or re-armed) since
            self._step(TimerFired(name))

    def _drain(self) -> None:
        """Read what has already arrived before a timer acts.  asyncio reads
        one datagram per turn of its loop and runs the timers due in the
        same turn, so after a pause (SIGSTOP, a long scheduling delay),
        with every timer overdue, the Transport Manager's retry would give
        up on frames whose acks sit unread in the socket buffer, and abort
        them: a live receiver made to leave.  A datagram that re-arms or
        cancels the timer makes it moot, as if it had come in time.  It
        stops after DRAIN_BUDGET seconds: an overloaded coordinator's socket
        is never empty, and a drain of DRAIN_LIMIT datagrams, a step each,
        took seconds, the next Transport Manager timer was late again, and
        the Eating timer never ran (the token stuck at the node)."""
        self._read(DRAIN_LIMIT, time.monotonic() + DRAIN_BUDGET)

    def _cancel_timers(self) -> None:
        for t in self.timers.values():
            t.cancel()
        self.timers.clear()
        self.effects.armed(self.nid).clear()

    def _record(self, r: dict) -> None:
        # the layers trace deltas already (build_stack): the record is written as it is
        self.writer.record(r["name"], tracefile._params(r), r.get("msg"), r.get("state"), round(r["clock"], 6))

    # -- the runner's commands --------------------------------------------------
    def _command(self, vc: dict, body: bytes) -> None:
        try:
            cmd = json.loads(body)
            what = cmd["cmd"]
        except (ValueError, KeyError, TypeError):
            self.dropped["command"] = self.dropped.get("command", 0) + 1
            return
        if what == "start" and not self.started:
            self.started = True
            if hasattr(self.stack, "fstack"):        # the ring starts: its founder (last node) eats first
                from .raincore import Join, Start
                # a node outside the first ring asks in (its 911 to the ring)
                self._step(Start(token=self.nid == self.members[-1]) if self.nid in self.members else Join())
            self.workload = self.loop.create_task(self._workload())
        elif what == "freeze" and hasattr(self.stack, "fstack"):
            self.freezing, self.refused = True, False
            self.freeze_eating = cmd.get("when") == "eating"
            self._try_freeze()
        elif what == "view":                       # SEQUENCER: the oracle's next view
            self.writer.on_receive(vc)
            self._step(ViewChange(View(int(cmd["vid"]), tuple(int(m) for m in cmd["members"]))))
        elif what == "suspect":                    # FLUSH: the failure detector's verdict
            from .flush import Suspect
            self.writer.on_receive(vc)
            self._step(Suspect(int(cmd["member"])))
        elif what == "stop":
            self.done.set()
        elif what == "status":
            self.report("status")

    def _blocked(self) -> bool:
        """Backpressure from the stack (over the ring: its FLUSH stack's)."""
        return getattr(getattr(self.stack, "fstack", self.stack), "blocked", False)

    async def _workload(self) -> None:
        gap = 1.0 / self.cfg.rate if self.cfg.rate > 0 else 0.0
        t0 = self.loop.time()
        for k in range(self.cfg.messages):
            while self._blocked() and not self.frozen:
                self.backpressured += 1          # flow control: wait for credit, as a JGroups sender blocks
                await asyncio.sleep(BACKPRESSURE_POLL)
            if self.frozen or self.shunned:
                return
            self._step(AppSend(f"{self.nid}.{k + 1}".encode()))
            self.sent += 1
            delay = t0 + (k + 1) * gap - self.loop.time()
            if delay > 0 or (k + 1) % SEND_TURN == 0:
                await asyncio.sleep(max(0.0, delay))    # behind (unpaced): SEND_TURN sends share a turn's datagrams

    async def _reports(self) -> None:
        while not self.done.is_set():
            self.report("status")
            await asyncio.sleep(REPORT_EVERY)

    async def serve(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((HOST, self.ports[self.nid]))
        sock.setblocking(False)
        self.sock = sock
        await self.loop.create_datagram_endpoint(lambda: self, sock=sock)
        self.report("ready")
        reporter = self.loop.create_task(self._reports())
        await self.done.wait()
        reporter.cancel()
        if self.workload is not None and not self.workload.done():
            # a node that leaves mid-workload (SHUNNED): its sender ends with it,
            # not as a task destroyed pending (which fail_stop would count)
            self.workload.cancel()
            await asyncio.gather(self.workload, return_exceptions=True)
        self._flush()
        self.report("stopped", auth=dict(self.verifier.counts), dropped=self.dropped, stats=self.stats())
        self._cancel_timers()
        self.writer.close()
        if self.transport:
            self.transport.close()


def offline_node(workdir, key: bytes, protocol: str = "sequencer", nid: int = 2, constants: Optional[dict] = None,
                 backlog: int = MAX_BACKLOG) -> Node:
    """A node of a 3-member cluster (SEQUENCER unless ``protocol``), as member
    ``nid``, whose transport sends nothing, for harnesses that feed its real
    receive path directly (impl/fuzz.py ``run_live``, the tests):
    authentication, runtime frame, vector clock, then the stack's layers."""
    from pathlib import Path
    kf = Path(workdir) / "offline.key"
    kf.write_bytes(key)
    cfg = Config(nid=nid, protocol=protocol, members=[1, 2, 3], ports={"0": 1, "1": 2, "2": 3, "3": 4},
                 messages=0, rate=1.0, trace=str(Path(workdir) / f"offline-node-{nid}.ndjson"),
                 header=tracefile.header(protocol, [1, 2, 3], constants or {"N": 3, "MaxSeq": 1, "MaxCrashes": 0},
                                         seed=None, faults={}, impl="offline", impl_version="0", run_id="offline"),
                 start=time.time(), key_file=str(kf), backlog=backlog)
    asyncio.set_event_loop(asyncio.new_event_loop())
    node = Node(cfg, key)
    node.transport = type("NoSend", (), {"sendto": lambda self, *a: None})()
    return node


def fail_stop(loop: asyncio.AbstractEventLoop, node) -> list:
    """An error in any callback of ``loop`` stops ``node`` (its ``done``
    set) and is appended to the returned list.  A step that raised left the
    stack half-applied, its effects and records partly lost: going on, as
    asyncio's default handler does after logging, would run a node the
    traces no longer describe.  The node exits with status 4 instead, and
    the runner reports the run as failed (impl/cluster.py)."""
    failed: list = []

    def handler(loop, context) -> None:
        loop.default_exception_handler(context)        # the traceback, in the node's log
        failed.append(context.get("message"))
        node.done.set()
    loop.set_exception_handler(handler)
    return failed


def run_node(config_path: str) -> int:
    with open(config_path, encoding="utf-8") as f:
        cfg = Config(**json.load(f))
    key = auth.load_key(cfg.key_file)
    if key is None:
        print(f"{config_path}: no cluster key", file=sys.stderr)
        return 3
    auth.check_bind(HOST, key)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    node = Node(cfg, key)
    failed = fail_stop(loop, node)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, node.done.set)
    loop.run_until_complete(node.serve())
    loop.close()
    return 4 if failed else SHUNNED if node.shunned else 0


if __name__ == "__main__":
    sys.exit(run_node(sys.argv[1]))
