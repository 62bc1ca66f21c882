"""A job for ``mpiexec``: one ``[[fault]]`` plan injected by the MPI transport.

    mpiexec -n R python mpi_fault_job.py MODE

Modes: ``secagg`` (the SecAgg scenario with two dropouts), and ``crash``, ``crash_at``,
``link_down``, ``delay``, ``tamper``, ``replay`` (a probe: parties 1 and 2 each send party 0
one message, which party 0 collects with ``RecvWithin``). Rank 0 prints one JSON line with
what the test checks (outputs, the fault events, the probe's ledger rows and arrival times, or
the abort).
"""

from __future__ import annotations

import json
import sys

import numpy as np

from parties.party import Party
from protocols.effects import RecvWithin, Send
from protocols.errors import ProtocolAbort
from sim.drivers.mpi_comm import load_mpi
from sim.faults import parse_faults
from sim.network import Network
from sim.runner import run_scenario
from sim.simulation import Simulation

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)

ROOT = MPI.COMM_WORLD.Get_rank() == 0
TIMEOUT_S = 5.0  # party 0's wait: long against a message between two local ranks, loaded

PLANS = {
    "crash": [{"kind": "crash", "party": 1, "call": "probe", "step": "x", "when": "before"}],
    "link_down": [{"kind": "link_down", "link": [1, 0], "at_s": 0.0, "duration_s": 60.0}],
    "delay": [{"kind": "delay", "link": [1, 0], "extra_ms": 400.0}],
    "tamper": [{"kind": "tamper", "link": [1, 0], "call": "probe", "step": "x"}],
    "replay": [{"kind": "replay", "link": [1, 0], "call": "probe", "step": "x"}],
    # party 0 waits for party 1's late message and crashes at 0.3 s, before it comes
    "crash_at": [{"kind": "delay", "link": [1, 0], "extra_ms": 2000.0},
                 {"kind": "crash", "party": 0, "at_s": 0.3}],
}


def probe(ctx):
    call = ctx.new_call("probe")
    if ctx.party == 0:
        got = yield RecvWithin((1, 2), call, "x", TIMEOUT_S)
        return {str(s): int(v[0]) for s, v in got.items()}
    yield Send(0, np.array([10 * ctx.party + 7], dtype=np.int64), call, "x")
    return None


def run_probe(mode: str) -> dict:
    sealed = mode in ("tamper", "replay")
    sim = Simulation(Network.build(3), seed=5, driver="mpi", sealing=sealed,
                     keys="preshared" if sealed else "none", faults=parse_faults(PLANS[mode]))
    try:
        result = sim.run([Party(p, probe, {}) for p in range(3)])
    except ProtocolAbort as abort:
        return {"abort": {"party": abort.party, "reason": abort.reason}}
    rows = [{"sender": r.sender, "receiver": r.receiver, "sent_s": r.sent_s,
             "delivered_s": r.delivered_s} for r in result.ledger if r.protocol == "probe"]
    arrivals = {str(m.sender): m.arrived_s for m in result.views[0].received
                if m.protocol == "probe"}
    return {"outputs": {str(p): v for p, v in result.outputs.items()}, "rows": rows,
            "arrivals": arrivals, "faults": result.faults}


def run_secagg() -> dict:
    run = run_scenario("scenarios/secagg_dropouts.toml", driver="mpi")
    result = run.run.result
    aggregator = max(result.outputs)
    total, survivors = result.outputs[aggregator]
    inputs = {str(p): np.asarray(result.views[p].inputs["x"]).tolist()
              for p in sorted(result.views) if p != aggregator}
    return {"total": np.asarray(total).tolist(), "survivors": [int(u) for u in survivors],
            "inputs": inputs, "faults": result.faults}


def main() -> int:
    mode = sys.argv[1]
    got = run_secagg() if mode == "secagg" else run_probe(mode)
    if ROOT:
        sys.stdout.write(json.dumps(got, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
