"""Issue 29's remaining cases: ranks and drivers, progress as promised, data-file input.

* ``--ranks`` that no run could use, or that conflicts with ``--driver simpy``, is refused
  before any process starts;
* progress never falls silent for longer than :data:`sim.cli.MAX_BEAT_S` (checked on an
  injected clock, never the wall clock);
* a UTF-8 byte-order mark is not part of a CSV's first number;
* dsanls runs on synthetic ``kind = "ratings"`` data without a ``density`` (complete ratings);
* a symlink loop as a data path is one ``error:`` line, exit 2.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from protocols.errors import DataError, InputError
from sim.cli import MAX_BEAT_S, StderrProgress, _check_ranks, main
from sim.runner import plan_scenario, run_scenario

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "scenarios" / "quickstart.toml"


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    assert captured.out == ""
    return lines[0]


# -- ranks and drivers ------------------------------------------------------------------------


def test_driver_simpy_with_ranks_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(QUICKSTART), "--driver", "simpy", "--ranks", "2"]) == 2
    line = one_error_line(capsys)
    assert "--driver simpy" in line and "--ranks 2" in line


# scenario: (network.parties, the participants beyond them, from the protocols' papers)
PARTICIPANTS = {
    "quickstart.toml": (4, ()),  # SecureSum: the parties alone
    "pd_svd_secure_sum.toml": (3, ()),  # PD-SVD over SecureSum: no dealer
    "pd_svd.toml": (3, ("dealer",)),  # over NormedSecureSum: its offline dealer
    "normed_secure_sum.toml": (3, ("dealer",)),
    "secagg_dropouts.toml": (8, ("aggregator",)),  # SecAgg's server
    "pd_nmf_secagg_dropout.toml": (4, ("aggregator",)),
    "cape_mean.toml": (5, ("aggregator", "noise generator")),  # CAPE (seed 003, §3)
    "dp_nmf_outliers.toml": (3, ("analyst",)),  # curators and the analyst (seed 000)
}


@pytest.mark.parametrize("name", list(PARTICIPANTS))
def test_ranks_are_bounded_by_the_participants_of_the_entry(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The bound is exact: the data parties and the roles the protocol adds, no more."""
    scenario = REPO / "scenarios" / name
    parties, roles = PARTICIPANTS[name]
    assert f"parties = {parties}" in scenario.read_text()
    most = parties + len(roles)
    _check_ranks(most, str(scenario))  # one participant per rank: allowed
    assert main(["run", str(scenario), "--ranks", str(most + 1)]) == 2
    line = one_error_line(capsys)
    assert f"--ranks {most + 1}" in line and f"at most {most}" in line
    assert all(role in line for role in roles)


def test_participants_follow_the_algorithm_keys() -> None:
    """PD-SVD's dealer and CAPE's noise generator exist only where their protocol runs."""
    from sim import catalog

    pd_svd, cape_mean = catalog.get("pd_svd"), catalog.get("cape_mean")
    assert pd_svd.participants(pd_svd.validate({"variant": "normed"}), 3) == 4
    assert pd_svd.participants(pd_svd.validate({"variant": "secure_sum"}), 3) == 3
    assert cape_mean.participants(cape_mean.validate({"scheme": "conventional"}), 5) == 6
    assert cape_mean.participants(cape_mean.validate({}), 5) == 7


def test_more_ranks_than_a_run_can_use_are_refused_before_any_start(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(QUICKSTART), "--ranks", "99"]) == 2
    line = one_error_line(capsys)
    assert "--ranks 99" in line and "give --ranks 4 or fewer" in line


def test_ranks_refusal_through_the_installed_entry_starts_no_mpiexec() -> None:
    done = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(QUICKSTART), "--ranks",
                           "99"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: --ranks 99")


# -- progress as promised ---------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def heartbeat_times(duration: float, stages: dict[float, tuple[int, int]] | None = None,
                    announce: bool = True) -> tuple[list[float], list[str]]:
    """Drive a progress on a fake clock in quarter-second ticks; the times of its lines."""
    clock = FakeClock()
    stream = io.StringIO()
    progress = StderrProgress(stream, clock=clock)  # type: ignore[arg-type]
    progress.start("run", "estimated 1 h", announce=announce, background=False)
    times, count = [], len(stream.getvalue().splitlines())
    times.extend([0.0] * count)
    for step in range(1, int(duration * 4) + 1):
        clock.now = step / 4
        if stages and clock.now in stages:
            progress("stage", *stages[clock.now])
        progress.tick()
        lines = stream.getvalue().splitlines()
        times.extend([clock.now] * (len(lines) - count))
        count = len(lines)
    return times, stream.getvalue().splitlines()


