"""Tables 1.4 / 1.5 from Hyperband-tuned topic models (thesis seed 001, §1.5).

The thesis tunes each (data set, topic model) pair with Hyperband (its Algorithm 5,
:mod:`algorithms.hyperband`; η = 3, resource = iterations, "the 9 best models after 81
iterations per model") over this sampling distribution D:

1. uniform over TF and TF-IDF pre-processing,
2. k uniform over {5, 10, …, 200},
3. LDA: α and β log-normal with median 1/k,
4. NMF: ℓ2 regularization of W and of T normal with mean 0 and standard deviation 0.5,

and for each measure picks the best of the tuned models. Here, per corpus draw and model:

* D as above with the k grid cut to {5, 10, …, ``k_max``} (default 50; the shaped corpora plant
  10, 20 and 30 topics), the log-normal's σ = 1 (the thesis gives no σ) and its draws capped
  at 1 (:data:`PRIOR_MAX`); K-means samples
  only the weighting and k; each configuration carries its own fit seed;
* Hyperband (Li et al.'s brackets) with η = 3 and ``R`` = 27 iterations (the thesis: 81) —
  NMF's iteration is an RRI sweep (topic form, NNDSVD start, ℓ2 of W and T as drawn; the topic
  form allows a negative ℓ2), LDA's a batch variational-Bayes EM step (scikit-learn's online
  update over one batch of all documents with learning decay 0, which is the batch update and
  can be resumed), K-means' a Lloyd round resumed from the saved centres;
* the evaluation E is held-out perplexity (mixed with the uniform at λ = 10⁻³, as the
  comparison's) on a validation fifth of the training documents, which no model is fitted
  to; the thesis does not say which E it used;
* the ``b`` = 3 best configurations that reached ``R`` are the finalists (the thesis's b = 9
  needs R = 81); each is scored by the seventeen measures (in-sample on the documents it was
  fitted to, out-of-sample on the held-out fifth of the corpus, as the untuned comparison) and
  each measure takes its best finalist.

TF-IDF weights a word by ``ln((1 + n) / (1 + df)) + 1`` (scikit-learn's smoothed idf); NMF and
K-means fit TF-IDF rows rescaled to sum 1, LDA fits counts × idf. The measures read the models'
simplex W and T against the raw counts and TF rows whatever the weighting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.hyperband import bracket_schedule, budget, hyperband
from algorithms.nmf.rri import fit_weights, rri_nmf
from algorithms.nmf.rri_steps import RRIParams
from algorithms.nmf.topic_agreement import one_hot
from algorithms.nmf.topic_quality import perplexity
from protocols import seeds
from protocols.errors import InputError
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload
from sim.experiments.studies import topic_models as tm

VALIDATION = 0.2
"""Fraction of the training documents held out for Hyperband's evaluation E."""
FINALISTS = 3
"""Tuned models per (corpus draw, model) whose best per measure is taken (thesis: 9)."""
L2_SD = 0.5
"""Standard deviation of NMF's ℓ2 regularizers (thesis §1.5)."""
LOG_SIGMA = 1.0
"""σ of the log-normal priors of LDA (median 1/k); the thesis does not give it."""
PRIOR_MAX = 1.0
"""LDA's priors are capped at 1, scikit-learn's largest (a draw above it, 5 % of them at k = 5,
becomes 1; the median 1/k and the quartiles are untouched)."""
WEIGHT_SWEEPS = 30
"""W sweeps of NMF's refit on validation or held-out documents."""


@dataclass(frozen=True)
class Tuning:
    """The search's size: Hyperband's ``R`` and ``η``, the k grid's top and the finalists."""

    R: int = 27
    eta: int = 3
    k_max: int = 50
    finalists: int = FINALISTS

    @property
    def ks(self) -> np.ndarray:
        return np.arange(5, self.k_max + 1, 5)


@dataclass(frozen=True)
class Views:
    """The fit and validation documents in both weightings, and the raw parts."""

    rows: dict[str, np.ndarray]
    rows_val: dict[str, np.ndarray]
    counts: dict[str, sp.csr_matrix]
    counts_val: dict[str, sp.csr_matrix]
    raw_val: sp.csr_matrix


def _idf(counts: sp.csr_matrix) -> np.ndarray:
    n = counts.shape[0]
    df = np.asarray((counts > 0).sum(axis=0)).ravel()
    return np.log((1.0 + n) / (1.0 + df)) + 1.0


