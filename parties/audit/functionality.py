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
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from parties.audit.randomness import ConditionedRandomness, Runner
from parties.audit.result import LEAK, NOT_APPLICABLE, AuditResult
from parties.party import SITE, Party
from parties.view import View
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


def check_outputs(
    views: Mapping[int, View], members: Sequence[int], field_: PrimeField,
    sites: Sequence[int], judges: Judges, variant: str | None = None,
) -> Finding | None:
    """The first call whose outputs declared to a member are not the functionality's."""
    instances = call_instances(views, field_, sites, variant)
    for call in sorted(instances, key=lambda c: (c.index, c.protocol)):
        inst = instances[call]
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
                return Finding(LEAK, call, f"{call.tag(label)} output at {m}", (
                    f"{REASON}: party {m}'s declared output {label!r} of {inst.where} is not "
                    f"{decl.name}'s ideal one ({what})"))
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
) -> AuditResult | None:
    """Run the parties once on the audit's inputs and check every declared output.

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
    finding = check_outputs(views, members, runner.field, sites, resolve(protocol), variant)
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
    protocol: Target = None, variant: str | None = None,
) -> Callable[[Mapping[int, View]], AuditResult | None]:
    """``judge(views)``: the verdict of a run whose outputs fail the target, else None.

    The exact method applies it to every run on the honest inputs it enumerates: an output that
    equals the functionality's on the audit's inputs but not on another input would otherwise
    hide that input from the comparison (it selects alternatives by their outputs).
    """
    members = tuple(sorted(coalition))
    judges = resolve(protocol)

    def judge(views: Mapping[int, View]) -> AuditResult | None:
        finding = check_outputs(views, members, field_, sites, judges, variant)
        return None if finding is None else as_result(finding, members, method)

    return judge
