"""Experiment ``pd_nmf_topic_quality``: are PD-NMF's topics as good as centralized NMF's?

Thesis seed 001, §1.5 (Tables 1.4 / 1.5 score NMF's topics by coherence, perplexity and
out-of-sample fit) and Ch. 2 (PD-NMF is offered as NMF without pooling the data). This study
scores the topics PD-NMF learns among the scenario's parties against centralized RRI-NMF on
the pooled rows, by the measures of :mod:`algorithms.nmf.topic_quality`:

* UMass coherence (eq. 1.27) per topic, its mean over topics and the expected coherence of the
  solution (eq. 1.28, topics weighted by their share of the training documents);
* NPMI coherence (document co-occurrence) per topic, mean over topics;
* held-out perplexity (Fig. 1.12; mixed with the uniform distribution at λ = 10⁻³, without
  which every sparse NMF model scores ∞) and held-out Fro2 (Fig. 1.11) on documents no party trained
  on;
* on synthetic corpora, the cosine of the best matching to the planted topics.

Co-occurrences are counted on the pooled training documents, as the thesis does ("based on the
same dataset that was used for training"); the scores are an evaluation by the simulator, not
something the parties compute. PD-NMF is a real simulation with the scenario's ``init``
(PD-NMF-Init by default) and ``iterations``; the centralized model starts from ``baseline``
(``random_2x``: a random start run for twice the sweeps, the thesis's fair benchmark for
PD-NMF-Init's extra sweeps; ``random``; ``nndsvd``, which is deterministic). Every trial draws
new starts, seeded from the scenario seed and the trial number (``topic_quality.trial``) as
:mod:`sim.experiments.nmf.init_comparison` does; the held-out documents (``holdout`` of every
party's rows) are drawn once, from the stream ``topic_quality.holdout`` (:mod:`protocols.seeds`),
and are the same in every trial. Means and standard deviations are over trials.

Scenario keys: those of ``pd_nmf`` plus ``holdout``, ``trials``, ``top_words`` (M) and
``baseline``. ``outputs.npz`` holds each method's per-trial scores and per-topic coherences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.data import holdout_rows
from algorithms.nmf.topic_quality import (
    expected_coherence,
    heldout_frobenius,
    npmi_coherence,
    perplexity,
    umass_coherence,
)
from protocols import seeds
from sim.console import table
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload
from sim.experiments.nmf.pd_nmf import (
    NmfSetup,
    centralized_sweeps,
    nmf_workload,
    pd_nmf_parties,
    public_start,
    run_pd_nmf,
    topic_recovery,
)
from sim.privacy import AuditTarget

"""Spawn key of the stream that picks the held-out documents."""

PERPLEXITY_UNIFORM_MIX = 1e-3
"""λ of :func:`algorithms.nmf.topic_quality.perplexity`: NMF's sparse topics give unseen
documents' words probability 0, and the thesis's perplexity is then infinite."""

METHODS = ("pd_nmf", "centralized")
SCORES = ("umass_expected", "umass_mean", "npmi_mean", "perplexity", "heldout_fro2")
HIGHER_IS_BETTER = {"umass_expected": True, "umass_mean": True, "npmi_mean": True,
                    "perplexity": False, "heldout_fro2": False, "topic_recovery": True}


def _scores(train: Any, test: Any, W: np.ndarray, T: np.ndarray, setup: NmfSetup,
            n_top: int, truth: np.ndarray | None) -> tuple[dict[str, float], np.ndarray]:
    umass = umass_coherence(train, T, n_top)
    out = {
        "umass_expected": expected_coherence(umass, W),
        "umass_mean": float(umass.mean()),
        "npmi_mean": float(npmi_coherence(train, T, n_top).mean()),
        "perplexity": perplexity(test, W, T, PERPLEXITY_UNIFORM_MIX),
        "heldout_fro2": heldout_frobenius(test, T, setup.params),
    }
    if truth is not None:
        out["topic_recovery"] = topic_recovery(truth, T)
    return out, umass


def _with_seed(inp: RunInput, train_shards: list[Any], pooled: Any, seed: int) -> RunInput:
    return RunInput(inp.scenario, inp.params, pooled, train_shards, inp.simulation, seed,
                    inp.progress, inp.extras)


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    rng = seeds.rng(inp.seed, "topic_quality.holdout")
    splits = [holdout_rows(shard, p["holdout"], rng) for shard in inp.shards]
    trains = [s.train for s in splits]
    stack = sp.vstack if sp.issparse(trains[0]) else np.vstack
    pooled, test = stack([s.train for s in splits]), stack([s.test for s in splits])
    setup = NmfSetup.from_params(p, pooled)
    base = NmfSetup.from_params({**p, "init": p["baseline"]}, pooled)
    truth = inp.extras.get("topics")
    truth = np.asarray(truth) if truth is not None and np.shape(truth)[0] == setup.k else None
    scores: dict[str, dict[str, list[float]]] = {m: {} for m in METHODS}
    coherences: dict[str, list[np.ndarray]] = {m: [] for m in METHODS}
    first_result, audited = None, None
    for trial in range(p["trials"]):
        seed = seeds.derive_int(inp.seed, "topic_quality.trial", index=(trial,), bits=32)
        trial_input = _with_seed(inp, trains, pooled, seed)
        T0 = public_start(setup, pooled, seed, inp.scenario.base_dir)
        result, models = run_pd_nmf(trial_input, setup, T0)
        W_pd = np.vstack([m.W for m in models])
        Tb0 = public_start(base, pooled, seed, inp.scenario.base_dir)
        W_c, T_c = centralized_sweeps(pooled, Tb0, base.sweeps, base)
        if first_result is None:
            first_result = result
            audited = AuditTarget(tuple(pd_nmf_parties(trial_input, setup, T0)), "secure_sum",
                                  setup.variant)
        for method, (W, T) in (("pd_nmf", (W_pd, models[0].T)), ("centralized", (W_c, T_c))):
            got, umass = _scores(pooled, test, W, T, setup, p["top_words"], truth)
            coherences[method].append(umass)
            for name, value in got.items():
                scores[method].setdefault(name, []).append(value)
        if inp.progress is not None:
            inp.progress("trials", trial + 1, p["trials"])
    metrics: dict[str, Any] = {"trials": p["trials"], "top_words": p["top_words"],
                               "baseline": p["baseline"], "train_rows": int(pooled.shape[0]),
                               "test_rows": int(test.shape[0]), "k": setup.k}
    if truth is not None:
        planted = umass_coherence(pooled, truth, p["top_words"])
        metrics["planted"] = {"umass_mean": float(planted.mean()),
                              "npmi_mean": float(npmi_coherence(pooled, truth,
                                                                p["top_words"]).mean())}
    rows = []
    for method in METHODS:
        summary = {}
        for name, values in scores[method].items():
            arr = np.asarray(values)
            summary[name] = {"values": [float(v) for v in arr], "mean": float(arr.mean()),
                             "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0}
        metrics[method] = summary
        rows.append([method] + [f"{summary[s]['mean']:.4g} ± {summary[s]['sd']:.2g}"
                                for s in SCORES])
    return AlgorithmRun(
        result=first_result,
        outputs={**{f"{m}_{s}": np.asarray(v) for m in METHODS for s, v in scores[m].items()},
                 **{f"{m}_umass_per_topic": np.asarray(coherences[m]) for m in METHODS}},
        metrics=metrics,
        tables=[table(["model", *SCORES], rows,
                      f"topic quality, k = {setup.k}, M = {inp.scenario.n_parties}, "
                      f"{p['trials']} trials (mean ± sd)")],
        communication_by_phase=True,
        audit_runs={"pd_nmf": audited},
    )


def estimate(inp: EstimateInput) -> Workload:
    p = inp.params
    train_rows = inp.n_rows - round(p["holdout"] * inp.n_rows)
    central = nmf_workload(inp, {**p, "init": p["baseline"]}, train_rows, private=False)
    work = nmf_workload(inp, p, train_rows) + central
    return work.times(p["trials"]).described(
        "PD-NMF's declared cost and the centralized sweeps, × trials", p["trials"])
