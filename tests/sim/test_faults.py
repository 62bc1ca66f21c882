"""Injected faults (``[[fault]]``, :mod:`sim.faults`), kind by kind, through the Python API and
the command line.

Expected figures are independent of the driver: delivery times from the link's closed form
(latency + bytes·8/bandwidth), survivors from the fault plan, sums from numpy.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from parties.party import site_parties
from protocols.errors import ProtocolAbort, ScenarioError
from protocols.secure_sum import secure_sum
from sim.cli import main
from sim.faults import parse_faults
from sim.network import Network
from sim.runner import run_scenario
from sim.simulation import Simulation

LATENCY_S, BANDWIDTH_BPS = 0.010, 100e6
INPUTS = [np.array([1.0, 2.0]), np.array([3.0, -1.0]), np.array([0.5, 0.5]), np.array([2.0, 2.0])]


def run_sum(faults: list[dict[str, Any]], sealing: bool = True) -> Any:
    sim = Simulation(Network.build(4), seed=2, sealing=sealing, faults=parse_faults(faults))
    return sim.run(site_parties(lambda ctx, x: secure_sum(ctx, x), [{"x": x} for x in INPUTS]))


def abort_of(faults: list[dict[str, Any]]) -> ProtocolAbort:
    with pytest.raises(ProtocolAbort) as info:
        run_sum(faults)
    return info.value


def test_crash_at_a_time_aborts_every_party_naming_fault_and_party() -> None:
    abort = abort_of([{"kind": "crash", "party": 1, "at_s": 0.005}])
    assert abort.party == 1 and "fault 0 (crash of party 1 at 0.005 s)" in abort.reason
    result = abort.result  # what completed: nobody, party 1 crashed, the others were told
    assert result.simulated_s < 1.0  # bounded: no event is left once everyone waits
    assert result.faults["parties"] == {
        "0": "stopped by the notice 'party 1 aborted'", "1": "crashed at 0.005 s",
        "2": "stopped by the notice 'party 1 aborted'",
        "3": "stopped by the notice 'party 1 aborted'"}
    assert result.ledger.faults[0]["effect"] == "crashed"


def test_crash_after_its_last_send_lets_the_others_finish() -> None:
    result = run_sum([{"kind": "crash", "party": 3, "call": "secure_sum", "step": "column_sum",
                       "when": "after"}])
    assert sorted(result.outputs) == [0, 1, 2]
    for m in range(3):
        np.testing.assert_allclose(result.outputs[m], np.sum(INPUTS, axis=0), atol=1e-6)
    assert result.faults["parties"]["3"].startswith("crashed")


def test_crash_before_a_step_aborts_naming_the_fault() -> None:
    abort = abort_of([{"kind": "crash", "party": 2, "call": "secure_sum#1",
                       "step": "column_sum"}])
    assert abort.party == 2 and "before 'column_sum' of secure_sum#1" in abort.reason


def test_link_down_loses_messages_and_the_run_aborts_naming_it() -> None:
    abort = abort_of([{"kind": "link_down", "link": [0, 1], "at_s": 0.0, "duration_s": 5.0}])
    assert "link_down of link 0–1" in abort.reason
    lost = [e for e in abort.result.ledger.faults if e["effect"] == "lost"]
    assert lost and {(e["sender"], e["receiver"]) for e in lost} <= {(0, 1), (1, 0)}


def test_link_down_outside_the_run_changes_nothing() -> None:
    result = run_sum([{"kind": "link_down", "link": [0, 1], "at_s": 50.0, "duration_s": 1.0}])
    assert result.faults["injected"][0]["fired"] is False
    np.testing.assert_allclose(result.outputs[0], np.sum(INPUTS, axis=0), atol=1e-6)


def test_delay_adds_exactly_its_latency_on_that_link() -> None:
    result = run_sum([{"kind": "delay", "link": [2, 3], "extra_ms": 40.0}])
    for row in result.ledger:
        transit = LATENCY_S + row.bytes * 8 / BANDWIDTH_BPS
        extra = 0.040 if {row.sender, row.receiver} == {2, 3} else 0.0
        if row.protocol == "key_agreement":  # every link idle: no queueing
            assert row.delivered_s - row.sent_s == pytest.approx(transit + extra, abs=1e-12)
    np.testing.assert_allclose(result.outputs[1], np.sum(INPUTS, axis=0), atol=1e-6)


@pytest.mark.parametrize("kind", ["tamper", "replay"])
def test_tamper_and_replay_are_refused_by_the_channel_layer(kind: str) -> None:
    abort = abort_of([{"kind": kind, "link": [0, 2]}])
    assert abort.party == 2  # the receiver fails, naming the sender and the fault
    assert "AuthenticationError" in abort.reason and f"fault 0 ({kind}" in abort.reason
    events = abort.result.ledger.faults
    assert [e["effect"] for e in events] == ["tampered" if kind == "tamper" else "replayed"]


def test_tamper_of_a_named_step_fires_on_that_step() -> None:
    abort = abort_of([{"kind": "tamper", "link": [1, 3], "call": "secure_sum",
                       "step": "column_sum"}])
    assert "fault 0 (tamper of 'column_sum' of secure_sum" in abort.reason


def test_tamper_needs_sealing() -> None:
    with pytest.raises(ScenarioError, match=r"network\.sealing = true"):
        run_sum([{"kind": "tamper", "link": [0, 2]}], sealing=False)


def test_same_seed_same_faults_replay_byte_for_byte() -> None:
    faults = [{"kind": "delay", "link": [0, 3], "extra_ms": 5.0, "at_s": 0.0, "duration_s": 1.0}]
    a, b = run_sum(faults), run_sum(faults)
    assert list(a.ledger) == list(b.ledger) and a.faults == b.faults


@pytest.mark.parametrize(("fault", "message"), [
    ({"kind": "fire", "party": 0}, "fault[0].kind = 'fire' is unknown"),
    ({"kind": "crash", "party": 0, "at_s": 1, "delay": 2}, "unknown key 'delay'"),
    ({"kind": "crash", "party": 0}, "needs either at_s or call/step"),
    ({"kind": "crash", "party": 0, "call": "secure_sum"}, "needs step"),
    ({"kind": "link_down", "link": [0, 1], "at_s": 0}, "needs duration_s"),
    ({"kind": "delay", "link": [0, 0], "extra_ms": 1}, "two different parties"),
    ({"kind": "delay", "link": [0, 1], "extra_ms": -1}, "extra_ms = -1"),
    ({"kind": "tamper", "link": [0, 1], "duration_s": 1}, "does not take duration_s"),
    ({"kind": "crash", "party": 9, "at_s": 0}, "names party 9"),
])
def test_bad_fault_tables_end_with_one_error_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: dict[str, Any], message: str
) -> None:
    body = "\n".join(f"{k} = {json.dumps(v)}" for k, v in fault.items())
    path = tmp_path / "s.toml"
    path.write_text(
        'seed = 1\n[network]\nparties = 3\n[data]\nsource = "synthetic"\nrows = 9\ncols = 2\n'
        f'[algorithm]\nname = "secure_sum"\n[[fault]]\n{body}\n', encoding="utf-8")
    assert main(["run", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    with pytest.raises(ScenarioError, match=re.escape(message)):
        run_scenario(path)


def test_cli_reports_faults_and_an_aborted_run_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    assert main(["run", str(root / "secure_sum_crash.toml"), "--json", "--quiet"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["outcome"]["completed"] is False and report["outcome"]["abort"]["party"] == 1
    assert report["faults"]["parties"]["1"] == "crashed at 0.005 s"
    assert main(["run", str(root / "secagg_dropouts.toml"), "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["metrics"]["dropped"] == [2] and report["metrics"]["survivors"] == [
        0, 1, 3, 4, 5, 6, 7]
    assert [e["party"] for e in report["faults"]["events"]] == [2, 5]
    assert report["metrics"]["max_abs_error"] <= report["metrics"]["fixed_point_bound"]


def test_pd_nmf_over_secagg_survives_a_dropout_through_the_python_api() -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    run = run_scenario(root / "pd_nmf_secagg_dropout.toml")
    metrics = run.report["metrics"]
    assert metrics["dropped"] == [2] and metrics["sites_per_sweep"] == [4, 4, 3, 3, 3, 3]
    assert not metrics["mid_sweep_dropout"] and metrics["same_T_at_every_survivor"]
    assert metrics["max_abs_diff_vs_centralized_survivors"] <= 1e-6 * np.max(run.outputs["T"])
    assert run.report["faults"]["parties"]["2"].startswith("crashed")
    assert set(run.outputs) == {"T", "W_0", "W_1", "W_3"}


def test_secagg_entry_through_the_python_api_matches_numpy() -> None:
    scenario = {"seed": 4, "network": {"parties": 6},
                "data": {"source": "synthetic", "rows": 60, "cols": 6},
                "algorithm": {"name": "secagg", "threshold": 3, "graph": "harary",
                              "degree": 4, "timeout_s": 0.5},
                "fault": [{"kind": "crash", "party": 4, "call": "secagg", "step": "shares"}]}
    run = run_scenario(scenario)
    metrics = run.report["metrics"]
    assert metrics["survivors"] == [0, 1, 2, 3, 5] and metrics["dropped"] == [4]
    assert metrics["max_abs_error"] <= metrics["fixed_point_bound"]
    assert run.report["roles"]["6"] == "aggregator"
    expected = np.sum([row for u in (0, 1, 2, 3, 5) for row in run.run.result.views[u]
                       .inputs["x"][None]], axis=0)
    np.testing.assert_allclose(run.outputs["sum"], expected, atol=metrics["fixed_point_bound"])
