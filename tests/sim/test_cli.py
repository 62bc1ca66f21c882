"""Tests of the ``mpcsim`` command line (:mod:`sim.cli`), in process and as an installed script.

Scenarios and data files are written into ``tmp_path``; audits are kept tiny (10 trials).
Expected communication figures are computed by hand for SecureSum among M = 3 parties on
d = 3 columns: key agreement sends M − 1 unsealed 44-byte messages per party; the explicit
variant sends 2(M − 1) sealed messages of 4 + 8 + 8d + 28 = 64 bytes, 2(M − 1)d elements.
"""

from __future__ import annotations

import io
import json
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sim.cli import main

DATA = np.arange(24, dtype=float).reshape(8, 3) / 4 - 2  # exact dyadic values, some negative

BASE = """\
name = "cli"
seed = 11
[network]
parties = 3
[field]
prime = "2^61-1"
frac_bits = 24
[data]
source = "file"
path = "data.csv"
partition = [2, 3, 3]
[algorithm]
name = "secure_sum"
variant = "explicit"
[[audit]]
coalition = [0]
method = "statistical"
trials = 10
"""

SYNTHETIC = """\
name = "synthetic"
seed = 11
[network]
parties = 3
topology = "ring"
[data]
source = "synthetic"
rows = 12
cols = 4
[algorithm]
name = "secure_sum"
variant = "prg"
"""


def write(tmp_path: Path, text: str, name: str = "scenario.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    np.savetxt(tmp_path / "data.csv", DATA, delimiter=",")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def npz_arrays(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


# -- run: console tables -------------------------------------------------------------------


def test_run_prints_per_party_and_per_protocol_tables_and_the_audit_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "run", str(write(tmp_path, BASE)), "--quiet")
    assert code == 0
    assert "communication per party" in out
    assert "communication per protocol" in out
    lines = out.splitlines()
    # party, role, msgs/elements/bytes sent, msgs/elements/bytes received
    for party in range(3):
        assert any(line.split() == [str(party), "site", "6", "12", "344", "6", "12", "344"]
                   for line in lines), out
    assert any(line.split() == ["key_agreement", "1", "6", "0", "264", "1"] for line in lines)
    assert any(line.split() == ["secure_sum", "1", "12", "36", "768", "2"] for line in lines)
    assert "t-privacy audits" in out
    audit_rows = [line.split() for line in lines if line.split()[:2] == ["0", "statistical"]]
    # 10 trials cannot reach α: the audit says so, and how many trials would
    assert len(audit_rows) == 1 and audit_rows[0][2] == "inconclusive"
    assert re.search(r"use trials ≥ \d+", out)
    assert "simulated" in out and "wall" in out


def test_progress_goes_to_stderr_unless_quiet(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, BASE))
    code, out, err = run_cli(capsys, "run", path)
    assert code == 0 and "error" not in err
    progress = re.compile(r"^audit: \d+/70$", re.MULTILINE)  # 10 trials × (A and 6 B's)
    assert progress.findall(err) and progress.search(out) is None
    code, out_quiet, err_quiet = run_cli(capsys, "run", path, "--quiet")
    assert code == 0 and err_quiet == ""
    wall = re.compile(r"wall [0-9.e+-]+ s")  # the only figure that differs between runs
    assert wall.sub("", out_quiet) == wall.sub("", out)


# -- run --json: the report schema ---------------------------------------------------------


