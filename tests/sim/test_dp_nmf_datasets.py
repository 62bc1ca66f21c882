"""Seed 000's Figs. 3 / 6 on its six data sets, drawn in Table 2's shapes
(:mod:`sim.experiments.nmf.dp_nmf_datasets`, ``scenarios/dp_nmf_datasets.toml``)."""

from __future__ import annotations

import copy
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

from algorithms.data.faces_like import synthetic_faces
from protocols.errors import InputError, ScenarioError
from sim.catalog.nmf import DP_DATASETS
from sim.experiments.nmf.dp_nmf_datasets import SETS, data, scaled_shape
from sim.runner import run_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "dp_nmf_datasets.toml"
TABLE_2 = {"guardian": (4551, 10285, 8), "uci_news": (3000, 93, 7), "rcv1": (9625, 2999, 4),
           "tdt2": (9394, 3677, 30), "yaleb": (2414, 1024, 38), "cbcl": (2429, 361, 50)}
"""Seed 000, Table 2: (N, D, K), typed from the paper."""
TEXT, FACES = ("guardian", "uci_news", "rcv1", "tdt2"), ("yaleb", "cbcl")


def _spec(**algorithm: object) -> dict:
    spec = tomllib.loads(SCENARIO.read_text())
    spec["algorithm"].update(algorithm)
    return spec


def test_the_sets_are_table_2s():
    assert tuple(SETS) == DP_DATASETS == tuple(TABLE_2)
    for name, (n, d, k) in TABLE_2.items():
        s = SETS[name]
        assert (s.n, s.d, s.k) == (n, d, k)
        assert s.kind == ("faces" if name in FACES else "text")


@pytest.mark.parametrize("name", list(TABLE_2))
def test_scaling_keeps_the_noise_to_signal_ratio(name):
    """√(DK)/N of the run is the paper's (faces to the rounding of a whole side), N·D within
    the budget up to that rounding, K the paper's; a budget above N·D runs the paper's shape."""
    n, d, k = TABLE_2[name]
    paper = math.sqrt(d * k) / n
    s = scaled_shape(name, 250_000)
    assert s["k"] == k
    assert s["noise_ratio_paper"] == pytest.approx(paper, rel=1e-12)
    assert math.sqrt(s["d"] * k) / s["n"] == pytest.approx(paper, rel=0.1 if name in FACES
                                                            else 0.01)
    assert s["n"] * s["d"] <= 250_000 * 1.1
    full = scaled_shape(name, n * d)
    assert (full["n"], full["d"]) == ((n, d) if name not in FACES else (n, round(d**0.5) ** 2))


def test_unknown_set_and_bad_key_are_refused():
    with pytest.raises(InputError, match="guardian"):
        scaled_shape("mnist", 1000)
    with pytest.raises(ScenarioError, match="datasets"):
        run_scenario(_spec(datasets=["guardian", "guardian"]))
    with pytest.raises(ScenarioError, match="cells"):
        run_scenario(_spec(cells=10))


def test_faces_are_dense_images_and_text_is_sparse():
    """Faces: every entry in [0, 1], per image mean near CBCL's 0.25 (clipping moves it a
    little), nearly every pixel non-zero; the same generator state gives the same images.
    Text: TF rows, a few per cent of cells non-zero. Both: every sample's largest entry 1."""
    X = synthetic_faces(200, 12, 10, rng=np.random.default_rng(4))
    assert X.shape == (200, 144) and X.min() >= 0.0 and X.max() <= 1.0
    assert np.abs(X.mean(axis=1) - 0.25).max() < 0.05
    assert np.mean(X > 0) > 0.8
    assert np.array_equal(X, synthetic_faces(200, 12, 10, rng=np.random.default_rng(4)))
    for name in TEXT + FACES:  # at the scenario's budget (a tiny one leaves TDT2 ~K words)
        V = data(name, 250_000, seed=3)
        s = scaled_shape(name, 250_000)
        assert V.shape == (s["d"], s["n"])
        assert np.allclose(V.max(axis=0), 1.0)
        density = np.mean(V > 0)
        assert density < 0.2 if name in TEXT else density > 0.8, (name, density)


def test_small_run_reports_what_its_outputs_hold():
    """The gap is the private mean minus the non-private objective, the relative gap that over
    the non-private objective (from ``outputs.npz``); the overall ε is the paper's RDP formula
    (§3.3) computed here in closed form."""
    eps = [0.3, 0.9]
    run = run_scenario(_spec(datasets=["uci_news", "cbcl"], epsilons=eps, trials=2,
                             iterations=6, cells=20_000))
    m = run.report["metrics"]
    for name in ("uci_news", "cbcl"):
        private = run.outputs[f"{name}_private"]
        base = float(run.outputs[f"{name}_nonprivate"][0])
        assert private.shape == (2, 2)
        got = m["sets"][name]
        assert got["gap"] == pytest.approx(private.mean(axis=0) - base, rel=1e-12)
        assert got["relative_gap"] == pytest.approx((private.mean(axis=0) - base) / base)
    delta, iters = 1e-5, 6
    for e, total in zip(eps, m["epsilon_total_paper"], strict=True):
        r2 = 2 * (e / math.sqrt(2 * math.log(1.25 / delta))) ** 2  # Σ Δ²/σ² over A and B
        alpha = 1 + math.sqrt(2 / (iters * r2) * math.log(1 / delta))
        assert total == pytest.approx(alpha * iters * r2 / 2 + math.log(1 / delta)
                                      / (alpha - 1), rel=1e-9)


