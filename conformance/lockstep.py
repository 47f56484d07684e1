"""Lock-step conformance: drive a SEQUENCER cluster one event at a time and
check each step against model/sequencer.py (issue 3 item 8; DESIGN §5).

Theory of operation
-------------------
``LockstepCluster`` owns N impl stacks (transport, reliable, sequencer, as
``impl/sim.py`` builds them) and plays the network, the timers and the
membership oracle itself, so that a test (a Hypothesis state machine) picks
every step: an application send, the delivery, loss or duplication of one
chosen in-flight datagram, a timer firing, a crash, or the installation of
the next view at one member.  impl/sim.py has no such hook (its network and
timers are a time-ordered queue), hence this separate driver.

After each step the trace events the stack emitted are replayed against the
model as ``conformance/sequencer.py`` does, on a SET of candidate model states
(the model's channels and the lost set of a Crash are not visible in the
trace): each event must be an enabled model action from some candidate,
leading to a state whose projection on the acting member equals the logged
post-state.  Then the abstraction of the whole implementation (vid, sent,
fwd, recv, delivered of every member) must equal the projection of at least
one candidate, which is stronger than the per-event check: it also covers
members that took no step.  Violations raise ``LockstepError``.

Environment actions are the spec's: ``crash(m)`` is Crash (datagrams in
flight to m are dropped, m's own stay in flight) followed at once by the
oracle's NewView (the last view without the crashed members); each live
member then installs the views in order when the driver says so.
"""

from __future__ import annotations

from typing import Any, Callable

from groupcheck.impl.events import (AppSend, CancelTimer, Deliver, Multicast, Receive, Send,
                                    SetTimer, TimerFired, Trace, View, ViewChange)
from groupcheck.impl.sim import sequencer_stack
from groupcheck.model.sequencer import SequencerModel

from .replay import Engine
from .sequencer import WholeStateBinding, project
from .traces import Trace as TraceRun


class LockstepError(AssertionError):
    """The implementation took a step the model does not allow."""


class LockstepNetwork:
    """What every lock-step driver shares: it is the network (each datagram
    in flight can be delivered, lost or duplicated, in any order; what goes to
    a crashed member is dropped) and the timers (each armed one can fire), and
    after every step the abstraction of the whole implementation must equal
    the projection of some candidate model state.  A driver supplies
    ``abstraction()``, ``_candidates()``, ``_project(s, m)`` and
    ``_model_step(event)`` (which checks one trace event)."""

    def __init__(self, members, stacks: dict) -> None:
        self.members = tuple(members)
        self.stacks = stacks
        self.inflight: list[tuple[int, int, bytes]] = []      # (src, dest, datagram)
        self.timers: dict[int, set[str]] = {m: set() for m in self.members}
        self.crashed: set[int] = set()
        self.deliveries: dict[int, list[tuple[int, int]]] = {m: [] for m in self.members}
        self.events: list[dict] = []       # every trace event, replay's shape

    def live(self) -> list[int]:
        return [m for m in self.members if m not in self.crashed]

    def deliver(self, i: int) -> None:
        src, dest, data = self.inflight.pop(i)
        self._handle(dest, Receive(src, data))

    def drop(self, i: int) -> None:
        self.inflight.pop(i)

    def duplicate(self, i: int) -> None:
        self.inflight.append(self.inflight[i])

    def fire(self, m: int, name: str) -> None:
        self.timers[m].discard(name)
        self._handle(m, TimerFired(name))

    def _stop(self, m: int) -> None:
        """m crashes: it takes no more steps, what is in flight to it is lost."""
        self.crashed.add(m)
        self.timers[m].clear()
        self.inflight = [d for d in self.inflight if d[1] != m]

    def _handle(self, m: int, event) -> None:
        for eff in self.stacks[m].handle(event, 0.0):
            if isinstance(eff, Send):
                self._transmit(m, eff.dest, eff.msg)
            elif isinstance(eff, Multicast):
                for dest in self.live():
                    self._transmit(m, dest, eff.msg)
            elif isinstance(eff, SetTimer):
                self.timers[m].add(eff.name)
            elif isinstance(eff, CancelTimer):
                self.timers[m].discard(eff.name)
            elif isinstance(eff, Deliver):
                self.deliveries[m].append((eff.sender, eff.seqno))
            elif isinstance(eff, Trace):
                r = eff.event.to_record()
                self._model_step({"name": r["name"], "nid": r["nid"], "params": dict(r["args"]),
                                  "msg": r["msg"], "state": r["state"]})
        self.check_abstraction()

    def _transmit(self, src: int, dest: int, data) -> None:
        if dest not in self.crashed:          # the network drops what goes to a crashed member
            self.inflight.append((src, dest, data))

    def check_abstraction(self) -> None:
        impl = self.abstraction()
        cands = self._candidates()
        for s in cands:
            if all(self._project(s, m) == impl[m] for m in self.members):
                return
        s = next(iter(cands))
        bad = {m: (self._project(s, m), impl[m]) for m in self.members if self._project(s, m) != impl[m]}
        raise LockstepError(f"after event {len(self.events) - 1}: no candidate model state "
                            f"(of {len(cands)}) matches the implementation; e.g. "
                            + "; ".join(f"member {m}: model {a} != impl {b}" for m, (a, b) in bad.items()))


