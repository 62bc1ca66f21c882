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
has no simulator (:class:`~protocols.simulator.NoSimulator`: a user's protocol; every built-in
one declares a simulator), naming the call; ``calls`` then restricts the audit to the others.
A protocol that reveals more than its declared outputs by construction (the plain All-Reduce,
with two or more honest parties) says so through its simulator's ``reveals``, and the audit
answers "leak" at that call without sampling. A protocol that declares what more it reveals
(NormedSecureSum's ``reveal_norm``: ‖S‖²; ``secure_sum``: S, as outputs of the call) is
simulated against its functionality extended by that leakage; its simulator's optional
``leakage(view)`` names it, and the verdict reports it as ``details["reveals"]``.

Before anything is compared, every output declared to a member is checked against the ideal
functionality of the protocol that judges its call (:mod:`parties.audit.functionality`): an
output beyond it is a ``leak``. Which declaration judges a call is the audit target's choice,
not the program's: ``protocol`` names the protocol(s) under audit
(:func:`protocols.registry.resolve`), and a call of another name is *not applicable*; with no
protocol named, each call's registered declaration judges it. ``variant`` is passed to the
simulators. A call whose outputs determine the honest inputs (one honest party of a sum) is
simulated with those inputs, computed from the outputs and the coalition's inputs, and compared
like any other (issue 27, item 4); and an undeclared message that an honest party broadcasts to
several members is held to one pad, not one per receiver.

A simulator in the program-rerun form (:class:`~protocols.simulator.ProgramSimulator`:
NormedSecureSum and its dealer, every variant) is not asked call by call: the audit runs, for
each real trial, ``ratio`` simulated runs of the members' own programs against honest stand-ins
(:mod:`parties.audit.rerun`), and compares the real views with the whole simulated matrix —
relations between any two columns tested against it, as the calls are simulated jointly — with
the affine-hull tests within each step of a call. Values a simulator ``derived`` from the view
(the engine's opened values) are compared like messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import numpy as np

from parties.audit import keyflow, noisy_release
from parties.audit.alternatives import redrawn_inputs_required
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
from parties.audit.functionality import AuditInputs, as_result, check_outputs
from parties.audit.pattern import aborted_verdict, check_alternatives, declared_size_leak
from parties.audit.randomness import ConditionedRandomness, Progress, Runner
from parties.audit.rerun import add_derived, by_step, scripts, simulated_rows
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.party import SITE, Party
from protocols import seeds
from protocols.effects import Call
from protocols.registry import REGISTRY, Judges, Target, resolve
from protocols.simulator import (
    CallView,
    NoSimulator,
    Simulator,
    SimulatorMismatch,
    declared_sizes,
    is_program_simulator,
)

SIMULATORS: Mapping[str, Callable[[str | None], Simulator]] = MappingProxyType(
    {name: declared.simulator for name, declared in REGISTRY.items()})
"""Protocol name → ``factory(variant)`` of its simulator: a view of
:data:`protocols.registry.REGISTRY`, where a protocol declares its simulator together with its
ideal functionality (a user's own protocol passes its ``Declaration`` as ``protocol=``).

A protocol that declares a :class:`~protocols.simulator.NoSimulator` is listed too: the audit
of a run that calls it answers "not applicable" with the protocol's reason.
"""

LINEAR_COVERS = (
    "GF(p)-affine relations among one call's received elements (per coordinate slice when "
    "the call is wider than the trials can saturate) and between any two elements of the run"
)


def simulator_for(
    call_protocol: str, protocol: Target, variant: str | None
) -> Simulator | None:
    """The simulator that judges a call: the audit target's rule (:func:`protocols.registry.
    resolve`), else None."""
    declared = resolve(protocol).judge(call_protocol)
    return None if declared is None else declared.simulator(variant)


def _judged(judges: Judges, call: Call, variant: str | None) -> Simulator | str:
    declared = judges.judge(call.protocol)
    if declared is None:
        return judges.why_not(call.protocol)
    return declared.simulator(variant)


@keyflow.traced_parties
@redrawn_inputs_required
def simulation_audit(
    runner: Runner,
    parties: Sequence[Party],
    coalition: Sequence[int],
    *,
    trials: int = 200,
    alpha: float = 1e-3,
    seed: int = 0,
    protocol: Target = None,
    variant: str | None = None,
    calls: Sequence[int] | None = None,
    ratio: int = 8,
    alternatives: int = 6,
    progress: Progress | None = None,
    inputs: AuditInputs | None = None,
) -> AuditResult:
    """Compare a coalition's real views of every call with simulated ones.

    First the message pattern (:mod:`parties.audit.pattern`): the run on the given inputs is
    compared with ``alternatives`` runs whose honest inputs are redrawn
    (:func:`~parties.audit.alternatives.alternative_parties`); a difference is a ``leak`` naming
    the message and the property (count, size, recipient, order, time, abort).

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
    protocol : str, Declaration or sequence of them, optional
        The protocol under audit (:func:`protocols.registry.resolve`): it, not the program,
        says which declaration judges each call. None: each call's registered declaration.
    variant : str, optional
        The variant the target names.
    calls : sequence of int, optional
        Call numbers to compare (default: every call).
    ratio : int
        Simulated views per real trial.
    alternatives : int
        Runs with the honest inputs redrawn, for the pattern check.
    progress : callable, optional
        ``progress("audit", done, total)``.
    inputs : mapping of int to ndarray, optional
        Each site's program input, when the audit was given a program and its inputs: the
        target's own calls are judged against the functionality on them
        (:func:`parties.audit.functionality.check_outputs`).
    """
    members = tuple(sorted(coalition))
    field = runner.field
    ids = [p.id for p in parties]
    sites = tuple(sorted(p.id for p in parties if p.role == SITE))
    rng = seeds.rng(seed, "audit.simulation")
    rows: list[np.ndarray] = []
    groups: dict[tuple[str, ...], tuple[dict[Call, CallView], int]] = {}
    order: list[tuple[str, ...]] = []
    full: Layout | None = None
    layout: Layout | None = None
    chosen: list[Call] = []
    simulators: dict[Call, Simulator] = {}
    solvers: dict[Call, Any] = {}
    determined: list[int] = []
    declared_leakage: dict[str, str] = {}  # call → what its protocol declares it reveals
    judges = resolve(protocol)
    pattern_runs = 0  # runs with the honest inputs redrawn (the pattern check)
    rerun: dict[str, Any] = {}  # program-rerun mode: the honest pattern and each trial's views
    contexts: list[dict[Call, CallView]] = []  # per trial, for noisy-release calls
    for t in range(trials):
        views = runner(parties, ConditionedRandomness(ids, members, seed, t))
        if t == 0:
            pattern_rng = seeds.rng(seed, "audit.pattern")
            leak, pattern_runs = check_alternatives(
                lambda ps: runner(ps, ConditionedRandomness(ids, members, seed, 0)), parties,
                members, "simulation", pattern_rng, alternatives, field.p, reference=views)
            if leak is not None:
                return leak
        stopped = aborted_verdict(members, "simulation", views)
        if stopped is not None:
            return stopped
        finding = check_outputs(views, members, field, sites, judges, variant, inputs)
        if finding is not None:
            return as_result(finding, members, "simulation")
        records = split_run(views, members, field, sites)
        add_derived(records, simulators)
        received = {call: rec.received for call, rec in records.items()}
        if full is None:
            chosen = select_calls(records, calls)
            full = Layout.of(received, chosen)
            for call in chosen:
                sim = _judged(judges, call, variant)
                if isinstance(sim, str):
                    return _not_applicable(members, call, f"call {call.index}: {sim}")
                if isinstance(sim, NoSimulator):
                    return _not_applicable(members, call, (
                        f"call {call.index} is {call.protocol}, which has no simulator: "
                        f"{sim.reason}; pass calls = [...] to audit the other calls"))
                simulators[call] = sim
                declared = judges.judge(call.protocol)
                view = records[call].view
                assert declared is not None and view is not None
                try:  # the simulator's declared message sizes, before anything is simulated
                    sizes = declared_sizes(sim, view)
                except SimulatorMismatch as exc:
                    return _not_applicable(members, call, str(exc))
                wrong = None if sizes is None else declared_size_leak(
                    members, "simulation", call, records[call].received, sizes, sim.name)
                if wrong is not None:
                    return wrong
                if sim.determined(view):
                    determined.append(call.index)
                    solvers[call] = declared.honest_inputs
            revealed = _revealed(simulators, records)
            if revealed is not None:
                call, message, reason = revealed
                return AuditResult(members, "simulation", LEAK, None, call.index, message, None,
                                   {"reason": reason, "declared_by": simulators[call].name})
            declared_leakage = _leakage(simulators, records)
            add_derived(records, simulators)  # what the simulators derive from the view
            full = Layout.of(received, chosen)
            layout = full
            if any(is_program_simulator(sim) for sim in simulators.values()):
                rerun.update(plan=scripts(views, members), trials=[], simulators={
                    c: sim for c in records if not isinstance(
                        sim := simulators.get(c) or _judged(judges, c, variant),
                        str | NoSimulator)})
        elif not full.matches(received):
            call, message = full.first_difference(received)
            return AuditResult(members, "simulation", LEAK, 0.0, call, message, None, {
                "reason": "the coalition's view changes shape between runs with the same "
                          "inputs (its messages depend on the honest parties' randomness)",
                "trial": t})
        try:
            _give_honest_inputs(records, solvers)
        except SimulatorMismatch as exc:
            return _not_applicable(members, chosen[0], str(exc))
        except MALFORMED as exc:  # a solver that fails on a malformed call: a verdict
            return _not_applicable(members, chosen[0], _failed("the honest-input solver", exc))
        if noisy_release.releasing(simulators):  # a randomized functionality's inputs
            noisy_release.give_statistics(records, views, simulators)
            contexts.append({c: records[c].view for c in chosen})  # type: ignore[misc]
        assert layout is not None
        rows.append(layout.row(received, field.dtype))
        if rerun:
            rerun["trials"].append({c: rec.view for c, rec in records.items()})
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
    broadcasts = _broadcasts(layout, x, members)

    rerun_rows: list[np.ndarray] = []

    def y_block(c: int) -> np.ndarray:
        """Simulated views of call c: ratio per real trial, in the trials' own contexts."""
        call = chosen[c]
        current[:] = [call]
        if rerun:  # whole simulated runs of the members' programs, once, sliced per call
            if not rerun_rows:
                rerun_rows.append(simulated_rows(
                    runner, parties, members, sites, layout, rerun["plan"],
                    rerun["simulators"], rerun["trials"], ratio, seed, rng))
            return rerun_rows[0][:, layout.columns()[0] == c]
        try:
            blocks = [_simulated_block(simulators[call], groups[sig][0][call], full, layout, c,
                                       rng, groups[sig][1] * ratio, broadcasts[c])
                      for sig in order]
        except MALFORMED as exc:  # a simulator that fails on a malformed view: a verdict
            raise SimulatorMismatch(_failed(f"the {simulators[call].name} simulator of "
                                            f"{call.tag('').rstrip('.')}", exc)) from exc
        return np.concatenate(blocks, axis=0)

    linear = all(simulators[c].uniform_on_hull for c in chosen)
    details: dict[str, Any] = {
        "trials": trials, "simulated": n_sim, "calls": len(chosen),
        "pattern_alternatives": pattern_runs,
        "determined_calls": len(determined), "view_elements": int(x.shape[1]),
        "contexts": len(order),
        "simulated_runs": n_sim if rerun else 0,
        "protocols": sorted({f"{s.name} ({getattr(s, 'variant', None) or 'inferred'})"
                             for s in simulators.values()}),
        "judged_by": ("the audit target: " + ", ".join(judges.named) if judges.named
                      else "each call's registered protocol (no protocol named)"),
        **({"reveals": declared_leakage} if declared_leakage else {}),
    }
    exact_reason = ("the simulator, given the honest inputs the outputs determine, reproduces "
                    "every element of the view exactly")
    if x.shape[1] == 0:
        return AuditResult(members, "simulation", PRIVATE, None, None, None,
                           {"determined": True}, {**details, "reason": exact_reason})
    try:
        if rerun:  # simulated runs are joint over the calls: compare against the whole matrix
            y_block(0)
            comparison = compare(field, by_step(layout, trials - 4), x, rerun_rows[0],
                                 alpha=alpha, seed=seed, linear=linear)
        else:
            comparison = compare(field, layout, x, y_block=y_block, alpha=alpha, seed=seed,
                                 linear=linear)
        gaussian = noisy_release.gaussian_comparison(layout, x, contexts, simulators)
    except SimulatorMismatch as exc:
        return _not_applicable(members, current[0] if current else chosen[0], str(exc))
    decision = decide([comparison] if gaussian is None else [comparison, gaussian], alpha,
                      field.p, ratio,
                      LINEAR_COVERS if linear else "none (a simulator is not uniform on its hull)")
    if gaussian is not None:
        decision.power["gaussian"] = noisy_release.gaussian_power(
            gaussian, decision.details["tests"], alpha)
    if decision.verdict != LEAK and comparison.notes.get("informative_columns") == 0:
        # every element is one constant in every real trial and every simulated draw, the
        # same in both: the laws agree exactly (no statistical power is needed)
        return AuditResult(members, "simulation", PRIVATE, None, None, None,
                           {"determined": True}, {**details, "reason": exact_reason})
    return AuditResult(members, "simulation", decision.verdict, decision.p_value,
                       decision.call, decision.message, decision.power,
                       {**decision.details, **details, **comparison.notes})


def _give_honest_inputs(records: Mapping[Call, CallRecord], solvers: Mapping[Call, Any]) -> None:
    """Hand each determined call's simulator the honest inputs its outputs determine.

    They are computed from the call's declared outputs (checked against the functionality)
    and the coalition's inputs only — never read from an honest party's view.
    """
    for call, solve in solvers.items():
        view = records[call].view
        if solve is None or view is None:
            continue
        found = solve(view)
        if found:
            records[call].view = replace(view, honest_inputs=dict(found))


def _broadcasts(
    layout: Layout, x: np.ndarray, members: Sequence[int]
) -> list[dict[MessageId, MessageId]]:
    """Per call: honest messages that are one broadcast → the first member's copy.

    Messages of one sender, step and occurrence to several members whose payloads are equal in
    every real trial are one value sent to each (a ``SendEach`` of one payload): the coalition
    learns it once, and a message the protocol does not declare is then held to *one* draw of
    a one-time pad for all of them, not to independent pads (which two equal copies would
    contradict — the false alarm this removes). Copies that differ in any trial stay separate.
    """
    member_set = set(members)
    out: list[dict[MessageId, MessageId]] = []
    offset = 0
    for ids, sizes in zip(layout.messages, layout.sizes, strict=True):
        where: dict[MessageId, tuple[int, int]] = {}
        for k, n in zip(ids, sizes, strict=True):
            where[k] = (offset, n)
            offset += n
        same: dict[MessageId, MessageId] = {}
        by_source: dict[tuple[int, str, int, int], list[MessageId]] = {}
        for k in ids:
            if k[1] not in member_set:
                by_source.setdefault((k[1], k[2], k[3], where[k][1]), []).append(k)
        for copies in by_source.values():
            for i, k in enumerate(copies):
                if k in same:
                    continue
                a, n = where[k]
                for other in copies[i + 1:]:
                    b, _ = where[other]
                    if other not in same and np.array_equal(x[:, a:a + n], x[:, b:b + n]):
                        same[other] = k
        out.append(same)
    return out


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


def _leakage(simulators: Mapping[Call, Simulator], records: Mapping[Call, CallRecord]
             ) -> dict[str, str]:
    """Per call: the leakage its simulator's ``leakage(view)`` declares (NormedSecureSum's
    ``reveal_norm``: ‖S‖²; ``secure_sum``: S) — the verdict is relative to it."""
    out = {}
    for call, sim in simulators.items():
        leakage = getattr(sim, "leakage", None)
        view = records[call].view
        what = None if leakage is None or view is None else leakage(view)
        if what is not None:
            out[call.tag("").rstrip(".")] = what
    return out


MALFORMED = (ValueError, IndexError, KeyError, TypeError)
"""What a simulator or solver may raise on a view the protocol would not produce."""


def _failed(what: str, exc: Exception) -> str:
    return (f"{what} fails on the coalition's view ({type(exc).__name__}: {exc}): the program "
            "does not produce what the declared protocol would")


def _not_applicable(members: tuple[int, ...], call: Call, reason: str) -> AuditResult:
    return AuditResult(members, "simulation", NOT_APPLICABLE, None, call.index, None, None,
                       {"reason": reason})


def _simulated_block(
    simulator: Simulator, view: CallView, full: Layout, layout: Layout, c: int,
    rng: np.random.Generator, n: int, broadcast: Mapping[MessageId, MessageId] | None = None,
) -> np.ndarray:
    """n simulated views of call ``c`` of ``layout``, as an (n, width of the call) block.

    ``full`` is the layout of everything the coalition received: a message the simulator makes
    that is not in it is one the program does not send. ``broadcast`` maps a copy of an honest
    broadcast to its first copy (:func:`_broadcasts`): an undeclared broadcast is one pad.
    """
    broadcast = broadcast or {}
    pads: dict[MessageId, np.ndarray] = {}
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
            first = broadcast.get(key, key)  # one pad for every copy of one broadcast
            if first not in pads:
                pads[first] = view.field.random(rng, (n, size))
            values = pads[first]
        elif values.shape != (n, size):
            raise SimulatorMismatch(
                f"{call.tag(key[2])} from {key[1]} to {key[0]} has {size} elements, the "
                f"simulator of {simulator.name} makes {values.shape[1:]}")
        blocks.append(np.asarray(values, dtype=view.field.dtype))
    if not blocks:
        return np.zeros((n, 0), dtype=view.field.dtype)
    return np.concatenate(blocks, axis=1)
