"""``[[audit]] method = "simulation"`` on SecAgg scenarios: the secagg entry and PD-NMF over
SecAgg, each with its dropouts replayed in every audited run."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocols.errors import ScenarioError
from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def with_audit(tmp_path: Path, name: str, audit: str, replace: dict[str, str] | None = None
               ) -> Path:
    """A copy of a shipped scenario with one ``[[audit]]`` appended (TOML lines), and lines
    replaced."""
    text = (SCENARIOS / name).read_text()
    for old, new in (replace or {}).items():
        if old not in text:
            raise AssertionError(f"{name} has no line {old!r}")
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(f"{text}\n[[audit]]\n{audit}\n")
    return path


def test_the_secagg_entry_accepts_a_simulation_audit_of_its_dropout_run(tmp_path) -> None:
    path = with_audit(tmp_path, "secagg_dropouts.toml",
                      'method = "simulation"\ncoalitions = [[0], [0, 1]]\ntrials = 20')
    run = run_scenario(path)
    assert [a.coalition for a in run.audits] == [(0,), (0, 1)]
    for a in run.audits:  # 20 trials cannot saturate the view: never private, never refused
        assert a.verdict == "inconclusive", a.details
        assert a.details["protocols"] == ["secagg (t=5,oracle=affine)"]


@pytest.mark.slow
def test_a_secagg_study_with_the_aggregator_is_private_with_power(tmp_path) -> None:
    """Four sites (t = 3) and the aggregator (party 4), site 2 dropping before masking (the
    second dropout removed: two of four would leave fewer than t): every coalition of one
    participant is private with power."""
    path = with_audit(
        tmp_path, "secagg_dropouts.toml", 'method = "simulation"\nsizes = [1]\ntrials = 300',
        {"parties = 8": "parties = 4", "rows = 160": "rows = 40", "cols = 16": "cols = 3",
         "threshold = 5": "threshold = 3",
         '[[fault]]\nkind = "crash"\nparty = 5\ncall = "secagg"\nstep = "unmask"': ""})
    run = run_scenario(path)
    assert sorted(a.coalition for a in run.audits) == [(0,), (1,), (2,), (3,), (4,)]
    for a in run.audits:
        assert a.verdict == "private", (a.coalition, a.details)


def test_pd_nmf_over_secagg_accepts_a_whole_run_simulation_audit(tmp_path) -> None:
    """Every SecAgg call of the run (one per topic per sweep, 18) is judged by the simulator,
    with party 2's departure replayed."""
    path = with_audit(tmp_path, "pd_nmf_secagg_dropout.toml",
                      'method = "simulation"\ncoalitions = [[0]]\ntrials = 20')
    (result,) = run_scenario(path).audits
    assert result.verdict == "inconclusive", result.details
    assert result.details["calls"] == 18
    assert result.details["protocols"] == ["secagg (t=3,oracle=affine)"]


def test_a_scenario_coalition_names_the_aggregator_by_its_id(tmp_path) -> None:
    """Party M is the aggregator: ``coalition = [8]`` and ``coalitions = [[0, 8]]`` reach it,
    and an id beyond the run's participants names who they are."""
    path = with_audit(tmp_path, "secagg_dropouts.toml",
                      'method = "simulation"\ncoalitions = [[8], [0, 8]]\ntrials = 20')
    run = run_scenario(path)
    assert [a.coalition for a in run.audits] == [(8,), (0, 8)]
    for a in run.audits:  # 20 trials cannot saturate the view: never private, never refused
        assert a.verdict == "inconclusive", a.details
    (tmp_path / "bad").mkdir()
    bad = with_audit(tmp_path / "bad", "secagg_dropouts.toml",
                     'method = "simulation"\ncoalition = [9]\ntrials = 20')
    with pytest.raises(ScenarioError, match=r"audit\[0\]\.coalition names party \[9\], but the "
                       r"run's participants are 0\.\.8 \(0\.\.7 hold data; aggregator 8\)"):
        run_scenario(bad)


def test_an_entry_without_other_roles_refuses_an_id_beyond_its_data_holders(tmp_path) -> None:
    text = (SCENARIOS / "quickstart.toml").read_text()
    path = tmp_path / "q.toml"
    path.write_text(f'{text}\n[[audit]]\nmethod = "simulation"\ncoalition = [7]\n')
    with pytest.raises(ScenarioError, match=r"names party \[7\], but the run's participants "
                       r"are 0\.\.\d+ \(0\.\.\d+ hold data\)$"):
        run_scenario(path)


@pytest.mark.parametrize("method", ["statistical", "exact", "linear"])
def test_the_other_methods_on_secagg_say_why_they_do_not_apply(tmp_path, method) -> None:
    """Issue 28: they answer ``not applicable``, naming what SecAgg has that a field program
    re-run on other inputs cannot hold — the survivors' sum, the aggregator, agreed keys."""
    path = with_audit(tmp_path, "secagg_dropouts.toml",
                      f'method = "{method}"\ncoalition = [0]\ntrials = 10')
    [audit] = run_scenario(path).audits
    assert audit.verdict == "not applicable"
    reason = audit.details["reason"]
    for named in ("SecAgg", "survivors", "aggregator", "keys", "method = 'simulation'"):
        assert named in reason, reason