def test_json_report_has_the_issue_2_schema(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "run", str(write(tmp_path, BASE)), "--json", "--quiet")
    assert code == 0
    report = json.loads(out)
    for key in ("scenario", "algorithm", "parties", "seed", "metrics", "communication", "time",
                "privacy"):
        assert key in report, key
    assert report["scenario"] == "cli" and report["algorithm"] == "secure_sum"
    assert report["parties"] == 3 and report["seed"] == 11
    comm = report["communication"]
    assert {k: comm[k] for k in ("total_elements", "total_bytes", "total_messages",
                                 "rounds")} == {
        "total_elements": 3 * 12, "total_bytes": 3 * 344, "total_messages": 3 * 6,
        "rounds": 3,
    }
    per_party = comm["per_party"]
    assert [p["party"] for p in per_party] == [0, 1, 2]
    for entry in per_party:
        assert set(entry) >= {"party", "role", "messages_sent", "elements_sent", "bytes_sent",
                              "messages_received", "elements_received", "bytes_received"}
        assert (entry["role"], entry["messages_sent"], entry["elements_sent"],
                entry["bytes_sent"], entry["messages_received"], entry["elements_received"],
                entry["bytes_received"]) == ("site", 6, 12, 344, 6, 12, 344)
    per_protocol = comm["per_protocol"]
    assert per_protocol["secure_sum"] == {"calls": 1, "messages": 12, "elements": 36,
                                          "bytes": 768, "rounds": 2}
    assert per_protocol["key_agreement"] == {"calls": 1, "messages": 6, "elements": 0,
                                             "bytes": 264, "rounds": 1}
    assert set(report["time"]) >= {"simulated_s", "wall_s"}
    assert all(isinstance(report["time"][k], float) for k in ("simulated_s", "wall_s"))
    (audit,) = report["privacy"]
    assert audit["coalition"] == [0] and audit["method"] == "statistical"
    assert audit["verdict"] == "inconclusive"  # 10 trials
    assert set(audit) == {"coalition", "method", "verdict", "p_value", "call", "message",
                          "power", "witness", "details"}
    assert report["metrics"]["max_abs_error"] <= 3 * 2.0**-24


# -- run --out: the files ------------------------------------------------------------------


def test_out_writes_report_outputs_and_ledger(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    code, out, _ = run_cli(capsys, "run", str(write(tmp_path, BASE)), "--out", str(out_dir),
                           "--json", "--quiet")
    assert code == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["ledger.csv", "outputs.npz",
                                                         "report.json"]
    assert json.loads((out_dir / "report.json").read_text()) == json.loads(out)
    outputs = npz_arrays((out_dir / "outputs.npz").read_bytes())
    assert list(outputs) == ["sum"]
    assert outputs["sum"].tolist() == DATA.sum(axis=0).tolist()  # dyadic data: exact
    ledger = (out_dir / "ledger.csv").read_text().splitlines()
    assert ledger[0].split(",")[:3] == ["sender", "receiver", "protocol"]
    assert len(ledger) == 1 + 18
    assert sum(1 for line in ledger[1:] if line.split(",")[2] == "secure_sum") == 12
    # no staging directory is left next to the output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "out", "scenario.toml"]


def test_same_seed_gives_byte_identical_ledger_and_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, SYNTHETIC))
    for name in ("a", "b"):
        assert run_cli(capsys, "run", path, "--out", str(tmp_path / name), "--quiet")[0] == 0
    for file in ("ledger.csv", "outputs.npz"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    # the archive's member is stored with a fixed timestamp
    with zipfile.ZipFile(tmp_path / "a" / "outputs.npz") as zf:
        assert [i.date_time for i in zf.infolist()] == [(1980, 1, 1, 0, 0, 0)]


def test_seed_option_overrides_the_scenario_seed(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, SYNTHETIC))
    code, out, _ = run_cli(capsys, "run", path, "--seed", "99", "--json", "--quiet",
                           "--out", str(tmp_path / "override"))
    assert code == 0 and json.loads(out)["seed"] == 99
    assert run_cli(capsys, "run", path, "--quiet", "--out", str(tmp_path / "own"))[0] == 0
    seeded = write(tmp_path, SYNTHETIC.replace("seed = 11", "seed = 99"), "seed99.toml")
    assert run_cli(capsys, "run", str(seeded), "--quiet", "--out", str(tmp_path / "file99"))[0] == 0
    override = (tmp_path / "override" / "outputs.npz").read_bytes()
    assert override == (tmp_path / "file99" / "outputs.npz").read_bytes()
    assert override != (tmp_path / "own" / "outputs.npz").read_bytes()  # other synthetic data


def test_a_scenario_without_seed_reports_the_seed_that_replays_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, SYNTHETIC.replace("seed = 11\n", "")))
    code, out, _ = run_cli(capsys, "run", path, "--json", "--quiet", "--out",
                           str(tmp_path / "first"))
    assert code == 0
    seed = json.loads(out)["seed"]
    assert isinstance(seed, int) and seed >= 0
    assert run_cli(capsys, "run", path, "--seed", str(seed), "--quiet", "--out",
                   str(tmp_path / "replay"))[0] == 0
    for file in ("ledger.csv", "outputs.npz"):
        assert (tmp_path / "first" / file).read_bytes() == (
            tmp_path / "replay" / file).read_bytes()


