"""Simulation-based audit of whole runs: is every call's view what its simulator produces?

This is the security definition the papers use — a coalition's joint view can be simulated
from its own inputs and the outputs (thesis seed 001, §2.2; Qian et al., seed 004, Def. 1) —
tested on the algorithm the user runs, not on a stand-in. The audit records ``trials`` real
runs of the parties' programs (PD-NMF, SecureSum, any program built on protocols with a
simulator) with their inputs and local coins fixed and the masks drawn afresh, holding the
coalition's own masks fixed (its residual view, :mod:`parties.audit.randomness`). For every
call of the run it asks the protocol's simulator (:mod:`protocols.simulator`) for views drawn
from the coalition's inputs, randomness, sent messages and the call's declared outputs, and
compares the real and simulated views of all calls together (:mod:`parties.audit.compare`):
element by element, by GF(p)-affine hulls within each call, and by affine relations between
any two elements of the run — a mask reused in a later call (a PRG counter that restarts) is
such a relation, invisible within either call. The verdict names the first call and message
that fails.

A message the coalition receives but the declared protocol does not send (a debugging
message, a raw statistic sent on the side) has no simulator. From a member it is what that
member sent; from an honest party it is held to the law of a fresh one-time pad — uniform on
GF(p), independent of everything — which is what a message that reveals nothing looks like.
The audit cannot tell whether such a message carries only what the outputs already reveal, so
it flags it even then (a raw input sent to the coalition when it is the only honest party).
A message the protocol sends but the program does not, a mask stream the simulator needs but
the program did not draw, or a protocol with no simulator makes the method *not applicable*:
the program does not implement what it declares. So does a call of a protocol that declares it
has no simulator (:class:`~protocols.simulator.NoSimulator`: NormedSecureSum, its dealer,
CAPE), naming the call; ``calls`` then restricts the audit to the others. A protocol that
reveals more than its declared outputs by construction (the plain All-Reduce, with two or more
honest parties) says so through its simulator's ``reveals``, and the audit answers "leak" at
that call without sampling.

Simulators are looked up by the protocol name of each call (``ctx.new_call(name)``) in
:data:`SIMULATORS`; ``protocol`` names the one to use for calls whose protocol has none, and
``variant`` is passed to it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from parties.audit import keyflow
from parties.audit.calls import (
    CallRecord,
    Layout,
    MessageId,
    message_name,
    select_calls,
    split_run,
    view_digest,
)
from parties.audit.compare import compare, decide
from parties.audit.randomness import ConditionedRandomness, Progress, Runner
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.party import SITE, Party
from protocols import correlated_noise, normed_secure_sum, secagg
from protocols.all_reduce import AllReduceSimulator
from protocols.effects import Call
from protocols.mpc import dealer
from protocols.secure_sum import SecureSumSimulator
from protocols.simulator import CallView, NoSimulator, Simulator, SimulatorMismatch

SIMULATORS: Mapping[str, Callable[[str | None], Simulator]] = MappingProxyType({
    "secure_sum": lambda variant: SecureSumSimulator(variant),
    "all_reduce": lambda variant: AllReduceSimulator(variant),
    "normed_secure_sum": lambda variant: normed_secure_sum.SIMULATOR,
    "dealer": lambda variant: dealer.SIMULATOR,
    "cape": lambda variant: correlated_noise.SIMULATOR,
    "secagg": lambda variant: secagg.SIMULATOR,
})
"""Protocol name → ``factory(variant)`` of its simulator. Add a protocol's entry here.

A protocol that declares a :class:`~protocols.simulator.NoSimulator` is listed too: the audit
of a run that calls it answers "not applicable" with the protocol's reason.
"""

LINEAR_COVERS = (
    "GF(p)-affine relations among one call's received elements (per coordinate slice when "
    "the call is wider than the trials can saturate) and between any two elements of the run"
)


def simulator_for(
    call_protocol: str, protocol: str | None, variant: str | None
) -> Simulator | None:
    """The simulator of a call: its protocol's own, else the named fallback, else None."""
    factory = SIMULATORS.get(call_protocol)
    if factory is None and protocol is not None:
        factory = SIMULATORS.get(protocol)
    return None if factory is None else factory(variant)


