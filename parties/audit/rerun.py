"""Simulated runs: the coalition's own programs against honest stand-ins.

The ideal-world simulator of the papers gets the coalition's inputs, its randomness tape, the
functionality's outputs and the coalition's programs, and plays the honest parties
(:mod:`protocols.simulator`, "Re-running the coalition's programs"). This module does that
with the audit's runner: every member keeps its real :class:`~parties.party.Party` (program,
inputs — and so, under the trial's :class:`~parties.audit.randomness.ConditionedRandomness`,
its real tape), and every other participant (honest data holders, a dealer, an aggregator) is
replaced by a *stand-in program* that follows the honest party's public message pattern of the
real trial — which messages it receives from members and sends to them, in round order — and
takes each payload it sends from the call's :class:`~protocols.simulator.StandIn`. The stand-in
never sees an honest input; the honest parties' messages to each other are not sent at all
(the coalition does not see them).

:func:`simulated_rows` returns the coalition's view vectors of such runs, in the layout of the
real ones, for :mod:`parties.audit.simulation` to compare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parties.audit.calls import CallRecord, Layout, MessageId, split_run
from parties.audit.randomness import ConditionedRandomness, Runner
from parties.party import Party
from parties.view import View
from protocols.effects import Call, RecvEach, SendEach
from protocols.field import PrimeField
from protocols.simulator import (
    CallView,
    MessageKey,
    PerCallStandIn,
    SimulatorMismatch,
    StandIn,
    is_program_simulator,
)


@dataclass(frozen=True)
class Event:
    """One step of an honest party's public pattern: receive from members, or send to them."""

    kind: str  # "recv" or "send"
    call: Call
    step: str
    peers: tuple[int, ...]
    shapes: Mapping[int, tuple[int, ...]] = field(default_factory=dict)


def scripts(views: Mapping[int, View], members: Sequence[int]) -> dict[int, list[Event]]:
    """Per non-member participant: its exchanges with the coalition in the real run, in order.

    Events are ordered by round (a message's round is one more than the highest round its
    sender had received before sending), receptions before sends within a round: an honest
    party sends its round-r message after the members' round-r messages that it answers.
    """
    member_set = set(members)
    out: dict[int, list[Event]] = {}
    for h in sorted(set(views) - member_set):
        recvs: dict[tuple[Call, str], tuple[int, list[int]]] = {}
        for msg in views[h].received:
            if msg.sender in member_set:
                key = (Call(msg.protocol, msg.call), msg.step)
                rnd, senders = recvs.get(key, (msg.round, []))
                senders.append(msg.sender)
                recvs[key] = (min(rnd, msg.round), senders)
        sends: dict[tuple[Call, str], tuple[int, dict[int, tuple[int, ...]]]] = {}
        for m in sorted(member_set):
            for msg in views[m].received:
                if msg.sender == h:
                    key = (Call(msg.protocol, msg.call), msg.step)
                    rnd, sizes = sends.get(key, (msg.round, {}))
                    sizes[m] = tuple(np.shape(msg.payload))
                    sends[key] = (min(rnd, msg.round), sizes)
        events = [(r, 0, c.index, c.protocol, s, Event("recv", c, s, tuple(sorted(set(p)))))
                  for (c, s), (r, p) in recvs.items()]
        events += [(r, 1, c.index, c.protocol, s, Event("send", c, s, tuple(sorted(z)), z))
                   for (c, s), (r, z) in sends.items()]
        out[h] = [e[-1] for e in sorted(events, key=lambda e: e[:-1])]
    return out


class HonestSide:
    """The simulator's honest side in one simulated run: one stand-in per call, made lazily.

    Parameters
    ----------
    simulators : mapping of Call to simulator
        Each call's simulator (program form, or per call: :class:`PerCallStandIn`).
    views : mapping of Call to CallView
        The calls' views in the real trial (the coalition's inputs, tape, outputs).
    rng : Generator
        The audit's generator: the only source of the stand-ins' draws.
    field : PrimeField
        The run's field (one-time pads for messages a stand-in does not declare).
    """

    def __init__(self, simulators: Mapping[Call, Any], views: Mapping[Call, CallView],
                 rng: np.random.Generator, field_: PrimeField) -> None:
        self.simulators = simulators
        self.views = views
        self.rng = rng
        self.field = field_
        self._stand_ins: dict[Call, StandIn | None] = {}
        self.heard: dict[Call, dict[MessageKey, np.ndarray]] = {}

    def _stand_in(self, call: Call) -> StandIn | None:
        if call not in self._stand_ins:
            sim, view = self.simulators.get(call), self.views.get(call)
            if sim is None or view is None:
                self._stand_ins[call] = None
            elif is_program_simulator(sim):
                self._stand_ins[call] = sim.stand_in(view, self.rng)
            else:
                self._stand_ins[call] = PerCallStandIn(sim, view, self.rng)
        return self._stand_ins[call]

    def hear(self, call: Call, receiver: int, step: str, got: Mapping[int, Any]) -> None:
        """Record what members sent to honest ``receiver`` in ``step``."""
        heard = self.heard.setdefault(call, {})
        for sender, payload in got.items():
            heard[(receiver, sender, step)] = np.asarray(payload)

    def reply(self, call: Call, sender: int, step: str,
              shapes: Mapping[int, tuple[int, ...]]) -> dict[int, np.ndarray]:
        """The payloads of honest ``sender`` to members in ``step``, in the real messages'
        shapes (one-time pads where the stand-in declares none)."""
        stand_in = self._stand_in(call)
        sizes = {m: int(np.prod(shape, dtype=np.int64)) for m, shape in shapes.items()}
        made = {} if stand_in is None else stand_in.reply(
            sender, step, self.heard.get(call, {}), sizes)
        out = {}
        for receiver, shape in shapes.items():
            value = made.get(receiver)
            if value is None:
                value = self.field.random(self.rng, sizes[receiver])
            out[receiver] = np.asarray(value).reshape(shape)
        return out


