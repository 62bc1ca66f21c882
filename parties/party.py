"""Parties: who takes part in a run, what private data they hold, which program they run.

Data-holding parties ("sites") have ids 0..M−1. Other roles — an untrusted aggregator, a
trusted dealer or noise generator, a server — get the ids after them and a ``role`` name.
A role is a program plus the data it holds, not a subclass: the same :class:`Party` record
describes all of them. A party's randomness is not stored here; the simulation spawns it from
the scenario seed, per party and per purpose, and records the seeds in the party's view.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocols.errors import InputError

SITE = "site"

Program = Callable[..., Generator[Any, Any, Any]]


@dataclass(frozen=True)
class Party:
    """One participant.

    Parameters
    ----------
    id : int
        The party id.
    program : callable
        ``program(ctx, **inputs)`` returns the party's generator of effects.
    inputs : mapping
        The party's private inputs (its data shard and parameters), passed to ``program`` by
        keyword and recorded in its view.
    role : str
        ``"site"`` for data holders, otherwise the role's name.
    """

    id: int
    program: Program
    inputs: Mapping[str, Any] = field(default_factory=dict)
    role: str = SITE


def check_parties(parties: Sequence[Party]) -> tuple[tuple[int, ...], dict[int, str]]:
    """Validate a party list: ids unique, data holders are 0..M−1, other roles follow.

    Returns the data holders' ids and the role of every participant.
    """
    ids = [p.id for p in parties]
    if len(set(ids)) != len(ids):
        raise InputError(f"party ids must be unique, got {sorted(ids)}")
    sites = sorted(p.id for p in parties if p.role == SITE)
    others = sorted(p.id for p in parties if p.role != SITE)
    if sites != list(range(len(sites))):
        raise InputError(f"data-holding parties must have ids 0..M−1, got {sites}")
    if others and others != list(range(len(sites), len(sites) + len(others))):
        raise InputError(
            f"parties with other roles must have ids {len(sites)}..{len(ids) - 1}, got {others}"
        )
    if len(sites) < 1:
        raise InputError("a run needs at least one data-holding party")
    return tuple(sites), {p.id: p.role for p in parties}


def site_parties(program: Program, inputs: Sequence[Mapping[str, Any]]) -> list[Party]:
    """Data holders 0..M−1 all running ``program``, party m with ``inputs[m]``."""
    return [Party(m, program, dict(kw)) for m, kw in enumerate(inputs)]
