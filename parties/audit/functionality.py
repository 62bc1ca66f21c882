"""Outputs beyond the functionality: every declared output checked against the protocol's own.

An audit asks whether a coalition learns anything beyond its inputs and *outputs*; if the
outputs were whatever a program declares, a program could declare its own leak (``sum +
x_1[0]``, or the sum with an extra coordinate holding x_1) and every method would take it as
allowed. So before any comparison the audit checks, on its own inputs, every output declared
to a coalition member in a call against the ideal functionality of the protocol that judges
the call (:mod:`protocols.functionality`, :mod:`protocols.registry`). The auditor holds every
party's view, so it knows every party's input to the call. A declared output that differs —
another value, another size, a label the functionality does not have — is a ``leak`` named
"output beyond the functionality" with the call and the output. A member's declared output in
a call that no declaration judges (a name outside the audit target, or unknown) is "not
applicable": the audit cannot say what it may reveal. Outputs declared outside any call (an
algorithm's final results) are functions of the member's view and inputs, which the methods
compare; they are not checked here.

When the audit is given a ``program(ctx, x)`` and its inputs, the outputs are judged on *the
audit's* inputs, not on what the program chose to put into its calls: a program that runs
SecureSum on y = (m + 1)·x, or on x with an extra coordinate, records Input(y) and declares the
sum of the y, which the per-call check accepts. So every call of the audit target's own
protocol (the protocol the target names; with none named, the protocol of the program's first
call) is judged against the functionality applied to each site's audit input x as its input
to the call (:func:`own_calls`), in every method and on every input the exact method
enumerates. Calls of the protocols it uses (a dealer, an inner SecureSum: the registry's
``uses``) keep the per-call check, as do runs audited without a program and its inputs (an
algorithm's whole run).

An output that differs from the functionality's value on the audit's inputs but is a function
of it (a second call on 2x: its sum is 2·Σ x) reveals nothing more. The audit tells the two
apart as the definition does (Qian et al., seed 004, Def. 1: nothing beyond the inputs and
outputs): it re-runs the program on inputs re-split so that the coalition's inputs and the
functionality's output (the sum) stay the same while every honest input changes
(:func:`judged_inputs`). A call whose outputs to the coalition stay the same on every re-split
is a function of the functionality's output and keeps the per-call check; one whose outputs
change (Σ (m + 1)·x_m, x_1[0], Σ x_m[0]²) is a ``leak``. With one honest party nothing can be
re-split: every output is then a function of the sum and the coalition's inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from parties.audit.pattern import refuse_bad_input
from parties.audit.randomness import ConditionedRandomness, Runner
from parties.audit.result import LEAK, NOT_APPLICABLE, AuditResult
from parties.party import SITE, Party
from parties.view import View
from protocols import seeds
from protocols.effects import Call
from protocols.errors import ProtocolAbort
from protocols.field import PrimeField
from protocols.functionality import CallInstance, FunctionalityMismatch, beyond
from protocols.registry import Judges, Target, resolve

REASON = "output beyond the functionality"


@dataclass(frozen=True)
class Finding:
    """Why a run's declared outputs fail the audit target."""

    verdict: str
    call: Call
    message: str
    reason: str
    on_inputs: bool = False


def call_instances(
    views: Mapping[int, View], field_: PrimeField, sites: Sequence[int],
    variant: str | None = None,
) -> dict[Call, CallInstance]:
    """Every call of one run with every party's inputs, declared outputs and senders."""
    parts: dict[Call, dict] = {}

    def part(call: Call) -> dict:
        return parts.setdefault(call, {"inputs": {}, "outputs": {}, "senders": {}})

    for p, view in views.items():
        for kind, entries in (("inputs", view.protocol_inputs), ("outputs", view.outputs)):
            for call, label, value in entries:
                if call is not None:
                    part(call)[kind].setdefault(p, []).append((label, value))
        for msg in view.received:
            got = part(Call(msg.protocol, msg.call))["senders"]
            got.setdefault((p, msg.step), set()).add(msg.sender)
    return {call: CallInstance(
        call=call, field=field_, parties=tuple(sites),
        inputs={p: tuple(v) for p, v in got["inputs"].items()},
        outputs={p: tuple(v) for p, v in got["outputs"].items()},
        senders={k: tuple(sorted(v)) for k, v in got["senders"].items()},
        variant=variant) for call, got in parts.items()}


