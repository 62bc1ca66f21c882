"""The public registry of protocol declarations: functionality, simulator, sub-protocols.

Each protocol registers one :class:`Declaration`: its *ideal functionality* (what its declared
outputs must equal given every party's inputs to the call, :mod:`protocols.functionality`),
its *simulator* (the view a coalition must be able to produce from its inputs and those
outputs, :mod:`protocols.simulator`), how the outputs determine the honest inputs when they do
(one honest party of a sum), the protocols it calls in turn (NormedSecureSum draws on a
dealer) and, optionally, its declared cost (rounds, messages and elements per party per call,
which :func:`sim.contract.check_declared_cost` holds a run's ledger to).

A user's own protocol is declared the same way, with one call — :func:`declare_protocol` — and
reaches the audits by one of two routes, neither of which writes any shared state:

* passed explicitly: ``audit(..., protocol=DECLARATION)`` (or a list of them); the judges
  themselves come from ``resolve(target, with_declaration(DECLARATION))``;
* installed: a distribution that names it in the entry-point group ``mpcsim.protocols``
  (``[project.entry-points."mpcsim.protocols"] weighted_average = "pkg.module:DECLARATION"``)
  is found by :func:`default_registry`, which every audit reads when given no registry.

There is deliberately no ``register()``: a registry that modules write to at import time would
make a verdict depend on which modules happened to be imported before the audit, replays on
what ran earlier in the process, and would let a program install its own judge. An entry point
may not replace a built-in declaration.

The program never picks its own judge. A program names its calls (``ctx.new_call(name)``), but
the *audit target* names the protocol under audit (:func:`resolve`): the calls of that protocol
and of the protocols it declares it uses are judged by their declarations; a call under any
other name is not part of the audited protocol, and the audit answers "not applicable" naming
it (or, when it declares an output to the coalition, "leak": an output beyond the
functionality). With no protocol named, each call is judged by the registered declaration of
its own name, and a name the registry does not know is "not applicable" — never "private".
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from protocols import (
    all_gather,
    all_reduce,
    cape_noise_plans,
    cape_simulator,
    cape_staged_simulator,
    correlated_noise,
    normed_secure_sum_ideal,
    normed_secure_sum_simulator,
    public_coin,
    ring_all_reduce,
    secagg,
    secagg_simulator,
    secure_sum,
)
from protocols.errors import InputError
from protocols.functionality import Functionality, no_outputs
from protocols.mpc import dealer
from protocols.simulator import CallView, Simulator

HonestInputs = Callable[[CallView], Mapping[int, np.ndarray] | None]
"""``solve(view)``: the honest parties' inputs to a call when its outputs determine them."""

DeclaredCost = Callable[..., Any]
"""``cost(n_parties, **params)``: what one party sends in one call — an object with integer
attributes ``rounds``, ``messages_sent`` and ``elements_sent`` (:class:`protocols.secure_sum.
Cost`); ``params`` are the call's sizes (``length=d``), as the protocol documents them."""

ENTRY_POINT_GROUP = "mpcsim.protocols"
"""The entry-point group through which an installed distribution declares protocols."""


@dataclass(frozen=True)
class Declaration:
    """What a protocol declares about itself, for audits.

    Attributes
    ----------
    name : str
        The protocol name its calls carry (``ctx.new_call(name)``).
    functionality : callable
        ``ideal(instance) -> {label: Ideal}`` (:data:`protocols.functionality.Functionality`).
    simulator : callable
        ``factory(variant) -> Simulator`` (a :class:`~protocols.simulator.NoSimulator` when
        none is given).
    honest_inputs : callable, optional
        ``solve(view)``: the honest inputs when the call's outputs and the coalition's inputs
        determine them (else None); the simulator of such a call is given them.
    uses : tuple of str
        Protocols whose calls are part of this one (a dealer, an inner SecureSum).
    cost : callable, optional
        ``cost(n_parties, **params)``, the declared cost of one call per party
        (:data:`DeclaredCost`); None when the protocol declares none.
    """

    name: str
    functionality: Functionality
    simulator: Callable[[str | None], Simulator]
    honest_inputs: HonestInputs | None = None
    uses: tuple[str, ...] = ()
    cost: DeclaredCost | None = None


def _fixed(sim: Simulator) -> Callable[[str | None], Simulator]:
    return lambda variant: sim


