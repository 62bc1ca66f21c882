"""Scale under MPI: one SecureSum and one PD-NMF run among M parties over R ranks (item 6).

Prints one JSON line per run, measured in that run: the job's wall time (``mpiexec`` start to
end), the run's own wall time (``Simulation.run`` / the scenario, after the imports), the peak
resident memory of every rank (``VmHWM`` of ``/proc/self/status``, read by each rank at the end
and gathered at rank 0), and what the ledger counts — messages, field elements and bytes sent
per data-holding party, rounds. The README's scale model ("Scale: M = 1,000 parties on 64
nodes") takes these counts and compares its predicted time with the measured one.

* ``secure_sum`` — :func:`protocols.secure_sum.secure_sum` (PRG variant) of a d-vector per
  party, with x25519 key agreement (the key-agreement call is in the ledger, phase ``setup``)
  and sealed messages: the Simulation API, ``record_views`` and ``views`` as given
  (``--views rank``: each rank keeps its own parties' views, :mod:`sim.drivers.rank_views`;
  ``--views disk``: the same, each rank writing them to a view directory as a scenario run
  under MPI does, its received payloads spilled as they are recorded, :mod:`sim.view_spill`).
* ``pd_nmf`` — the ``pd_nmf`` scenario entry (synthetic topics, ``rows_per_party`` rows per
  party, ``cols`` columns, k = 3, the given iterations, random initialisation) through
  :func:`sim.runner.run_scenario` with ``driver = "mpi"``.

``--model FILE`` reads such JSON lines (the ``views = "rank"`` SecureSum runs and the PD-NMF
runs) and fits the README's cost model to them: a rank's run time is
``b_run·(messages) + c·(bytes)`` sent by the parties it hosts — a cost per message for each
kind of run (what a party does with a message is the protocol's: a SecureSum party adds it
up, a PD-NMF party also runs its NMF steps) and one per byte (non-negative least squares over
the runs), prints each run's measured and modelled time — and each run's prediction from a fit
to the other runs — and the model's prediction for M = 1,000 parties on 64 nodes at
10 Gbit/s (one rank per node; network time = the bytes leaving a node at line rate, plus
rounds × 50 µs latency).

Usage: ``python benchmarks/mpi_scale.py [--parties 256] [--ranks 2] [--d 1000]
[--iterations 2] [--views gathered|rank|disk] [--only secure_sum|pd_nmf]``. The script starts
``mpiexec`` itself and runs itself under it (``--job``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = str(Path(sysconfig.get_path("scripts")) / "mpiexec")


def peak_rss_mb() -> float:
    """This process's peak resident set (``VmHWM``), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def ledger_counts(ledger: Any, sites: list[int]) -> dict[str, Any]:
    """Messages, elements and bytes sent per data holder (mean), rounds, by phase too: one pass
    over the rows, none kept (a stored ledger streams them from its file)."""
    senders = set(sites)
    messages = rounds = total_bytes = 0
    sent = [0, 0, 0]  # the data holders' messages, elements and bytes
    setup = [0, 0]  # key agreement's messages and bytes
    for r in ledger:
        messages += 1
        rounds = max(rounds, r.round)
        total_bytes += r.bytes
        if r.sender in senders:
            sent[0] += 1
            sent[1] += r.elements
            sent[2] += r.bytes
        if r.phase == "setup":
            setup[0] += 1
            setup[1] += r.bytes
    n = len(sites)
    return {
        "messages": messages, "rounds": rounds,
        "messages_sent_per_party": round(sent[0] / n, 1),
        "elements_sent_per_party": round(sent[1] / n),
        "bytes_sent_per_party": round(sent[2] / n),
        "setup_messages": setup[0], "setup_bytes": setup[1], "total_bytes": total_bytes,
    }


def rank_load(record: dict[str, Any]) -> tuple[float, float]:
    """Messages and bytes sent by one rank's parties (M/R of them) in a run (key agreement's
    included: each of its messages is one X25519 agreement at the receiver)."""
    n = record["parties"] / record["ranks"]
    return n * record["messages_sent_per_party"], n * record["bytes_sent_per_party"]