def _rows(M: sp.csr_matrix) -> np.ndarray:
    A = M.toarray()
    s = A.sum(axis=1, keepdims=True)
    return A / np.where(s > 0, s, 1.0)


def views(counts: sp.csr_matrix, counts_val: sp.csr_matrix) -> Views:
    """TF and TF-IDF versions of the fit and validation documents (idf from the fit part)."""
    idf = sp.diags(_idf(counts))
    weighted = {"tf": counts, "tfidf": sp.csr_matrix(counts @ idf)}
    weighted_val = {"tf": counts_val, "tfidf": sp.csr_matrix(counts_val @ idf)}
    return Views({w: _rows(m) for w, m in weighted.items()},
                 {w: _rows(m) for w, m in weighted_val.items()},
                 weighted, weighted_val, counts_val)


def _fit_seed(rng: np.random.Generator) -> int:
    return int(rng.integers(1 << 31))


def sample_nmf(rng: np.random.Generator, ks: np.ndarray) -> dict[str, Any]:
    return {"weighting": str(rng.choice(["tf", "tfidf"])), "k": int(rng.choice(ks)),
            "l2_w": float(rng.normal(0.0, L2_SD)), "l2_t": float(rng.normal(0.0, L2_SD))}


def sample_lda(rng: np.random.Generator, ks: np.ndarray) -> dict[str, Any]:
    k = int(rng.choice(ks))
    return {"weighting": str(rng.choice(["tf", "tfidf"])), "k": k,
            "alpha": min(float(np.exp(rng.normal(np.log(1.0 / k), LOG_SIGMA))), PRIOR_MAX),
            "beta": min(float(np.exp(rng.normal(np.log(1.0 / k), LOG_SIGMA))), PRIOR_MAX),
            "seed": _fit_seed(rng)}


def sample_kmeans(rng: np.random.Generator, ks: np.ndarray) -> dict[str, Any]:
    return {"weighting": str(rng.choice(["tf", "tfidf"])), "k": int(rng.choice(ks)),
            "seed": _fit_seed(rng)}


def _nmf_params(c: dict[str, Any]) -> RRIParams:
    return RRIParams(form="topic", l2_w=c["l2_w"], l2_t=c["l2_t"])


