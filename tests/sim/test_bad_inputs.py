"""Bad input, class by class: every one ends in one line ``error: ...`` with status 2 (CLI), or
an ``InputError`` with the same message (Python API), and nothing is half-written.

The classes follow issue 8 ("a newcomer's first hour"): data defects, output directories,
field and network parameters, runs too large for the memory, and the Python API. Each class
tries several inputs of its own; the expected text of each message (the key, the value, the
party, the row) is written here by hand from the input.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import numpy as np
import pytest

from parties.party import Party, site_parties
from parties.view import Coalition, View
from protocols.errors import DataError, InputError, PartyInputError, ProtocolAbort, ScenarioError
from protocols.secure_sum import secure_sum
from sim.cli import StderrProgress, main
from sim.network import Network
from sim.runner import plan_scenario, run_scenario
from sim.simulation import Simulation

SECURE_SUM = """\
name = "bad"
seed = 3
[network]
parties = 3
[data]
source = "file"
path = "data.csv"
[algorithm]
name = "secure_sum"
"""

PD_NMF = """\
name = "bad"
seed = 3
[network]
parties = 3
sealing = false
[data]
source = "file"
path = "data.csv"
[algorithm]
name = "pd_nmf"
k = 2
iterations = 2
init = "random"
"""


def scenario_file(tmp_path: Path, text: str, csv: str | None = None) -> Path:
    path = tmp_path / "scenario.toml"
    path.write_text(text, encoding="utf-8")
    if csv is not None:
        (tmp_path / "data.csv").write_text(csv, encoding="utf-8")
    return path


def cli_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: Path,
              *extra: str) -> str:
    """Run the CLI on a bad input; check status 2, one error line, nothing written."""
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code = main(["run", str(path), "--quiet", *extra])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing (half-)written
    return lines[0]


def rows_csv(rows: list[list[float | str]]) -> str:
    return "".join(",".join(str(v) for v in row) + "\n" for row in rows)


GOOD_ROWS = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.0, 1.0, 1.0],
             [2.0, 0.5, 1.5], [3.0, 1.0, 0.0]]


def with_cell(row: int, col: int, value: str) -> str:
    rows = [list(r) for r in GOOD_ROWS]
    rows[row][col] = value
    return rows_csv(rows)


# -- 1. data: every defect found at load time, with the file, the row and the party ---------


DATA_DEFECTS = [
    # (scenario, csv, expected fragments) — 6 rows, 3 parties of 2 rows each
    pytest.param(SECURE_SUM, with_cell(3, 1, "nan"),
                 ["data.csv", "row 3 (party 1's row 1)", "column 1", "nan"], id="nan-secure-sum"),
    pytest.param(SECURE_SUM, with_cell(5, 2, "inf"),
                 ["data.csv", "row 5 (party 2's row 1)", "column 2", "inf"], id="inf-secure-sum"),
    pytest.param(PD_NMF, with_cell(4, 0, "-inf"),
                 ["data.csv", "row 4 (party 2's row 0)", "column 0", "-inf", "infinite"],
                 id="inf-pd-nmf-allows-only-nan"),
    pytest.param(PD_NMF, with_cell(1, 2, "-0.25"),
                 ["data.csv", "row 1 (party 0's row 1)", "column 2", "-0.25", "non-negative"],
                 id="negative-pd-nmf"),
    pytest.param(PD_NMF, rows_csv([*GOOD_ROWS[:2], ["nan"] * 3, ["nan"] * 3, *GOOD_ROWS[4:]]),
                 ["data.csv", "party 1's rows 2..3", "no observed entry"],
                 id="empty-shard-all-nan"),
    pytest.param(SECURE_SUM, "1,2,3\n4,5\n7,8,9\n",
                 ["data.csv", "line 2 has 2 fields, expected 3"], id="ragged-csv"),
    pytest.param(SECURE_SUM, "1,2,3\n4,x,6\n7,8,9\n",
                 ["data.csv", "line 2, field 2 is 'x'"], id="text-in-csv"),
    pytest.param(SECURE_SUM, "a,b,c\n", ["data.csv", "header row but no data rows"],
                 id="header-only"),
    pytest.param(SECURE_SUM, "", ["data.csv", "is empty"], id="empty-file"),
    pytest.param(SECURE_SUM, "1,2\n3,4\n", ["data.csv", "2 rows", "network.parties = 3"],
                 id="fewer-rows-than-parties"),
]


@pytest.mark.parametrize(("scenario", "csv", "fragments"), DATA_DEFECTS)
def test_data_defects_name_the_file_row_and_party(tmp_path, capsys, scenario, csv, fragments):
    line = cli_error(tmp_path, capsys, scenario_file(tmp_path, scenario, csv))
    for fragment in fragments:
        assert fragment in line, line
    with pytest.raises(InputError) as info:  # the API: the same message
        run_scenario(tmp_path / "scenario.toml")
    assert line == "error: " + " ".join(str(info.value).split())


RATINGS = """\
name = "bad"
seed = 3
[network]
parties = 2
[data]
source = "ratings"
path = "data.csv"
[algorithm]
name = "corrective_nmf"
k = 2
iterations = 2
"""

RATINGS_DEFECTS = [
    pytest.param("user,item,rating\n1,1,5\n1,2\n2,1,3\n",
                 ["data.csv: line 3 has 2 fields, expected 3"], id="ragged"),
    pytest.param("1,1,5\n1,x,4\n2,1,3\n", ["data.csv: line 2, field 2 is 'x'"], id="text-id"),
    pytest.param("1,1,5\n-1,2,4\n2,1,3\n", ["line 2: user id -1 is not a non-negative"],
                 id="negative-user"),
    pytest.param("1,1,5\n1,2,nan\n2,1,3\n", ["line 2: rating nan is not a finite number"],
                 id="nan-rating"),
    pytest.param("1,1,inf\n1,2,4\n2,1,3\n", ["line 1: rating inf is not a finite number"],
                 id="inf-rating"),
    pytest.param("", ["data.csv: holds no ratings"], id="empty"),
    pytest.param("1,1,5\n1,2,4\n", ["has 1 row,", "network.parties = 2"],
                 id="one-user-two-parties"),
]


@pytest.mark.parametrize(("csv", "fragments"), RATINGS_DEFECTS)
def test_ratings_file_defects_name_the_file_and_line(tmp_path, capsys, csv, fragments):
    line = cli_error(tmp_path, capsys, scenario_file(tmp_path, RATINGS, csv))
    for fragment in fragments:
        assert fragment in line, line
    with pytest.raises(InputError) as info:
        run_scenario(tmp_path / "scenario.toml")
    assert line == "error: " + " ".join(str(info.value).split())


def test_nan_in_some_parties_rows_only_runs_pd_nmf_with_the_observed_loss(tmp_path):
    """The issue's traceback: NaN at party 1 only. Every party now sums 2d-element statistics."""
    path = scenario_file(tmp_path, PD_NMF, with_cell(2, 1, "nan"))
    run = run_scenario(path)
    d = len(GOOD_ROWS[0])
    iter_rows = run.run.result.ledger.select(phase="iter", protocol="secure_sum")
    assert {r.elements for r in iter_rows} == {2 * d}  # the observed loss at every party
    assert run.report["metrics"]["max_rel_diff_vs_centralized"] < 1e-6


