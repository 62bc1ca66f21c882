"""Output ownership (issue 29): one run at a time into an ``--out``; killed runs' leftovers.

A second run into a directory that a live run holds fails at once with one ``error:`` line
naming the holder's process; staging directories of killed runs are removed by the next run
into the same directory, and an earlier output that a run killed mid-swap had set aside is put
back.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from protocols.errors import InputError
from sim.ownership import lock_path, own_out_dir, staging_names
from sim.runner import run_scenario

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "scenarios" / "quickstart.toml"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", *argv], cwd=REPO, env=ENV,
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_second_cli_run_into_the_same_out_fails_at_once(tmp_path: Path) -> None:
    long = tmp_path / "long.toml"
    long.write_text(QUICKSTART.read_text().replace("trials = 200", "trials = 20000"))
    out = tmp_path / "out"
    first = subprocess.Popen([sys.executable, "-m", "sim.cli", "run", str(long), "--out",
                              str(out)], cwd=REPO, env=ENV, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(300, first.kill)
    watchdog.start()
    try:
        assert first.stderr is not None
        for line in first.stderr:
            if line.startswith("audit:"):  # the first run is under way
                break
        second = cli("run", str(QUICKSTART), "--out", str(out), "--quiet")
        assert first.poll() is None, "the first run ended before the second was tried"
        first.send_signal(signal.SIGTERM)
        first.communicate()
    finally:
        watchdog.cancel()
        first.kill()
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr.splitlines() == [second.stderr.strip()]
    assert second.stderr.startswith(f"error: --out {str(out)!r} is being written by another "
                                    f"run (process {first.pid},")
    assert not out.exists()


def test_the_api_refuses_an_out_dir_another_process_holds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from sim.ownership import own_out_dir
        with own_out_dir({str(out)!r}):
            print("held", flush=True)
            sys.stdin.read()
        """)], env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(InputError, match=rf"process {holder.pid}, lock"):
            run_scenario(QUICKSTART, out=out)
    finally:
        holder.communicate("")
    assert not lock_path(out).exists()  # released and removed with its holder's block
    run = run_scenario(QUICKSTART, out=out)  # free again
    assert (out / "report.json").read_text().strip() != "" and run.reporting


def test_the_lock_is_reentrant_within_a_process_and_released_after(tmp_path: Path) -> None:
    out = tmp_path / "a" / "out"
    with own_out_dir(out):
        assert lock_path(out).read_text().strip() == str(os.getpid())
        with own_out_dir(out):  # e.g. the CLI holds it, then ScenarioRun.write takes it
            pass
        assert lock_path(out).exists()
    assert not lock_path(out).exists()


def test_staging_left_by_killed_runs_is_removed_by_the_next_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_scenario(QUICKSTART, out=out)
    stale = [tmp_path / ".out.0123456789ab.tmp", tmp_path / ".out.fedcba987654.old.tmp"]
    other = tmp_path / ".out.x.tmp"  # not a staging name of `out`: left alone
    for d in (*stale, other):
        d.mkdir()
        (d / "report.json").write_text("{}")
    run_scenario(QUICKSTART, out=out, seed=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.x.tmp", "out"]


def test_an_output_set_aside_by_a_run_killed_mid_swap_is_put_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    aside = tmp_path / ".out.00000000abcd.old.tmp"
    aside.mkdir()
    (aside / "report.json").write_text('{"earlier": 1}')
    with own_out_dir(out) as owned:
        assert owned.restored == aside.name and owned.cleaned == []
    assert (out / "report.json").read_text() == '{"earlier": 1}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_staging_names_are_unambiguous_between_directories() -> None:
    x = staging_names(Path("/d/x"))
    assert x.fullmatch(".x.0123456789ab.tmp") and x.fullmatch(".x.0123456789ab.old.tmp")
    assert x.fullmatch(".x.0123456789ab.tmp").group("old") is None  # type: ignore[union-attr]
    # the staging directories of x.old, of x.0123456789ab and of y are not x's
    for name in (".x.old.0123456789ab.tmp", ".x.0123456789ab.0123456789ab.tmp",
                 ".y.0123456789ab.tmp", ".x.0123456789AB.tmp", ".x.lock"):
        assert x.fullmatch(name) is None, name


def test_run_scenario_holds_its_out_dir_from_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holders = []

    def progress(stage: str, done: int, total: int) -> None:  # called during the run
        holders.append(lock_path(out).read_text().strip())

    run_scenario(QUICKSTART, out=out, progress=progress)
    assert holders and set(holders) == {str(os.getpid())}
    assert not lock_path(out).exists() and (out / "report.json").exists()
