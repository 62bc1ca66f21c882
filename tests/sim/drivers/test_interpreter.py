"""One interpreter for every transport: the drivers and the benchmark floor share its loop,
and the simulation reaches a driver through its interface, never by its name."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

from parties.party import site_parties
from protocols.effects import Call, Compute, Output, RecvEach, SendEach
from protocols.errors import InputError, MpcsimError
from sim.drivers.driver import driver_class
from sim.drivers.interpreter import Interpreter
from sim.drivers.simpy_run import SimPyRun
from sim.network import Network
from sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[3]


def test_every_transport_runs_the_shared_interpreter() -> None:
    from sim.drivers.mpi_rank import Run

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from driver_floor import _LeastRun
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for transport in (SimPyRun, Run, _LeastRun):
        assert issubclass(transport, Interpreter)
        # the effect loop and the receives are the interpreter's, not redefined
        for name in ("_party", "_receive", "_receive_each", "_receive_any", "_receive_within",
                     "_record_unread", "_notice"):
            assert name not in vars(transport), f"{transport.__name__} redefines {name}"


def test_simulation_never_branches_on_a_driver_name() -> None:
    tree = ast.parse((ROOT / "sim" / "simulation.py").read_text(encoding="utf-8"))
    names = {node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and node.value in ("simpy", "mpi")}
    assert names <= {"simpy"}  # the default argument, nothing compared with it


def test_an_unknown_driver_is_named() -> None:
    with pytest.raises(InputError, match="'sim2'"):
        driver_class("sim2")
    with pytest.raises(InputError, match="'sim2'"):
        Simulation(driver="sim2")


def _exchange(ctx, x):
    """Each party sends x + its id to every peer, computes, and outputs the sum it received."""
    call = Call("exchange", 0)
    peers = tuple(p for p in ctx.parties if p != ctx.party)
    yield SendEach({p: np.array([x + ctx.party]) for p in peers}, call, "v")
    got = yield RecvEach(peers, call, "v")
    clock = yield Compute(0.25)
    total = sum(int(v[0]) for v in got.values())
    yield Output("total", np.array([total]), call)
    return total, clock


def test_the_interpreter_records_what_each_effect_handed_back() -> None:
    m, x = 4, 10
    sim = Simulation(Network.build(m, latency_ms=0.0), seed=5, keys="preshared")
    result = sim.run(site_parties(_exchange, [{"x": x}] * m))
    for pid in range(m):
        total, clock = result.outputs[pid]
        assert total == sum(x + q for q in range(m) if q != pid)  # closed form
        view = result.views[pid]
        assert len(view.received) == m - 1
        assert view.outputs[0][1] == "total" and int(view.outputs[0][2][0]) == total
        assert view.observed == [("compute", Call("exchange", 0), clock)]
        assert clock >= 0.25


def test_a_yield_that_is_not_an_effect_aborts_naming_the_party() -> None:
    def odd(ctx, x):
        yield "not an effect"

    with pytest.raises(MpcsimError, match="not an effect"):
        Simulation(Network.build(2), seed=1, keys="none", sealing=False).run(
            site_parties(odd, [{"x": 1}] * 2))
