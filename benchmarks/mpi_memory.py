"""Where an MPI rank's memory goes: a sealed SecureSum among M parties over R ranks (issue 32).

Prints one JSON line per rank and M, measured in that rank as its run ends (the end of
:meth:`sim.drivers.mpi_rank.Run.execute`, when the run still holds everything it kept):

* ``rss_imports_mb`` — resident memory after the imports (numpy, numba, mpi4py, the library);
* ``rss_run_end_mb`` / ``peak_rss_mb`` — resident memory as the run ends, and the peak
  (``VmHWM``) once the results are gathered (``Simulation.run`` returned);
* ``channel_ends`` — the sealed channel ends alive (``SealedChannel`` objects, counted by the
  garbage collector), and ``channel_ends_mb``: that count times the resident memory of one end,
  measured by building 4,096 ends and reading the resident memory before and after (the
  AES-GCM key schedule lives in OpenSSL's memory, which tracemalloc does not see), measured
  in the launching process, whose heap has no freed memory to reuse;
* ``view_messages_held`` / ``view_payload_mb`` — the received-message records
  (:class:`parties.view.Message`) alive in the rank, counted by the garbage collector, and
  the bytes of their payloads: what the rank holds in memory for its views;
  ``view_spilled_mb`` — the payload bytes its views spilled to disk instead
  (:mod:`sim.view_spill`);
* ``mailbox_peak_mb`` / ``mailbox_spilled_mb`` — the most unread message data the rank's
  mailboxes held in memory, and what they wrote to the rank's mailbox file instead
  (:mod:`sim.drivers.mpi_mailbox`; NaN for a library without it);
* with ``--trim``: ``rss_trimmed_mb``, the resident memory as the run ends once glibc's
  ``malloc_trim`` returned the memory it holds free (what freed objects left resident);
* with ``--trace``: ``components_mb`` — tracemalloc's live memory as the run ends, by the
  source line that allocated it, grouped into the components below (:data:`COMPONENTS`), and
  ``untraced_mb``: the resident memory the imports, tracemalloc's own and the traced memory do
  not explain (OpenSSL's key schedules, MPI's buffers, the allocator's free lists).

The workload is the README's scale run: SecureSum (PRG variant), d = 1,000, x25519 key
agreement, sealed, views kept on their rank (``views = "rank"``) and, with ``--views disk``
(the default, as a scenario run under MPI), written to a per-rank view directory
(:class:`sim.view_store.ViewScratch`, removed after the run); ``--views memory`` keeps them
in memory only (the behaviour before spilling).

Usage: ``python benchmarks/mpi_memory.py [--parties 64 128 256] [--ranks 2] [--d 1000]
[--views disk|memory] [--trace] [--trim] [--pythonpath DIR]``; ``--pythonpath`` runs
another checkout's library (a before and after). The script starts ``mpiexec`` itself and
runs itself under it (``--job``).
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

COMPONENTS = (
    ("view payloads", ("sim/drivers/mpi_transfer.py:received_storage",
                       "protocols/crypto/channel.py:open")),
    ("send buffers", ("sim/drivers/mpi_transfer.py",)),
    ("view records", ("protocols/wire.py", "parties/view.py",
                      "sim/drivers/mpi_rank.py:_receive_message")),
    ("channel ends (Python part)", ("protocols/crypto/channel.py", "sim/drivers/envelopes.py")),
    ("ledger rows and deliveries", ("<string>", "sim/drivers/mpi_rank.py")),
    ("pair keys and contexts", ("protocols/crypto/key_agreement.py", "protocols/context.py")),
    ("network graph", ("networkx",)),
)
"""Components, each with the allocation sites that make it up: a path fragment, optionally
``:function`` for one function's lines only (matched in this order; first match wins)."""


