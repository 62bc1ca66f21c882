"""t-privacy audits: what can a coalition learn from its views beyond its inputs and outputs?

Three methods, one verdict type (:class:`AuditResult`: ``private`` with its power, ``leak``
with the first failing call and message, ``inconclusive``, ``not applicable``):

``simulation`` (:mod:`.simulation`)
    Whole runs of any program — PD-NMF, SecureSum, a user's own — compared call by call with
    the views each protocol's simulator draws from the coalition's inputs, randomness and the
    declared outputs (the papers' definition of security).
``statistical`` (:mod:`.statistical`)
    The A/B test: the views under inputs A against those under several alternatives with the
    same output, for programs on field vectors whose output is a sum.
``exact`` (:mod:`.exact`)
    In a tiny field, every honest input with the same output and every random choice.
``linear`` (:mod:`.linear`)
    For programs whose views are affine over GF(p) in the inputs and the draws (SecureSum and
    its share-and-add relatives), at the real prime: the view extracted as an affine map by
    probing, t-privacy decided by ranks, a leak shown by a witness. Every coalition from one
    set of probes (:func:`.linear.linear_audits`).

Every method first checks the outputs declared to the coalition against the ideal
functionality of the protocol the audit target names (:mod:`.functionality`,
:mod:`protocols.registry`): an output beyond it is a ``leak``, whatever the views look like.

Every method first looks for honest key material in the coalition's view (:mod:`.keyflow`):
a pair seed, a mask key, a keystream block or a mask stream the coalition received is added to
its knowledge — held fixed like its own randomness — and named in the verdict.

The statistical methods test the coalition's *residual* view — its own randomness is held
fixed across trials (:mod:`.randomness`) — with element tests on value / p, low-order bits
and small moduli, and GF(p)-linear tests within calls and between any two elements of the run
(:mod:`.compare`). Every method is tested with planted leaks it must catch (``tests/parties``).

Who runs the programs
---------------------
The package ladder puts ``parties`` below ``sim``: an audit may not import a driver. So an
audit is *handed* a :class:`~.randomness.Runner` — ``runner(parties, randomness) -> views`` —
by the caller, and :func:`audit` takes it as the keyword ``runner``. :func:`sim.privacy.audit`
is the ready-made entry point with the SimPy driver: it has the signature
``audit(program, inputs, coalition, *, prime, method, trials, alpha, seed, protocol=None,
variant=None)`` and builds the runner from ``prime``; the scenario runner uses it too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from parties.audit import keyflow
from parties.audit.arguments import check_audit_inputs, input_name
from parties.audit.exact import exact_audit
from parties.audit.functionality import functionality_audit, judged_inputs, output_judge
from parties.audit.linear import linear_audits
from parties.audit.randomness import (
    ConditionedRandomness,
    Progress,
    RandomnessFactory,
    Runner,
    TapeRandomness,
    tape_factory,
)
from parties.audit.result import (
    INCONCLUSIVE,
    LEAK,
    NOT_APPLICABLE,
    PRIVATE,
    VERDICTS,
    AuditResult,
)
from parties.audit.simulation import SIMULATORS, simulation_audit
from parties.audit.statistical import alternative_inputs, honest_parties, statistical_audit
from parties.party import Party, Program, site_parties
from protocols.errors import InputError
from protocols.registry import Target

METHODS = ("simulation", "statistical", "exact", "linear")

__all__ = [
    "INCONCLUSIVE",
    "LEAK",
    "METHODS",
    "NOT_APPLICABLE",
    "PRIVATE",
    "SIMULATORS",
    "VERDICTS",
    "AuditResult",
    "ConditionedRandomness",
    "Progress",
    "RandomnessFactory",
    "Runner",
    "TapeRandomness",
    "alternative_inputs",
    "audit",
    "exact_audit",
    "honest_parties",
    "input_name",
    "linear_audits",
    "simulation_audit",
    "statistical_audit",
    "tape_factory",
]


def _party_builder(
    program: Program, inputs: Sequence[Any]
) -> Callable[[Sequence[Any]], list[Party]]:
    keyword = all(isinstance(x, Mapping) for x in inputs)
    name = "" if keyword else input_name(program)

    def build(values: Sequence[Any]) -> list[Party]:
        return site_parties(program, [dict(v) if keyword else {name: v} for v in values])

    return build


def _check_coalition(coalition: Any, parties: Sequence[Party]) -> list[int]:
    """The coalition's members, sorted: distinct party ids of the run (InputError otherwise)."""
    ids = sorted(p.id for p in parties)
    span = f"0..{ids[-1]}" if ids else "(none)"
    if isinstance(coalition, str | bytes | Mapping) or not isinstance(coalition, Sequence):
        raise InputError(f"coalition = {coalition!r:.60} must be a list of party ids in {span}")
    bad = [m for m in coalition if isinstance(m, bool) or not isinstance(m, int | np.integer)]
    if bad:
        raise InputError(f"coalition = {list(coalition)!r:.60} must hold party ids (integers in "
                         f"{span}); {bad[0]!r} is not one")
    members = [int(m) for m in coalition]
    if len(set(members)) != len(members):
        raise InputError(f"coalition = {members} names a party twice; name each member once")
    unknown = [m for m in members if m not in ids]
    if not members or unknown:
        raise InputError(f"coalition = {members} must name 1 to M − 1 of the parties {span}"
                         + (f"; {unknown[0]} is not one" if unknown else ""))
    return sorted(members)


