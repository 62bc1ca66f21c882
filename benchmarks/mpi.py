"""The MPI driver on this machine: SecureSum against MPyC, throughput, scaling.

Prints one JSON line per figure; ratios come from interleaved repetitions in one run (min and
median). Every MPI job is started with the installed MPICH's ``mpiexec`` and runs this file in
a worker mode; BLAS is pinned to one thread (threadpoolctl) in every process.

1. ``secure_sum``: M = 3, d = 10^5, one party per process, PRG variant, sealing on, X25519
   keys. Wall time per call: each party times each of 1 + C calls on its own clock; the
   figure is the median over calls 2..1+C of the slowest party's time (start-up and key
   agreement excluded). Against the same sum in MPyC (three processes on localhost, ``-M3``,
   a secure-field array input by every party, summed and opened; MPyC's own time per call),
   and the SimPy driver in this process. Target: MPI ≥ 10× faster than MPyC.
2. ``throughput``: two ranks, one party each; party 0 sends K messages of n bytes (opaque
   uint8 payloads, sealing off: the transport), party 1 answers once at the end; bytes per
   second from party 0's clock, against a raw mpi4py ``Send``/``Recv`` of the same buffers
   and the same one-message answer. Target: ≥ 70 % of raw. Also with sealing on. And
   against ``raw_kept``: the same raw loop receiving each message into new memory
   (``np.empty``) kept until the repetition ends, as a view keeps every payload it
   received — the floor that keeping the payloads sets, whatever the transport does. And
   ``raw_written``: the raw loop whose sender first copies the payload (a random array)
   into its buffer, as a transport does that sends data a program may still change and lets
   the program run on at once — the driver below 2 MiB; from 2 MiB it sends from the
   program's array and resumes the program once that send completed
   (``sim.drivers.mpi_transfer.SEND_IN_PLACE_FROM``). ``noview_over_raw_written`` compares
   the driver without views with it.
   Ceilings, arms of the same interleaved run: ``crypto_only`` — rank 0 seals the stream's
   bytes with AES-GCM while rank 1 opens as many (cryptography's ``encrypt_into`` and
   ``decrypt_into``, buffers reused), no transport; their processor time spread over the two
   cores bounds any sealed transport here (``sealed_ceiling_over_raw`` < 0.5: none reaches
   the sealed target). ``least`` — the least transport of the stream in plain mpi4py
   (:func:`least_stream`: frame, copy, ledger row, ``Isend``; probe, receive into reused
   storage, frame check, delivery record, generator resumed with the array): what Python
   per message costs before any generality (``least_over_raw``; ``noview_over_least``, the
   driver's price over it); ``least_sealed``, the same with each payload sealed into its
   buffer and opened on arrival (``least_sealed_over_raw``). ``driver_noview`` and
   ``driver_sealed_noview``: the driver with ``record_views = False`` (no payload kept, so a
   receive may reuse memory). Each arm reports the receiving rank's minor page faults per
   message (``ru_minflt``), and each driver arm both ranks' processor time per message
   (``cpu_us_per_message``, the fastest repetition: what a loaded machine disturbs least).
3. ``scaling``: one SecureSum call (with X25519 key agreement) at M ∈ {4, 16, 64},
   d = 10^4, on R ∈ {1, 2} ranks: wall time of the run, messages and bytes.

Usage: ``python benchmarks/mpi.py [--quick] [--reps N] [--only FIGURE] [--sizes B,B]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve()
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def single_thread() -> Any:
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


# -- party programs ------------------------------------------------------------------------


def repeated_sum(calls: int):
    """``calls`` SecureSum calls; returns each call's wall time on this party's clock."""
    from protocols.secure_sum import secure_sum

    def program(ctx, x):
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            yield from secure_sum(ctx, x, "prg")
            times.append(time.perf_counter() - start)
        return times

    return program


def per_call(m: int, d: int, calls: int, driver: str) -> float:
    """Median over calls 2..C of the slowest party's wall time per SecureSum call."""
    from parties.party import site_parties
    from sim.network import Network
    from sim.simulation import Simulation

    rng = np.random.default_rng(1)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]
    sim = Simulation(Network.build(m), seed=1, driver=driver)
    result = sim.run(site_parties(repeated_sum(calls), inputs))
    slowest = np.max([result.outputs[p] for p in range(m)], axis=0)
    return float(np.median(slowest[1:]))