@dataclass(frozen=True)
class AuditInputs:
    """The audit's inputs, on which the target's own calls are judged.

    Attributes
    ----------
    values : mapping of int to ndarray
        Each site's program input x, by party id.
    functions_of_ideal : frozenset of Call
        The target's calls whose outputs to the coalition are functions of the functionality's
        output (unchanged on every re-split, :func:`judged_inputs`): they keep the per-call
        check.
    """

    values: Mapping[int, np.ndarray]
    functions_of_ideal: frozenset[Call] = frozenset()

    def on(self, values: Sequence[np.ndarray]) -> AuditInputs:
        """The same judgement on other inputs (one per site, in site order)."""
        return AuditInputs(dict(zip(sorted(self.values), values, strict=True)),
                           self.functions_of_ideal)


def own_calls(judges: Judges, calls: Sequence[Call]) -> frozenset[str]:
    """The protocols whose calls are judged on the audit's inputs: those the target names, or
    (none named) the protocol of the program's first call."""
    if judges.named:
        return frozenset(judges.named)
    first = min(calls, key=lambda c: (c.index, c.protocol), default=None)
    return frozenset() if first is None else frozenset({first.protocol})


def on_audit_inputs(inst: CallInstance, inputs: AuditInputs) -> CallInstance:
    """The call with each site's audit input x as its input (the functionality's argument)."""
    return replace(inst, inputs={p: (("x", np.asarray(x)),) for p, x in inputs.items()})


def check_outputs(
    views: Mapping[int, View], members: Sequence[int], field_: PrimeField,
    sites: Sequence[int], judges: Judges, variant: str | None = None,
    inputs: AuditInputs | None = None,
) -> Finding | None:
    """The first call whose outputs declared to a member are not the functionality's.

    With ``inputs`` (the audit's program inputs), the calls of the target's own protocol
    (:func:`own_calls`) are judged on them; every other call on its recorded inputs.
    """
    instances = call_instances(views, field_, sites, variant)
    own = frozenset() if inputs is None else own_calls(judges, list(instances))
    for call in sorted(instances, key=lambda c: (c.index, c.protocol)):
        inst = instances[call]
        on_inputs = (inputs is not None and call.protocol in own
                     and call not in inputs.functions_of_ideal)
        if on_inputs:
            assert inputs is not None
            inst = on_audit_inputs(inst, inputs.values)
        declared = [(m, inst.outputs.get(m, ())) for m in members if inst.outputs.get(m)]
        if not declared:
            continue
        decl = judges.judge(call.protocol)
        if decl is None:
            return Finding(NOT_APPLICABLE, call, "", (
                f"party {declared[0][0]} declares outputs of {inst.where}, which no declared "
                f"functionality defines: {judges.why_not(call.protocol)}"))
        try:
            ideal = decl.functionality(inst)
        except FunctionalityMismatch as exc:
            return Finding(NOT_APPLICABLE, call, "", (
                f"{inst.where} does not have what {decl.name}'s functionality needs: {exc}"))
        for m, records in declared:
            bad = beyond(ideal, records)
            if bad is not None:
                label, what = bad
                whose = " on the audit's inputs" if on_inputs else ""
                return Finding(LEAK, call, f"{call.tag(label)} output at {m}", (
                    f"{REASON}: party {m}'s declared output {label!r} of {inst.where} is not "
                    f"{decl.name}'s ideal one{whose} ({what})"), on_inputs)
    return None