def test_non_utf8_data_file_is_named(tmp_path, capsys):
    path = scenario_file(tmp_path, SECURE_SUM)
    (tmp_path / "data.csv").write_bytes(b"1,2,3\n\xff\xfe,5,6\n")
    line = cli_error(tmp_path, capsys, path)
    assert "data.csv" in line and "not UTF-8" in line


# -- 2. output: --out checked before the run, written atomically -----------------------------


QUICK = """\
name = "quick"
seed = 5
[network]
parties = 3
sealing = false
[data]
source = "synthetic"
rows = 6
cols = 2
[algorithm]
name = "secure_sum"
"""


def test_unwritable_out_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    path = scenario_file(tmp_path, QUICK)
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "draft.tex").write_text("keep me")
    ran = []
    monkeypatch.setattr("sim.runner.ScenarioPlan.run", lambda *a, **k: ran.append(1))
    cases = {
        "": "is empty",
        "   ": "is empty",
        str(tmp_path / "a_file"): "exists and is not a directory",
        str(tmp_path / "a_file" / "sub"): "is not a directory",
        str(tmp_path / "papers"): "holds other files (draft.tex)",
        "/proc/mpcsim-cannot-create-here": "cannot be written",
    }
    for out, fragment in cases.items():
        line = cli_error(tmp_path, capsys, path, "--out", out)
        assert fragment in line, (out, line)
        assert "--out" in line
        with pytest.raises(InputError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
            run_scenario(path, out=out)
    assert ran == []  # no run started for any of them
    assert (tmp_path / "papers" / "draft.tex").read_text() == "keep me"


def test_out_is_written_as_a_whole_and_replaces_an_earlier_output(tmp_path, capsys):
    path = scenario_file(tmp_path, QUICK)
    out = tmp_path / "deep" / "er" / "out"
    assert main(["run", str(path), "--quiet", "--out", str(out)]) == 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(first) == {"report.json", "outputs.npz", "ledger.csv"}
    (out / "stale.png").write_bytes(b"from an earlier run")  # an earlier run's plot
    assert main(["run", str(path), "--quiet", "--out", str(out)]) == 0
    second = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(second) == set(first)  # replaced as a whole: the stale plot is gone
    assert all(second[name] == first[name] for name in ("ledger.csv", "outputs.npz"))
    leftovers = [p.name for p in out.parent.iterdir() if p.name != "out"]
    assert leftovers == []  # no staging or old directories left behind
    capsys.readouterr()


# -- 3. field and network parameters: every numeric key has a documented range --------------


def with_keys(**tables: dict[str, object]) -> str:
    """QUICK with keys added to (or replacing those of) its tables."""
    import tomllib

    raw = tomllib.loads(QUICK)
    for table, keys in tables.items():
        if table == "top":
            raw.update(keys)
        else:
            raw.setdefault(table, {}).update(keys)

    def value(v: object) -> str:
        if isinstance(v, str):
            return '"' + v + '"'
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, float) and math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)

    lines = [f"{k} = {value(v)}" for k, v in raw.items() if not isinstance(v, dict)]
    for k, v in raw.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines.extend(f"{kk} = {value(vv)}" for kk, vv in v.items())
    return "\n".join(lines) + "\n"


