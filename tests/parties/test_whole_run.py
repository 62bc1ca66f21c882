"""Failure class 4 — "the algorithm is never audited": whole runs, every call.

The simulation audit replays the algorithm the user runs. Planted bugs inside PD-NMF
(:mod:`planted_runs`: a sweep whose SecureSum sends the raw statistic, a PRG counter that
restarts, a debugging message, an unmasked last coordinate) are installed in
``algorithms.nmf.pd_nmf`` for one test at a time; each must be caught and located at the first call
of the sweep it affects (and at the right message and element). A program with two SecureSum
calls whose second reuses the first's masks is caught by every method. Scenarios run the audit
through the Python API and the command line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import planted_runs as pr
import pytest
from auditing import F5, F61, P, field_inputs

from algorithms.nmf import pd_nmf as pd_nmf_module
from algorithms.nmf.pd_nmf import InitSettings, normalize_rows, pd_nmf
from algorithms.nmf.rri_steps import RRIParams
from protocols.errors import ScenarioError
from sim.cli import main
from sim.privacy import audit
from sim.runner import run_scenario
from sim.scenario import load_scenario

K, D, SWEEPS = 2, 6, 3


def _pd_nmf_setup(seed: int = 0) -> tuple[list[dict], np.ndarray]:
    rng = np.random.default_rng(seed)
    shards = [{"X": rng.random((8, D))} for _ in range(3)]
    return shards, normalize_rows(rng.random((K, D)))


def _pd_nmf_audit(coalition: tuple[int, ...], trials: int = 32, T0=None, **kw):
    shards, public_t0 = _pd_nmf_setup()
    start = public_t0 if T0 is None else T0

    def program(ctx, X):
        return pd_nmf(ctx, X, K, sweeps=SWEEPS, params=RRIParams(), variant="prg",
                      T0=None if T0 == "init" else start,
                      init_settings=InitSettings(sweeps=2, local_max_iter=20))

    return audit(program, shards, coalition, prime=P, frac_bits=24, trials=trials, seed=2,
                 **kw)


@pytest.mark.parametrize("kind", pr.KINDS)
def test_a_bug_in_one_pd_nmf_sweep_is_caught_and_located(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    leaky = pr.LeakySum(kind, K, sweep=1)
    monkeypatch.setattr(pd_nmf_module, "secure_sum", leaky.secure_sum)
    result = _pd_nmf_audit((0,))
    assert result.leaks, result.details
    assert result.call == leaky.first_call() == K + 1  # key agreement is call 0
    step = "debug" if kind == "side" else "column_sum"
    assert result.message == f"secure_sum#{K + 1}.{step} from 1 to 0"
    if kind == "last":
        assert result.details["element"] == D  # the ‖W_:t‖² element, after the d of WᵀR
    if kind == "restart":
        assert result.details["family"] == "relation"  # each call alone looks uniform


def test_pd_nmf_bugs_reach_only_coalitions_that_can_see_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pd_nmf_module, "secure_sum", pr.LeakySum("side", K).secure_sum)
    assert _pd_nmf_audit((2,)).verdict == "private"  # party 2 receives no debug message
    monkeypatch.setattr(pd_nmf_module, "secure_sum", pr.LeakySum("raw", K).secure_sum)
    private = _pd_nmf_audit((1, 2))  # one honest party: its statistics are the sums' remainder
    assert private.verdict == "private" and private.power == {"determined": True}


def test_honest_pd_nmf_is_private_with_power() -> None:
    result = _pd_nmf_audit((0,), trials=48)
    assert result.verdict == "private", result.details
    assert result.details["calls"] == K * SWEEPS
    assert result.details["contexts"] == 1  # every call's inputs are the same in every trial
    assert 0 < result.power["sup_cdf_distance"] < 1


@pytest.mark.slow
def test_honest_pd_nmf_with_pd_nmf_init_is_private() -> None:
    """PD-NMF-Init draws T0's shares from the parties' local coins, fixed across trials."""
    result = _pd_nmf_audit((0,), trials=48, T0="init")
    assert result.verdict == "private"
    assert result.details["calls"] == 1 + 2 * K + K * SWEEPS and result.details["contexts"] == 1


def test_pd_nmf_calls_can_be_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pd_nmf_module, "secure_sum", pr.LeakySum("raw", K, 2).secure_sum)
    # a run's (and its audit's) call 0 is key agreement: sweeps 0 and 1 are calls 1..4
    before = _pd_nmf_audit((0,), calls=[1, 2, 3, 4])
    assert before.verdict == "private" and before.details["calls"] == 4
    assert _pd_nmf_audit((0,), calls=[5]).call == 5


def test_methods_that_re_split_inputs_do_not_apply_to_pd_nmf() -> None:
    for method in ("statistical", "exact"):
        r = _pd_nmf_audit((0,), method=method)
        assert r.verdict == "not applicable" and "field elements" in r.details["reason"]


@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_masks_reused_in_a_second_call_are_caught(method: str) -> None:
    inputs = field_inputs(F61, 3, 4, 5)
    honest = audit(pr.two_sums, inputs, (0,), prime=P, method=method, trials=48, pairs=2)
    assert honest.verdict == "private"
    leak = audit(pr.two_sums_reused_masks, inputs, (0,), prime=P, method=method, trials=24,
                 pairs=2)
    assert leak.leaks and leak.call == 2
    assert leak.message == "secure_sum#2.column_sum from 1 to 0"
    assert leak.details["family"] == "relation"


def test_masks_reused_in_a_second_call_exact() -> None:
    inputs = [F5.elements([v]) for v in (1, 2, 4)]
    # 5 input sets × 5^4 honest tapes (two calls of the pair {1, 2}'s 2-element stream)
    leak = audit(pr.two_sums_reused_masks, inputs, (0,), prime=5, method="exact",
                 max_runs=5 * 5**4 + 26)
    assert leak.leaks and leak.call == 2


# -- scenarios: the Python API and the command line ---------------------------------------------


def _scenario(algorithm: dict, audits: list[dict]) -> dict:
    return {"name": "whole_run", "seed": 5, "network": {"parties": 3},
            "data": {"source": "synthetic", "kind": "topics", "rows": 24, "cols": 6, "k": 2},
            "algorithm": algorithm, "audit": audits}


def test_run_scenario_audits_the_pd_nmf_run() -> None:
    run = run_scenario(_scenario(
        {"name": "pd_nmf", "k": 2, "iterations": 2, "init": "random"},
        [{"coalition": [0], "method": "simulation", "trials": 48},
         {"coalition": [1], "method": "simulation", "trials": 48, "calls": [3]},
         {"coalition": [0], "method": "statistical", "trials": 10}]))
    whole, one, ab = run.report["privacy"]
    assert whole["verdict"] == "private" and whole["details"]["calls"] == 4
    assert whole["call"] is None and whole["message"] is None
    assert 0 < whole["power"]["sup_cdf_distance"] < 1
    assert one["details"]["calls"] == 1
    assert ab["verdict"] == "not applicable" and "simulation" in ab["details"]["reason"]
    assert "t-privacy audits" in run.format()


def test_run_scenario_reports_the_leak_of_a_planted_bug(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pd_nmf_module, "secure_sum", pr.LeakySum("raw", 2, 1).secure_sum)
    run = run_scenario(_scenario({"name": "pd_nmf", "k": 2, "iterations": 2, "init": "random"},
                                 [{"coalition": [0], "trials": 24}]))
    (entry,) = run.report["privacy"]
    assert entry["method"] == "simulation"  # the default
    assert (entry["verdict"], entry["call"]) == ("leak", 3)  # sweep 1's first: call 3
    assert entry["message"] == "secure_sum#3.column_sum from 1 to 0"
    assert "secure_sum#3.column_sum from 1 to 0" in run.format()


def test_cli_runs_a_secure_sum_simulation_audit(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'seed = 3\n[network]\nparties = 4\n[data]\nsource = "synthetic"\nrows = 12\ncols = 3\n'
        '[algorithm]\nname = "secure_sum"\nvariant = "explicit"\n'
        '[[audit]]\ncoalition = [0, 2]\nmethod = "simulation"\ntrials = 48\ncalls = "all"\n',
        encoding="utf-8")
    assert main(["run", str(path), "--json", "--quiet"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["privacy"]
    assert entry["verdict"] == "private" and entry["details"]["protocol"] == (
        "secure_sum (explicit)")
    assert entry["power"]["linear"]["undetermined"] == 0


def test_cli_runs_a_pd_nmf_simulation_audit(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'seed = 4\n[network]\nparties = 3\n[data]\nsource = "synthetic"\nkind = "topics"\n'
        'rows = 24\ncols = 6\nk = 2\n[algorithm]\nname = "pd_nmf"\nk = 2\niterations = 1\n'
        'init = "random"\n[[audit]]\ncoalition = [1]\ntrials = 48\n', encoding="utf-8")
    assert main(["run", str(path), "--json", "--quiet"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["privacy"]
    assert (entry["method"], entry["verdict"]) == ("simulation", "private"), entry
    assert entry["details"]["calls"] == 2  # one SecureSum per topic in the one sweep
    assert entry["power"]["linear"]["undetermined"] == 0


@pytest.mark.parametrize(("audit_table", "match"), [
    ({"coalition": [0], "calls": []}, r"calls = \[\] must be \"all\" or a non-empty list"),
    ({"coalition": [0], "calls": [1, 1]}, "repeats a call number"),
    ({"coalition": [0], "calls": "some"}, "calls = 'some'"),
    ({"coalition": [0], "pairs": 0}, "pairs = 0 is out of range; allowed: 1 ≤ pairs ≤ 64"),
    ({"coalition": [0], "method": "symbolic"}, "method"),
])
def test_scenario_audit_keys_are_validated(audit_table: dict, match: str) -> None:
    with pytest.raises(ScenarioError, match=match):
        load_scenario(_scenario({"name": "secure_sum"}, [audit_table]))