def status_mb(field: str) -> float:
    """``field`` (``VmRSS``, ``VmHWM``) of this process's ``/proc/self/status``, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def function_lines(path: Path, name: str) -> range:
    """The source lines of function ``name`` in ``path`` (its ``def`` to the next ``def``)."""
    lines = path.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines, 1) if ln.lstrip().startswith(f"def {name}("))
    end = next((i for i, ln in enumerate(lines[start:], start + 1)
                if ln.lstrip().startswith("def ")), len(lines) + 1)
    return range(start, end)


def classifier(root: Path) -> Any:
    """A function from (file name, line) to its component (:data:`COMPONENTS`)."""
    rules = []
    for component, sites in COMPONENTS:
        for site in sites:
            fragment, _, function = site.partition(":")
            lines = None
            if function:
                matches = [f for f in (root / fragment,) if f.exists()]
                lines = function_lines(matches[0], function) if matches else range(0)
            rules.append((fragment, lines, component))

    def classify(filename: str, lineno: int) -> str:
        for fragment, lines, component in rules:
            if fragment in filename and (lines is None or lineno in lines):
                return component
        return "other traced"

    return classify


def end_mb(count: int = 4096) -> float:
    """Resident MB of one sealed channel end, measured by building ``count`` of them."""
    from protocols.crypto.channel import SealedChannel

    keys = [os.urandom(32) for _ in range(count)]
    before = status_mb("VmRSS")
    ends = [SealedChannel(k, i, i + 1) for i, k in enumerate(keys)]
    grown = status_mb("VmRSS") - before
    del ends
    return grown / count


def job(args: argparse.Namespace) -> int:
    """One run under ``mpiexec``: every rank measures itself; rank 0 prints the lines."""
    import ctypes
    import gc
    import tracemalloc

    import numpy as np

    import sim.drivers.mpi_rank as mpi_rank
    from parties.party import site_parties
    from parties.view import Message
    from protocols.crypto.channel import SealedChannel
    from protocols.secure_sum import secure_sum
    from sim.drivers.mpi_comm import load_mpi
    from sim.network import Network
    from sim.simulation import Simulation
    from sim.view_store import ViewScratch

    MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)
    comm = MPI.COMM_WORLD
    record: dict[str, Any] = {"rank": comm.Get_rank(), "ranks": comm.Get_size(),
                              "parties": args.parties, "d": args.d,
                              "library": str(Path(mpi_rank.__file__).parents[2])}
    record["rss_imports_mb"] = round(status_mb("VmRSS"), 1)
    classify = classifier(Path(mpi_rank.__file__).parents[2])
    if args.trace:
        tracemalloc.start(1)
    execute = mpi_rank.Run.execute

    def measured(self: Any) -> Any:
        outcome = execute(self)
        record["rss_run_end_mb"] = round(status_mb("VmRSS"), 1)
        if args.trim:  # what the allocator holds free: freed memory it has not returned
            ctypes.CDLL("libc.so.6").malloc_trim(0)
            record["rss_trimmed_mb"] = round(status_mb("VmRSS"), 1)
        record["own_parties"] = len(self.contexts)
        record["channel_ends"] = sum(isinstance(o, SealedChannel) for o in gc.get_objects())
        record["view_messages"] = sum(len(v.received) for v in self.views.values())
        held = [o for o in gc.get_objects() if isinstance(o, Message)]
        record["view_messages_held"] = len(held)
        record["view_payload_mb"] = round(sum(m.payload.nbytes for m in held) / 1e6, 1)
        record["view_spilled_mb"] = round(sum(
            getattr(v.received, "nbytes", lambda: 0)() for v in self.views.values()) / 1e6, 1)
        del held
        mailbox = getattr(self, "mailbox", None)  # a library before the mailbox budget: none
        record["mailbox_peak_mb"] = round(getattr(mailbox, "peak", float("nan")) / 1e6, 1)
        record["mailbox_spilled_mb"] = round(getattr(mailbox, "spilled", float("nan")) / 1e6, 1)
        if args.trace:
            snapshot = tracemalloc.take_snapshot()
            parts: dict[str, float] = {}
            for stat in snapshot.statistics("lineno"):
                frame = stat.traceback[0]
                name = classify(frame.filename, frame.lineno)
                parts[name] = parts.get(name, 0.0) + stat.size / 1e6
            traced, traced_peak = (v / 1e6 for v in tracemalloc.get_traced_memory())
            record["traced_peak_mb"] = round(traced_peak, 1)
            own = tracemalloc.get_tracemalloc_memory() / 1e6
            record["components_mb"] = {k: round(v, 1) for k, v in
                                       sorted(parts.items(), key=lambda kv: -kv[1])}
            record["traced_mb"] = round(traced, 1)
            record["tracemalloc_own_mb"] = round(own, 1)
            record["untraced_mb"] = round(record["rss_run_end_mb"] - record["rss_imports_mb"]
                                          - traced - own, 1)
        return outcome

    mpi_rank.Run.execute = measured
    rng = np.random.default_rng(1)
    inputs = [{"x": rng.uniform(0.0, 1.0, args.d)} for _ in range(args.parties)]

    def program(ctx: Any, x: Any) -> Any:
        return (yield from secure_sum(ctx, x))

    scratch = ViewScratch.make(None) if args.views == "disk" else None
    sim = Simulation(Network.build(args.parties), seed=1, sealing=True, keys="x25519",
                     driver="mpi", views="rank",
                     view_sink=scratch.sink() if scratch is not None else None)
    comm.Barrier()
    start = time.perf_counter()
    sim.run(site_parties(program, inputs))
    record["run_s"] = round(time.perf_counter() - start, 2)
    record["peak_rss_mb"] = round(status_mb("VmHWM"), 1)
    record["views"] = args.views
    comm.Barrier()
    if scratch is not None:
        scratch.remove()
    records = comm.gather(record, root=0)
    if comm.Get_rank() == 0:
        for r in records:
            print(json.dumps(r), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--d", type=int, default=1000)
    parser.add_argument("--views", choices=("disk", "memory"), default="disk",
                        help="views written to a per-rank directory (spilled) or kept in memory")
    parser.add_argument("--trace", action="store_true", help="tracemalloc's components")
    parser.add_argument("--trim", action="store_true",
                        help="also the resident memory once glibc returned its free memory")
    parser.add_argument("--pythonpath", type=Path, default=ROOT,
                        help="the checkout whose library runs (default: this one)")
    parser.add_argument("--job", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        args.parties = args.parties[0]
        return job(args)
    sys.path.insert(0, str(ROOT))
    one = end_mb()  # in this fresh process: memory no earlier object freed
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(args.pythonpath)}
    for m in args.parties:
        argv = [MPIEXEC, "-n", str(args.ranks), sys.executable, str(Path(__file__).resolve()),
                "--job", "--parties", str(m), "--d", str(args.d), "--views", args.views,
                *(["--trace"] if args.trace else []), *(["--trim"] if args.trim else [])]
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
        if done.returncode != 0 or not lines:
            print(json.dumps({"parties": m, "error": done.returncode,
                              "stderr": done.stderr[-2000:]}), flush=True)
            continue
        for line in lines:
            record = json.loads(line)
            record["channel_end_kb"] = round(one * 1024, 2)
            record["channel_ends_mb"] = round(one * record["channel_ends"], 1)
            print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