def test_progress_is_never_silent_longer_than_promised_in_an_hour() -> None:
    hour = 3600.0
    times, lines = heartbeat_times(hour)
    assert lines[0] == "run: estimated 1 h"
    gaps = np.diff([*times, hour])
    assert gaps.max() <= MAX_BEAT_S
    assert times[1] <= 1.0  # a line within the first second
    assert all(g <= 1.0 for g in np.diff(times[:4]))  # every second at first
    assert len(lines) < hour / 5  # not a line every second for an hour
    assert lines[-1].startswith("run: ") and lines[-1].endswith(" s elapsed")
    seconds = [float(line.split(": ")[1].split(" s")[0]) for line in lines[1:]]
    assert np.allclose(seconds, np.round(times[1:]))  # each says the time elapsed


def test_progress_announces_a_quiet_start_once_with_the_estimate() -> None:
    times, lines = heartbeat_times(30.0, announce=False)
    assert lines[0] == "run: 1 s elapsed; estimated 1 h" and times[0] == 1.0
    assert not any("estimated" in line for line in lines[1:])


def test_stage_lines_count_as_progress() -> None:
    stages = {t: (int(t), 100) for t in np.arange(50.0, 100.0, 0.5)}
    times, lines = heartbeat_times(100.0, stages)
    in_stages = [line for t, line in zip(times, lines, strict=True) if 50 <= t < 100]
    assert in_stages and all(line.startswith("stage: ") for line in in_stages)


# -- data-file input --------------------------------------------------------------------------


def test_a_utf8_bom_in_a_csv_is_accepted(tmp_path: Path) -> None:
    rng = np.random.default_rng(29)
    values = np.round(rng.random((12, 5)), 3)
    text = "\n".join(",".join(f"{v:.3f}" for v in row) for row in values) + "\n"
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())  # what "CSV UTF-8" in a spreadsheet saves
    spec = {"name": "bom", "seed": 1, "network": {"parties": 3},
            "data": {"source": "file", "path": str(path)}, "algorithm": {"name": "secure_sum"}}
    run = run_scenario(spec)
    np.testing.assert_array_equal(plan_scenario(spec).data, values)
    (tmp_path / "bom.toml").write_text(
        'name = "bom"\nseed = 1\n[network]\nparties = 3\n[data]\nsource = "file"\n'
        'path = "bom.csv"\n[algorithm]\nname = "secure_sum"\n')
    assert main(["run", str(tmp_path / "bom.toml"), "--quiet"]) == 0
    assert run.reporting


def dsanls_spec(**data: object) -> dict:
    return {"name": "d", "seed": 4, "network": {"parties": 3},
            "data": {"source": "synthetic", "kind": "ratings", "rows": 60, "cols": 30, **data},
            "algorithm": {"name": "dsanls", "k": 3, "iterations": 3}}


def test_dsanls_runs_on_synthetic_ratings_without_a_density() -> None:
    plan = plan_scenario(dsanls_spec())
    assert np.isfinite(plan.data).all()
    assert plan.data.min() >= 1 and plan.data.max() <= 5  # ratings 1..5, every entry observed
    run = plan.run()
    assert np.isfinite(run.report["metrics"]["relative_error"])


def test_dsanls_still_refuses_ratings_with_unobserved_entries() -> None:
    with pytest.raises(InputError, match="needs finite values"):
        plan_scenario(dsanls_spec(density=0.5))


def test_a_symlink_loop_as_data_path_is_one_error_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.csv").symlink_to(tmp_path / "b.csv")
    (tmp_path / "b.csv").symlink_to(tmp_path / "a.csv")
    (tmp_path / "loop.toml").write_text(
        'name = "loop"\n[network]\nparties = 3\n[data]\nsource = "file"\npath = "a.csv"\n'
        '[algorithm]\nname = "secure_sum"\n')
    assert main(["run", str(tmp_path / "loop.toml")]) == 2
    assert "symbolic link that leads back to itself" in one_error_line(capsys)
    from algorithms.data import load_dataset

    with pytest.raises(DataError, match="symlink loop"):
        load_dataset(tmp_path / "a.csv")
