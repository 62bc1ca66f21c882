"""The cost contract: a run's ledger held to the cost its protocol declares.

DESIGN.md: "each protocol module states its rounds, messages and field elements per party as
formulas of its parameters; a contract test holds the ledger to them". A protocol states them
as ``cost(n_parties, **params)`` in its :class:`~protocols.registry.Declaration`
(:func:`protocols.registry.declare_protocol`, ``cost=``); :func:`check_declared_cost` is that
contract test, for a built-in protocol and for a user's own alike. It reads the ledger only
(every report is a query over the ledger) and compares, for every call of the protocol:

* ``messages_sent`` and ``elements_sent``: what each data holder sent in the call;
* ``rounds``: how many distinct ledger rounds the call's messages span (a message's round is
  one more than the highest round its sender had received before sending).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from protocols.errors import InputError, MpcsimError
from protocols.registry import Declaration
from sim.simulation import Result


class CostMismatch(MpcsimError):
    """The ledger of a run differs from the cost its protocol declares."""


@dataclass(frozen=True)
class MeasuredCost:
    """What the ledger shows for one call of a protocol.

    Attributes
    ----------
    call : int
        The call number.
    rounds : int
        Distinct ledger rounds of the call's messages.
    messages_sent, elements_sent : dict of int to int
        Per data holder: messages and payload elements it sent in the call.
    """

    call: int
    rounds: int
    messages_sent: dict[int, int]
    elements_sent: dict[int, int]


def measured_costs(result: Result, protocol: str) -> list[MeasuredCost]:
    """Every call of ``protocol`` in the run's ledger, in call order."""
    rows = [r for r in result.ledger if r.protocol == protocol]
    by_call: dict[int, list[Any]] = defaultdict(list)
    for row in rows:
        by_call[row.call].append(row)
    out = []
    for call in sorted(by_call):
        messages = dict.fromkeys(result.sites, 0)
        elements = dict.fromkeys(result.sites, 0)
        for row in by_call[call]:
            if row.sender in messages:
                messages[row.sender] += 1
                elements[row.sender] += row.elements
        out.append(MeasuredCost(call, len({r.round for r in by_call[call]}), messages, elements))
    return out


def check_declared_cost(result: Result, declaration: Declaration, **params: Any) -> int:
    """Hold every call of ``declaration``'s protocol in ``result``'s ledger to its declared cost.

    Parameters
    ----------
    result : Result
        A completed run.
    declaration : Declaration
        The protocol's declaration; its ``cost(n_parties, **params)`` gives the cost of one
        call per data holder.
    **params
        The call's parameters as the cost formula names them (``length=d``).

    Returns
    -------
    int
        The number of calls checked (at least 1).

    Raises
    ------
    InputError
        If the declaration has no cost, ``params`` do not fit its formula, or the run made no
        call of the protocol.
    CostMismatch
        Naming the call, the party, the quantity, the declared and the measured value.
    """
    if not isinstance(declaration, Declaration):
        raise InputError(f"declaration = {declaration!r:.80} must be a protocols.registry."
                         "Declaration")
    if declaration.cost is None:
        raise InputError(f"protocol {declaration.name!r} declares no cost; give "
                         "declare_protocol(..., cost=cost(n_parties, **params))")
    n_parties = len(result.sites)
    try:
        declared = declaration.cost(n_parties, **params)
    except TypeError as exc:
        raise InputError(f"the cost formula of {declaration.name!r} does not take "
                         f"{sorted(params)}: {exc}") from exc
    calls = measured_costs(result, declaration.name)
    if not calls:
        raise InputError(f"the run made no call of {declaration.name!r} that sent a message; "
                         "nothing to hold to its declared cost")
    for measured in calls:
        where = f"{declaration.name}#{measured.call}"
        if measured.rounds != declared.rounds:
            raise CostMismatch(f"{where}: the ledger spans {measured.rounds} rounds, the "
                               f"declaration says {declared.rounds}")
        for quantity in ("messages_sent", "elements_sent"):
            want = getattr(declared, quantity)
            for party, got in getattr(measured, quantity).items():
                if got != want:
                    raise CostMismatch(f"{where}: party {party} has {quantity} = {got} in the "
                                       f"ledger, the declaration says {want}")
    return len(calls)