def test_same_seed_same_figures():
    spec = _spec(datasets=["rcv1"], epsilons=[0.5], trials=1, iterations=3, cells=10_000)
    a = run_scenario(copy.deepcopy(spec)).outputs["rcv1_private"]
    b = run_scenario(spec).outputs["rcv1_private"]
    assert np.array_equal(a, b)


@pytest.mark.slow
def test_figs_3_and_6_on_the_six_shaped_sets():
    """Seed 000 §4, Figs. 3 / 6, on the six sets of Table 2 drawn in their shapes
    (``scenarios/dp_nmf_datasets.toml``: ε = 0.1 / 0.3 / 0.5 / 0.9 per release, 3 trials, 100
    releases; sets above 250,000 cells shrunk by s on N and s² on D, √(DK)/N kept).

    Measured, relative gap (private − non-private) / non-private at ε = 0.1 / 0.3 / 0.5 / 0.9
    (overall ε 1.44 / 4.59 / 8.07 / 16.1): Guardian 796 × 314: 35.7 / 9.24 / 4.36 / 1.52 %;
    UCI-news 2,892 × 86: 16.2 / 2.38 / 1.00 / 0.37 %; RCV1 1,977 × 126: 125 / 18.9 / 5.93 /
    2.54 %; TDT2 1,817 × 138: 5.57 / 1.49 / 0.72 / 0.34 %; YaleB 1,125 × 225: 208 / 30.9 /
    14.0 / 5.83 %; CBCL 1,599 × 169: 78.2 / 11.9 / 4.93 / 2.75 %. Epochs for the non-private /
    the private run to reach the private run's final loss at ε = 0.9: UCI-news 79 / 99, RCV1
    91 / 99, TDT2 23 / 99, YaleB 74 / 99, CBCL 87 / 99; Guardian's private loss is lowest right
    after its first release at every ε (no epoch count); at ε = 0.1 no private run descends.

    Asserted (what holds): the gap shrinks with ε on every set (in the mean at every step, and
    from 0.1 to 0.9 by more than two standard errors of the trials); wherever the private run
    descends the non-private one needs no more epochs, strictly fewer at ε = 0.9; YaleB's
    relative gap is above every text set's at every ε, CBCL's above UCI-news's and TDT2's.
    Not asserted, as measured: CBCL below RCV1 at ε ≤ 0.5 and within its trial spread of
    Guardian — "faces are more noise-sensitive than text" holds for YaleB, not for CBCL.

    Why, asserted from the same figures: the relative gap divides by the non-private objective,
    which is tens of times smaller for the dense face fits than for the sparse text fits; on
    the absolute gap both face sets lie below every text set at every ε, and the absolute gap
    falls with K (Spearman ρ(K, gap) ≤ −0.7 at every ε; −0.94 / −0.83 / −0.83 / −0.83 in a
    1-trial, 30-release probe)."""
    run = run_scenario(SCENARIO)
    m = run.report["metrics"]
    assert m["trials"] == 3 and list(m["sets"]) == list(TABLE_2)
    for name, s in m["sets"].items():
        gap, se = np.array(s["gap"]), np.array(s["gap_se"])
        private = run.outputs[f"{name}_private"]  # the spread, from the trials' objectives
        assert se == pytest.approx(private.std(axis=0, ddof=1) / np.sqrt(3), rel=1e-9)
        # the gap shrinks as ε grows: at every step in the mean, from 0.1 to 0.9 beyond 2 SE
        assert np.all(np.diff(gap) < 0), (name, gap)
        assert gap[0] - gap[-1] > 2 * np.hypot(se[0], se[-1]), name
        # private needs more epochs: wherever the private run descends, the non-private run
        # reaches the private run's final loss no later; strictly earlier at ε = 0.9
        for p, q in zip(s["epochs_private"], s["epochs_nonprivate"], strict=True):
            if p > 0:
                assert q is not None and q <= p, (name, p, q)
        if s["epochs_private"][-1] > 0:
            assert s["epochs_nonprivate"][-1] < s["epochs_private"][-1], name
    descends = [n for n, s in m["sets"].items() if s["epochs_private"][-1] > 0]
    assert set(descends) == set(TABLE_2) - {"guardian"}, descends
    # faces more noise-sensitive than text: YaleB above every text set, CBCL above two of them
    rel = {n: np.array(s["relative_gap"]) for n, s in m["sets"].items()}
    assert np.all(rel["yaleb"] > np.max([rel[n] for n in TEXT], axis=0)), rel
    assert np.all(rel["cbcl"] > np.maximum(rel["uci_news"], rel["tdt2"])), rel
    # why: the relative gap divides by a clean residual tens of times smaller for the faces;
    # on the absolute gap the faces are the least sensitive, and the gap falls with K
    from scipy.stats import spearmanr

    base = {n: s["objective_nonprivate"] for n, s in m["sets"].items()}
    assert max(base[n] for n in FACES) * 10 < min(base[n] for n in TEXT), base
    gap = {n: np.array(s["gap"]) for n, s in m["sets"].items()}
    assert np.all(np.max([gap[n] for n in FACES], axis=0)
                  < np.min([gap[n] for n in TEXT], axis=0)), gap
    ks = [m["sets"][n]["k"] for n in TABLE_2]
    assert ks == [TABLE_2[n][2] for n in TABLE_2]
    for j in range(len(m["epsilons"])):
        rho = spearmanr(ks, [gap[n][j] for n in TABLE_2]).statistic
        assert rho <= -0.7, (m["epsilons"][j], rho)
