"""The MPI driver (sim/drivers/mpi.py) against the SimPy driver, and its failures.

Each test starts real ``mpiexec`` jobs of the installed MPICH (the ``mpi`` extra, which
``make test`` installs). A job runs scenarios under the MPI driver (``mpi_job.py``); the test
runs the same scenarios in process under SimPy and requires identical outputs, identical
ledger rows except the two time columns, and identical views (``mpi_catalog.views_digest``).
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import json
import os
import re
import signal
import struct
import subprocess
import sys
import sysconfig
import termios
import threading
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mpi_catalog import ARRIVAL_ORDER, SCENARIOS, views_digest  # noqa: E402

from sim import catalog  # noqa: E402
from sim.drivers.mpi import block_owner  # noqa: E402
from sim.runner import run_scenario  # noqa: E402

pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"
JOB_TIMEOUT_S = 600
CORE = ["secure_sum_prg", "secure_sum_explicit", "pd_nmf"]


def mpiexec(ranks: int, *args: str, timeout: float = JOB_TIMEOUT_S,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable, *args],
                          capture_output=True, text=True, timeout=timeout, check=False, env=env)


def run_job(out: Path, ranks: int, names: list[str]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    done = mpiexec(ranks, str(HERE / "mpi_job.py"), "scenarios", str(out), *names)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def ledger_without_times(text: str) -> list[tuple[str, ...]]:
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    keep = [i for i, name in enumerate(header) if name not in ("sent_s", "delivered_s")]
    assert len(keep) == len(header) - 2
    return sorted(tuple(row[i] for i in keep) for row in body)


def assert_same_as_simpy(name: str, out: Path) -> None:
    error = out / f"{name}.error"
    assert not error.exists(), error.read_text()
    reference = run_scenario(SCENARIOS[name])
    got = out / name
    assert ledger_without_times((got / "ledger.csv").read_text()) == ledger_without_times(
        reference.ledger_csv)
    with np.load(got / "outputs.npz") as outputs:
        assert sorted(outputs) == sorted(reference.outputs)
        for key, value in reference.outputs.items():
            np.testing.assert_array_equal(outputs[key], value, err_msg=key)
    assert (got / "views.txt").read_text() == views_digest(
        reference.run.result.views if reference.run.result else {})


@pytest.fixture(scope="module")
def core_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    base = tmp_path_factory.mktemp("mpi")
    return {ranks: run_job(base / str(ranks), ranks, CORE) for ranks in (2, 3)}


@pytest.mark.parametrize("ranks", [2, 3])
@pytest.mark.parametrize("name", CORE)
def test_secure_sum_and_pd_nmf_equal_the_simpy_run(core_runs, name: str, ranks: int) -> None:
    assert_same_as_simpy(name, core_runs[ranks])
    report = json.loads((core_runs[ranks] / name / "report.json").read_text())
    assert report["driver"] == {"name": "mpi", "ranks": ranks, "hosts": 1}


def test_block_distribution() -> None:
    owner = block_owner(range(7), 3)  # sizes 3, 2, 2
    assert [owner[p] for p in range(7)] == [0, 0, 0, 1, 1, 2, 2]
    assert block_owner([5, 9], 4) == {5: 0, 9: 1}  # more ranks than parties: some host none


def test_every_catalogue_entry_has_a_small_scenario() -> None:
    covered = {spec["algorithm"]["name"] for spec in SCENARIOS.values()}
    assert covered == set(catalog.algorithms())


@pytest.fixture(scope="module")
def catalogue_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    names = [n for n in SCENARIOS if n not in CORE]
    return run_job(tmp_path_factory.mktemp("catalogue"), 2, names)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in SCENARIOS if n not in CORE])
def test_catalogue_entry_under_mpi(catalogue_run: Path, name: str) -> None:
    if name not in ARRIVAL_ORDER:
        assert_same_as_simpy(name, catalogue_run)
        return
    # results depend on arrival order (and a time budget on the clock): the run completes,
    # with the SimPy run's outputs by name and rank (a budget may give another number of
    # iterations) and a self-consistent ledger
    error = catalogue_run / f"{name}.error"
    assert not error.exists(), error.read_text()
    reference = run_scenario(SCENARIOS[name])
    with np.load(catalogue_run / name / "outputs.npz") as outputs:
        assert {k: outputs[k].ndim for k in outputs} == {
            k: np.ndim(v) for k, v in reference.outputs.items()}
    rows = list(csv.DictReader(io.StringIO((catalogue_run / name / "ledger.csv").read_text())))
    assert len(rows) == len(reference.run.result.ledger) if reference.run.result else not rows
    assert all(float(r["delivered_s"]) >= float(r["sent_s"]) for r in rows)


# -- failures: every rank ends, rank 0 prints one error line naming party and call ----------


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_record_views_false_is_honoured_under_mpi() -> None:
    """No rank keeps a record of a received message when views are off; the ledger keeps
    every message (key agreement's and SecureSum's) and the sum is right (numpy's)."""
    done = mpiexec(2, str(HERE / "mpi_job.py"), "noviews", timeout=120)
    assert done.returncode == 0, done.stderr
    held, rows, total = json.loads(done.stdout.strip().splitlines()[-1])
    assert held == [0, 0, 0, 0]
    assert rows > 0 and rows % (4 * 3) == 0  # whole rounds of M(M - 1) messages
    assert np.allclose(total, sum(np.arange(5.0) + m for m in range(4)))


def test_storage_nothing_refers_to_is_reused_and_storage_a_program_keeps_is_not() -> None:
    """:class:`sim.drivers.mpi_transfer.ReceivedStorage`, views off: 40 payloads of one size
    come in fewer new storage objects than messages, every payload equals numpy's when it
    comes, and the 8 arrays the program kept still equal what was sent after all 40 arrived
    (reuse never wrote memory anything referred to). Unsealed and sealed (opened in place)."""
    done = mpiexec(2, str(HERE / "mpi_job.py"), "reused", timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(report) == {"unsealed", "sealed"}
    for found in report.values():
        assert found["equal_on_arrival"] == [True] * 40
        assert found["kept_still_equal"] == [True] * 8
        assert 8 <= found["new_storage"] < 20  # the kept arrays' storage is never reused


def test_a_received_payload_is_its_own_immutable_storage_under_mpi() -> None:
    """Received straight into their storage (no copy), payloads stay what a view needs: after
    a second run received more into fresh storage, the first run's records still equal what
    was sent (numpy's arrays), are read-only, and the program could not make its array
    writeable; each record's memory is an immutable ``bytes`` object of its own, holding the
    payload's wire encoding and zeros only (the frame, nonce and tag erased). Unsealed and
    sealed (opened over its own ciphertext)."""
    done = mpiexec(2, str(HERE / "mpi_job.py"), "received", timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(report) == {"unsealed", "sealed"}
    for found in report.values():
        assert found["equal"] == [True] * 3 and found["later_equal"] == [True] * 3
        assert found["read_only"] == [True] * 3
        assert found["refused_to_program"] == [True] * 3
        assert found["bytes_roots"] == [True] * 6 and found["distinct_roots"]
        assert found["only_the_encoding"] == [True] * 3


def test_large_sends_from_the_programs_arrays_deliver_what_was_sent() -> None:
    """Payloads of 2 MiB or more leave from the program's own array (a frame, then a tail):
    four parties over two ranks send each other such payloads and overwrite them as soon as
    the send returns. Every receiver got, and every view recorded, what was sent (numpy's
    digests of the original arrays); the tail path carried exactly the C-ordered native
    payloads of ≥ 2 MiB between ranks, and arrays that must be converted did not take it."""
    from mpi_job import IN_PLACE_PARTIES, digest, in_place_payloads

    from protocols import wire
    from sim.drivers.mpi_transfer import SEND_IN_PLACE_FROM

    done = mpiexec(2, str(HERE / "mpi_job.py"), "in_place", timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    sent = {p: in_place_payloads(p) for p in range(IN_PLACE_PARTIES)}
    owner = block_owner(range(IN_PLACE_PARTIES), 2)
    in_place = [len(wire.encode(a)) >= SEND_IN_PLACE_FROM and a.flags.c_contiguous
                and a.dtype.isnative for a in sent[0]]
    assert in_place == [True, False, True, False, False]  # both sides of the threshold
    crossing = sum(owner[p] != owner[q] for p in sent for q in sent if p != q)
    for found in report.values():
        for p in range(IN_PLACE_PARTIES):
            expected = [{str(q): digest(sent[q][i]) for q in sent if q != p}
                        for i in range(len(sent[p]))]
            assert found["outputs"][str(p)] == expected
        assert found["tails"] == crossing * sum(in_place)
    records = report["views"]["records"]
    for p in range(IN_PLACE_PARTIES):
        expected = sorted([q, f"m{i}", digest(sent[q][i])]
                          for q in sent if q != p for i in range(len(sent[q])))
        assert sorted(records[str(p)]) == expected
    assert all(r == [] for r in report["noviews"]["records"].values())


def test_a_message_reaches_its_receiver_while_its_sender_computes(tmp_path) -> None:
    """Party 0 sends a message, then computes without calling into MPI until party 1 says it
    received it. Messages of 8,150 and 8,191 bytes — over one of MPICH's default shared-memory
    cells with its header, under the size it reads from the sender's memory — waited for the
    sender's next call into MPI. Started as the driver starts MPICH
    (:data:`~sim.drivers.mpi_comm.MPICH_SETTINGS`), every message arrives meanwhile; with
    MPICH's default cells set in the environment (planted) the two wait past the deadline,
    which shows the job can tell."""
    from sim.drivers.mpi_comm import MPICH_SETTINGS

    sizes = [4000, 8150, 8191, 12000]
    clean = {k: v for k, v in os.environ.items() if k not in MPICH_SETTINGS}
    planted = {**clean, "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "8192"}
    seen = {}
    for label, env, deadline in (("driver", clean, 60), ("planted", planted, 2)):
        flags = tmp_path / label
        flags.mkdir()
        done = mpiexec(2, str(HERE / "mpi_progress_job.py"), str(flags), str(deadline),
                       *map(str, sizes), env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        assert report["posted"] == sizes  # the messages MPI carried are the sizes meant
        seen[label] = report["seen"]
    assert seen["driver"] == [True, True, True, True]
    assert seen["planted"][1:3] == [False, False]


def test_a_raising_program_ends_every_rank() -> None:
    done = mpiexec(2, str(HERE / "mpi_job.py"), "raise", timeout=120)
    assert done.returncode != 0
    lines = error_lines(done.stderr)
    assert len(lines) == 1, done.stderr
    assert "party 1 aborted" in lines[0] and "secure_sum#" in lines[0]
    assert "RuntimeError: planted failure" in lines[0]


def test_a_forged_message_ends_every_rank() -> None:
    done = mpiexec(2, str(HERE / "mpi_job.py"), "tamper", timeout=120)
    assert done.returncode != 0
    lines = error_lines(done.stderr)
    assert len(lines) == 1, done.stderr
    assert "party 2 aborted" in lines[0] and "secure_sum#1" in lines[0]
    assert "AuthenticationError" in lines[0]


LONG = """\
name = "long"
seed = 5
[network]
parties = 4
[data]
source = "synthetic"
rows = 400
cols = 60
[algorithm]
name = "pd_nmf"
k = 4
iterations = 4000
local_iterations = 5
"""


def rank_pids(marker: str) -> dict[int, int]:
    """pid of each MPI rank whose command line holds ``marker`` (from /proc).

    Under Hydra a rank runs in a child of the process Hydra started, which waits for it
    (``supervise_rank`` in :mod:`sim.drivers.launch`): the rank is that child, and the parent is
    returned only while it has none.
    """
    found: dict[int, dict[int, int]] = {}  # rank -> {pid: parent pid}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker.encode() not in cmdline or b"sim.cli" not in cmdline:
            continue
        parent = int(stat[stat.rindex(")") + 2:].split()[1])  # after the name: state, ppid
        for var in environ.split(b"\0"):
            if var.startswith(b"PMI_RANK="):
                found.setdefault(int(var[9:]), {})[int(entry.name)] = parent
    ranks = {}
    for rank, parents in found.items():
        children = [pid for pid, parent in parents.items() if parent in parents]
        ranks[rank] = children[0] if children else next(iter(parents))
    return ranks


def _pipes(pid: int) -> dict[str, int]:
    """The pipes process ``pid`` holds: fd number by ``pipe:[inode]``."""
    held = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("pipe:"):
                held[link] = int(fd)
    return held


def armed(rank_pid: int) -> bool:
    """Whether the rank said its death would be reported: its liveness connection is up.

    The rank writes ``A`` (:data:`sim.drivers.liveness.ARMED`) on the pipe to the process that
    supervises it (:func:`sim.drivers.launch.supervise_rank`), which reads it only once the
    rank has ended. That pipe is the one the two hold under different descriptors (the pipes
    they inherited, they hold under the same); the bytes waiting in it are counted without
    reading them (``FIONREAD`` on the supervisor's end, opened through /proc).
    """
    try:
        stat = Path(f"/proc/{rank_pid}/stat").read_text()
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        theirs, mine = _pipes(parent), _pipes(rank_pid)
        for link in theirs.keys() & mine.keys():
            if theirs[link] == mine[link]:
                continue
            fd = os.open(f"/proc/{parent}/fd/{theirs[link]}", os.O_RDONLY | os.O_NONBLOCK)
            try:
                waiting = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, bytes(4)))[0]
            finally:
                os.close(fd)
            return waiting > 0
    except OSError:
        pass
    return False


def test_a_killed_rank_ends_every_rank_without_partial_files(tmp_path: Path) -> None:
    """SIGKILL one rank well into a run: rank 0 names it, every rank ends, nothing written.

    The kill comes once every rank has said its death would be reported (:func:`armed`: its
    liveness connection to rank 0 is up, so the parties run) and rank 0's progress has beaten
    at least once since (a second or more into the sweeps), so it lands in a call however slow
    the machine is to start the ranks (seconds when loaded: a kill keyed on the run's elapsed
    time alone could land before rank 1 had connected). A rank killed while the job still
    starts is the launcher's to report (see ``launch`` in :mod:`sim.drivers.launch`).
    """
    short = tmp_path / "short.toml"
    short.write_text(LONG.replace("iterations = 4000", "iterations = 1"))
    short_out = tmp_path / "short_out"
    done = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(short), "--ranks", "2",
                           "--quiet", "--json", "--out", str(short_out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    # the uninterrupted run through the CLI launcher equals the SimPy run
    assert json.loads(done.stdout)["driver"] == {"name": "mpi", "ranks": 2, "hosts": 1}
    reference = run_scenario(short)
    assert ledger_without_times((short_out / "ledger.csv").read_text()) == (
        ledger_without_times(reference.ledger_csv))
    with np.load(short_out / "outputs.npz") as outputs:
        for key, value in reference.outputs.items():
            np.testing.assert_array_equal(outputs[key], value)
    scenario = tmp_path / "long.toml"
    scenario.write_text(LONG)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "run", str(scenario), "--ranks", "2", "--out",
         str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(300, proc.kill)  # a hung job fails the test, not the suite
    watchdog.start()
    seen = []
    connected = False  # every rank armed at an earlier heartbeat
    pids: dict[int, int] = {}
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            seen.append(line)
            if not re.search(r": \d+ s elapsed", line):
                continue
            if connected:
                break
            pids = rank_pids(str(scenario))
            connected = len(pids) == 2 and all(armed(pid) for pid in pids.values())
        assert connected and len(pids) == 2 and proc.poll() is None, (
            "the run ended before the kill")
        os.kill(pids[1], signal.SIGKILL)
        _, rest = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    stderr = "".join(seen) + rest
    assert proc.returncode == 1
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    assert "rank 1 (hosting parties 2..3)" in lines[0] and "in call " in lines[0]
    assert not out.exists()
    assert not rank_pids(str(scenario))  # no rank left behind