def as_result(finding: Finding, members: Sequence[int], method: str) -> AuditResult:
    """The verdict of a finding, for ``method``."""
    return AuditResult(tuple(members), method, finding.verdict,
                       0.0 if finding.verdict == LEAK else None, finding.call.index,
                       finding.message or None, None,
                       {"reason": finding.reason, "check": "functionality"})


def functionality_audit(
    runner: Runner, parties: Sequence[Party], coalition: Sequence[int], *, method: str,
    seed: int = 0, protocol: Target = None, variant: str | None = None,
    inputs: AuditInputs | None = None,
) -> AuditResult | None:
    """Run the parties once on the audit's inputs and check every declared output.

    ``inputs``: each site's program input, when the audit was given a program and its inputs
    (the target's own calls are then judged on them, :func:`check_outputs`).

    Returns the verdict when an output is beyond the functionality (``leak``) or cannot be
    judged (``not applicable``), else None (the method goes on).
    """
    members = tuple(sorted(coalition))
    ids = [p.id for p in parties]
    sites = tuple(sorted(p.id for p in parties if p.role == SITE))
    try:
        views = runner(parties, ConditionedRandomness(ids, members, seed, 0))
    except ProtocolAbort:
        return None  # the program cannot run on these inputs: the method says why
    refuse_bad_input(views)  # a party refusing the given inputs is the user's mistake
    finding = check_outputs(views, members, runner.field, sites, resolve(protocol), variant,
                            inputs)
    return None if finding is None else as_result(finding, members, method)


def outputs_determine_input(
    runner: Runner, parties: Sequence[Party], coalition: Sequence[int], honest: int,
    *, seed: int = 0, protocol: Target = None,
) -> bool:
    """Whether the one honest party's whole program input is determined by the call outputs.

    True when its flat input ``x`` is its input to one call whose declaration solves for the
    honest input (a sum, :attr:`protocols.registry.Declaration.honest_inputs`), or the
    concatenation of its inputs to such calls, in call order. Otherwise part of ``x`` enters no
    such call, and a message may carry it although every call's output is determined (a
    class-4 leak): an A/B audit, which has no alternative inputs with one honest party, must
    not answer "private" then.
    """
    judges = resolve(protocol)
    by_id = {p.id: p for p in parties}
    x = by_id[honest].inputs.get("x") if honest in by_id else None
    if x is None:
        return False
    ids = [p.id for p in parties]
    views = runner(parties, ConditionedRandomness(ids, tuple(sorted(coalition)), seed, 0))
    records = []
    for call, _, value in views[honest].protocol_inputs:
        declared = None if call is None else judges.judge(call.protocol)
        if declared is not None and declared.honest_inputs is not None:
            records.append([int(v) for v in np.ravel(value)])
    want = [int(v) for v in np.ravel(x)]
    return any(r == want for r in records) or [v for r in records for v in r] == want


def output_judge(
    coalition: Sequence[int], field_: PrimeField, sites: Sequence[int], *, method: str,
    protocol: Target = None, variant: str | None = None, inputs: AuditInputs | None = None,
) -> Callable[..., AuditResult | None]:
    """``judge(views, inputs=None)``: the verdict of a run whose outputs fail the target.

    The exact method applies it to every run on the honest inputs it enumerates: an output that
    equals the functionality's on the audit's inputs but not on another input would otherwise
    hide that input from the comparison (it selects alternatives by their outputs). With
    ``inputs`` (the audit's judgement, :func:`judged_inputs`), ``judge``'s ``values`` (one
    program input per site, in site order) are the run's inputs, on which the target's own
    calls are judged (:func:`check_outputs`).
    """
    members = tuple(sorted(coalition))
    judges = resolve(protocol)

    def judge(views: Mapping[int, View],
              values: Sequence[np.ndarray] | None = None) -> AuditResult | None:
        given = None if inputs is None or values is None else inputs.on(values)
        finding = check_outputs(views, members, field_, sites, judges, variant, given)
        return None if finding is None else as_result(finding, members, method)

    return judge


