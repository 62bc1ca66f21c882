"""Caches a party program can reach hand out objects no party can change.

A ``functools.cache`` in library code is shared by every party of a process (the SimPy driver
runs them all in one): a writable array it returns is a channel from one party's program into
the next party's computation. Every cached function of the library is listed here with sample
arguments, and what it returns must be immutable; a new cache that is not listed fails
:func:`test_every_cache_of_the_library_is_checked`, so it is reviewed before it lands.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import algorithms
import parties
import protocols
import sim
from parties.view import is_immutable
from protocols.mpc import bits
from protocols.mpc.bits import network

SAMPLES: dict[str, tuple[Any, ...]] = {
    "protocols.mpc.bits.network": (13,),
    "protocols.mpc.truncate.inverse_power_of_two": (5, 2**61 - 1),
    "protocols.secagg.neighbourhoods": (5, "harary", 2),
    "parties.audit.compare._noncentrality": (3, 1e-3, 0.9),
}
"""Cached function → sample arguments; the value returned must be immutable."""

NOT_DATA = {
    "protocols.field.mersenne61.mersenne61_kernels":
        "returns the compiled-kernel module (code, not data)",
    "protocols.field.mersenne127._kernels": "returns the compiled-kernel module (code, not data)",
    "protocols.field.ranks._kernels": "returns the compiled-kernel module (code, not data)",
}


def _cached_functions() -> dict[str, Callable[..., Any]]:
    found = {}
    for package in (protocols, algorithms, parties, sim):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.startswith("sim.drivers.mpi"):
                continue  # imports mpi4py at module level; it holds no cache
            module = importlib.import_module(info.name)
            for name, obj in vars(module).items():
                if (callable(obj) and hasattr(obj, "cache_info")
                        and getattr(obj, "__module__", None) == module.__name__):
                    found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_cache_of_the_library_is_checked() -> None:
    found = _cached_functions()
    assert set(found) == set(SAMPLES) | set(NOT_DATA), (
        "list each cached function in SAMPLES (its result must be immutable) or NOT_DATA")


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_cached_values_are_immutable(name: str) -> None:
    value = _cached_functions()[name](*SAMPLES[name])
    assert is_immutable(value), f"{name} hands out a mutable {type(value).__name__}"


def test_a_party_cannot_rewrite_the_sklansky_network_for_the_next() -> None:
    # What a hostile program would try: write into the cached arrays, or flip them writeable.
    levels = network(11)
    hi, lo = levels[1]
    expected = [(np.arange(11)[(np.arange(11) >> i) & 1 == 1]) for i in range(bits.levels(11))]
    with pytest.raises(ValueError):
        hi[0] = 0
    with pytest.raises(ValueError):
        hi.flags.writeable = True
    with pytest.raises(ValueError):
        np.copyto(lo, 0)
    # and the network is still the Sklansky network, computed here from its definition
    for i, (h, partner) in enumerate(network(11)):
        np.testing.assert_array_equal(h, expected[i])
        np.testing.assert_array_equal(partner, ((expected[i] >> i) << i) - 1)


def test_the_immutability_check_catches_a_writable_cache() -> None:
    # the check has the power to fail: a plain array, or a read-only one that can be
    # flipped back, is not immutable
    plain = np.arange(4)
    flippable = np.arange(4)
    flippable.flags.writeable = False
    assert not is_immutable(((plain, plain),))
    assert not is_immutable(((flippable, flippable),))