def test_list_shows_algorithms_and_scenarios(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "list")
    assert code == 0 and err == ""
    words = out.split()
    assert "secure_sum" in words
    assert "quickstart.toml" in words


# -- user mistakes: one line `error: ...`, status 2, nothing written ------------------------


def replace(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


MISTAKES = [
    pytest.param('colour = "red"\n' + BASE, None, "colour", id="unknown-top-level-key"),
    pytest.param(replace("parties = 3\n", "parties = 3\nspeed = 1\n"), None, "speed",
                 id="unknown-network-key"),
    pytest.param(replace('path = "data.csv"\n', 'path = "data.csv"\nfoo = 1\n'), None, "foo",
                 id="unknown-data-key"),
    pytest.param(replace('variant = "explicit"\n', 'variant = "explicit"\nbar = 1\n'), None,
                 "bar", id="unknown-algorithm-key"),
    pytest.param(replace("parties = 3", "parties = 1").replace("[2, 3, 3]", "[8]"), None,
                 "parties", id="one-party"),
    pytest.param(replace("parties = 3", "parties = 0"), None, "parties", id="zero-parties"),
    pytest.param(replace("[2, 3, 3]", "[4, 4]"), None, "partition", id="partition-length"),
    pytest.param(replace("[2, 3, 3]", "[2, 3, 4]"), None, "partition",
                 id="partition-sum-file-data"),
    pytest.param(SYNTHETIC.replace("cols = 4", "cols = 4\npartition = [4, 4, 5]"), None,
                 "partition", id="partition-sum-synthetic"),
    pytest.param(replace("coalition = [0]", "coalition = [0, 5]"), None, "5",
                 id="coalition-missing-party"),
    pytest.param(replace('"data.csv"', '"missing.csv"'), None, "missing.csv",
                 id="missing-data-file"),
    pytest.param(replace('"data.csv"', '"bad.csv"'), "1,2,3\n4,nan,6\n7,8,9\n1,1,1\n",
                 "nan", id="nan-in-data"),
    pytest.param(replace('"data.csv"', '"bad.csv"'),
                 "\n".join(["1e15,1,1"] * 8) + "\n", "exceeds", id="value-too-large",
                 ),
    pytest.param(replace('name = "secure_sum"', 'name = "secure_product"'), None,
                 "secure_product", id="unknown-algorithm"),
    pytest.param(replace("parties = 3", "parties = = 3"), None, "TOML", id="bad-toml"),
    pytest.param(replace('variant = "explicit"', 'variant = "shamir"'), None, "shamir",
                 id="unknown-variant"),
    pytest.param(replace("frac_bits = 24", "frac_bits = 64"), None, "frac_bits",
                 id="frac-bits-too-large"),
    pytest.param(replace('prime = "2^61-1"', 'prime = "2^61"'), None, "prime",
                 id="prime-not-prime"),
    pytest.param(replace('path = "data.csv"\n', 'path = "data.csv"\nrows = 8\n'), None,
                 "data.rows", id="synthetic-key-with-file-data"),
    pytest.param(replace("parties = 3\n", "parties = 3\n" + "[[network.links]]\na = 0\nb = 1\n"
                         "[[network.links]]\na = 1\nb = 2\n[[network.links]]\na = 1\nb = 0\n"),
                 None, "twice", id="duplicate-link"),
]


@pytest.mark.parametrize(("scenario", "bad_data", "needle"), MISTAKES)
def test_user_mistakes_end_with_one_error_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], scenario: str, bad_data: str | None,
    needle: str,
) -> None:
    path = write(tmp_path, scenario)
    if bad_data is not None:
        (tmp_path / "bad.csv").write_text(bad_data)
    before = sorted(p.name for p in tmp_path.iterdir())
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, "run", str(path), "--out", str(out_dir))
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert lines[-1].startswith("error: ")
    assert needle in lines[-1]
    # a mistake found before the run prints nothing else; one a party finds in its input
    # during the run (a value too large for the field) may follow progress lines of the run
    assert len(lines) == 1 or all(line.startswith("cli: ") for line in lines[:-1]), err
    assert "Traceback" not in err
    assert not out_dir.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written at all


