"""The public registry of protocol declarations: functionality, simulator, sub-protocols.

Each protocol registers one :class:`Declaration`: its *ideal functionality* (what its declared
outputs must equal given every party's inputs to the call, :mod:`protocols.functionality`),
its *simulator* (the view a coalition must be able to produce from its inputs and those
outputs, :mod:`protocols.simulator`), how the outputs determine the honest inputs when they do
(one honest party of a sum), and the protocols it calls in turn (NormedSecureSum draws on a
dealer). A user's own protocol writes a :class:`Declaration` the same way and hands it to the
audit (``protocol=Declaration(...)``, or ``registry=with_declaration(...)``).

The program never picks its own judge. A program names its calls (``ctx.new_call(name)``), but
the *audit target* names the protocol under audit (:func:`resolve`): the calls of that protocol
and of the protocols it declares it uses are judged by their declarations; a call under any
other name is not part of the audited protocol, and the audit answers "not applicable" naming
it (or, when it declares an output to the coalition, "leak": an output beyond the
functionality). With no protocol named, each call is judged by the registered declaration of
its own name, and a name the registry does not know is "not applicable" — never "private".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from protocols import (
    all_reduce,
    cape_simulator,
    correlated_noise,
    normed_secure_sum,
    secagg,
    secure_sum,
)
from protocols.errors import InputError
from protocols.functionality import Functionality, no_outputs
from protocols.mpc import dealer
from protocols.simulator import CallView, Simulator

HonestInputs = Callable[[CallView], Mapping[int, np.ndarray] | None]
"""``solve(view)``: the honest parties' inputs to a call when its outputs determine them."""


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
    """

    name: str
    functionality: Functionality
    simulator: Callable[[str | None], Simulator]
    honest_inputs: HonestInputs | None = None
    uses: tuple[str, ...] = ()


def _fixed(sim: Simulator) -> Callable[[str | None], Simulator]:
    return lambda variant: sim


REGISTRY: Mapping[str, Declaration] = MappingProxyType({d.name: d for d in (
    Declaration("secure_sum", secure_sum.functionality, secure_sum.SecureSumSimulator,
                secure_sum.honest_inputs),
    Declaration("all_reduce", all_reduce.functionality, all_reduce.AllReduceSimulator,
                all_reduce.honest_inputs, uses=("secure_sum",)),
    Declaration("normed_secure_sum", normed_secure_sum.functionality,
                normed_secure_sum.NormedSecureSumSimulator, uses=("dealer",)),
    Declaration("dealer", no_outputs, _fixed(dealer.SIMULATOR)),
    Declaration("cape", correlated_noise.functionality, _fixed(cape_simulator.SIMULATOR)),
    Declaration("secagg", secagg.functionality, secagg.SecAggSimulator),
)})
"""Protocol name → its declaration: every protocol of this package."""


def cape_declaration(plan: correlated_noise.NoisePlan, frac_bits: int,
                     budget: cape_simulator.Budget | None = None, aggregator: int | None = None,
                     generator: int | None = None) -> Declaration:
    """CAPE's declaration with the declared noise plan (and budget): pass it as ``protocol=``.

    The audit target, not the program, declares the law the releases are held to
    (:class:`protocols.cape_simulator.CapeSimulator`).
    """
    sim = cape_simulator.CapeSimulator(plan, frac_bits, aggregator, generator, budget)
    return Declaration("cape", correlated_noise.functionality, _fixed(sim))


def with_declaration(
    declaration: Declaration, registry: Mapping[str, Declaration] = REGISTRY
) -> Mapping[str, Declaration]:
    """A registry with ``declaration`` added (or replacing the one of its name)."""
    return MappingProxyType({**registry, declaration.name: declaration})


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


def resolve(target: Target, registry: Mapping[str, Declaration] = REGISTRY) -> Judges:
    """The judges of an audit target (module docstring for the rule).

    An unknown name judges nothing: the audit of its calls says "not applicable".

    Raises
    ------
    InputError
        If ``target`` is not a name, a Declaration, or a non-empty sequence of them.
    """
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