RANGE_CASES = [
    pytest.param({"field": {"prime": "1" * 5000}}, ["field.prime", "5000 digits", "2^128"],
                 id="prime-5000-digits"),
    pytest.param({"field": {"prime": "2^4000-1"}}, ["field.prime", "'2^4000-1'", "2^128"],
                 id="prime-2^4000-1"),
    pytest.param({"field": {"prime": 4}}, ["field.prime", "not prime"], id="prime-4"),
    pytest.param({"field": {"prime": 2}}, ["field.prime", "2 < p"], id="prime-2"),
    pytest.param({"field": {"prime": 7.0}}, ["field.prime", "7.0", "an integer or a string"],
                 id="prime-float"),
    pytest.param({"field": {"frac_bits": 1000}}, ["field.frac_bits", "0 ≤ frac_bits ≤ 59"],
                 id="frac-bits-1000"),
    pytest.param({"network": {"bandwidth_mbps": 1e-300}},
                 ["network.bandwidth_mbps", "1e-300", "0.001 ≤ bandwidth_mbps ≤ 10000000"],
                 id="bandwidth-1e-300"),
    pytest.param({"network": {"bandwidth_mbps": 1e300}}, ["network.bandwidth_mbps", "1e+300"],
                 id="bandwidth-1e300"),
    pytest.param({"network": {"latency_ms": 3.15e10}},
                 ["network.latency_ms", "31500000000.0", "0 ≤ latency_ms ≤ 60000"],
                 id="latency-a-year"),
    pytest.param({"network": {"latency_ms": -1.0}}, ["network.latency_ms", "-1.0"],
                 id="latency-negative"),
    pytest.param({"network": {"latency_ms": math.inf}}, ["network.latency_ms", "finite"],
                 id="latency-inf"),
    pytest.param({"network": {"parties": 1}},
                 ["network.parties = 1", "secure_sum needs at least 2", "M ≥ 2"], id="one-party"),
    pytest.param({"network": {"parties": 0}}, ["network.parties", "1 ≤ parties ≤ 10000"],
                 id="zero-parties"),
    pytest.param({"network": {"parties": 20_000}}, ["network.parties", "20000"],
                 id="twenty-thousand-parties"),
    pytest.param({"top": {"seed": -1}}, ["seed", "-1", "0 ≤ seed"], id="seed-negative"),
    pytest.param({"data": {"cols": 10**9}}, ["data.cols", "1 ≤ cols ≤ 10000000"],
                 id="cols-1e9"),
    pytest.param({"data": {"kind": "ratings", "density": 1.5}},
                 ["data.density", "0 < density ≤ 1"], id="density-1.5"),
    pytest.param({"data": {"kind": "topics", "doc_length": 0}}, ["data.doc_length"],
                 id="doc-length-0"),
    pytest.param({"data": {"format": "csv"}}, ["data.format", "source = 'file'"],
                 id="file-key-with-synthetic-data"),
]


