"""Privacy audits (:mod:`parties.audit`) run on the simulator.

The audit methods live in ``parties`` and never import a driver (the package ladder); they are
handed a runner. This module provides it — :class:`SimPyRunner` runs party programs on the
SimPy driver with injected randomness, mask draws recorded and each party's local coins fixed
by a seed — and, on top of it:

* :func:`audit`, the ready-made entry point
  ``audit(program, inputs, coalition, *, prime, method, trials, alpha, seed, protocol=None,
  variant=None)`` for a user's own party program;
* :func:`run_audit`, one ``[[audit]]`` of a scenario. The ``simulation`` method replays the
  algorithm's own parties — the same programs, data and local coins as the user's run, with
  fresh masks — so it audits the run the user made, every call of it. The ``statistical``
  (A/B) and ``exact`` methods need a program on field vectors whose output is a sum: for the
  ``secure_sum`` algorithm that is SecureSum on the encoded column sums (statistical) or on
  tiny inputs in GF(``prime``) (exact); for algorithms on data, such as PD-NMF, they answer
  *not applicable* and name the simulation method.

The audit machinery (:mod:`parties.audit`, which loads ``scipy.stats``) is imported by the
functions that audit, not by this module: every experiment imports :class:`AuditTarget` to
declare what its audits would examine, and a run without an ``[[audit]]`` — an MPI rank's in
particular — does not pay for loading it (``benchmarks/startup.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from parties.party import Party, Program, site_parties
from parties.view import AbortedRun, View
from protocols import seeds
from protocols.context import PartyContext
from protocols.errors import InputError, ProtocolAbort
from protocols.field import PrimeField, default_frac_bits, prime_field
from protocols.secure_sum import secure_sum_field
from sim.faults import FaultPlan
from sim.network import Network
from sim.scenario import AuditSpec
from sim.simulation import Simulation

if TYPE_CHECKING:
    from parties.audit import AuditResult, Progress, RandomnessFactory
    from protocols.registry import Target  # the registry loads every protocol's simulator

FieldProgram = Callable[[PartyContext, np.ndarray], Generator[Any, Any, Any]]


@dataclass(frozen=True)
class SimPyRunner:
    """Runs party programs on the SimPy driver for an audit (a :class:`parties.audit.Runner`).

    Every run uses sealing off and no key agreement (the audit injects every mask source), and
    records mask draws in the views. A run that aborts returns the views up to the abort
    (with the notices the parties were given) instead of raising: whether a run aborts is
    part of what a coalition observes (:mod:`parties.audit.pattern`). Each party's local coins
    (``ctx.rng``) come from ``seed``: the same in every run.

    Parameters
    ----------
    prime : int or str
        The field.
    frac_bits : int, optional
        Fixed-point fractional bits (for programs on real values); default
        :func:`protocols.field.default_frac_bits` (24, the same as a :class:`Simulation`).
    seed : int
        Seed of the parties' local coins.
    network : Network, optional
        The network (complete by default); views do not depend on its timing.
    faults : FaultPlan, optional
        Faults to inject in every run (a scenario's ``[[fault]]`` crashes: the audited run
        has the user's dropouts).
    oracle : {"aes", "affine"}
        The parties' PRG expansions: the real AES one, or the audit's programmed one
        (:class:`parties.audit.randomness.AffineOracle`; its simulator must use it too).
    keys : {"x25519", "preshared", "none"}
        The key setup of the run the audit stands for: the audited runs number their calls as
        that run does (:func:`parties.audit.numbering.numbered_as_run`; with the default, the
        program's first call is call 1, after key agreement's call 0).
    """

    prime: int | str
    frac_bits: int | None = None
    seed: int = 0
    network: Network | None = None
    faults: FaultPlan | None = None
    oracle: str = "aes"
    keys: str = "x25519"
    _field: PrimeField = field(init=False, repr=False, compare=False)
    _networks: dict[int, Network] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_field", prime_field(self.prime))
        if self.frac_bits is None:
            object.__setattr__(self, "frac_bits", default_frac_bits(self._field))
        object.__setattr__(self, "_networks", {})  # complete networks by size, built once
        from parties.audit.numbering import setup_calls

        setup_calls(self.keys)  # an unknown key setup is the caller's error, named here

    @property
    def field(self) -> PrimeField:
        return self._field

    def __call__(
        self, parties: Sequence[Party], randomness: RandomnessFactory
    ) -> Mapping[int, View]:
        from parties.audit.numbering import numbered_as_run
        from parties.audit.randomness import affine_oracle

        network = self.network
        if network is None:
            network = self._networks.setdefault(len(parties), Network.build(len(parties)))
        if self.oracle == "affine":
            randomness = affine_oracle(randomness)
        simulation = Simulation(network, prime=self._field.p, frac_bits=self.frac_bits,
                                seed=self.seed, sealing=False, keys="none", record_draws=True,
                                randomness=randomness, faults=self.faults)
        try:
            return simulation.run(numbered_as_run(parties, self.keys)).views
        except ProtocolAbort as abort:
            # an aborted run is an observation too: the views hold the notices the parties
            # got ("party m aborted in call c"), which the audits' pattern check compares
            views = getattr(abort, "views", None)
            if views is None:
                raise
            return AbortedRun(views, abort.party, abort.call, abort.reason,
                              refused=isinstance(abort, InputError))


def audit(
    program: Program | Sequence[Party],
    inputs: Sequence[Any] | None,
    coalition: Sequence[int],
    *,
    prime: int | str,
    method: str = "simulation",
    trials: int = 200,
    alpha: float = 1e-3,
    seed: int = 0,
    protocol: Target = None,
    variant: str | None = None,
    calls: Sequence[int] | None = None,
    pairs: int = 6,
    max_runs: int = 100_000,
    frac_bits: int | None = None,
    network: Network | None = None,
    progress: Progress | None = None,
    oracle: str | None = None,
) -> AuditResult:
    """Audit ``program`` on ``inputs`` for ``coalition``, run on the SimPy driver.

    :func:`parties.audit.audit` with a :class:`SimPyRunner` in GF(``prime``) whose local coins
    come from ``seed``; see there for the arguments. ``frac_bits`` is the fixed-point
    precision for programs that encode real values (default 24, as a :class:`Simulation`'s).

    A real-valued program is checked before it is audited (:mod:`sim.fixed_point_checks`): an
    input the encoding cannot represent (a nonzero value that rounds to 0 at ``frac_bits``),
    or an output of a run on the audit's inputs that is NaN or infinite, is an
    :class:`~protocols.errors.InputError` naming the value — an audit of garbage is no verdict.

    ``oracle`` is the PRG expansion of the audited runs (:class:`SimPyRunner`); by default the
    simulation method of a SecAgg target programs it (``"affine"``, :func:`default_oracle`):
    with the real AES expansion a masked input that leaves out its pair masks on both sides is
    related to what the aggregator unmasks only through the PRG, which no value test sees.

    >>> from protocols.secure_sum import secure_sum_field
    >>> from protocols.field import prime_field
    >>> F = prime_field(2**61 - 1)
    >>> inputs = [F.elements([1, 2]), F.elements([3, 4]), F.elements([5, 6])]
    >>> result = audit(lambda ctx, x: secure_sum_field(ctx, x, "prg"), inputs, [0],
    ...                prime="2^61-1", trials=40)
    >>> result.verdict
    'private'
    """
    from parties.audit import audit as audit_with
    from parties.audit.arguments import check_audit_inputs
    from sim.fixed_point_checks import check_defined_outputs, check_representable

    oracle, variant = default_oracle(method, protocol, variant, oracle)
    runner = SimPyRunner(prime, frac_bits, seed, network, oracle=oracle)
    if callable(program) and inputs is not None:
        check_audit_inputs(inputs, runner.field, field_only=method != "simulation")
        check_representable(inputs, runner.frac_bits)
        check_defined_outputs(runner, program, inputs)
    return audit_with(program, inputs, coalition, runner=runner, method=method, trials=trials,
                      alpha=alpha, seed=seed, protocol=protocol, variant=variant, calls=calls,
                      pairs=pairs, max_runs=max_runs, progress=progress)


def default_oracle(method: str, protocol: Target, variant: str | None,
                   oracle: str | None) -> tuple[str, str | None]:
    """The audited runs' PRG expansion and the simulator's variant to match it.

    An explicit ``oracle`` is kept (``"aes"`` or ``"affine"``). Otherwise the simulation
    method of a target that names SecAgg programs the oracle, as Bonawitz et al.'s simulator
    does (Thm. 6.3), and tells the simulator through the variant (``",oracle=affine"``); every
    other audit runs the real AES expansion.
    """
    if oracle is not None:
        if oracle not in ("aes", "affine"):
            raise InputError(f"oracle = {oracle!r} must be 'aes' or 'affine'")
        chosen = oracle
    else:
        if isinstance(protocol, str) or hasattr(protocol, "name"):
            names: list[Any] = [protocol]
        elif isinstance(protocol, Sequence):
            names = list(protocol)
        else:  # None, or a malformed target the audit itself refuses
            names = []
        secagg_named = any(getattr(n, "name", n) == "secagg" for n in names)
        chosen = "affine" if method == "simulation" and secagg_named else "aes"
    if chosen == "affine" and "oracle=" not in (variant or ""):
        variant = "oracle=affine" if not variant else f"{variant},oracle=affine"
    return chosen, variant


def secure_sum_program(variant: str, label: str = "x") -> FieldProgram:
    """``program(ctx, x)``: SecureSum of a vector of field elements (``secure_sum_field``)."""

    def run(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secure_sum_field(ctx, x, variant, label=label))  # type: ignore[arg-type]

    return run


@dataclass(frozen=True)
class AuditTarget:
    """What a scenario's audits examine.

    Attributes
    ----------
    parties : tuple of Party
        The parties of the user's run (programs and inputs); the simulation method replays
        them.
    protocol : str or tuple of (str or Declaration)
        The protocol(s) under audit, named by the algorithm's experiment, not by its party
        programs: their declarations (:mod:`protocols.registry`) judge every call — outputs
        against the functionality, messages against the simulator — and a call of any other
        name is "not applicable".
    variant : str, optional
        Its variant.
    field_program : callable, optional
        For the A/B and exact methods: ``program(ctx, x)`` on vectors of field elements whose
        output is their sum (None when the algorithm has none).
    field_inputs : tuple of ndarray, optional
        The field inputs of the user's run of ``field_program``.
    faults : FaultPlan, optional
        The run's injected faults, replayed in every run the simulation method records.
    oracle : {"aes", "affine"}
        The PRG expansions of the runs the simulation method records (:class:`SimPyRunner`):
        ``"affine"`` when the protocol's simulator programs the oracle (SecAgg).
    field_reason : str
        Why the protocol has no field program for the other methods, when it is more than
        "an algorithm on data" (SecAgg: its aggregator and dropouts); their ``not applicable``
        names it.
    """

    parties: tuple[Party, ...]
    protocol: str | tuple[Any, ...] = "secure_sum"
    variant: str | None = None
    field_program: FieldProgram | None = None
    field_inputs: tuple[np.ndarray, ...] | None = None
    faults: FaultPlan | None = None
    oracle: str = "aes"
    field_reason: str = ""  # why there is no field program (named in the methods' answer)


def run_audit(
    spec: AuditSpec,
    target: AuditTarget,
    *,
    prime: int,
    frac_bits: int,
    seed: int,
    network: Network | None = None,
    progress: Progress | None = None,
    index: int = 0,
) -> AuditResult:
    """Run one ``[[audit]]`` of a scenario (the ``index``-th) against the algorithm's run."""
    from parties.audit import NOT_APPLICABLE, AuditResult, keyflow
    from parties.audit import audit as audit_with
    from parties.audit.functionality import functionality_audit, judged_inputs
    from parties.audit.linear import linear_audits

    audit_seed = audit_seed_of(seed, index)
    common = {"trials": spec.trials, "alpha": spec.alpha, "seed": audit_seed,
              "calls": spec.calls, "progress": progress}
    if spec.method == "simulation":
        runner = SimPyRunner(prime, frac_bits, seed, network, target.faults, target.oracle)
        result = audit_with(target.parties, None, spec.coalition, runner=runner,
                            method="simulation", protocol=target.protocol,
                            variant=target.variant, **common)
    elif target.field_program is None:
        result = AuditResult(spec.coalition, spec.method, NOT_APPLICABLE, details={
            "reason": f"the {spec.method} method re-runs the program on other field inputs "
                      "(the same outputs, or chosen probes), which only a program on field "
                      "vectors whose output is a sum allows"
                      + (f" — {target.field_reason}" if target.field_reason else "")
                      + "; audit this algorithm with method = 'simulation'"})
    elif spec.method == "linear":
        runner = SimPyRunner(prime, 0, seed, network)
        build = field_builder(target.field_program)
        values = list(target.field_inputs or ())
        result = functionality_audit(
            runner, build(values), spec.coalition, method="linear",
            seed=audit_seed, protocol=target.protocol, variant=target.variant,
            inputs=judged_inputs(runner, build, values, spec.coalition, seed=audit_seed,
                                 protocol=target.protocol, variant=target.variant),
        )
        if result is None:
            other = keyflow.other_inputs(runner.field, values, spec.coalition, audit_seed)
            flow = keyflow.trace(runner, build(values), spec.coalition, audit_seed,
                                 None if other is None else build(other))
            result = (keyflow.not_applicable_linear(spec.coalition, flow) if flow.beyond_draws else
                      linear_audits(runner, build, [x.size for x in target.field_inputs or ()],
                                    [spec.coalition], probes=spec.probes, seed=audit_seed,
                                    progress=progress)[0])
    elif spec.method == "statistical":
        runner = SimPyRunner(prime, 0, seed, network)
        result = audit_with(target.field_program, list(target.field_inputs or ()),
                            spec.coalition, runner=runner, method="statistical",
                            pairs=spec.pairs, protocol=target.protocol, **common)
    else:
        tiny = prime_field(spec.prime)
        rng = seeds.rng(audit_seed, "audit.exact_inputs")
        n_parties = len([p for p in target.parties if p.role == "site"])
        inputs = [tiny.random(rng, 1) for _ in range(n_parties)]
        runner = SimPyRunner(spec.prime, 0, seed, Network.build(n_parties))
        result = audit_with(target.field_program, inputs, spec.coalition, runner=runner,
                            method="exact", max_runs=spec.max_runs, protocol=target.protocol,
                            **common)
    if target.variant:
        named = (target.protocol if isinstance(target.protocol, str)
                 else " + ".join(getattr(p, "name", p) for p in target.protocol))
        result.details.setdefault("protocol", f"{named} ({target.variant})")
    return result


def field_builder(program: FieldProgram) -> Callable[[Sequence[np.ndarray]], list[Party]]:
    """``make_parties(inputs)``: data holders 0..M−1 running ``program(ctx, x)`` (its input
    passed under the name its signature gives, :func:`parties.audit.input_name`)."""
    from parties.audit import input_name

    name = input_name(program)
    return lambda values: site_parties(program, [{name: v} for v in values])


def audit_seed_of(seed: int, index: int) -> int:
    """The seed of the ``index``-th ``[[audit]]`` of a run with seed ``seed``."""
    return seeds.derive_int(seed, "audit", index=(index,), bits=32)


def first_call_inputs(views: Mapping[int, View], sites: Sequence[int],
                      protocol: str) -> tuple:
    """The field inputs each site gave to the first call of ``protocol`` in a run."""
    out = []
    for m in sites:
        for call, _, value in views[m].protocol_inputs:
            if call is not None and call.protocol == protocol:
                out.append(np.asarray(value))
                break
        else:
            raise ValueError(f"party {m} made no call of {protocol}")
    return tuple(out)