def test_missing_scenario_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", str(tmp_path / "nope.toml"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and "nope.toml" in err


def test_negative_seed_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "run", str(write(tmp_path, BASE)), "--seed", "-1")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ") and "seed" in err


def test_out_that_is_a_file_is_refused(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me")
    code, out, err = run_cli(capsys, "run", str(write(tmp_path, BASE)), "--out", str(target),
                             "--quiet")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert target.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "scenario.toml", "taken"]


@pytest.mark.parametrize("argv", [["run"], ["walk"], ["run", "x.toml", "--bogus"],
                                  ["run", "x.toml", "--seed", "two"], []])
def test_bad_command_lines_exit_2_with_one_error_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ")


# -- the installed script ------------------------------------------------------------------


def test_installed_mpcsim_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("mpcsim")
    assert script.exists()
    path = write(tmp_path, BASE)
    done = subprocess.run([str(script), "run", str(path), "--json", "--quiet"],
                          capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["communication"]["per_protocol"]["secure_sum"]["elements"] == 36
    failed = subprocess.run([str(script), "run", str(tmp_path / "absent.toml")],
                            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert failed.returncode == 2
    assert failed.stdout == ""
    assert len(failed.stderr.splitlines()) == 1 and failed.stderr.startswith("error: ")


def test_exact_audit_honours_max_runs(tmp_path: Path) -> None:
    """PRG SecureSum in the thesis's two-share form (the scenario selects ``prg_two_share``),
    M = 3, GF(5), coalition {0}: the honest tape is the pair {1, 2}'s 2-element stream and 5
    honest input sets share the sum (5·5^2 = 125 runs per value of the coalition's own
    randomness, after 5^2 + 1 runs to find the input sets), so max_runs = 1000 checks
    (1000 − 26) // 125 = 7 sampled values of the coalition's 4 tape elements (of 5^4)."""
    from sim.runner import run_scenario

    scenario = {
        "seed": 3,
        "network": {"parties": 3},
        "data": {"source": "synthetic", "rows": 9, "cols": 2},
        "algorithm": {"name": "secure_sum", "variant": "prg_two_share"},
        "audit": [{"coalition": [0], "method": "exact", "max_runs": 1000}],
    }
    audit = run_scenario(scenario).report["privacy"][0]
    assert audit["verdict"] == "private"
    details = audit["details"]
    assert (details["honest_tape_elements"], details["coalition_tape_elements"]) == (2, 4)
    assert details["coalition_randomness"] == "sampled"
    assert details["assignments_checked"] == (1000 - 26) // (5 * 5**2)


# -- a rank under MPICH's Hydra ------------------------------------------------------------


@pytest.mark.parametrize(("ending", "status"), [
    ("sys.exit(3)", 3),
    ("os.write(armed, b'A'); os.kill(os.getpid(), signal.SIGKILL)", 128 + signal.SIGKILL),
    ("os.write(armed, b'A'); os.killpg(0, signal.SIGUSR1)", 128 + signal.SIGUSR1),
    # nobody would report the death: the waiting parent dies the same way
    ("os.kill(os.getpid(), signal.SIGKILL)", -signal.SIGKILL),
    ("os.write(armed, b'AD'); os.kill(os.getpid(), signal.SIGTERM)", -signal.SIGTERM),
])
def test_a_supervised_rank_ends_its_waiting_parent_with_an_ordinary_exit_while_armed(
        ending: str, status: int) -> None:
    """Hydra's proxy SIGKILLs everything it started once it reaps a process a signal ended
    (:mod:`sim.drivers.launch`): while the rank says its death would be reported (``A`` on the
    pipe), the parent that waits for it exits with ``128 + N`` when signal N ends it — a
    normal exit — and survives SIGUSR1 sent to the process group; otherwise it ends by the
    same signal."""
    program = ("import os, signal, sys\nfrom sim.drivers.launch import supervise_rank\n"
               f"armed = supervise_rank()\n{ending}\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60, start_new_session=True, check=False)
    assert done.returncode == status, done.stderr