@keyflow.traced_parties
def simulation_audit(
    runner: Runner,
    parties: Sequence[Party],
    coalition: Sequence[int],
    *,
    trials: int = 200,
    alpha: float = 1e-3,
    seed: int = 0,
    protocol: str | None = None,
    variant: str | None = None,
    calls: Sequence[int] | None = None,
    ratio: int = 8,
    progress: Progress | None = None,
) -> AuditResult:
    """Compare a coalition's real views of every call with simulated ones.

    Parameters
    ----------
    runner : Runner
        Runs ``parties`` with injected randomness.
    parties : sequence of Party
        The run's parties, their programs and inputs (fixed in every trial).
    coalition : sequence of int
        The colluding parties.
    trials : int
        Real runs recorded.
    alpha : float
        Significance level of the whole audit (Holm over every test).
    seed : int
        Seed of the audit's randomness (the masks and the simulators' draws).
    protocol, variant : str, optional
        The simulator for calls whose protocol has none, and its variant.
    calls : sequence of int, optional
        Call numbers to compare (default: every call).
    ratio : int
        Simulated views per real trial.
    progress : callable, optional
        ``progress("audit", done, total)``.
    """
    members = tuple(sorted(coalition))
    field = runner.field
    ids = [p.id for p in parties]
    sites = tuple(sorted(p.id for p in parties if p.role == SITE))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2,)))
    rows: list[np.ndarray] = []
    groups: dict[tuple[str, ...], tuple[dict[Call, CallView], int]] = {}
    order: list[tuple[str, ...]] = []
    full: Layout | None = None
    layout: Layout | None = None
    chosen: list[Call] = []
    simulators: dict[Call, Simulator] = {}
    determined: list[int] = []
    for t in range(trials):
        views = runner(parties, ConditionedRandomness(ids, members, seed, t))
        records = split_run(views, members, field, sites)
        received = {call: rec.received for call, rec in records.items()}
        if full is None:
            chosen = select_calls(records, calls)
            full = Layout.of(received, chosen)
            for call in chosen:
                sim = simulator_for(call.protocol, protocol, variant)
                if sim is None:
                    return _not_applicable(members, call, (
                        f"no simulator for protocol {call.protocol!r} (call {call.index}); "
                        f"known: {', '.join(sorted(SIMULATORS))} — pass protocol=... if the "
                        "call implements one of them"))
                if isinstance(sim, NoSimulator):
                    return _not_applicable(members, call, (
                        f"call {call.index} is {call.protocol}, which has no simulator: "
                        f"{sim.reason}; pass calls = [...] to audit the other calls"))
                simulators[call] = sim
            revealed = _revealed(simulators, records)
            if revealed is not None:
                call, message, reason = revealed
                return AuditResult(members, "simulation", LEAK, None, call.index, message, None,
                                   {"reason": reason, "declared_by": simulators[call].name})
            try:
                layout, determined = _compared_layout(full, simulators, records, rng)
            except SimulatorMismatch as exc:
                return _not_applicable(members, chosen[0], str(exc))
        elif not full.matches(received):
            call, message = full.first_difference(received)
            return AuditResult(members, "simulation", LEAK, 0.0, call, message, None, {
                "reason": "the coalition's view changes shape between runs with the same "
                          "inputs (its messages depend on the honest parties' randomness)",
                "trial": t})
        assert layout is not None
        rows.append(layout.row(received, field.dtype))
        signature = tuple(view_digest(records[c].view) for c in chosen)  # type: ignore[arg-type]
        if signature not in groups:
            groups[signature] = ({c: records[c].view for c in chosen}, 0)  # type: ignore[misc]
            order.append(signature)
        views_here, count = groups[signature]
        groups[signature] = (views_here, count + 1)
        if progress is not None:
            progress("audit", t + 1, trials)
    assert layout is not None and full is not None
    x = np.stack(rows)
    n_sim = trials * ratio
    current: list[Call] = []

    def y_block(c: int) -> np.ndarray:
        """Simulated views of call c: ratio per real trial, in the trials' own contexts."""
        call = chosen[c]
        current[:] = [call]
        blocks = [_simulated_block(simulators[call], groups[sig][0][call], full, layout, c, rng,
                                   groups[sig][1] * ratio) for sig in order]
        return np.concatenate(blocks, axis=0)

    linear = all(simulators[c].uniform_on_hull for c in chosen)
    details: dict[str, Any] = {
        "trials": trials, "simulated": n_sim, "calls": len(chosen),
        "determined_calls": len(determined), "view_elements": int(x.shape[1]),
        "contexts": len(order),
        "protocols": sorted({f"{s.name} ({getattr(s, 'variant', None) or 'inferred'})"
                             for s in simulators.values()}),
    }
    if x.shape[1] == 0:
        return AuditResult(members, "simulation", PRIVATE, None, None, None,
                           {"determined": True}, {**details, "reason": (
                               "every compared call's outputs determine the honest parties' "
                               "inputs to it: nothing in the view can reveal more")})
    try:
        comparison = compare(field, layout, x, y_block=y_block, alpha=alpha, seed=seed,
                             linear=linear)
    except SimulatorMismatch as exc:
        return _not_applicable(members, current[0], str(exc))
    decision = decide([comparison], alpha, field.p, ratio,
                      LINEAR_COVERS if linear else "none (a simulator is not uniform on its hull)")
    return AuditResult(members, "simulation", decision.verdict, decision.p_value,
                       decision.call, decision.message, decision.power,
                       {**decision.details, **details, **comparison.notes})