def sum_run(m: int, d: int, calls: int, driver: str) -> tuple[float, int, int]:
    """Wall time, messages and bytes of a run of ``calls`` SecureSum calls."""
    from parties.party import site_parties
    from sim.network import Network
    from sim.simulation import Simulation

    rng = np.random.default_rng(1)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]
    sim = Simulation(Network.build(m), seed=1, driver=driver)
    start = time.perf_counter()
    result = sim.run(site_parties(repeated_sum(calls), inputs))
    wall = time.perf_counter() - start
    return wall, len(result.ledger), int(sum(r.bytes for r in result.ledger))


def stream_program(count: int, size: int):
    from protocols.effects import Recv, Send

    def program(ctx):
        call = ctx.new_call("stream")
        cpu = time.process_time()
        if ctx.party == 0:
            payload = np.zeros(size, dtype=np.uint8)
            start = time.perf_counter()
            for i in range(count):
                yield Send(1, payload, call, f"m{i}")
            yield Recv(1, call, "ack")
            return time.perf_counter() - start, (time.process_time() - cpu) / count
        before = minor_faults()
        for i in range(count):
            yield Recv(0, call, f"m{i}")
        yield Send(0, np.zeros(1, dtype=np.uint8), call, "ack")
        # the receiver's page faults per message, and its processor time per message
        return (minor_faults() - before) / count, (time.process_time() - cpu) / count

    return program


# -- workers (run under mpiexec) -----------------------------------------------------------


def worker_sum(args: argparse.Namespace) -> None:
    from sim.drivers.mpi_comm import load_mpi

    MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)

    with single_thread():
        one = sum_run(args.parties, args.d, 1, "mpi")
        call = per_call(args.parties, args.d, 1 + args.calls, "mpi") if args.calls else 0.0
    if MPI.COMM_WORLD.Get_rank() == 0:
        emit(wall_1=one[0], per_call=call, messages=one[1], bytes=one[2])