REGISTRY: Mapping[str, Declaration] = MappingProxyType({d.name: d for d in (
    Declaration("secure_sum", secure_sum.functionality, secure_sum.SecureSumSimulator,
                secure_sum.honest_inputs, cost=secure_sum.call_cost),
    Declaration("all_reduce", all_reduce.functionality, all_reduce.AllReduceSimulator,
                all_reduce.honest_inputs, uses=("secure_sum",)),
    Declaration(ring_all_reduce.PROTOCOL, all_reduce.functionality,
                ring_all_reduce.RingAllReduceSimulator, all_reduce.honest_inputs),
    Declaration("normed_secure_sum", normed_secure_sum_ideal.functionality,
                normed_secure_sum_simulator.NormedSecureSumSimulator, uses=("dealer",)),
    Declaration("dealer", no_outputs, _fixed(dealer.SIMULATOR)),
    Declaration("cape", correlated_noise.functionality, _fixed(cape_simulator.SIMULATOR)),
    Declaration("secagg", secagg.functionality, secagg_simulator.SecAggSimulator),
    Declaration("all_gather", all_gather.functionality, all_gather.AllGatherSimulator,
                all_gather.honest_inputs, cost=all_gather.all_gather_cost),
    Declaration(public_coin.SKETCH_SEED, public_coin.PublicCoin(),
                public_coin.PublicCoinSimulator),
)})
"""Protocol name → its declaration: every protocol of this package, each with a simulator
(none declares :class:`~protocols.simulator.NoSimulator`); CAPE's needs the run's noise plan,
which :func:`cape_declaration` gives it (the bare entry answers "not applicable" saying so)."""


def cape_declaration(
    plan: cape_noise_plans.NoisePlan | Mapping[int, cape_noise_plans.NoisePlan], frac_bits: int,
    budget: cape_simulator.Budget | Mapping[int, cape_simulator.Budget] | None = None,
    aggregator: int | None = None, generator: int | None = None,
) -> Declaration:
    """CAPE's declaration with the declared noise plan (and budget): pass it as ``protocol=``.

    The audit target, not the program, declares the law the releases are held to
    (:class:`protocols.cape_simulator.CapeSimulator`). A run whose CAPE calls have plans of
    their own (capeAGN's two stages) declares a mapping from each CAPE call's number to its
    plan — and ``budget`` one budget, or a mapping of the same calls
    (:class:`~protocols.cape_staged_simulator.StagedCapeSimulator`).

    Raises
    ------
    InputError
        An empty mapping of plans, or budgets for calls that have no plan.
    """
    if not isinstance(plan, Mapping):
        if isinstance(budget, Mapping):
            raise InputError("budget is a mapping of calls; declare plan as one too")
        sim: Simulator = cape_simulator.CapeSimulator(plan, frac_bits, aggregator, generator,
                                                      budget)
        return Declaration("cape", correlated_noise.functionality, _fixed(sim))
    if not plan:
        raise InputError("plan = {} declares no CAPE call; map each call number to its plan")
    budgets = budget if isinstance(budget, Mapping) else dict.fromkeys(plan, budget)
    if set(budgets) - set(plan):
        raise InputError(f"budget names CAPE calls {sorted(set(budgets) - set(plan))} that "
                         f"have no plan (plans: calls {sorted(plan)})")
    sim = cape_staged_simulator.StagedCapeSimulator({
        int(call): cape_simulator.CapeSimulator(p, frac_bits, aggregator, generator,
                                                budgets.get(call))
        for call, p in plan.items()})
    return Declaration("cape", correlated_noise.functionality, _fixed(sim))


