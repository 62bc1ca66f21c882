"""SIGINT and SIGTERM end a run with one line, exit 128 + signal (issue 29).

Each CLI test starts a run long enough to be interrupted (the quickstart with 20,000 audit
trials), waits for its progress on stderr, sends the signal, and checks the exit status, that
stderr after the signal is the one line ``interrupted after N s; nothing written``, and that
``--out`` holds nothing new: no output directory, no staging directory, no lock. Under MPI
(``--ranks 2``) the signal goes to the launcher alone (as ``kill PID`` does) and to the whole
process group (as Ctrl-C at a terminal does).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
from pathlib import Path

import pytest

from sim.interrupt import Interrupted, deferred, interruptible

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "scenarios" / "quickstart.toml"
LINE = "interrupted after {} s; nothing written"


def long_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "long.toml"
    path.write_text(QUICKSTART.read_text().replace("trials = 200", "trials = 20000"))
    return path


def interrupt_run(argv: list[str], sig: int, group: bool = False) -> tuple[int, str]:
    """Start ``mpcsim run`` with ``argv``; once an audit progress line shows, send ``sig``.

    Returns the exit status and stderr after the signal.
    """
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "sim.cli", "run", *argv], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    watchdog = threading.Timer(300, proc.kill)  # a hung run fails the test, not the suite
    watchdog.start()
    try:
        assert proc.stderr is not None
        before = []
        for line in proc.stderr:
            before.append(line)
            if line.startswith("audit:"):
                break
        assert proc.poll() is None, f"the run ended before the signal: {before}"
        if group:
            os.killpg(proc.pid, sig)
        else:
            proc.send_signal(sig)
        after = proc.stderr.read()
        status = proc.wait()
    finally:
        watchdog.cancel()
        proc.kill()
        proc.communicate()
    return status, after


def assert_nothing_written(tmp_path: Path, out: Path) -> None:
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml"]  # no staging, no lock


PROGRESS = re.compile(r"^(audit: |[\w.-]+: \d+ s elapsed)")
"""A progress line; the run may print one more between the line the test waits for and the
signal's arrival (on a loaded machine, the heartbeat can come first)."""


def assert_one_line(after: str) -> None:
    lines = [line for line in after.splitlines() if not PROGRESS.match(line)]
    assert len(lines) == 1, after
    assert after.splitlines()[-1] == lines[0], after  # and it is the last thing said
    number = lines[0].removeprefix("interrupted after ").split(" s;")[0]
    assert number.isdigit() and lines[0] == LINE.format(number)


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_a_simpy_run_with_one_line(tmp_path: Path, sig: int, status: int) -> None:
    out = tmp_path / "out"
    code, after = interrupt_run([str(long_scenario(tmp_path)), "--out", str(out)], sig)
    assert code == status == 128 + sig
    assert_one_line(after)
    assert_nothing_written(tmp_path, out)


def test_an_interrupted_run_leaves_the_earlier_output_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    earlier = {"report.json": b'{"earlier": true}', "ledger.csv": b"a,b\n"}
    for name, content in earlier.items():
        (out / name).write_bytes(content)
    code, after = interrupt_run([str(long_scenario(tmp_path)), "--out", str(out)],
                                signal.SIGINT)
    assert code == 130
    assert_one_line(after)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == earlier
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.toml", "out"]


MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"


@pytest.mark.skipif(not MPIEXEC.exists(), reason="the mpi extra is not installed")
@pytest.mark.parametrize(("sig", "group"), [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_a_signal_ends_every_rank_of_an_mpi_run(tmp_path: Path, sig: int, group: bool) -> None:
    out = tmp_path / "out"
    code, after = interrupt_run([str(long_scenario(tmp_path)), "--ranks", "2", "--out",
                                 str(out)], sig, group=group)
    assert code == 128 + sig
    assert_one_line(after)
    assert_nothing_written(tmp_path, out)
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path / "long.toml")],
                              capture_output=True, text=True, check=False)
    assert leftover.stdout == "", "a rank outlived the interrupted job"


# -- the Python API -----------------------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interruptible_raises_interrupted_with_the_shell_status(sig: int) -> None:
    ticks = iter([100.0, 103.4])
    with pytest.raises(Interrupted) as info, interruptible(clock=lambda: next(ticks)):
        signal.raise_signal(sig)
    assert info.value.signum == sig and info.value.status == 128 + sig
    assert isinstance(info.value, KeyboardInterrupt)
    assert info.value.line() == "interrupted after 3 s; nothing written"
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handlers restored


def test_deferred_holds_a_signal_until_its_block_is_done() -> None:
    done = []
    with pytest.raises(Interrupted), interruptible():
        with deferred():
            signal.raise_signal(signal.SIGTERM)
            done.append("renamed")  # the block is not cut short
        done.append("after")  # never reached: the signal is delivered on leaving
    assert done == ["renamed"]