@pytest.mark.parametrize(("keys", "fragments"), RANGE_CASES)
def test_every_numeric_key_has_a_range(tmp_path, capsys, keys, fragments):
    path = scenario_file(tmp_path, with_keys(**keys))
    line = cli_error(tmp_path, capsys, path)
    for fragment in fragments:
        assert fragment in line, line
    assert len(line) < 300  # one readable line, not thousands of digits
    with pytest.raises(ScenarioError) as info:
        plan_scenario(path)
    assert line == "error: " + str(info.value)


def test_every_algorithm_key_documents_a_bounded_range():
    """``mpcsim list ALGORITHM`` and the README quote these; none is open-ended."""
    from sim import catalog
    from sim.checks import Integer, Number

    for name, entry in catalog.algorithms().items():
        for key, param in entry.params.items():
            assert param.allowed(), f"{name}.{key} does not say what it allows"
            check = param.check
            if isinstance(check, Integer):
                assert check.low is not None and check.high is not None, (name, key)
            if isinstance(check, Number):
                assert check.low is not None and check.high is not None, (name, key)
            if param.default is not None:  # the default passes its own check
                check(f"algorithm.{key}", param.default)


DSV = 'source = "synthetic"\nrows = 30\ncols = 6'
ALGORITHM_KEYS = [
    # (algorithm table, data table, expected fragments): several per newly landed entry
    pytest.param('name = "pd_nmf"\nk = 20000', DSV,
                 ["algorithm.k = 20000 is out of range", "1 ≤ k ≤ 10000"], id="pd-nmf-k"),
    pytest.param('name = "pd_nmf"\ninit_iterations = 0', DSV,
                 ["algorithm.init_iterations = 0", "1 ≤ init_iterations ≤ 100000"],
                 id="pd-nmf-init-iterations"),
    pytest.param('name = "pd_nmf"\ninit = "pd_svd"\nsvd_variant = "shamir"', DSV,
                 ["algorithm.svd_variant = 'shamir' is unknown", "normed"],
                 id="pd-nmf-svd-variant"),
    pytest.param('name = "pd_nmf"\nl1_w = 1e300', DSV,
                 ["algorithm.l1_w = 1e+300", "0 ≤ l1_w ≤ 1000000"], id="pd-nmf-l1"),
    pytest.param('name = "pd_svd"\niterations = 1000000', DSV,
                 ["algorithm.iterations = 1000000", "≤ 100000"], id="pd-svd-iterations"),
    pytest.param('name = "pd_svd"\nscale = -2.0', DSV,
                 ["algorithm.scale = -2.0 is out of range", "0 < scale"], id="pd-svd-scale"),
    pytest.param('name = "pd_svd"\nscale = "big"', DSV,
                 ["algorithm.scale = 'big'", '"auto" or a number'], id="pd-svd-scale-word"),
    pytest.param('name = "normed_secure_sum"\nkappa = 500', DSV,
                 ["algorithm.kappa = 500", "1 ≤ kappa ≤ 200"], id="nss-kappa"),
    pytest.param('name = "normed_secure_sum"\ndemo = 1', DSV,
                 ["algorithm.demo = 1 must be true or false"], id="nss-demo-not-bool"),
    pytest.param('name = "normed_secure_sum"\npreset = "p256"', DSV,
                 ["algorithm.preset = 'p256' is unknown", "p127-default"], id="nss-preset"),
    pytest.param('name = "dp_nmf_outliers"\nlam = -1.0', DSV,
                 ["algorithm.lam = -1.0 is out of range", "0 ≤ lam ≤ 1000000"], id="dp-lam"),
    pytest.param('name = "dp_nmf_outliers"\neta_h = 0', DSV,
                 ["algorithm.eta_h = 0 is out of range", "0 < eta_h"], id="dp-eta-zero"),
    pytest.param('name = "dp_nmf_outliers"\nplanted_fraction = 1.5', DSV,
                 ["algorithm.planted_fraction = 1.5", "0 ≤ planted_fraction ≤ 1"],
                 id="dp-planted-fraction"),
    pytest.param('name = "dp_nmf_outliers_epsilon"\nepsilons = [0.5, 2.0]', DSV,
                 ["algorithm.epsilons[1] = 2.0 must lie in (0, 1)"], id="dp-epsilons"),
    pytest.param('name = "dp_nmf_outliers_epsilon"\ntrials = 10000000', DSV,
                 ["algorithm.trials = 10000000", "1 ≤ trials ≤ 100000"], id="dp-trials"),
    pytest.param('name = "corrective_nmf"\nholdout = 1.0', DSV,
                 ["algorithm.holdout = 1.0 is out of range", "0 < holdout < 1"],
                 id="corrective-holdout"),
    pytest.param('name = "corrective_nmf"\nnoise_sd = 0.0\ncorrupt_probability = 0.1', DSV,
                 ["algorithm.noise_sd = 0.0 is out of range", "0 < noise_sd"],
                 id="corrective-noise-sd"),
    pytest.param('name = "corrective_nmf"\nmode = "fix"', DSV,
                 ["algorithm.mode = 'fix' is unknown", "standard, ignore, replace"],
                 id="corrective-mode"),
    pytest.param('name = "cape_pca"\nk = 0', DSV, ["algorithm.k = 0", "1 ≤ k ≤ 10000"],
                 id="cape-pca-k"),
    pytest.param('name = "cape_mean"\nnorm_bound = 1e-400', DSV,
                 ["algorithm.norm_bound = 0.0 is out of range", "0 < norm_bound"],
                 id="cape-mean-norm-bound"),
    pytest.param('name = "cape_pca_sweep"\nvalues = []', DSV,
                 ["algorithm.values = []", "non-empty list"], id="cape-sweep-values"),
    pytest.param('name = "secagg"\ntimeout_s = 0.0', DSV,
                 ["algorithm.timeout_s = 0.0 is out of range", "0 < timeout_s ≤ 3600"],
                 id="secagg-timeout-zero"),
    pytest.param('name = "secagg"\nthreshold = 20000', DSV,
                 ["algorithm.threshold = 20000", "0 ≤ threshold ≤ 10000"],
                 id="secagg-threshold"),
    pytest.param('name = "secagg"\ngraph = "harary"', DSV,
                 ["algorithm.degree = 0 must lie in 1..2", "graph = 'harary' with 3 sites"],
                 id="secagg-harary-without-degree"),
    pytest.param('name = "secagg"\ngraph = "harary"\ndegree = 5', DSV,
                 ["algorithm.degree = 5 must lie in 1..2"], id="secagg-harary-degree"),
    pytest.param('name = "pd_nmf"\nsecure_sum = "secagg"\nsecagg_timeout_s = 1e9', DSV,
                 ["algorithm.secagg_timeout_s = 1000000000.0", "≤ 3600"],
                 id="pd-nmf-secagg-timeout"),
    pytest.param('name = "corrective_nmf_comparison"\nrepetitions = 0', DSV,
                 ["algorithm.repetitions = 0", "1 ≤ repetitions ≤ 100000"],
                 id="corrective-tables-repetitions"),
    pytest.param('name = "corrective_nmf_comparison"\nflip_probability = 1.0', DSV,
                 ["algorithm.flip_probability = 1.0 is out of range",
                  "0 < flip_probability < 1"], id="corrective-tables-flip"),
    pytest.param('name = "secure_sum"', 'source = "ratings"\npath = "data.csv"\nrows = 3',
                 ["data.rows is not used with source = 'ratings'"], id="ratings-with-rows"),
    pytest.param('name = "secure_sum"', 'source = "ratings"',
                 ["source = 'ratings' needs 'path'"], id="ratings-without-path"),
]


