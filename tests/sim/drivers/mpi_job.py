"""A job for ``mpiexec``: runs scenarios under the MPI driver and writes what rank 0 got.

    mpiexec -n R python mpi_job.py scenarios OUT NAME...   # catalogue scenarios by name
    mpiexec -n R python mpi_job.py raise                   # party 1 raises in its 2nd call
    mpiexec -n R python mpi_job.py tamper                  # a forged message to party 2
    mpiexec -n R python mpi_job.py noviews                 # record_views = False
    mpiexec -n 2 python mpi_job.py received                # received payloads' storage
    mpiexec -n 2 python mpi_job.py reused                  # storage reused once dropped
    mpiexec -n 2 python mpi_job.py in_place                # large sends from the program's arrays

``scenarios`` writes, per name, ``OUT/NAME/`` (report.json, outputs.npz, ledger.csv) and
``OUT/NAME/views.txt`` (:func:`mpi_catalog.views_digest`), or ``OUT/NAME.error`` with the
error line. The fault modes print rank 0's ``error:`` line and exit 1, as the CLI does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mpi_catalog import SCENARIOS, views_digest

from parties.party import Party, site_parties
from protocols.effects import Recv, RecvEach, Send, SendEach
from protocols.errors import MpcsimError
from protocols.secure_sum import secure_sum
from sim.drivers.mpi_comm import load_mpi
from sim.network import Network
from sim.runner import run_scenario
from sim.simulation import Simulation

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)

ROOT = MPI.COMM_WORLD.Get_rank() == 0


def scenarios(out: Path, names: list[str]) -> int:
    for name in names:
        try:
            run = run_scenario(SCENARIOS[name], driver="mpi")
        except Exception as exc:  # every rank fails alike; the test reports it
            if ROOT:
                (out / f"{name}.error").write_text(f"error: {type(exc).__name__}: {exc}\n")
            continue
        if ROOT:
            run.write(out / name)
            result = run.run.result
            (out / name / "views.txt").write_text(views_digest(result.views if result else {}))
    return 0


def raising(ctx, x):
    yield from secure_sum(ctx, x)
    if ctx.party == 1:
        raise RuntimeError("planted failure")
    return (yield from secure_sum(ctx, x))


def fault(mode: str) -> int:
    interceptor = None
    program = secure_sum
    if mode == "raise":
        program = raising
    else:
        def interceptor(sender, receiver, tag, data):
            if (sender, receiver) == (0, 2) and tag.startswith("secure_sum"):
                return data[:-1] + bytes([data[-1] ^ 1])
            return data
    sim = Simulation(Network.build(4), seed=3, driver="mpi", interceptor=interceptor)
    inputs = [{"x": np.arange(5.0) + m} for m in range(4)]
    try:
        sim.run(site_parties(program, inputs))
    except MpcsimError as exc:
        if ROOT:
            sys.stderr.write(f"error: {exc}\n")
        return 1
    return 0


def noviews() -> int:
    """SecureSum of 4 parties without message records: rank 0 prints, per party, the messages
    its view holds, then the ledger's rows and the sum party 0 output."""
    sim = Simulation(Network.build(4), seed=3, driver="mpi", record_views=False)
    inputs = [{"x": np.arange(5.0) + m} for m in range(4)]
    result = sim.run(site_parties(secure_sum, inputs))
    if ROOT:
        held = [len(result.views[p].received) for p in range(4)]
        total = np.asarray(result.outputs[0]).tolist()
        sys.stdout.write(json.dumps([held, len(result.ledger), total]) + "\n")
    return 0


def sent_payloads(run: int) -> list[np.ndarray]:
    """What party 0 sends party 1 in run ``run``: small, eager-sized and large arrays."""
    return [np.arange(n, dtype=np.float64) * (run + 1) + k
            for k, n in enumerate((5, 2_000, 1 << 17))]


def storage(arr: np.ndarray) -> object:
    """The object at the end of an array's ``base`` chain (a memoryview's, its ``obj``)."""
    base: object = arr
    while isinstance(base, np.ndarray):
        base = base.base
    return base.obj if isinstance(base, memoryview) else base