def stand_in_program(script: Sequence[Event], side: HonestSide, me: int
                     ) -> Callable[..., Any]:
    """The program of honest party ``me`` in a simulated run: its script, payloads from
    ``side``."""

    def program(ctx: Any, **_: Any) -> Any:
        for event in script:
            if event.kind == "recv":
                got = yield RecvEach(event.peers, event.call, event.step)
                side.hear(event.call, me, event.step, got)
            else:
                yield SendEach(side.reply(event.call, me, event.step, event.shapes),
                               event.call, event.step)

    return program


def add_derived(records: Mapping[Call, CallRecord], simulators: Mapping[Call, Any]) -> None:
    """Add to each call's received messages what its simulator derives from the view.

    A simulator may declare ``derived(view, received) -> {message id: array}``: values the
    coalition computes from its view (the MPC engine's opened values,
    :func:`protocols.mpc.simulator.opened_values`). They are compared like messages — in the
    real runs and the simulated ones alike — so the audit tests their law directly.
    """
    for call, record in records.items():
        derive = getattr(simulators.get(call), "derived", None)
        if derive is not None and record.view is not None:
            record.received.update(derive(record.view, record.received))


def by_step(layout: Layout, whole_below: int = 0) -> Layout:
    """The same columns with each wide call cut into its steps (hull groups per step).

    A simulated run draws all calls jointly, so the comparison takes the whole simulated
    matrix and tests relations between any two columns against it; the affine-hull tests then
    run within each step of a call (an opening and the shares it is made of), which the trials
    can saturate where a whole engine call — thousands of elements — could not. A call of
    fewer than ``whole_below`` elements (one the trials saturate whole) stays one group, so
    relations between its steps (a mask reused across steps) are still tested.
    """
    calls, messages, sizes = [], [], []
    for call, ids, widths in zip(layout.calls, layout.messages, layout.sizes, strict=True):
        if sum(widths) < whole_below:
            calls.append(call)
            messages.append(ids)
            sizes.append(widths)
            continue
        runs: dict[str, tuple[list[MessageId], list[int]]] = {}
        for k, w in zip(ids, widths, strict=True):
            runs.setdefault(k[2], ([], []))
            runs[k[2]][0].append(k)
            runs[k[2]][1].append(w)
        for step_ids, step_sizes in runs.values():
            calls.append(call)
            messages.append(tuple(step_ids))
            sizes.append(tuple(step_sizes))
    return Layout(tuple(calls), tuple(messages), tuple(sizes))


def simulated_rows(
    runner: Runner,
    parties: Sequence[Party],
    members: Sequence[int],
    sites: Sequence[int],
    layout: Layout,
    plan: Mapping[int, list[Event]],
    simulators: Mapping[Call, Any],
    trial_views: Sequence[Mapping[Call, CallView]],
    ratio: int,
    seed: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``ratio`` simulated view vectors per real trial: (len(trial_views)·ratio, width), the
    trials in turn (a hull test that reads the leading rows sees every trial's context).

    Trial t's runs use the members' real programs under the trial's randomness (their tapes)
    and the calls' views of that trial.

    Raises
    ------
    SimulatorMismatch
        When a simulated run's messages do not have the real layout (a stand-in that sends
        what the program does not expect, or the other way round).
    """
    ids = [p.id for p in parties]
    member_set = set(members)
    field_ = runner.field
    rows = []
    for _ in range(ratio):  # round-robin over the trials: any leading rows span them all
        for t, views in enumerate(trial_views):
            side = HonestSide(simulators, views, rng, field_)
            cast = [p if p.id in member_set else
                    Party(p.id, stand_in_program(plan.get(p.id, ()), side, p.id), {}, p.role)
                    for p in parties]
            simulated = runner(cast, ConditionedRandomness(ids, members, seed, t))
            records = split_run(simulated, members, field_, sites)
            add_derived(records, {c: simulators[c] for c in records if c in simulators})
            received = {call: rec.received for call, rec in records.items()}
            if not layout.matches(received):
                call, message = layout.first_difference(received)
                raise SimulatorMismatch(
                    f"a simulated run departs from the real message pattern at call {call} "
                    f"({message}): the simulator's honest side does not play the protocol")
            rows.append(layout.row(received, field_.dtype))
    return np.stack(rows)
