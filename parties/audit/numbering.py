"""Call numbers in an audit's runs: the same as in a real run of the same program.

A run's parties first agree on their pairwise keys (:mod:`protocols.crypto.key_agreement`, with the
default ``keys = "x25519"``): that setup is call 0, so the program's first call is call 1 of
the run's ledger and views. An audit's runs inject every mask source and agree on no key, so
without more their program's first call would be call 0, and a location an audit names
(``secure_sum#0.share from 1 to 0``) would be one less than the same message's in the ledger
of the run the user made.

:func:`numbered_as_run` closes that gap without touching the programs or the driver: each
party's program is preceded by the setup's call — the counter advanced once, under the label
``key_agreement``, and the setup marked over (:meth:`PartyContext.end_setup`), exactly as the
run's key agreement leaves the context — but with no message, since the audit's randomness
stands for the keys. So the audited runs number their calls as the real run does, and the
audits' ``calls=`` selections, their verdicts' ``call`` and ``message``, and a scenario's
``[[fault]]`` locations all mean the real run's call numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

from parties.party import Party, Program
from protocols.context import PartyContext
from protocols.crypto.key_agreement import PROTOCOL as KEY_AGREEMENT
from protocols.errors import InputError

SETUP_CALLS = {"x25519": 1, "preshared": 0, "none": 0}
"""Calls a run's key setup takes before the program's first: ``keys`` → count (the keys of
:class:`sim.simulation.Simulation`; only X25519 agreement exchanges messages)."""


def setup_calls(keys: str) -> int:
    """How many calls the key setup ``keys`` takes before a program's first call."""
    if keys not in SETUP_CALLS:
        raise InputError(f"keys = {keys!r} is unknown; use one of {tuple(SETUP_CALLS)}")
    return SETUP_CALLS[keys]


def _after_setup(program: Program) -> Callable[..., Generator[Any, Any, Any]]:
    """``program`` preceded by the key setup's call, without its messages."""

    def run(ctx: PartyContext, **inputs: Any) -> Generator[Any, Any, Any]:
        if any(p != ctx.party for p in ctx.roles):  # agreement takes a call when there are peers
            ctx.new_call(KEY_AGREEMENT)
            ctx.end_setup()
        return (yield from program(ctx, **inputs))

    return run


def numbered_as_run(parties: Sequence[Party], keys: str = "x25519") -> list[Party]:
    """``parties`` whose programs number their calls as a run with key setup ``keys`` does.

    Parameters
    ----------
    parties : sequence of Party
        The parties of an audited run.
    keys : {"x25519", "preshared", "none"}
        The key setup of the run the audit stands for (a :class:`~sim.simulation.Simulation`'s
        ``keys``; its default ``"x25519"`` makes the program's first call call 1).

    Returns
    -------
    list of Party
        The same parties (ids, inputs, roles); with ``"x25519"`` each program first advances
        its call counter past the key agreement's call.
    """
    if setup_calls(keys) == 0:
        return list(parties)
    return [Party(p.id, _after_setup(p.program), p.inputs, p.role) for p in parties]