class LockstepCluster(LockstepNetwork):
    def __init__(self, n: int = 3, max_seq: int = 2, max_crashes: int = 1,
                 make_stack: Callable[[int, tuple[int, ...]], Any] = sequencer_stack) -> None:
        members = tuple(range(1, n + 1))
        super().__init__(members, {m: make_stack(m, members) for m in members})
        header = {"protocol": "sequencer", "nodes": list(members), "options": {},
                  "constants": {"N": n, "MaxSeq": max_seq, "MaxCrashes": max_crashes}, "run_id": "lockstep"}
        self.engine = Engine(WholeStateBinding(TraceRun("<lockstep>", header, [])), visited=False)
        self.model = self.engine.b.model
        self.views: list[View] = [View(1, self.members)]

    # ------------------------------------------------------------ queries

    def seq(self, m: int):
        return self.stacks[m].layer("sequencer")

    def can_send(self, m: int) -> bool:
        return m not in self.crashed and self.seq(m).sent < self.model.MaxSeq

    def pending_view(self, m: int) -> bool:
        return m not in self.crashed and self.seq(m).vid < len(self.views)

    def abstraction(self) -> dict[int, dict]:
        return {m: self.seq(m).state() for m in self.members}

    def _candidates(self):
        return self.engine.cands

    @property
    def cands(self):
        return self.engine.cands

    @property
    def peak(self) -> int:
        return self.engine.peak

    def _project(self, s, m: int) -> dict:
        return project(s, m)

    # ------------------------------------------------------------ steps

    def app_send(self, m: int) -> None:
        assert self.can_send(m)
        self._handle(m, AppSend(f"m{m}.{self.seq(m).sent + 1}".encode()))

    def crash(self, m: int) -> None:
        assert m not in self.crashed and len(self.crashed) < self.model.MaxCrashes
        self._stop(m)
        self._model_step({"name": "Crash", "nid": m, "params": {}, "msg": None, "state": None})
        last = self.views[-1]
        if any(x in self.crashed for x in last.members):     # the oracle decides at once
            view = View(last.vid + 1, tuple(x for x in last.members if x not in self.crashed))
            self.views.append(view)
            self._model_step({"name": "NewView", "nid": None, "params": {"view": list(view.members)},
                              "msg": None, "state": None})
        self.check_abstraction()

    def install_view(self, m: int) -> None:
        assert self.pending_view(m)
        self._handle(m, ViewChange(self.views[self.seq(m).vid]))

    # ------------------------------------------------------------ plumbing

    def _model_step(self, ev: dict) -> None:
        ev = dict(ev, i=len(self.events))
        self.events.append(ev)
        failed = self.engine.step(ev)            # the one replay engine, on whole-state records
        if failed:
            raise LockstepError(failed[1])