def judged_inputs(
    runner: Runner, make_parties: Callable[[Sequence[Any]], list[Party]],
    inputs: Sequence[Any], coalition: Sequence[int], *, seed: int = 0,
    protocol: Target = None, variant: str | None = None, resplits: int = 2,
) -> AuditInputs | None:
    """The audit's inputs, with the target's calls whose outputs are functions of the ideal one.

    Runs the program once on ``inputs``; every call of the target's own protocol whose output
    to a member is not the functionality's on ``inputs`` is re-run on ``resplits`` re-splits
    (the coalition's inputs kept, every honest input changed, their sum kept: module
    docstring). When its members' outputs are the same on every re-split it is a function of
    the functionality's output (:attr:`AuditInputs.functions_of_ideal`). None for inputs that
    are not one vector per site (keyword inputs): the calls then keep the per-call check.
    """
    if any(isinstance(x, Mapping) for x in inputs):
        return None
    members = tuple(sorted(coalition))
    parties = make_parties(list(inputs))
    ids = [p.id for p in parties]
    sites = tuple(sorted(p.id for p in parties if p.role == SITE))
    given = AuditInputs({p: np.asarray(x) for p, x in zip(sites, inputs, strict=True)})
    judges = resolve(protocol)

    def run(values: Sequence[Any]) -> Mapping[int, View] | None:
        try:
            return runner(make_parties(list(values)), ConditionedRandomness(ids, members, seed, 0))
        except ProtocolAbort:
            return None

    views = run(inputs)
    if views is None:
        return given
    rng = seeds.rng(seed, "audit.functionality")
    others = [_resplit(runner.field, inputs, members, rng) for _ in range(resplits)]
    other_views: list[Mapping[int, View] | None] | None = None
    exempt: set[Call] = set()
    while True:
        finding = check_outputs(views, members, runner.field, sites, judges, variant,
                                AuditInputs(given.values, frozenset(exempt)))
        if finding is None or not finding.on_inputs:
            break
        if others and any(o is None for o in others):
            break  # not field vectors: nothing to re-split, the finding stands
        if other_views is None:
            other_views = [run(o) for o in others]  # type: ignore[arg-type]
        mine = _member_outputs(views, members, finding.call)
        if any(v is None or _member_outputs(v, members, finding.call) != mine
               for v in other_views):
            break
        exempt.add(finding.call)
    return AuditInputs(given.values, frozenset(exempt))


def _resplit(field_: PrimeField, inputs: Sequence[Any], members: Sequence[int],
             rng: np.random.Generator) -> list[np.ndarray] | None:
    """The inputs with the honest ones re-split: each changed, their sum kept (None when the
    inputs are not flat vectors of field elements). With one honest party: the inputs."""
    arrays = [np.asarray(x) for x in inputs]
    if any(a.ndim != 1 or a.dtype.kind not in "uiO" or a.size != arrays[0].size or any(
            not 0 <= int(v) < field_.p for v in a.tolist()) for a in arrays):
        return None
    honest = [h for h in range(len(arrays)) if h not in set(members)]
    out = [field_.elements(a) if a.dtype == object else a.copy() for a in arrays]
    if len(honest) < 2:
        return out
    offsets = [field_.random(rng, arrays[0].size) for _ in honest[:-1]]
    for h, delta in zip(honest[:-1], offsets, strict=True):
        out[h] = field_.add(out[h], delta)
    out[honest[-1]] = field_.sub(out[honest[-1]], field_.sum_arrays(offsets))
    return out


def _member_outputs(views: Mapping[int, View], members: Sequence[int],
                    call: Call) -> list[tuple[int, str, list[Any]]]:
    """The members' declared outputs of one call, comparable across runs."""
    return [(m, label, np.ravel(np.asarray(value)).tolist()) for m in members
            for c, label, value in views[m].outputs if c == call]
