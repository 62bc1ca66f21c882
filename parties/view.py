"""Views: what each party saw, and what a coalition of parties sees together.

A party's view (DESIGN.md) holds its inputs, its random seeds, every message it received and
its outputs. ``inputs`` are the party's program inputs (its data shard and parameters);
``protocol_inputs`` and ``outputs`` list, per protocol call, what the party put into the call
and the call's declared outputs. The driver writes it — programs cannot forget to log — and
each received message lies in exactly one view. A coalition's view is the union of its
members' views; the honest-but-curious model lets the members pool everything they saw.

When a run records mask draws (audits ask for it), ``draws`` also holds every field element a
party drew from its :class:`~protocols.context.Randomness`, keyed by stream; the draws are
functions of the seeds, recorded so that an audit can treat them as part of the view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocols.effects import Call
from protocols.errors import InputError


@dataclass(frozen=True)
class Message:
    """One received message, as its receiver saw it (after unsealing)."""

    sender: int
    protocol: str
    call: int
    step: str
    round: int
    payload: np.ndarray


@dataclass
class View:
    """Everything one party saw in a run."""

    party: int
    role: str
    inputs: dict[str, Any] = field(default_factory=dict)
    seeds: dict[str, Any] = field(default_factory=dict)
    received: list[Message] = field(default_factory=list)
    protocol_inputs: list[tuple[Call | None, str, Any]] = field(default_factory=list)
    outputs: list[tuple[Call | None, str, Any]] = field(default_factory=list)
    draws: list[tuple[tuple[Any, ...], np.ndarray]] = field(default_factory=list)

    def received_from(self, sender: int) -> list[Message]:
        return [m for m in self.received if m.sender == sender]


@dataclass(frozen=True)
class Coalition:
    """A set of colluding parties and the union of their views.

    Parameters
    ----------
    members : tuple of int
        The colluding parties (sorted).
    views : mapping of int to View
        The members' views.
    """

    members: tuple[int, ...]
    views: dict[int, View]

    @classmethod
    def of(cls, members: Any, views: dict[int, View]) -> Coalition:
        """The coalition of ``members`` (distinct party ids, at least one) over ``views``.

        Raises
        ------
        InputError
            An empty or repeated member list, a member that is not a party id, or a party
            without a view.
        """
        if isinstance(members, str | bytes) or not hasattr(members, "__iter__"):
            raise InputError(f"coalition = {members!r} must be a list of party ids")
        given = list(members)
        if not given:
            raise InputError("coalition = [] is empty; name at least one party")
        if not all(isinstance(m, int | np.integer) and not isinstance(m, bool) for m in given):
            raise InputError(f"coalition = {given!r} must be a list of party ids (integers)")
        ids = tuple(sorted(int(m) for m in given))
        if len(set(ids)) != len(ids):
            raise InputError(f"coalition = {given!r} repeats a party; list each party once")
        missing = [m for m in ids if m not in views]
        if missing:
            raise InputError(
                f"coalition names part{'ies' if len(missing) > 1 else 'y'} {missing}, but the "
                f"run has parties {sorted(views)}"
            )
        return cls(ids, {m: views[m] for m in ids})

    def received(self) -> list[tuple[int, Message]]:
        """Every (member, message) the coalition received, member by member, in order."""
        return [(m, msg) for m in self.members for msg in self.views[m].received]

    def inputs(self) -> dict[int, dict[str, Any]]:
        return {m: self.views[m].inputs for m in self.members}

    def outputs(self) -> dict[int, list[tuple[Call | None, str, Any]]]:
        return {m: self.views[m].outputs for m in self.members}

    def draws(self) -> list[tuple[int, tuple[Any, ...], np.ndarray]]:
        return [(m, key, values) for m in self.members for key, values in self.views[m].draws]