def audit(
    program: Program | Sequence[Party],
    inputs: Sequence[Any] | None,
    coalition: Sequence[int],
    *,
    runner: Runner,
    method: str = "simulation",
    trials: int = 200,
    alpha: float = 1e-3,
    seed: int = 0,
    protocol: Target = None,
    variant: str | None = None,
    calls: Sequence[int] | None = None,
    pairs: int = 6,
    max_runs: int = 100_000,
    probes: int = 3,
    progress: Progress | None = None,
) -> AuditResult:
    """Audit what ``coalition`` learns from running ``program`` on ``inputs``.

    Parameters
    ----------
    program : callable or sequence of Party
        ``program(ctx, x)`` run by every data-holding party (party m on ``inputs[m]``; a
        mapping in ``inputs`` is passed as keyword arguments instead), or the parties of a run
        (``inputs`` is then None; simulation method only).
    inputs : sequence
        One input per party: for ``statistical`` and ``exact``, flat vectors of field elements.
    coalition : sequence of int
        The colluding parties: 1 to M − 1 of the data holders' ids.
    runner : Runner
        Runs the parties with injected randomness (:func:`sim.privacy.simpy_runner`); its
        field is the audit's field.
    method : {"simulation", "statistical", "exact", "linear"}
    trials : int
        Runs per input set (statistical methods), ≥ 2.
    alpha : float
        Significance level of the whole audit, 0 < α < 1.
    seed : int
        Seed of everything the audit draws.
    protocol : str, Declaration or sequence of them, optional
        The protocol under audit (:func:`protocols.registry.resolve`): its declarations judge
        the calls — their outputs against its ideal functionality (every method,
        :mod:`.functionality`) and their messages against its simulator (simulation method);
        a call it does not cover is "not applicable". None: each call's registered protocol.
    variant : str, optional
        The protocol's variant.
    calls : sequence of int, optional
        Call numbers to compare (default: all).
    pairs : int
        Alternative input sets of the A/B method, ≥ 1.
    max_runs : int
        Run budget of the exact method.
    probes : int
        Random probes that confirm affinity (linear method), ≥ 1.
    progress : callable, optional
        ``progress("audit", done, total)``.

    Returns
    -------
    AuditResult

    Raises
    ------
    InputError
        For a bad argument (the message names it and the allowed range).
    """
    if method not in METHODS:
        raise InputError(f"method = {method!r} is unknown; use one of {', '.join(METHODS)}")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 2:
        raise InputError(f"trials = {trials!r} must be an integer ≥ 2")
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise InputError(f"pairs = {pairs!r} must be an integer ≥ 1")
    if isinstance(probes, bool) or not isinstance(probes, int) or probes < 1:
        raise InputError(f"probes = {probes!r} must be an integer ≥ 1")
    if not isinstance(alpha, float | int) or not 0 < alpha < 1:
        raise InputError(f"alpha = {alpha!r} must be a number with 0 < alpha < 1")
    if callable(program):
        if inputs is None or len(inputs) < 2:
            raise InputError("inputs must hold one input per party, for at least 2 parties")
        make_parties = _party_builder(program, inputs)
        parties = make_parties(inputs)
    else:
        parties = list(program)
        make_parties = None
    sites = sorted(p.id for p in parties if p.role == "site")
    members = _check_coalition(coalition, parties)
    if callable(program) and inputs is not None:
        check_audit_inputs(inputs, runner.field, field_only=method != "simulation")
    if len([m for m in members if m in sites]) >= len(sites):
        raise InputError(f"coalition = {members} holds every data-holding party; t-privacy "
                         f"concerns coalitions of at most M − 1 = {len(sites) - 1}")
    if calls is not None:
        calls = [int(c) for c in calls]
    other = (None if make_parties is None or inputs is None
             else keyflow.other_inputs(runner.field, inputs, members, seed))
    given = (None if make_parties is None or inputs is None else judged_inputs(
        runner, make_parties, inputs, members, seed=seed, protocol=protocol, variant=variant))
    if method == "simulation":
        flow = (None if make_parties is None or other is None else keyflow.trace(
            runner, parties, members, seed, make_parties(other)))
        return simulation_audit(runner, parties, members, trials=trials, alpha=alpha, seed=seed,
                                protocol=protocol, variant=variant, calls=calls,
                                progress=progress, key_flow=flow, inputs=given)
    beyond = functionality_audit(runner, parties, members, method=method, seed=seed,
                                 protocol=protocol, variant=variant, inputs=given)
    if beyond is not None:  # an output beyond the functionality, or one nothing declares
        return beyond
    if make_parties is None or inputs is None:
        return AuditResult(tuple(members), method, NOT_APPLICABLE, details={
            "reason": f"the {method} method re-runs the program on other inputs; give a "
                      "program(ctx, x) and its inputs, or use method = 'simulation'"})
    values = [np.asarray(x) for x in inputs]
    if method == "linear":
        if other is not None:
            flow = keyflow.trace(runner, make_parties(values), members, seed,
                                 make_parties(other))
            if flow.beyond_draws:  # honest draws are variables of the linear model
                return keyflow.not_applicable_linear(members, flow)
        return _linear(runner, make_parties, values, members, seed, probes, progress)
    if method == "statistical":
        return statistical_audit(runner, make_parties, values, members, trials=trials,
                                 alpha=alpha, seed=seed, pairs=pairs, calls=calls,
                                 progress=progress)
    sites = [p.id for p in parties if p.role == "site"]
    judge = output_judge(members, runner.field, sites, method="exact", protocol=protocol,
                         variant=variant, inputs=given)
    return exact_audit(runner, make_parties, values, members, max_runs=max_runs, seed=seed,
                       calls=calls, progress=progress, judge=judge)


def _linear(
    runner: Runner,
    make_parties: Callable[[Sequence[Any]], list[Party]],
    values: Sequence[np.ndarray],
    members: Sequence[int],
    seed: int,
    probes: int,
    progress: Progress | None,
) -> AuditResult:
    if any(x.ndim != 1 or x.dtype.kind not in "uiO" for x in values):
        return AuditResult(tuple(members), "linear", NOT_APPLICABLE, details={
            "reason": "the linear audit probes programs on flat vectors of field elements; "
                      "these inputs are not"})
    return linear_audits(runner, make_parties, [x.size for x in values], [members],
                         probes=probes, seed=seed, progress=progress)[0]