def _compared_layout(
    full: Layout, simulators: Mapping[Call, Simulator], records: Mapping[Call, CallRecord],
    rng: np.random.Generator,
) -> tuple[Layout, list[int]]:
    """The layout without the protocol messages of calls whose outputs determine everything."""
    messages, sizes, determined = [], [], []
    for call, ids, sz in zip(full.calls, full.messages, full.sizes, strict=True):
        view = records[call].view
        assert view is not None
        drop: set[MessageId] = set()
        if simulators[call].determined(view):
            determined.append(call.index)
            drop = {(r, s, step, 0) for r, s, step in simulators[call].simulate(view, rng, 1)}
            absent = sorted(drop - set(ids), key=repr)
            if absent:
                r, s, step, _ = absent[0]
                raise SimulatorMismatch(f"party {s} sends no '{step}' to party {r} in "
                                        f"{call.tag(step)}, which {simulators[call].name} sends")
        kept = [(k, n) for k, n in zip(ids, sz, strict=True) if k not in drop]
        messages.append(tuple(k for k, _ in kept))
        sizes.append(tuple(n for _, n in kept))
    return Layout(full.calls, tuple(messages), tuple(sizes)), determined


def _revealed(
    simulators: Mapping[Call, Simulator], records: Mapping[Call, CallRecord]
) -> tuple[Call, str, str] | None:
    """The first call whose protocol declares that it reveals more than its outputs.

    Returns the call, its first message from an honest party to a member, and the reason.
    """
    for call, sim in simulators.items():
        reveals = getattr(sim, "reveals", None)
        view = records[call].view
        reason = None if reveals is None or view is None else reveals(view)
        if reason is not None:
            honest = sorted((k for k in records[call].received if k[1] not in view.members),
                            key=lambda k: (k[2], k[0], k[1], k[3]))
            return call, message_name(call, honest[0]) if honest else "", reason
    return None


def _not_applicable(members: tuple[int, ...], call: Call, reason: str) -> AuditResult:
    return AuditResult(members, "simulation", NOT_APPLICABLE, None, call.index, None, None,
                       {"reason": reason})


def _simulated_block(
    simulator: Simulator, view: CallView, full: Layout, layout: Layout, c: int,
    rng: np.random.Generator, n: int,
) -> np.ndarray:
    """n simulated views of call ``c`` of ``layout``, as an (n, width of the call) block.

    ``full`` is the layout of everything the coalition received: a message the simulator makes
    that is not in it is one the program does not send.
    """
    call = layout.calls[c]
    drawn = simulator.simulate(view, rng, n)
    wanted: dict[MessageId, int] = dict(zip(layout.messages[c], layout.sizes[c], strict=True))
    made = {(r, s, step, 0): np.asarray(v) for (r, s, step), v in drawn.items()}
    missing = sorted(set(made) - set(full.messages[c]), key=repr)
    if missing:
        r, s, step, _ = missing[0]
        raise SimulatorMismatch(
            f"party {s} sends no '{step}' to party {r} in {call.tag(step)}, which "
            f"{simulator.name} sends")
    blocks = []
    for key, size in wanted.items():
        values = made.get(key)
        if values is None and key[1] in view.members:  # a member's own message: known
            sent = np.ravel(view.sent.get((key[0], key[1], key[2]), np.zeros(0)))
            values = np.broadcast_to(sent, (n, sent.size))
        elif values is None:  # not part of the protocol: held to the law of a one-time pad
            values = view.field.random(rng, (n, size))
        elif values.shape != (n, size):
            raise SimulatorMismatch(
                f"{call.tag(key[2])} from {key[1]} to {key[0]} has {size} elements, the "
                f"simulator of {simulator.name} makes {values.shape[1:]}")
        blocks.append(np.asarray(values, dtype=view.field.dtype))
    if not blocks:
        return np.zeros((n, 0), dtype=view.field.dtype)
    return np.concatenate(blocks, axis=1)