def receiving(ctx, sealing_run: int):
    """Party 0 sends its payloads; party 1 receives them, tries to write into each, returns
    what it found."""
    call = ctx.new_call("probe")
    if ctx.party == 0:
        for i, payload in enumerate(sent_payloads(sealing_run)):
            yield Send(1, payload, call, f"m{i}")
        return None
    refused = []
    for i in range(len(sent_payloads(sealing_run))):
        got = yield Recv(0, call, f"m{i}")
        try:
            got.flags.writeable = True
            got[...] = -1.0
            refused.append(False)
        except ValueError:
            refused.append(True)
        got.shape = (1, got.size)  # its own array object: the view's record keeps its shape
    return refused


def received() -> int:
    """Two runs of party 0 → party 1 (each unsealed and sealed), views kept on their ranks;
    rank 1 prints, for the first runs' records after the second runs: equal to what was sent
    (numpy's arrays), read-only, refused to the program, shapes kept, storage an immutable
    ``bytes`` object of its own holding nothing but the payload's encoding (and zeros)."""
    from protocols import wire

    report = {}
    for sealing in (False, True):
        keys = "preshared" if sealing else "none"
        runs = [Simulation(Network.build(2), seed=9, driver="mpi", views="rank",
                           sealing=sealing, keys=keys).run(
                    [Party(p, lambda ctx, r=r: receiving(ctx, r), {}) for p in range(2)])
                for r in range(2)]
        if MPI.COMM_WORLD.Get_rank() != 1:
            continue
        records = [m.payload for m in runs[0].views[1].received]
        later = [m.payload for m in runs[1].views[1].received]
        roots = [storage(r) for r in records + later]
        rest = []
        for record, expected in zip(records, sent_payloads(0), strict=True):
            root = storage(record)
            encoding = wire.encode(expected)
            at = root.find(encoding)
            rest.append(at >= 0 and not any(root[:at] + root[at + len(encoding):]))
        report["sealed" if sealing else "unsealed"] = {
            "equal": [bool(np.array_equal(r, e) and r.shape == e.shape)
                      for r, e in zip(records, sent_payloads(0), strict=True)],
            "later_equal": [bool(np.array_equal(r, e))
                            for r, e in zip(later, sent_payloads(1), strict=True)],
            "read_only": [not r.flags.writeable for r in records],
            "refused_to_program": runs[0].outputs[1],
            "bytes_roots": [type(root) is bytes for root in roots],
            "distinct_roots": len({id(root) for root in roots}) == len(roots),
            "only_the_encoding": rest,
        }
    if MPI.COMM_WORLD.Get_rank() == 1:
        sys.stdout.write(json.dumps(report) + "\n")
    return 0


REUSED_MESSAGES, REUSED_KEEP_EVERY = 40, 5


def reused_payload(i: int) -> np.ndarray:
    return np.arange(10_000, dtype=np.float64) * (i + 1) - i  # 80 KB, one size


def reusing(ctx):
    """Party 0 sends 40 payloads of one size; party 1 keeps every 5th array and drops the
    rest. It returns whether each was what was sent when it came, the kept arrays, and the
    distinct storage objects (by identity, while each is alive) it received into."""
    call = ctx.new_call("probe")
    if ctx.party == 0:
        for i in range(REUSED_MESSAGES):
            yield Send(1, reused_payload(i), call, f"m{i}")
        return None
    equal, kept, roots = [], [], set()
    for i in range(REUSED_MESSAGES):
        got = yield Recv(0, call, f"m{i}")
        equal.append(bool(np.array_equal(got, reused_payload(i))))
        roots.add(id(storage(got)))
        if i % REUSED_KEEP_EVERY == 0:
            kept.append(got)
    return equal, kept, len(roots)


def reused() -> int:
    """Views off (record_views = False), unsealed and sealed: rank 1 prints, per run, whether
    every payload was what was sent when it came, whether the arrays the program kept are
    still what was sent after every later message, how many storage objects held the 40 (by
identity while alive), and how many of them were new (counted at ``received_storage``)."""
    import sim.drivers.mpi_transfer as mpi_transfer

    made = []
    new_storage = mpi_transfer.received_storage

    def counted(*args: object, **kwargs: object) -> object:
        made.append(1)
        return new_storage(*args, **kwargs)

    mpi_transfer.received_storage = counted  # new storage, as opposed to reused
    report = {}
    for sealing in (False, True):
        keys = "preshared" if sealing else "none"
        made.clear()
        result = Simulation(Network.build(2), seed=9, driver="mpi", record_views=False,
                            views="rank", sealing=sealing, keys=keys).run(
            [Party(p, reusing, {}) for p in range(2)])
        if MPI.COMM_WORLD.Get_rank() == 1:
            equal, kept, roots = result.outputs[1]
            report["sealed" if sealing else "unsealed"] = {
                "equal_on_arrival": equal,
                "kept_still_equal": [
                    bool(np.array_equal(a, reused_payload(i)))
                    for a, i in zip(kept, range(0, REUSED_MESSAGES, REUSED_KEEP_EVERY),
                                    strict=True)],
                "storage_objects": roots,
                "new_storage": len(made),
            }
    if MPI.COMM_WORLD.Get_rank() == 1:
        sys.stdout.write(json.dumps(report) + "\n")
    return 0


