"""Parties: who takes part in a run, what private data they hold, which program they run.

Data-holding parties ("sites") have ids 0..M−1. Other roles — an untrusted aggregator, a
trusted dealer or noise generator, a server — get the ids after them and a ``role`` name.
A role is a program plus the data it holds, not a subclass: the same :class:`Party` record
describes all of them. A party's randomness is not stored here; the simulation spawns it from
the scenario seed, per party and per purpose, and records the seeds in the party's view.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Mapping, Sequence
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
    """Validate a party list: ids unique, data holders are 0..M−1, other roles follow, and at
    least two participants of whom at least one holds data.

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
    if not sites or len(ids) < 2:
        raise InputError(
            f"the run has {len(sites)} data-holding part{'y' if len(sites) == 1 else 'ies'} "
            f"among {len(ids)} part{'y' if len(ids) == 1 else 'ies'}; a secure computation needs "
            "M ≥ 2 data holders, or one and another role (give every party a row block or an "
            "input)"
        )
    return tuple(sites), {p.id: p.role for p in parties}


def site_parties(
    program: Program,
    inputs: Sequence[Mapping[str, Any]],
    column_blocks: Collection[str] = (),
) -> list[Party]:
    """Data holders 0..M−1 all running ``program``, party m with ``inputs[m]``.

    The parties' inputs must agree in form: the same keys, and for every array-like value the
    same number of dimensions and the same shape past the first axis (row blocks may differ
    in their number of rows; vectors in their length, which the protocols check). Keys named
    in ``column_blocks`` hold column blocks (DSANLS's general setting: each node's features
    I_r): their number of columns may differ too, and only their first axis must agree.

    Raises
    ------
    InputError
        Naming the party, the key and the shapes that differ.
    """
    if isinstance(inputs, Mapping) or not isinstance(inputs, Sequence) or not all(
        isinstance(kw, Mapping) for kw in inputs
    ):
        raise InputError(
            "inputs must be a list with one mapping of keyword inputs per party, e.g. "
            "[{'x': [1.0]}, {'x': [2.0]}]"
        )
    if inputs:
        keys = set(inputs[0])
        shapes = {key: _shape(inputs[0][key]) for key in keys}
        for m, kw in enumerate(inputs[1:], start=1):
            if set(kw) != keys:
                raise InputError(
                    f"party {m}'s inputs are {sorted(kw)} but party 0's are {sorted(keys)}; "
                    "give every party the same keys"
                )
            for key in keys:
                first, shape = shapes[key], _shape(kw[key])
                if first is None or shape is None:
                    continue
                blocks = "columns" if key in column_blocks else "rows"
                same = first[:1] == shape[:1] if blocks == "columns" else first[1:] == shape[1:]
                if len(first) != len(shape) or not same:
                    raise InputError(
                        f"party {m}'s {key} has shape {shape} but party 0's has shape {first}; "
                        f"every party's input must have the same form (only the number of "
                        f"{blocks} may differ)"
                    )
    return [Party(m, program, dict(kw)) for m, kw in enumerate(inputs)]


def _shape(value: Any) -> tuple[int, ...] | None:
    """The shape of an array-like value (numpy, scipy.sparse, a list of numbers), else None."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple):
        return shape
    if isinstance(value, list | tuple):
        import numpy as np

        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(
                f"an input {value!r:.60} is a ragged or non-numeric list; give an array"
            ) from None
        return arr.shape
    return None