class Arms:
    """Resume and evaluate the three models on one corpus's :class:`Views`."""

    def __init__(self, v: Views) -> None:
        self.v = v

    # -- NMF: RRI sweeps, state (W, T) ------------------------------------------------------
    def nmf(self, c: dict[str, Any], state: Any, done: int, target: int) -> Any:
        X = self.v.rows[c["weighting"]]
        kw = {} if state is None else {"W0": state[0], "T0": state[1]}
        res = rri_nmf(X, c["k"], max_iter=target - done, tol=0.0, params=_nmf_params(c), **kw)
        return res.W, res.T

    def nmf_weights(self, c: dict[str, Any], T: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return fit_weights(rows, T, params=_nmf_params(c), max_iter=WEIGHT_SWEEPS)

    def nmf_loss(self, c: dict[str, Any], state: Any) -> float:
        T = state[1]
        W_val = self.nmf_weights(c, T, self.v.rows_val[c["weighting"]])
        return perplexity(self.v.raw_val, tm._simplex_rows(W_val), tm._simplex_rows(T),
                          tm.UNIFORM_MIX)

    # -- LDA: batch VB EM steps, state the estimator ----------------------------------------
    def lda(self, c: dict[str, Any], state: Any, done: int, target: int) -> Any:
        if state is None:
            _, decomposition = tm._sklearn()
            n = self.v.counts[c["weighting"]].shape[0]
            state = decomposition.LatentDirichletAllocation(
                n_components=c["k"], doc_topic_prior=c["alpha"], topic_word_prior=c["beta"],
                learning_method="online", learning_decay=0.0, learning_offset=1.0,
                batch_size=n, total_samples=n, random_state=c["seed"])
        for _ in range(target - done):
            state.partial_fit(self.v.counts[c["weighting"]])
        return state

    def lda_loss(self, c: dict[str, Any], state: Any) -> float:
        W_val = state.transform(self.v.counts_val[c["weighting"]])
        return perplexity(self.v.raw_val, tm._simplex_rows(W_val),
                          tm._simplex_rows(state.components_), tm.UNIFORM_MIX)

    # -- K-means: Lloyd rounds, state the centres -------------------------------------------
    def kmeans(self, c: dict[str, Any], state: Any, done: int, target: int) -> Any:
        cluster, _ = tm._sklearn()
        km = cluster.KMeans(n_clusters=c["k"], init="k-means++" if state is None else state,
                            n_init=1, max_iter=target - done, random_state=c["seed"])
        return km.fit(self.v.rows[c["weighting"]]).cluster_centers_

    def kmeans_labels(self, centres: np.ndarray, rows: np.ndarray) -> np.ndarray:
        d2 = (rows ** 2).sum(axis=1)[:, None] - 2.0 * rows @ centres.T + (
            centres ** 2).sum(axis=1)[None, :]
        return np.argmin(d2, axis=1)

    def kmeans_loss(self, c: dict[str, Any], state: Any) -> float:
        labels = self.kmeans_labels(state, self.v.rows_val[c["weighting"]])
        return perplexity(self.v.raw_val, one_hot(labels, c["k"]),
                          tm._simplex_rows(np.maximum(state, 0.0)), tm.UNIFORM_MIX)


def _weigh(c: dict[str, Any], counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    return counts if c["weighting"] == "tf" else sp.csr_matrix(counts @ sp.diags(idf))


def fitted_model(model: str, c: dict[str, Any], state: Any, arms: Arms,
                 counts_test: sp.csr_matrix, idf: np.ndarray) -> tm.FittedModel:
    """A finalist as the comparison's :class:`~sim.experiments.studies.topic_models.FittedModel`
    (held-out weights inferred as the untuned models' are)."""
    test = _weigh(c, counts_test, idf)
    if model == "NMF":
        W, T = state
        Wt = arms.nmf_weights(c, T, _rows(test))
        return tm.FittedModel(tm._simplex_rows(W), tm._simplex_rows(Wt), tm._simplex_rows(T))
    if model == "LDA":
        W = state.transform(arms.v.counts[c["weighting"]])
        return tm.FittedModel(tm._simplex_rows(W), tm._simplex_rows(state.transform(test)),
                              tm._simplex_rows(state.components_))
    labels = arms.kmeans_labels(state, arms.v.rows[c["weighting"]])
    labels_t = arms.kmeans_labels(state, _rows(test))
    return tm.FittedModel(one_hot(labels, c["k"]), one_hot(labels_t, c["k"]),
                          tm._simplex_rows(np.maximum(state, 0.0)))


SAMPLERS = {"NMF": sample_nmf, "LDA": sample_lda, "Kmeans": sample_kmeans}


def tuned_corpus(shape: tm.CorpusShape, seed: int, repetition: int, tuning: Tuning
                 ) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
    """Tune the three models on one draw of ``shape`` and score their finalists.

    Returns ``({model: {measure: best finalist's value}}, {model: search summary}})``.
    """
    c = tm.prepare_corpus(shape, seed, repetition)
    cut = c.counts.shape[0] - round(VALIDATION * c.counts.shape[0])
    # the vocabulary is the fitted documents' (as the comparison's is the training documents'):
    # a word no fitted document holds would put LDA's prior mass where the documents have none
    seen = np.asarray(c.counts[:cut].sum(axis=0)).ravel() > 0
    counts, counts_val = c.counts[:cut][:, seen], c.counts[cut:][:, seen]
    counts_val = sp.csr_matrix(counts_val[np.asarray(counts_val.sum(axis=1)).ravel() > 0])
    test = c.counts_test[:, seen]
    full = np.asarray(test.sum(axis=1)).ravel() > 0
    counts_test, Y_test = sp.csr_matrix(test[full]), c.Y_test[full]
    tf_test = _rows(counts_test)
    arms = Arms(views(counts, counts_val))
    idf = _idf(counts)
    tf, Y = _rows(counts), c.Y[:cut]
    resume: dict[str, Callable[..., Any]] = {"NMF": arms.nmf, "LDA": arms.lda,
                                             "Kmeans": arms.kmeans}
    loss: dict[str, Callable[..., float]] = {"NMF": arms.nmf_loss, "LDA": arms.lda_loss,
                                             "Kmeans": arms.kmeans_loss}
    best: dict[str, dict[str, float]] = {}
    summary: dict[str, Any] = {}
    for model in tm.MODELS:
        root = seeds.derive_int(seed, "topic_tuning.search",
                                index=(shape.name, repetition, model), bits=63)
        found = hyperband(lambda rng, s=SAMPLERS[model], ks=tuning.ks: s(rng, ks), resume[model],
                          loss[model], R=tuning.R, eta=tuning.eta, seed=root)
        finalists = found.finalists(tuning.finalists)
        scored = [tm.score(fitted_model(model, t.config, t.state, arms, counts_test, idf),
                           counts, counts_test, tf, tf_test, Y, Y_test)
                  for t in finalists]
        best[model] = {m: (max if higher else min)(s[m] for s in scored)
                       for m, higher in tm.MEASURES}
        summary[model] = {"configurations": len(found.trials), "iterations": found.iterations,
                          "finalists": [{"config": {k: v for k, v in t.config.items()
                                                    if k != "seed"},
                                         "validation_perplexity": t.loss}
                                        for t in finalists]}
    return best, summary


def compare_tuned_topic_models(shapes: Sequence[str] = tuple(tm.SHAPES), repetitions: int = 1,
                               seed: int = 14, tuning: Tuning = Tuning(), scale: float = 1.0,
                               progress: Callable[[str, int], None] | None = None
                               ) -> dict[str, Any]:
    """Tables 1.4 and 1.5 from tuned models: ``{"scores", "table_1_4", "table_1_5",
    "searches"}``; ``searches[corpus]`` lists each draw's per-model search summary."""
    unknown = [s for s in shapes if s not in tm.SHAPES]
    if unknown or not shapes:
        raise InputError(f"corpus shapes {unknown or list(shapes)!r}: choose among "
                         f"{', '.join(tm.SHAPES)}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise InputError(f"repetitions = {repetitions!r} must be an integer ≥ 1")
    if isinstance(tuning.k_max, bool) or not isinstance(tuning.k_max, int) or tuning.k_max < 5:
        raise InputError(f"k_max = {tuning.k_max!r} must be an integer ≥ 5")
    tm._sklearn()
    scores: dict[str, list[dict[str, dict[str, float]]]] = {}
    searches: dict[str, list[dict[str, Any]]] = {}
    for name in shapes:
        scores[name], searches[name] = [], []
        for rep in range(repetitions):
            got, summary = tuned_corpus(tm.scaled(tm.SHAPES[name], scale), seed, rep, tuning)
            scores[name].append(got)
            searches[name].append(summary)
            if progress is not None:
                progress(name, rep + 1)
    t14 = tm.table_1_4(scores)
    return {"scores": scores, "table_1_4": t14, "table_1_5": tm.table_1_5(t14),
            "searches": searches}


def tuning_of(params: dict[str, Any]) -> Tuning:
    """The scenario's ``tuning_R`` and ``tuning_k_max`` as a :class:`Tuning`."""
    return Tuning(R=params.get("tuning_R", Tuning.R), k_max=params.get("tuning_k_max",
                                                                         Tuning.k_max))


def run(inp: RunInput) -> AlgorithmRun:
    """Entry ``topic_models``: with ``tuning = "hyperband"`` the tables from tuned models (the
    searches' finalists in ``metrics["tuning"]``), otherwise the untuned comparison
    (:func:`sim.experiments.studies.topic_models.run`)."""
    p = inp.params
    if p["tuning"] != "hyperband":
        return tm.run(inp)
    found = compare_tuned_topic_models(p["corpora"], p["repetitions"], inp.seed, tuning_of(p),
                                       p["scale"], tm.progress_of(inp))
    return tm.report(inp, found, tuned=True)


def estimate(inp: EstimateInput) -> Workload:
    """The entry's workload: the searches' (:func:`tuned_workload`) or the untuned fits'."""
    if inp.params["tuning"] != "hyperband":
        return tm.estimate(inp)
    return tuned_workload(inp.params)


def tuned_workload(params: dict[str, Any]) -> Workload:
    """Per corpus draw and model: the search's resumed iterations at the grid's mean k, plus
    the finalists' scoring (centralized fits only)."""
    tuning = tuning_of(params)
    iterations = budget(bracket_schedule(tuning.R, tuning.eta))
    k = float(np.mean(tuning.ks))
    flops = sum(2.0 * iterations * len(tm.MODELS) * s.docs * s.words * k for s in (
        tm.scaled(tm.SHAPES[n], params["scale"]) for n in params["corpora"]))
    return Workload(simulations=0, flops=flops * params["repetitions"],
                    basis=f"Hyperband (R = {tuning.R}, η = {tuning.eta}, {iterations} resumed "
                    "iterations per model) over NMF, LDA and K-means on the shaped corpora")