def design(records: list[dict[str, Any]], kinds: list[str]) -> Any:
    """One row per run: its rank's messages in its kind's column, then its bytes."""
    import numpy as np

    rows = np.zeros((len(records), len(kinds) + 1))
    for i, r in enumerate(records):
        messages, sent = rank_load(r)
        rows[i, kinds.index(r["run"])] = messages
        rows[i, -1] = sent
    return rows


def fit(records: list[dict[str, Any]], kinds: list[str]) -> Any:
    """(b per kind..., c): seconds per message of each kind of run and per byte,
    non-negative least squares."""
    import numpy as np
    from scipy.optimize import nnls

    return nnls(design(records, kinds), np.array([r["run_s"] for r in records]))[0]


def model(path: Path) -> int:
    """Fit the cost model to measured runs and predict M = 1,000 on 64 nodes (see above)."""

    records = [json.loads(ln) for ln in path.read_text().splitlines() if ln.startswith("{")]
    records = [r for r in records if "error" not in r and r.get("views", "rank") == "rank"]
    kinds = sorted({r["run"] for r in records})
    coef = fit(records, kinds)
    print(json.dumps({"model": "b_run*messages + c*bytes per rank", "runs": len(records),
                      **{f"b_us_per_message_{k}": round(coef[i] * 1e6, 1)
                         for i, k in enumerate(kinds)},
                      "c_ns_per_byte": round(coef[-1] * 1e9, 3)}))
    for i, r in enumerate(records):
        others = records[:i] + records[i + 1:]
        same_kind = sum(x["run"] == r["run"] for x in others)
        held_out = fit(others, kinds) if same_kind else None  # no b for its kind without it
        row = design([r], kinds)[0]
        print(json.dumps({"run": r["run"], "parties": r["parties"], "measured_s": r["run_s"],
                          "model_s": round(float(row @ coef), 2),
                          "predicted_without_this_run_s": None if held_out is None
                          else round(float(row @ held_out), 2)}))
    m, nodes, line_rate, latency = 1000, 64, 10e9 / 8, 50e-6
    n = m / nodes
    for r in records:
        if r["parties"] != max(x["parties"] for x in records if x["run"] == r["run"]):
            continue
        per_peer_msgs = r["messages_sent_per_party"] / (r["parties"] - 1)
        per_peer_bytes = r["bytes_sent_per_party"] / (r["parties"] - 1)
        msgs, sent = per_peer_msgs * (m - 1), per_peer_bytes * (m - 1)
        compute = float(coef[kinds.index(r["run"])] * n * msgs + coef[-1] * n * sent)
        network = n * sent * (m - n) / (m - 1) / line_rate + r["rounds"] * latency
        print(json.dumps({
            "predict": r["run"], "parties": m, "nodes": nodes, "parties_per_node": n,
            "messages_sent_per_party": round(msgs), "bytes_sent_per_party": round(sent),
            "elements_sent_per_party": round(r["elements_sent_per_party"] / (r["parties"] - 1)
                                             * (m - 1)),
            "rounds": r["rounds"], "compute_s": round(compute, 1),
            "network_s": round(network, 2), "predicted_wall_s": round(compute + network, 1),
            "views_per_node_mb": round(n * r["bytes_sent_per_party"] / (r["parties"] - 1)
                                       * (m - 1) / 1e6),
        }))
    return 0