def crypto_only(comm: Any, size: int, count: int) -> float:
    """Both ranks at once: rank 0 seals ``count`` messages of ``size`` bytes with AES-GCM,
    rank 1 opens ``count`` (cryptography's ``encrypt_into`` / ``decrypt_into``, buffers
    reused); no transport. Returns the two ranks' seconds spread over the two cores,
    ``(seal + open) / 2``: what the cryptography alone takes of the stream however a sealed
    transport shares it out, moving the bytes free — its ceiling on this machine."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    aead = AESGCM(bytes(range(32)))
    plain = np.zeros(size, dtype=np.uint8)
    sealed = bytearray(size + 16)
    aad = b"header"
    aead.encrypt_into(bytes(12), plain, aad, sealed)  # one ciphertext to open, again and again
    comm.Barrier()
    start = time.perf_counter()
    for i in range(count):
        if comm.Get_rank() == 0:
            aead.encrypt_into(i.to_bytes(12, "little"), plain, aad, sealed)
        else:
            aead.decrypt_into(bytes(12), sealed, aad, plain)
    took = time.perf_counter() - start
    return sum(comm.allgather(took)) / 2


def least_stream(comm: Any, size: int, count: int, sealed: bool) -> float:
    """The least transport of the stream: what any driver must do per message to keep the
    run's records, written for this one pattern in plain mpi4py. Seconds on rank 0's clock.

    The sender resumes a generator for each send effect, frames the message (the driver's
    :data:`~sim.drivers.mpi_transfer.FRAME` and names), appends a ledger row and posts an ``Isend``
    of a pooled buffer holding frame and payload — copied in (the program may change its
    array once it resumes) or, with ``sealed``, sealed in with AES-GCM — recycling the
    buffers of completed sends. Unsealed payloads from the driver's
    :data:`~sim.drivers.mpi_transfer.SEND_IN_PLACE_FROM` leave from the array itself, after
    their frame, and the program resumes once that send completed, as the driver does it.
    The receiver probes any source, receives into reused storage (no view keeps it), checks
    the frame against its route, records the delivery, opens a sealed payload, reads it as
    an array (``np.frombuffer``) and resumes its program's generator with it. No liveness,
    faults, mailboxes or views.
    """
    from collections import deque

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from mpi4py import MPI

    from sim.drivers.mpi_transfer import FRAME, IN_FLIGHT_BYTES, SEND_IN_PLACE_FROM, data_offset

    protocol = "stream"
    at = data_offset(len(protocol), len(f"m{count - 1}"))  # every step's name fits before it
    room = 16 if sealed else 0  # the GCM tag
    in_place = not sealed and size >= SEND_IN_PLACE_FROM
    n_buffer = at if in_place else at + size + room
    aead = AESGCM(bytes(range(32)))
    aad = b"stream"
    ack = np.zeros(1, dtype=np.uint8)
    comm.Barrier()
    start = time.perf_counter()
    if comm.Get_rank() == 0:
        def sends():
            payload = np.zeros(size, dtype=np.uint8)
            for i in range(count):
                yield (1, payload, protocol, 0, f"m{i}")

        rows: list[tuple[Any, ...]] = []
        pool: list[np.ndarray] = []
        in_flight: deque[tuple[Any, np.ndarray]] = deque()
        window = max(1, IN_FLIGHT_BYTES // (at + size))  # the driver's budget of sends in flight
        for to, arr, name, call, step in sends():
            buffer = pool.pop() if pool else np.empty(n_buffer, dtype=np.uint8)
            names = (name + step).encode()
            FRAME.pack_into(buffer, 0, 1, 0, to, call, 0, sealed, len(rows), len(name),
                            len(step), arr.nbytes)
            buffer[FRAME.size:FRAME.size + len(names)] = np.frombuffer(names, dtype=np.uint8)
            if sealed:
                aead.encrypt_into(len(rows).to_bytes(12, "little"), arr, aad, buffer[at:])
            elif not in_place:
                buffer[at:] = arr
            rows.append((0, to, name, call, step, arr.size, arr.nbytes + room, time.time()))
            in_flight.append((comm.Isend([buffer, MPI.BYTE], dest=1, tag=16), buffer))
            if in_place:
                tail = comm.Isend([arr, MPI.BYTE], dest=1, tag=2)
                while not tail.Test():
                    pass
            while in_flight and (len(in_flight) > window or in_flight[0][0].Test()):
                request, done = in_flight.popleft()
                request.Wait()
                pool.append(done)
        MPI.Request.Waitall([request for request, _ in in_flight])
        comm.Recv(ack, source=1, tag=8)
    else:
        def receives():
            got = []
            for _ in range(count):
                got.append((yield).size)
            return got

        status = MPI.Status()
        storage = np.empty(at + size + room, dtype=np.uint8)
        opened = np.empty(size, dtype=np.uint8)
        deliveries: list[tuple[int, int, float]] = []
        program = receives()
        next(program)
        for _ in range(count):
            while (message := comm.improbe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG,
                                           status=status)) is None:
                pass
            source = status.Get_source()
            message.Recv([storage, MPI.BYTE])
            if in_place:
                while (tail := comm.improbe(source=source, tag=2)) is None:
                    pass
                tail.Recv([storage[at:], MPI.BYTE])
            kind, sender, receiver, _call, _round, is_sealed, row, n_proto, n_step, n_data = (
                FRAME.unpack_from(storage))
            names = storage[FRAME.size:FRAME.size + n_proto + n_step].tobytes().decode()
            if (kind != 1 or sender != 0 or receiver != 1 or is_sealed != sealed
                    or n_data != size or names[:n_proto] != protocol
                    or not names[n_proto:].startswith("m")):
                raise RuntimeError("least transport: a frame that does not match its route")
            deliveries.append((source, row, time.time()))
            data = storage[at:at + size]
            if sealed:
                aead.decrypt_into(row.to_bytes(12, "little"), storage[at:], aad, opened)
                data = opened
            try:
                program.send(np.frombuffer(data, dtype=np.uint8))
            except StopIteration:
                pass
        comm.Send(ack, dest=0, tag=8)
    return time.perf_counter() - start


def minor_faults() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def worker_throughput(args: argparse.Namespace) -> None:
    from sim.drivers.mpi_comm import load_mpi

    MPI = load_mpi()  # MPICH as the driver starts it, for every arm (MPICH_SETTINGS)

    from parties.party import Party
    from sim.network import Network
    from sim.simulation import Simulation

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size, count = args.size, args.count
    arms = ("raw", "raw_kept", "raw_written", "crypto_only", "least", "least_sealed", "driver",
            "driver_sealed", "driver_noview", "driver_sealed_noview")
    out: dict[str, list[float]] = {arm: [] for arm in arms}
    floors = ("crypto_only", "least", "least_sealed")  # one time per repetition, nothing else
    faults: dict[str, list[float]] = {arm: [] for arm in arms if arm not in floors}
    cpu: dict[str, list[float]] = {arm: [] for arm in arms
                                   if arm.startswith("driver")}  # per message, each rank
    buffer = np.zeros(size, dtype=np.uint8)
    payload = np.random.default_rng(7).integers(0, 256, size, dtype=np.uint8)
    ack = np.zeros(1, dtype=np.uint8)
    for _ in range(args.reps):
        for label in ("raw", "raw_kept", "raw_written"):
            kept = []  # raw_kept: every message in memory of its own, as a view keeps it
            comm.Barrier()
            before = minor_faults()
            start = time.perf_counter()
            for _ in range(count):
                if rank == 0:
                    if label == "raw_written":  # the payload copied in, as a sender of
                        buffer[:] = payload  # data a program may still change must
                    comm.Send(buffer, dest=1, tag=7)
                elif label != "raw_kept":
                    comm.Recv(buffer, source=0, tag=7)
                else:
                    kept.append(np.empty(size, dtype=np.uint8))
                    comm.Recv(kept[-1], source=0, tag=7)
            if rank == 0:
                comm.Recv(ack, source=1, tag=8)
            else:
                comm.Send(ack, dest=0, tag=8)
            out[label].append(time.perf_counter() - start)
            faults[label].append((minor_faults() - before) / count)
            del kept
        comm.Barrier()
        out["crypto_only"].append(crypto_only(comm, size, count))
        out["least"].append(least_stream(comm, size, count, sealed=False))
        out["least_sealed"].append(least_stream(comm, size, count, sealed=True))
        for label, sealing, views in (("driver", False, True), ("driver_sealed", True, True),
                                      ("driver_noview", False, False),
                                      ("driver_sealed_noview", True, False)):
            sim = Simulation(Network.build(2), seed=1, sealing=sealing,
                             keys="preshared" if sealing else "none", driver="mpi",
                             record_views=views)
            parties = [Party(p, stream_program(count, size), {}) for p in range(2)]
            result = sim.run(parties)
            faults[label].append(float(result.outputs[1][0]))
            out[label].append(float(result.outputs[0][0]))
            cpu[label].append(float(result.outputs[rank][1]))
            del result
    receiver = comm.gather((faults, cpu), root=0)
    if rank == 0:
        emit(**out, receiver_faults_per_message=receiver[1][0],
             cpu_s_per_message={"sender": receiver[0][1], "receiver": receiver[1][1]})


# -- the parent -----------------------------------------------------------------------------


def mpi_job(ranks: int, *args: str) -> dict[str, Any]:
    done = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable, str(HERE), *args],
                          capture_output=True, text=True, check=False, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"mpi job {args} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


MPYC_PROGRAM = """
import sys, time
import numpy as np
from mpyc.runtime import mpc