@pytest.mark.parametrize(("algorithm", "data", "fragments"), ALGORITHM_KEYS)
def test_algorithm_keys_out_of_range_name_key_value_and_range(tmp_path, capsys, algorithm, data,
                                                              fragments):
    text = (f'name = "bad"\nseed = 1\n[network]\nparties = 3\n[data]\n{data}\n'
            f"[algorithm]\n{algorithm}\n")
    path = scenario_file(tmp_path, text, rows_csv(GOOD_ROWS))
    line = cli_error(tmp_path, capsys, path)
    for fragment in fragments:
        assert fragment in line, line
    with pytest.raises(InputError) as info:
        plan_scenario(path)
    assert line == "error: " + str(info.value)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"latency_ms": 3.15e10}, "network.latency_ms = 31500000000.0 is out of range"),
    ({"bandwidth_mbps": 1e-300}, "network.bandwidth_mbps = 1e-300 is out of range"),
    ({"bandwidth_mbps": float("nan")}, "network.bandwidth_mbps = nan must be a finite number"),
    ({"links": [{"a": 0, "b": 1, "latency_ms": 1e12}]}, "network.links[0].latency_ms"),
])
def test_network_api_gives_the_scenario_messages(kwargs, fragment):
    with pytest.raises(InputError, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        Network.build(3, **kwargs)


# -- 4. scale: estimated from declared costs, refused with the estimate, progress at once ----


SCALE_CASES = [
    pytest.param({"network": {"parties": 10_000}, "data": {"rows": 10_000, "cols": 1000}},
                 id="secure-sum-10000-parties"),
    pytest.param({"data": {"rows": 100_000_000, "cols": 10_000_000}}, id="data-8e15-bytes"),
    pytest.param({"network": {"parties": 5000}, "data": {"rows": 5000, "cols": 100_000},
                  "algorithm": {"variant": "explicit"}}, id="explicit-5000-parties"),
    pytest.param({"network": {"parties": 2000}, "data": {"rows": 2000, "cols": 5000},
                  "algorithm": {"name": "pd_nmf", "k": 100, "iterations": 100_000}},
                 id="pd-nmf-long"),
]


@pytest.mark.parametrize("keys", SCALE_CASES)
def test_runs_that_cannot_fit_are_refused_with_the_estimate(tmp_path, capsys, monkeypatch, keys):
    def no_data(*args, **kwargs):
        raise AssertionError("the data was generated although the run cannot fit")

    monkeypatch.setattr("sim.runner._load_data", no_data)
    path = scenario_file(tmp_path, with_keys(**keys))
    line = cli_error(tmp_path, capsys, path)
    assert "would need about" in line and "memory available" in line, line
    assert "messages" in line and "fewer parties" in line


def test_estimate_counts_exactly_the_messages_of_the_run(tmp_path):
    """The declared workload (with key agreement) equals the ledger of the real run."""
    for algorithm in ('name = "secure_sum"\nvariant = "explicit"',
                      'name = "pd_nmf"\nk = 2\niterations = 3\ninit = "pd_nmf_init"'):
        text = QUICK.replace('name = "secure_sum"', algorithm).replace("cols = 2", "cols = 5")
        plan = plan_scenario(scenario_file(tmp_path, text))
        run = plan.run()
        totals = run.run.result.ledger.totals()
        assert plan.estimate.messages == totals["messages"]
        assert plan.estimate.elements == totals["elements"]


def test_an_entry_without_an_estimate_counts_its_data():
    from sim.entry import Algorithm, EstimateInput, data_only

    entry = Algorithm("x", "x", "x", {}, run=lambda inp: None)  # type: ignore[arg-type,return-value]
    assert entry.estimate is data_only
    work = entry.estimate(EstimateInput(None, {}, 10, 10))  # type: ignore[arg-type]
    assert work.messages == 0 and "data only" in work.basis


def test_progress_shows_from_the_first_second():
    class Stream:
        def __init__(self) -> None:
            self.lines: list[str] = []

        def write(self, text: str) -> None:
            self.lines.append(text)

        def flush(self) -> None:
            pass

    stream = Stream()
    progress = StderrProgress(stream, every=0.2)  # type: ignore[arg-type]
    progress.start("big", "estimated about 2 GB and 3 h", announce=False)
    deadline = time.monotonic() + 30
    while len(stream.lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    progress.stop()
    first, second = stream.lines[0], stream.lines[1]
    assert first == "big: 0 s elapsed; estimated about 2 GB and 3 h\n"  # the estimate, once
    assert second.startswith("big: ") and second.endswith(" s elapsed\n")


# -- 5. the Python API raises the InputError family, with the CLI's messages -----------------


def sum_program(ctx, x):
    return secure_sum(ctx, x, "prg")


def test_a_one_party_simulation_is_refused():
    with pytest.raises(InputError, match="M ≥ 2"):
        Simulation(Network.build(1), seed=1).run(site_parties(sum_program, [{"x": [1.0]}]))
    with pytest.raises(InputError, match="0 data-holding parties"):
        Simulation(Network.build(2), seed=1).run([Party(0, sum_program, {"x": [1.0]}, "aggr")])


@pytest.mark.parametrize("variant", ["prg", "explicit"])
@pytest.mark.parametrize("lengths", [(2, 3, 2), (3, 2), (1, 1, 4, 1)])
def test_inputs_of_different_lengths_are_refused(variant, lengths):
    inputs = [{"x": np.ones(n)} for n in lengths]
    sim = Simulation(Network.build(len(lengths)), seed=2, keys="preshared", sealing=False)
    with pytest.raises(PartyInputError) as info:
        sim.run(site_parties(lambda ctx, x: secure_sum(ctx, x, variant), inputs))
    message = str(info.value)
    assert isinstance(info.value, InputError) and isinstance(info.value, ProtocolAbort)
    assert "every party must input a vector of the same length" in message
    sent = [int(s) for s in re.findall(r"sent (\d+) elements", message)]
    own = [int(s) for s in re.findall(r"input has (\d+)", message)]
    assert sent and own and sent[0] != own[0] and {sent[0], own[0]} <= set(lengths)


@pytest.mark.parametrize(("inputs", "fragment"), [
    ([{"x": np.ones(2)}, {"x": np.ones((2, 1))}], "shape (2, 1) but party 0's has shape (2,)"),
    ([{"x": np.ones((2, 3))}, {"x": np.ones((3, 2))}], "shape (3, 2)"),
    ([{"x": [1.0, 2.0]}, {"y": [1.0, 2.0]}], "party 1's inputs are ['y']"),
    ([{"x": [1.0, 2.0]}, {"x": [[1.0], [2.0, 3.0]]}], "ragged"),
    ({"x": [1.0]}, "one mapping of keyword inputs per party"),
])
def test_mixed_forms_of_input_are_refused(inputs, fragment):
    with pytest.raises(InputError) as info:
        site_parties(sum_program, inputs)
    assert fragment in str(info.value)


def test_row_blocks_of_different_heights_are_accepted():
    parties = site_parties(sum_program, [{"X": np.ones((3, 4))}, {"X": np.ones((5, 4))}])
    assert [p.id for p in parties] == [0, 1]


@pytest.mark.parametrize(("members", "fragment"), [
    ([], "is empty"),
    ([1, 1], "repeats a party"),
    ([0, 2, 0], "repeats a party"),
    ([0, 7], "party [7]"),
    ([0.5], "party ids (integers)"),
    ("01", "must be a list of party ids"),
    (3, "must be a list of party ids"),
])
def test_coalitions_must_name_distinct_parties_of_the_run(members, fragment):
    views = {m: View(party=m, role="site") for m in range(3)}
    with pytest.raises(InputError) as info:
        Coalition.of(members, views)
    assert fragment in str(info.value)


@pytest.mark.parametrize("source", [42, None, 3.5, ["scenarios/quickstart.toml"], b"x.toml"])
def test_run_scenario_refuses_what_is_not_a_scenario(source):
    with pytest.raises(ScenarioError, match="a scenario is a TOML file path or a dict"):
        run_scenario(source)  # type: ignore[arg-type]


BAD_DICTS = [
    {"network": {"parties": 3}, "data": {"source": "synthetic", "rows": 6, "cols": 2},
     "algorithm": {"name": "secure_sum", "variant": "shamir"}},
    {"network": {"parties": 3, "latency_ms": 1e12},
     "data": {"source": "synthetic", "rows": 6, "cols": 2}, "algorithm": {"name": "secure_sum"}},
    {"network": {"parties": 3}, "data": {"source": "synthetic", "rows": 6, "cols": 2},
     "algorithm": {"name": "pd_nmf", "k": 0}},
    {"network": {"parties": 3}, "data": {"source": "synthetic", "rows": 6, "cols": 2},
     "algorithm": {"name": "secure_sum"}, "seed": -5},
]


@pytest.mark.parametrize("raw", BAD_DICTS)
def test_the_api_and_the_cli_print_the_same_message(tmp_path, capsys, raw):
    with pytest.raises(InputError) as info:
        run_scenario(raw)
    text = with_keys(**{k: v for k, v in raw.items() if isinstance(v, dict)},
                     top={k: v for k, v in raw.items() if not isinstance(v, dict)})
    line = cli_error(tmp_path, capsys, scenario_file(tmp_path, text))
    assert line == "error: " + str(info.value)


def test_data_errors_are_data_errors(tmp_path):
    path = scenario_file(tmp_path, SECURE_SUM, with_cell(0, 0, "nan"))
    with pytest.raises(DataError):
        run_scenario(path)


def test_column_blocks_may_differ_in_width_but_not_in_rows():
    """DSANLS's general setting gives each node a column block of X (its features I_r):
    7, 7 and 6 columns of the same 40 samples are one form; a different sample count is not."""
    inputs = [{"X_features": np.ones((40, w))} for w in (7, 7, 6)]
    assert len(site_parties(sum_program, inputs, column_blocks=("X_features",))) == 3
    with pytest.raises(InputError, match=r"only the number of rows may differ"):
        site_parties(sum_program, inputs)
    inputs[2] = {"X_features": np.ones((39, 6))}
    with pytest.raises(InputError, match=r"only the number of columns may differ"):
        site_parties(sum_program, inputs, column_blocks=("X_features",))