IN_PLACE_PARTIES = 4  # two on each rank


def in_place_payloads(party: int) -> list[np.ndarray]:
    """What ``party`` sends every other party: elements around the size from which sends
    leave from the program's array (an encoding of exactly that size, one byte less), a
    3 MiB matrix, and arrays that must be copied (Fortran order, big-endian)."""
    from sim.drivers.mpi_transfer import SEND_IN_PLACE_FROM

    rng = np.random.default_rng(100 + party)
    head = 12  # the wire header of a vector
    return [
        rng.integers(0, 256, SEND_IN_PLACE_FROM - head, dtype=np.uint8),
        rng.integers(0, 256, SEND_IN_PLACE_FROM - head - 1, dtype=np.uint8),
        rng.standard_normal((512, 768)),
        np.asfortranarray(rng.standard_normal((600, 300))),
        rng.integers(-2**40, 2**40, 200_000).astype(">i8"),
    ]


def digest(arr: np.ndarray) -> str:
    import hashlib

    native = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    return f"{hashlib.sha256(native.tobytes()).hexdigest()}:{arr.shape}"


def in_place_program(ctx):
    """Send each payload to every other party, then overwrite it; receive everyone's."""
    call = ctx.new_call("probe")
    others = tuple(q for q in range(IN_PLACE_PARTIES) if q != ctx.party)
    got = []
    for i, payload in enumerate(in_place_payloads(ctx.party)):
        yield SendEach(dict.fromkeys(others, payload), call, f"m{i}")
        payload[...] = 0  # the program's array is its own again once the send returned
        received = yield RecvEach(others, call, f"m{i}")
        got.append({q: digest(v) for q, v in received.items()})
    return got


def in_place() -> int:
    """Four parties over two ranks send large payloads to one another (views kept, and not):
    rank 0 prints what each party received (digests), what each view recorded, and how many
    messages came in two parts (a frame, then a tail sent from the program's array)."""
    import sim.drivers.mpi_transfer as mpi_transfer

    tails = []
    announced = mpi_transfer.Framing.tail_bytes

    def counted(head: bytes, source: int) -> int:
        tails.append(1)
        return announced(head, source)

    mpi_transfer.Framing.tail_bytes = staticmethod(counted)
    report = {}
    for views in (True, False):
        tails.clear()
        result = Simulation(Network.build(IN_PLACE_PARTIES), seed=4, driver="mpi",
                            sealing=False, keys="none", views="rank",
                            record_views=views).run(
            [Party(p, in_place_program, {}) for p in range(IN_PLACE_PARTIES)])
        mine = {p: [[m.sender, m.step, digest(m.payload)] for m in view.received]
                for p, view in result.views.local().items()}
        gathered = MPI.COMM_WORLD.gather((mine, len(tails)), root=0)
        if ROOT:
            report["views" if views else "noviews"] = {
                "outputs": {str(p): result.outputs[p] for p in range(IN_PLACE_PARTIES)},
                "records": {str(p): r for part, _ in gathered for p, r in part.items()},
                "tails": sum(n for _, n in gathered),
            }
    if ROOT:
        sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "in_place":
        raise SystemExit(in_place())
    if sys.argv[1] == "received":
        raise SystemExit(received())
    if sys.argv[1] == "reused":
        raise SystemExit(reused())
    if sys.argv[1] == "noviews":
        raise SystemExit(noviews())
    if sys.argv[1] == "scenarios":
        raise SystemExit(scenarios(Path(sys.argv[2]), sys.argv[3:]))
    raise SystemExit(fault(sys.argv[1]))
