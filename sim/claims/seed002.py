"""Seed 002 (Ballen, NMF under adversarial noise) in the claims table: C17 and C18, the latter
in three parts as the paper's Tables 1–2 state them (C18a: replace-corrupt best without
adversaries; C18b: ignore-corrupt best with adversaries; C18c: replace-corrupt collapses under
attack). Tables 1–2 run ``scenarios/corrective_nmf_table{1,2}.toml`` (ML-1M-shaped synthetic
ratings, 1,000 × 500, k = 20, 5 repetitions, the same iteration budget for every method).

Table 2 stated exactly (5 repetitions, 50 iterations, the digest's reading of step 3): the
lowest shift is replace-corrupt without interpolation's, 2.9× / 2.8× below ignore-corrupt
(Models 3 / 4); ignore-corrupt is lowest of the paper's first four rows, 31 % / 68 % below
replace-missing and 51 % / 76 % below ignore-missing (paper 36 % / 62 % and 56 % / 77 %).
The readings and the same-time budget measured are in :data:`READINGS`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from protocols import seeds
from sim.claims.table import Claim, Outcome, Runs, status

IM, RM, IC, RC, RCN = ("ignore-missing", "replace-missing", "ignore-corrupt", "replace-corrupt",
                       "replace-corrupt, no interpolation")
SHORT = {IM: "IM", RM: "RM", IC: "IC", RC: "RC", RCN: "RC-noint"}


def c17(runs: Runs) -> Outcome:
    """Algorithm 1 with ignore-corrupt on noisy partial ratings, several λ and starts: the
    clipped loss Σ_observed min[(V − WH)², λ] recomputed from W and H after each iteration."""
    from algorithms.nmf.corrective import CorrectiveSettings, corrective_nmf, random_start

    worst, fits = 0.0, 0
    for seed in range(4):
        rng = seeds.rng(seed, "claims.c17.data")
        n, m, k = 60, 30, 3
        V = np.clip(rng.uniform(0, 1.5, (n, k)) @ rng.uniform(0, 1.5, (k, m))
                    + rng.normal(0, 0.6, (n, m)), 1, 5)
        V[rng.random((n, m)) > 0.5] = np.nan
        V[np.arange(n), np.arange(n) % m] = 3.0
        obs = ~np.isnan(V)
        for lam in (0.3, 1.0, 3.0):
            W0, H0 = random_start(n, m, k, seeds.rng(seed, "claims.c17.start"))
            losses = []
            for t in range(1, 26):
                fit = corrective_nmf(V, W0, H0, iterations=t, settings=CorrectiveSettings(
                    mode="ignore", missing="ignore", lam=lam))
                err = (np.nan_to_num(V) - fit.W @ fit.H)[obs]
                losses.append(float(np.minimum(err ** 2, lam).sum()))
            steps = np.diff(losses) / np.array(losses[:-1])
            worst = max(worst, float(steps.max()))
            fits += 1
    return Outcome(status(worst <= 1e-9),
                   f"largest relative step of the clipped loss over {fits} runs × 25 "
                   f"iterations (60 × 30 ratings, half missing, λ ∈ {{0.3, 1, 3}}): "
                   f"{worst:.1e} (≤ 0: non-increasing)")


def _means(m: dict[str, Any], model: str, key: str) -> dict[str, float]:
    table = m["table1" if model in ("model 1", "model 2") else "table2"][model]
    return {label: float(row[key]) for label, row in table.items()}


def _shown(mean: dict[str, float], digits: int = 4) -> str:
    return ", ".join(f"{SHORT[k]} {v:.{digits}f}" for k, v in mean.items())


def c18a(runs: Runs) -> Outcome:
    m = runs.metrics("corrective_nmf_table1")
    best, gains, shown = [], [], []
    for model in ("model 1", "model 2"):
        mean = _means(m, model, "normalised_mae")
        best.append(min(mean, key=mean.get) in (RC, RCN))
        gains += [1 - mean[RC] / mean[b] for b in (IM, RM)]
        shown.append(f"{model}: {_shown(mean)}")
    big = min(gains) >= 0.045
    return Outcome(
        status(all(best) and big, partial=any(best)),
        "normalised MAE, means of 5 repetitions: " + "; ".join(shown)
        + f"; replace-corrupt's gain over the baselines {min(gains):.1%}–{max(gains):.1%} "
        "(paper 4.5–8.9 %)",
        "" if all(best) and big else "replace-corrupt is best in "
        f"{sum(best)} of 2 models; its gain over the baselines reaches the paper's 4.5 % "
        f"{'everywhere' if big else 'not everywhere (a tie with replace-missing on clean data)'}",
    )


READINGS = (
    "no reading of Algorithm 1 tried gives it (benchmarks/corrective_readings.py, 3 "
    "repetitions): step 4 filling the missing entries — the adversaries' too — once and "
    "marking them as data from then on (fill = \"once\") gives replace-corrupt 0.033 / 0.032 "
    "(Models 3 / 4), with step 3 overwriting V as well (replace_base = \"running\") "
    "0.033 / 0.032, against replace-missing's 0.056 / 0.074; step 3 overwriting V alone "
    "gave 0.042 / 0.059 against 0.051 / 0.074 (corrective_nmf_tables' docstring). The "
    "paper's same time (budget = \"time\", modelled from operation counts: the ignore-missing "
    "rows run 385 / 380 iterations to the others' 50) does not either: the ignore rows "
    "over-fit — ignore-missing 0.223 / 0.249, ignore-corrupt 0.181 / 0.085 — while "
    "replace-corrupt keeps 0.042 / 0.051 and its no-interpolation form 0.013 / 0.011 against "
    "replace-missing's 0.056 / 0.074 (3 repetitions). Nor does the target choice: drawn among "
    "all movies (target_top_fraction = 1, target_min_mean = 0) every shift is 2–3× larger and "
    "replace-corrupt ties replace-missing, 0.121 / 0.180 against 0.120 / 0.186"
)


def c18b(runs: Runs) -> Outcome:
    m = runs.metrics("corrective_nmf_table2")
    best, beats, shown, below, exact = [], [], [], set(), []
    for model in ("model 3", "model 4"):
        mean = _means(m, model, "prediction_shift")
        best.append(min(mean, key=mean.get) == IC)
        beats.append(mean[IC] < min(mean[IM], mean[RM]))
        below |= {label for label, v in mean.items() if v < mean[IC]}
        shown.append(f"{model}: {_shown(mean)}")
        winner = min(mean, key=mean.get)
        four = min((IM, RM, IC, RC), key=mean.get)
        exact.append(f"{model}: {SHORT[winner]} best, {mean[IC] / mean[winner]:.1f}× below "
                     f"IC; of the paper's first four rows {SHORT[four]}, "
                     f"{1 - mean[IC] / mean[RM]:.0%} below RM and "
                     f"{1 - mean[IC] / mean[IM]:.0%} below IM (paper 36 % / 77 %)")
    return Outcome(
        status(all(best), partial=all(beats)),
        "mean absolute prediction shift, means of 5 repetitions (50 iterations each, "
        "replace-corrupt from the original V, missing entries refilled every iteration): "
        + "; ".join(shown) + "; " + "; ".join(exact),
        "" if all(best) else (
            f"ignore-corrupt beats both baselines in {sum(beats)} of 2 attack models but is "
            f"best in {sum(best)}: {' and '.join(sorted(below))} lie(s) lower; " + READINGS),
    )


def c18c(runs: Runs) -> Outcome:
    m = runs.metrics("corrective_nmf_table2")
    ratios = []
    for model in ("model 3", "model 4"):
        mean = _means(m, model, "prediction_shift")
        ratios.append(mean[RC] / max(mean[IM], mean[RM]))
    collapses = all(r > 2 for r in ratios)
    return Outcome(
        status(collapses),
        f"replace-corrupt's shift / the worse baseline's: {ratios[0]:.2f} (Model 3), "
        f"{ratios[1]:.2f} (Model 4); paper 0.621 / 0.062 = 10.0 and 0.159 / 0.083 = 1.9",
        "" if collapses else "replace-corrupt does not collapse under attack: " + READINGS,
    )


TABLE1 = "tests/sim/test_corrective_tables.py::test_table1_orderings_on_the_shipped_scenario"
TABLE2 = "tests/sim/test_corrective_tables.py::test_table2_orderings_on_the_shipped_scenario"
READINGS_TESTS = (
    "tests/sim/test_corrective_tables.py::test_table2_replace_corrupt_does_not_collapse_under_"
    "the_literal_fill",
    "tests/sim/test_corrective_tables.py::test_table2_under_the_same_time_budget_the_ignore_"
    "rows_overfit",
    "tests/sim/test_corrective_tables.py::test_table2_replace_corrupt_does_not_collapse_when_"
    "step_3_overwrites_v",
    "tests/sim/test_corrective_tables.py::test_table2_replace_corrupt_does_not_collapse_with_a_"
    "target_among_all_movies")

CLAIMS_002: tuple[Claim, ...] = (
    Claim("C17", "002", "§2.1", "clipped loss non-increasing for ignore-corrupt",
          ("tests/algorithms/nmf/test_corrective.py::test_clipped_loss_is_non_increasing_under_"
           "ignore_corrupt",), c17),
    Claim("C18a", "002", "§3, Table 1", "without adversaries replace-corrupt is best, 5–10 % "
          "below the baselines", (TABLE1,), c18a, expensive=True),
    Claim("C18b", "002", "§3, Table 2", "with adversaries ignore-corrupt is best (a 'dramatic "
          "64 %' improvement)", (TABLE2, *READINGS_TESTS), c18b, expensive=True),
    Claim("C18c", "002", "§3, Table 2", "replace-corrupt collapses under attack (0.621 / 0.159 "
          "against 0.062 / 0.083 for ignore-missing)", (TABLE2, *READINGS_TESTS), c18c,
          expensive=True),
)