def declare_protocol(
    name: str,
    *,
    functionality: Functionality,
    simulator: Simulator | Callable[[str | None], Simulator],
    cost: DeclaredCost | None = None,
    honest_inputs: HonestInputs | None = None,
    uses: Sequence[str] = (),
) -> Declaration:
    """Declare a protocol: the one call a user's module (or a built-in one) makes.

    Parameters
    ----------
    name : str
        The name its calls carry (``ctx.new_call(name)``).
    functionality : callable
        ``ideal(instance) -> {label: Ideal}``: what each declared output must equal
        (:mod:`protocols.functionality`); the audits check every output against it.
    simulator : Simulator or callable
        A simulator (:mod:`protocols.simulator`), or ``factory(variant) -> Simulator``.
    cost : callable, optional
        ``cost(n_parties, **params)`` with ``rounds``, ``messages_sent`` and
        ``elements_sent`` per party per call (:func:`sim.contract.check_declared_cost`).
    honest_inputs : callable, optional
        ``solve(view)``: the honest inputs when the outputs determine them.
    uses : sequence of str
        Protocols whose calls are part of this one.

    Returns
    -------
    Declaration
        Pass it to an audit as ``protocol=``, or name it in an ``mpcsim.protocols`` entry
        point.

    Raises
    ------
    InputError
        Naming the argument that is not what it must be.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise InputError(f"name = {name!r} must be an identifier (the name the program passes "
                         "to ctx.new_call)")
    if not callable(functionality):
        raise InputError(f"functionality = {functionality!r} must be a callable "
                         "ideal(instance) -> {label: Ideal}")
    if isinstance(simulator, type) or not hasattr(simulator, "simulate"):
        if not callable(simulator):
            raise InputError(f"simulator = {simulator!r} must be a Simulator (an object with "
                             "simulate(view, rng, n)) or a factory(variant) -> Simulator")
        factory = simulator
    else:
        factory = _fixed(simulator)
    for argument, value in (("cost", cost), ("honest_inputs", honest_inputs)):
        if value is not None and not callable(value):
            raise InputError(f"{argument} = {value!r} must be a callable or None")
    if isinstance(uses, str) or not all(isinstance(u, str) for u in uses):
        raise InputError(f"uses = {uses!r} must be a sequence of protocol names")
    return Declaration(name, functionality, factory, honest_inputs, tuple(uses), cost)


def installed_declarations(
    entry_points: Sequence[importlib.metadata.EntryPoint] | None = None,
) -> Mapping[str, Declaration]:
    """The declarations installed distributions name in the ``mpcsim.protocols`` group.

    Read afresh on every call (the environment is the state; nothing is cached here).

    Raises
    ------
    InputError
        When an entry point does not load, does not name a :class:`Declaration` of its own
        name, or would replace a built-in protocol.
    """
    found = (importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
             if entry_points is None else entry_points)
    out: dict[str, Declaration] = {}
    for point in found:
        where = f"entry point {point.name} = {point.value!r} ({ENTRY_POINT_GROUP})"
        try:
            declared = point.load()
        except Exception as exc:  # an installed package's import error is the user's to fix
            raise InputError(f"{where} does not load: {type(exc).__name__}: {exc}") from exc
        if not isinstance(declared, Declaration) or declared.name != point.name:
            raise InputError(f"{where} must name a Declaration (declare_protocol) whose name is "
                             f"{point.name!r}, got {declared!r:.80}")
        if point.name in REGISTRY:
            raise InputError(f"{where} would replace the built-in protocol {point.name!r}; "
                             "choose another name")
        out[point.name] = declared
    return MappingProxyType(out)


def default_registry() -> Mapping[str, Declaration]:
    """The built-in declarations and those installed distributions declare."""
    installed = installed_declarations()
    return MappingProxyType({**REGISTRY, **installed}) if installed else REGISTRY


def with_declaration(
    declaration: Declaration, registry: Mapping[str, Declaration] | None = None
) -> Mapping[str, Declaration]:
    """A registry with ``declaration`` added (or replacing the one of its name); by default
    on :func:`default_registry`."""
    base = default_registry() if registry is None else registry
    return MappingProxyType({**base, declaration.name: declaration})


Target = str | Declaration | Sequence[str | Declaration] | None
"""What an audit target names: a protocol, its declaration, several, or None (each call's own)."""


@dataclass(frozen=True)
class Judges:
    """Which declaration judges a call, by the rule of the audit target (module docstring).

    Attributes
    ----------
    registry : mapping
        Declarations by name (the target's own declarations included).
    named : tuple of str
        The protocols the target names (empty: none named).
    allowed : frozenset of str or None
        Those and every protocol they use, transitively (None: any registered name).
    """

    registry: Mapping[str, Declaration]
    named: tuple[str, ...]
    allowed: frozenset[str] | None

    def judge(self, call_protocol: str) -> Declaration | None:
        """The declaration that judges a call of that name, or None."""
        if self.allowed is not None and call_protocol not in self.allowed:
            return None
        return self.registry.get(call_protocol)

    def why_not(self, call_protocol: str) -> str:
        """Why a call of that name has no judge."""
        if self.allowed is not None and call_protocol not in self.allowed:
            return (f"the audit target declares {' and '.join(self.named)} (calls: "
                    f"{', '.join(sorted(self.allowed))}), and a call named {call_protocol!r} "
                    "is not part of it: a program does not choose its own judge")
        return (f"no protocol {call_protocol!r} is registered (known: "
                f"{', '.join(sorted(self.registry))}); name the protocol under audit with "
                "protocol = ... (a registered name or a Declaration)")


def resolve(target: Target, registry: Mapping[str, Declaration] | None = None) -> Judges:
    """The judges of an audit target (module docstring for the rule).

    An unknown name judges nothing: the audit of its calls says "not applicable". With no
    ``registry``, the :func:`default_registry` (built-in and installed declarations).

    Raises
    ------
    InputError
        If ``target`` is not a name, a Declaration, or a non-empty sequence of them.
    """
    if registry is None:
        registry = default_registry()
    if target is None:
        return Judges(registry, (), None)
    items = [target] if isinstance(target, str | Declaration) else (
        list(target) if isinstance(target, Sequence) else [])
    if not items or not all(isinstance(i, str | Declaration) for i in items):
        raise InputError(f"protocol = {target!r} must name the protocol under audit: a "
                         f"registered name ({', '.join(sorted(registry))}), a Declaration, "
                         "or a list of them")
    regs = dict(registry)
    named = []
    for item in items:
        if isinstance(item, Declaration):
            regs[item.name] = item
            named.append(item.name)
        else:
            named.append(item)
    allowed: set[str] = set()
    todo = list(named)
    while todo:
        name = todo.pop()
        if name in allowed:
            continue
        allowed.add(name)
        declared = regs.get(name)
        if declared is not None:
            todo.extend(declared.uses)
    return Judges(MappingProxyType(regs), tuple(named), frozenset(allowed))
