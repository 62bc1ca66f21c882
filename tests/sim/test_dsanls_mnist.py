"""Seed 004's Figs. 6–7 on MNIST-shaped data (claim C23): the paper's MNIST orderings, over
the whole window, where communication dominates.

``scenarios/secure_nmf_mnist_{uniform,imbalanced}.toml``: M = 7,000 × 784 sparse images
(19.14 % non-zero, :mod:`algorithms.data.mnist_like`), the 784 pixel columns partitioned over
N = 10 nodes (uniform: 78–79 each; imbalanced: node 0 holds 392), k = 10, 100 Mbit/s links
(U is 70,000 numbers: one All-Reduce of it costs about ten local U updates), 2 simulated
seconds, sketches of 0.1 n and 0.03 n, seeds 1–3. The score is each method's time-averaged
error (the geometric mean of its error over the window, as the BOATS-shaped tests use).

What the paper reports for MNIST (§5.3): uniform — "Syn-SSD-U and Syn-SSD-V has a better
convergence"; imbalanced — Asyn-SSD-V best, "Syn-SSD-V and Syn-SSD-U can converge to a good
result", Syn-SD "basically inapplicable due to its slow speed". The measured figures at each
seed and sketch are in the docstrings; the tolerances come from their spread.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
SEEDS = (1, 2, 3)
SKETCHES = (0.1, 0.03)


def time_averaged_error(workload: str, seed: int, sketch_size: float) -> dict[str, float]:
    spec = tomllib.loads((SCENARIOS / f"secure_nmf_mnist_{workload}.toml").read_text())
    spec["seed"] = seed
    spec["algorithm"]["sketch_size"] = sketch_size
    return run_scenario(spec).report["metrics"]["time_averaged_error"]


@pytest.mark.slow
@pytest.mark.parametrize("sketch_size", SKETCHES)
@pytest.mark.parametrize("seed", SEEDS)
def test_mnist_uniform_sketching_u_leads_with_syn_ssd_uv_and_syn_ssd_v_comes_third(
        seed: int, sketch_size: float) -> None:
    """Fig. 6's MNIST panel, in part: Syn-SSD-U is among the two best at every seed and
    sketch (within 10 % of the best; measured Syn-SSD-U / best 1.00–1.09), but its partner
    there is Syn-SSD-UV, not Syn-SSD-V, which comes third everywhere (12–26 % above the
    best). Every Syn-SSD variant lies below Syn-SD and both asynchronous methods. Not as the
    paper has it: Asyn-SSD-V is below Syn-SD only at seed 3 (fourth; fifth or sixth elsewhere):
    an asynchronous client sends all of U (70,000 8-byte numbers, ≈ 45 ms each way at 100
    Mbit/s) to the server every T = 2 local iterations, where one product M_r V_r of a
    78-column node is 2·7,000·78·10 ≈ 11 MFLOP (11 ms at 1 GFLOP/s)."""
    error = time_averaged_error("uniform", seed, sketch_size)
    ranking = sorted(error, key=error.get)
    assert set(ranking[:2]) == {"Syn-SSD-U", "Syn-SSD-UV"}, ranking
    assert error["Syn-SSD-U"] <= 1.10 * error[ranking[0]]
    assert ranking[2] == "Syn-SSD-V", ranking
    for sketched in ("Syn-SSD-U", "Syn-SSD-V", "Syn-SSD-UV"):
        assert error[sketched] < min(error["Syn-SD"], error["Asyn-SD"], error["Asyn-SSD-V"])


@pytest.mark.slow
@pytest.mark.parametrize("sketch_size", SKETCHES)
@pytest.mark.parametrize("seed", SEEDS)
def test_mnist_imbalanced_syn_sd_is_last_syn_ssd_u_good_but_syn_ssd_uv_not_asyn_ssd_v_best(
        seed: int, sketch_size: float) -> None:
    """Fig. 7's MNIST panel, in part: Syn-SD is last at every seed and sketch (it waits at
    the barrier for node 0's unsketched 392 columns), Syn-SSD-U is second ("can converge to
    a good result"), and Asyn-SSD-V is the better asynchronous method. Not as the paper has
    it: Syn-SSD-UV, not Asyn-SSD-V, is best, and by a wide margin (Asyn-SSD-V / Syn-SSD-UV
    1.31–1.44): sketching U and V cuts node 0's barrier work and the All-Reduce to a tenth
    or less, where an asynchronous client still sends all of U every T = 2 local
    iterations."""
    error = time_averaged_error("imbalanced", seed, sketch_size)
    ranking = sorted(error, key=error.get)
    assert ranking[:2] == ["Syn-SSD-UV", "Syn-SSD-U"], ranking
    assert ranking[-1] == "Syn-SD", ranking
    assert error["Asyn-SSD-V"] < error["Asyn-SD"]
    assert error["Asyn-SSD-V"] > 1.25 * error["Syn-SSD-UV"]


@pytest.mark.slow
@pytest.mark.parametrize("sketch_size", SKETCHES)
@pytest.mark.parametrize("seed", SEEDS)
def test_mnist_uniform_over_a_longer_window_the_unsketched_methods_fall_behind(
        seed: int, sketch_size: float) -> None:
    """Fig. 6's MNIST panel over 6 simulated seconds (three times the scenario's window):
    more of the paper's text holds. Syn-SD and Asyn-SD are the two worst everywhere ("converge
    relatively slowly and usually have a bad convergence result"), and Asyn-SSD-V lies below
    both ("converges slowly but consistently generates better results than Syn-SD and
    Asyn-SD"; Asyn-SSD-V / Asyn-SD 0.91–0.98). The best is still Syn-SSD-UV (four of the six)
    or Syn-SSD-U (two), never Syn-SSD-V (second at seed 2, 0.03 n, else third or fourth).
    At the scenario's own seed 5 (0.1 n), Asyn-SD lies below Asyn-SSD-V (0.4947 against
    0.5332): the seeds decide that one."""
    spec = tomllib.loads((SCENARIOS / "secure_nmf_mnist_uniform.toml").read_text())
    spec["seed"] = seed
    spec["algorithm"].update(sketch_size=sketch_size, time_budget_s=6.0)
    error = run_scenario(spec).report["metrics"]["time_averaged_error"]
    ranking = sorted(error, key=error.get)
    assert set(ranking[-2:]) == {"Syn-SD", "Asyn-SD"}, ranking
    assert error["Asyn-SSD-V"] < min(error["Syn-SD"], error["Asyn-SD"])
    assert ranking[0] in {"Syn-SSD-U", "Syn-SSD-UV"}, ranking