def job(args: argparse.Namespace) -> int:
    """One run under ``mpiexec``: every rank runs it; rank 0 prints the JSON line."""
    import_start = time.perf_counter()
    import numpy as np

    from parties.party import site_parties
    from protocols.secure_sum import secure_sum
    from sim.drivers.mpi_comm import load_mpi
    from sim.network import Network
    from sim.runner import run_scenario
    from sim.simulation import Simulation
    from sim.view_store import ViewScratch, ViewStore

    MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)
    comm = MPI.COMM_WORLD
    imports_s = time.perf_counter() - import_start
    m = args.parties
    comm.Barrier()
    start = time.perf_counter()
    if args.job == "secure_sum":
        rng = np.random.default_rng(1)
        inputs = [{"x": rng.uniform(0.0, 1.0, args.d)} for _ in range(m)]

        def program(ctx: Any, x: Any) -> Any:
            return (yield from secure_sum(ctx, x))

        scratch = ViewScratch.make(None) if args.views == "disk" else None
        sim = Simulation(Network.build(m), seed=1, sealing=True, keys="x25519", driver="mpi",
                         record_views=not args.no_views,
                         views="rank" if scratch is not None else args.views,
                         view_sink=scratch.sink() if scratch is not None else None)
        result = sim.run(site_parties(program, inputs))
        ledger, sites = result.ledger, list(range(m))
        shape = {"d": args.d, "record_views": not args.no_views, "views": args.views}
    else:
        scenario = {
            "name": "mpi_scale", "seed": 3, "network": {"parties": m},
            "data": {"source": "synthetic", "kind": "topics", "rows": args.rows_per_party * m,
                     "cols": args.cols, "k": 3},
            "algorithm": {"name": "pd_nmf", "k": 3, "iterations": args.iterations,
                          "init": "random"},
        }
        run = run_scenario(scenario, driver="mpi")
        result = run.run.result
        ledger, sites = result.ledger, list(range(m))
        shape = {"rows": args.rows_per_party * m, "cols": args.cols, "k": 3,
                 "iterations": args.iterations}
    run_s = time.perf_counter() - start
    peaks = comm.gather(peak_rss_mb(), root=0)
    local = getattr(result.views, "local", None)  # RankViews: this rank's own views
    on_disk = isinstance(result.views, ViewStore)  # --views disk: none held in memory
    held = comm.gather(0 if on_disk else len(local() if local is not None else result.views),
                       root=0)
    if comm.Get_rank() == 0:
        print(json.dumps({
            "run": args.job, "parties": m, "ranks": comm.Get_size(), **shape,
            "imports_s": round(imports_s, 2), "run_s": round(run_s, 2),
            "peak_rss_mb_per_rank": peaks, "views_held_per_rank": held,
            **ledger_counts(ledger, sites),
        }), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, default=256)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--d", type=int, default=1000, help="SecureSum's vector length")
    parser.add_argument("--rows-per-party", type=int, default=4)
    parser.add_argument("--cols", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--no-views", action="store_true", help="record_views = False")
    parser.add_argument("--views", choices=("gathered", "rank", "disk"), default="gathered",
                        help="SecureSum: where the views are at the end (Simulation's views)")
    parser.add_argument("--only", choices=("secure_sum", "pd_nmf"), default=None)
    parser.add_argument("--model", type=Path, default=None, metavar="FILE",
                        help="fit the cost model to the JSON lines in FILE and predict")
    parser.add_argument("--job", choices=("secure_sum", "pd_nmf"), default=None,
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.model is not None:
        return model(args.model)
    if args.job is not None:
        return job(args)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    for name in (args.only,) if args.only else ("secure_sum", "pd_nmf"):
        argv = [MPIEXEC, "-n", str(args.ranks), sys.executable, __file__, "--job", name,
                "--parties", str(args.parties), "--d", str(args.d),
                "--rows-per-party", str(args.rows_per_party), "--cols", str(args.cols),
                "--iterations", str(args.iterations), "--views", args.views,
                *(["--no-views"] if args.no_views else [])]
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        if done.returncode != 0 or not lines:
            print(json.dumps({"run": name, "parties": args.parties, "error": done.returncode,
                              "stderr": done.stderr[-2000:]}), flush=True)
            continue
        record = json.loads(lines[-1])
        record["job_wall_s"] = round(wall, 2)
        record["load_average"] = round(os.getloadavg()[0], 1)
        print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