async def main():
    d, calls = int(sys.argv[1]), int(sys.argv[2])
    secfld = mpc.SecFld(2**61 - 1)
    await mpc.start()
    x = np.arange(d, dtype=object) + mpc.pid
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        shares = mpc.input(secfld.array(x))
        total = shares[0]
        for v in shares[1:]:
            total = total + v
        await mpc.output(total)
        times.append(time.perf_counter() - start)
    await mpc.shutdown()
    if mpc.pid == 0:
        print(min(times))

mpc.run(main())
"""


def mpyc_per_call(d: int, calls: int, workdir: Path) -> float | None:
    """MPyC's best time per call of the 3-party sum, or None when mpyc is not installed."""
    try:
        import mpyc  # noqa: F401
    except ImportError:
        return None
    script = workdir / "mpyc_sum.py"
    script.write_text(MPYC_PROGRAM)
    procs = [subprocess.Popen([sys.executable, str(script), str(d), str(calls), "-M3",
                               f"-I{i}", "--no-log"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for i in range(3)]
    outs = [p.communicate(timeout=1800)[0] for p in procs]
    return float(outs[0].strip().splitlines()[-1])


def stats(values: list[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values)}


def bench_secure_sum(reps: int, d: int, calls: int, workdir: Path) -> None:
    mpi, mpyc, simpy = [], [], []
    for _ in range(reps):
        job = mpi_job(3, "worker-sum", "--parties", "3", "--d", str(d), "--calls", str(calls))
        mpi.append(job["per_call"])
        got = mpyc_per_call(d, calls, workdir)
        if got is not None:
            mpyc.append(got)
        with single_thread():
            simpy.append(per_call(3, d, 1 + calls, "simpy"))
    line: dict[str, Any] = {"figure": "secure_sum_per_call", "parties": 3, "d": d,
                            "reps": reps, "mpi_s": stats(mpi), "simpy_s": stats(simpy),
                            "simpy_over_mpi_median": statistics.median(simpy)
                            / statistics.median(mpi)}
    if mpyc:
        line["mpyc_s"] = stats(mpyc)
        line["mpyc_over_mpi_median"] = statistics.median(mpyc) / statistics.median(mpi)
        line["mpyc_over_mpi_min"] = min(mpyc) / min(mpi)
    else:
        line["mpyc_s"] = "mpyc is not installed (pip install mpyc)"
    emit(**line)


def bench_throughput(reps: int, sizes: list[int], total: int) -> None:
    """One JSON line per size: rates (median) and per-repetition ratios to raw (min, median).

    Raw, unsealed and sealed runs alternate within each repetition of one job, so a ratio
    compares runs made moments apart on the same loaded machine.
    """
    for size in sizes:
        count = max(4, total // size)
        job = mpi_job(2, "worker-throughput", "--size", str(size), "--count", str(count),
                      "--reps", str(reps))
        moved = size * count
        faults = job.pop("receiver_faults_per_message")
        cpu = job.pop("cpu_s_per_message")
        rate = {k: moved / statistics.median(v) for k, v in job.items()}
        ratios = {(k, base): [b / t for b, t in zip(job[base], job[k], strict=True)]
                  for k in ("driver", "driver_sealed", "driver_noview", "driver_sealed_noview",
                            "crypto_only", "least", "least_sealed", "raw_kept", "raw_written")
                  for base in ("raw", "raw_kept", "raw_written", "least")}
        emit(figure="throughput", message_bytes=size, messages=count, reps=reps,
             load=os.getloadavg(),
             **{f"{k}_bytes_per_s": v for k, v in rate.items()},
             driver_over_raw=stats(ratios["driver", "raw"]),
             sealed_over_raw=stats(ratios["driver_sealed", "raw"]),
             driver_over_raw_kept=stats(ratios["driver", "raw_kept"]),
             sealed_over_raw_kept=stats(ratios["driver_sealed", "raw_kept"]),
             noview_over_raw=stats(ratios["driver_noview", "raw"]),
             sealed_noview_over_raw=stats(ratios["driver_sealed_noview", "raw"]),
             raw_kept_over_raw=stats(ratios["raw_kept", "raw"]),
             raw_written_over_raw=stats(ratios["raw_written", "raw"]),
             noview_over_raw_written=stats(ratios["driver_noview", "raw_written"]),
             sealed_ceiling_over_raw=stats(ratios["crypto_only", "raw"]),
             least_over_raw=stats(ratios["least", "raw"]),
             noview_over_least=stats(ratios["driver_noview", "least"]),
             least_sealed_over_raw=stats(ratios["least_sealed", "raw"]),
             receiver_minor_faults_per_message={k: statistics.median(v)
                                                for k, v in faults.items()},
             cpu_us_per_message={side: {k: round(min(v) * 1e6, 1) for k, v in arms.items()}
                                 for side, arms in cpu.items()},
             target={"driver_over_raw": 0.70, "sealed_over_raw": 0.50})


def bench_scaling(reps: int, parties: list[int], d: int) -> None:
    for m in parties:
        walls: dict[int, list[float]] = {1: [], 2: []}
        info: dict[str, int] = {}
        for _ in range(reps):
            for ranks in (1, 2):
                job = mpi_job(ranks, "worker-sum", "--parties", str(m), "--d", str(d),
                              "--calls", "0")
                walls[ranks].append(job["wall_1"])
                info = {"messages": job["messages"], "bytes": job["bytes"]}
        emit(figure="scaling", parties=m, d=d, reps=reps, **info,
             r1_s=stats(walls[1]), r2_s=stats(walls[2]),
             r1_over_r2_median=statistics.median(walls[1]) / statistics.median(walls[2]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", nargs="?", default="all",
                        choices=["all", "worker-sum", "worker-throughput"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--parties", type=int, default=3)
    parser.add_argument("--d", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--size", type=int, default=1 << 20)
    parser.add_argument("--count", type=int, default=16)
    parser.add_argument("--sizes", type=lambda v: [int(x) for x in v.split(",")],
                        help="throughput's message sizes in bytes, comma-separated "
                             "(default 65536,1048576,8388608)")
    parser.add_argument("--only", choices=["secure_sum", "throughput", "scaling"],
                        help="run one figure only")
    args = parser.parse_args()
    if args.mode == "worker-sum":
        worker_sum(args)
        return
    if args.mode == "worker-throughput":
        worker_throughput(args)
        return
    if not MPIEXEC.exists():
        emit(skipped="the mpi extra is not installed (pip install -e '.[mpi]')")
        return
    import tempfile

    reps = 1 if args.quick else args.reps
    emit(figure="setup", blas_threads=1, note="BLAS pinned to one thread (threadpoolctl)")
    if args.only in (None, "secure_sum"):
        with tempfile.TemporaryDirectory() as tmp:
            bench_secure_sum(reps, 10_000 if args.quick else 100_000, args.calls, Path(tmp))
    if args.only in (None, "throughput"):
        bench_throughput(reps, args.sizes or (
                         [1 << 16, 1 << 20] if args.quick else [1 << 16, 1 << 20, 1 << 23]),
                         1 << 24 if args.quick else 1 << 26)
    if args.only in (None, "scaling"):
        bench_scaling(reps, [4, 16] if args.quick else [4, 16, 64], 10_000)

if __name__ == "__main__":
    main()
