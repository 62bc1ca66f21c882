"""Tables 1.4 / 1.5 of the thesis: NMF against LDA and K-means as topic models.

Thesis seed 001, §1.5: each of NMF, LDA and K-means is fitted to NIPS, 20 Newsgroups and
Reuters-21578 and scored by the seventeen measures of §1.3 (Figs. A.1–A.17); Table 1.4 gives,
per measure, the best and second-best model and the mean over the data sets of their relative
gap ``∆ = (score(best) − score(2nd)) / |score(2nd)|`` (eq. 1.35, sign flipped for lower-is-better
measures, in percent); Table 1.5 counts each model's wins and its mean ∆ when best (NMF: 6
wins, mean ∆ 61.89).

Here the corpora are synthetic, shaped like the thesis's (Table 1.3): LDA-style documents
(:func:`algorithms.data.synthetic.synthetic_topic_corpus`) with the data set's number of
documents, vocabulary, number of classes and density where they fit in minutes
(:data:`SHAPES`; the planted dominant topic of a document is its class label). 20 % of the
documents are held out for the out-of-sample measures. Departures from §1.5, each for a reason:

* no Hyperband search (the scenario key ``tuning = "hyperband"`` runs
  :mod:`sim.experiments.studies.topic_tuning` instead): every model gets the planted k and
  one fixed setting (NMF: RRI-NMF in the topic form on term-frequency rows from NNDSVD,
  50 sweeps; LDA: scikit-learn's batch
  variational Bayes on counts, priors 1/k, 30 passes; K-means: scikit-learn's Lloyd with
  k-means++ on term-frequency rows) — the thesis picks each measure's best of nine tuned models,
  which favours whichever model is most sensitive to tuning;
* out-of-sample weights: NMF refits W with T fixed (:func:`algorithms.nmf.rri.fit_weights`),
  LDA infers θ (``transform``), K-means assigns the nearest centre;
* perplexity and log-likelihood mix the model's word distribution with the uniform one at
  λ = 10⁻³ (NMF's and K-means' sparse topics otherwise give held-out words probability 0).

LDA and K-means come from scikit-learn (extras ``dev`` and ``datasets``), imported with this
module (which only the C13 claim and its tests import); without it :func:`compare_topic_models`
raises an InputError saying so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.data.synthetic import synthetic_topic_corpus
from algorithms.nmf.rri import fit_weights, rri_nmf
from algorithms.nmf.rri_steps import RRIParams
from algorithms.nmf.topic_agreement import (
    adjusted_rand_index,
    one_hot,
    variation_of_information,
)
from algorithms.nmf.topic_discrimination import (
    closeness,
    doc_average_distance,
    topic_average_distance,
    topic_discriminability,
    topic_uniform_distance,
    weights_background_distance,
    word_discriminability,
)
from algorithms.nmf.topic_quality import (
    expected_coherence,
    loglikelihood,
    perplexity,
    umass_coherence,
)
from protocols import seeds
from protocols.errors import InputError
from sim import plots
from sim.audited_runs import RevealingRun
from sim.console import table
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload

try:  # an optional extra: without it the comparison says what to install
    from sklearn import cluster, decomposition

    _SKLEARN: tuple[Any, Any] | None = (cluster, decomposition)
except ImportError:  # pragma: no cover - the dev extras install it
    _SKLEARN = None

MODELS = ("NMF", "LDA", "Kmeans")
UNIFORM_MIX = 1e-3
HOLDOUT = 0.2

MEASURES: tuple[tuple[str, bool], ...] = (
    ("VI IS", False), ("VI oos", False), ("ARI IS", True), ("ARI oos", True),
    ("coherence", True), ("frob fit oos", False), ("loglike oos", True),
    ("perplexity oos", False), ("frob fit is", False), ("loglike is", True),
    ("topic uniform", True), ("topic average", True), ("weights background", True),
    ("doc average", True), ("discriminability topics", True),
    ("discriminability words", True), ("closeness", False))
"""Table 1.4's seventeen measures, in its order, each with whether higher is better."""

THESIS_BEST = {
    "VI IS": ("LDA", "Kmeans", 3.97), "VI oos": ("LDA", "Kmeans", 0.23),
    "ARI IS": ("LDA", "NMF", 204.71), "ARI oos": ("LDA", "NMF", 166.29),
    "coherence": ("Kmeans", "NMF", 26.87), "frob fit oos": ("NMF", "LDA", 26.90),
    "loglike oos": ("LDA", "Kmeans", 9.61), "perplexity oos": ("Kmeans", "LDA", 0.01),
    "frob fit is": ("NMF", "Kmeans", 35.21), "loglike is": ("LDA", "Kmeans", 7.52),
    "topic uniform": ("NMF", "LDA", 100.60), "topic average": ("NMF", "LDA", 63.61),
    "weights background": ("Kmeans", "NMF", 159.37), "doc average": ("NMF", "LDA", 117.20),
    "discriminability topics": ("Kmeans", "NMF", 159.37),
    "discriminability words": ("NMF", "Kmeans", 27.82), "closeness": ("LDA", "Kmeans", 100.0)}
"""Table 1.4 as printed: best, second and mean ∆ (%) per measure."""


@dataclass(frozen=True)
class CorpusShape:
    """A synthetic corpus shaped like one of Table 1.3's data sets."""

    name: str
    docs: int
    words: int
    k: int
    doc_length: int
    alpha: float
    beta: float
    thesis: str


SHAPES = {  # keyed by sim.catalog.studies.TOPIC_CORPORA
    "nips": CorpusShape("nips", 1500, 4000, 10, 1000, 0.3, 0.05,
                        "NIPS: 1,500 × 12,419, true k unknown, density 10.69 %"),
    "20ng": CorpusShape("20ng", 4000, 3000, 20, 60, 0.05, 0.05,
                        "20 Newsgroups: 18,846 × 7,097, k = 20, density 1.01 %"),
    "reuters": CorpusShape("reuters", 4000, 3169, 30, 60, 0.05, 0.05,
                           "Reuters-21578: 10,788 × 3,169, k = 90, density 1.71 %"),
}
"""Table 1.3's data sets cut to run in minutes: NIPS at its 1,500 documents with a third of
its vocabulary; 20NG and Reuters at 4,000 documents; Reuters with 30 of its 90 classes (its
classes are very unequal; most of the 90 hold a handful of documents)."""


@dataclass(frozen=True)
class FittedModel:
    """A topic model on the simplex: training and held-out weights (rows on Δ_k), topics (rows
    on Δ_d)."""

    W: np.ndarray
    W_test: np.ndarray
    T: np.ndarray


def _sklearn() -> Any:
    if _SKLEARN is None:  # pragma: no cover - the dev extras install it
        raise InputError("the topic-model comparison needs scikit-learn for LDA and K-means; "
                         "install mpcsim's 'datasets' extra (pip install 'mpcsim[datasets]')")
    return _SKLEARN


def _simplex_rows(M: np.ndarray) -> np.ndarray:
    s = M.sum(axis=1, keepdims=True)
    k = M.shape[1]
    return np.where(s > 0, M / np.where(s > 0, s, 1.0), 1.0 / k)


def fit_nmf(tf: np.ndarray, tf_test: np.ndarray, k: int, sweeps: int = 50) -> FittedModel:
    params = RRIParams(form="topic")
    res = rri_nmf(tf, k, max_iter=sweeps, tol=0.0, params=params)
    W_test = fit_weights(tf_test, res.T, params=params)
    return FittedModel(_simplex_rows(res.W), _simplex_rows(W_test), _simplex_rows(res.T))


def fit_lda(counts: sp.csr_matrix, counts_test: sp.csr_matrix, k: int, seed: int,
            passes: int = 30) -> FittedModel:
    _, decomposition = _sklearn()
    lda = decomposition.LatentDirichletAllocation(
        n_components=k, doc_topic_prior=1.0 / k, topic_word_prior=1.0 / k,
        learning_method="batch", max_iter=passes, random_state=seed)
    W = lda.fit_transform(counts)
    return FittedModel(_simplex_rows(W), _simplex_rows(lda.transform(counts_test)),
                       _simplex_rows(lda.components_))


def fit_kmeans(tf: np.ndarray, tf_test: np.ndarray, k: int, seed: int) -> FittedModel:
    cluster, _ = _sklearn()
    km = cluster.KMeans(n_clusters=k, init="k-means++", n_init=1, random_state=seed)
    labels = km.fit_predict(tf)
    centres = np.maximum(km.cluster_centers_, 0.0)
    return FittedModel(one_hot(labels, k), one_hot(km.predict(tf_test), k),
                       _simplex_rows(centres))


def score(model: FittedModel, counts: sp.csr_matrix, counts_test: sp.csr_matrix,
          tf: np.ndarray, tf_test: np.ndarray, Y: np.ndarray, Y_test: np.ndarray
          ) -> dict[str, float]:
    """The seventeen measures of one fitted model (:data:`MEASURES`)."""
    W, Wt, T = model.W, model.W_test, model.T
    return {
        "VI IS": variation_of_information(W, Y),
        "VI oos": variation_of_information(Wt, Y_test),
        "ARI IS": adjusted_rand_index(W, Y),
        "ARI oos": adjusted_rand_index(Wt, Y_test),
        "coherence": expected_coherence(umass_coherence(counts, T), W),
        "frob fit oos": float(np.sum((tf_test - Wt @ T) ** 2)),
        "loglike oos": loglikelihood(counts_test, Wt, T, UNIFORM_MIX),
        "perplexity oos": perplexity(counts_test, W, T, UNIFORM_MIX),
        "frob fit is": float(np.sum((tf - W @ T) ** 2)),
        "loglike is": loglikelihood(counts, W, T, UNIFORM_MIX),
        "topic uniform": topic_uniform_distance(W, T),
        "topic average": topic_average_distance(W, T),
        "weights background": weights_background_distance(W, T),
        "doc average": doc_average_distance(W, T, counts),
        "discriminability topics": topic_discriminability(W, T),
        "discriminability words": word_discriminability(W, T),
        "closeness": closeness(W, T),
    }


@dataclass(frozen=True)
class PreparedCorpus:
    """One draw of a shaped corpus, split into training and held-out documents: counts (CSR),
    term-frequency rows and one-hot planted classes of each part."""

    counts: sp.csr_matrix
    counts_test: sp.csr_matrix
    tf: np.ndarray
    tf_test: np.ndarray
    Y: np.ndarray
    Y_test: np.ndarray


def prepare_corpus(shape: CorpusShape, seed: int, repetition: int) -> PreparedCorpus:
    """Draw ``shape``'s corpus number ``repetition`` and hold out its last :data:`HOLDOUT`."""
    rng = seeds.rng(seed, "topic_models.corpus", index=(shape.name, repetition))
    corpus = synthetic_topic_corpus(shape.docs, shape.words, shape.k, rng=rng,
                                    doc_length=shape.doc_length, alpha=shape.alpha,
                                    beta=shape.beta)
    cut = shape.docs - round(HOLDOUT * shape.docs)
    # the vocabulary is the training documents' (the thesis's pre-processing drops unused terms)
    seen = corpus.counts[:cut].sum(axis=0) > 0
    counts_all = corpus.counts[:, seen].astype(np.float64)
    keep = counts_all.sum(axis=1) > 0
    counts_all, labels = counts_all[keep], np.argmax(corpus.weights, axis=1)[keep]
    cut = int(np.sum(keep[:cut]))
    tf_all = counts_all / counts_all.sum(axis=1, keepdims=True)
    return PreparedCorpus(sp.csr_matrix(counts_all[:cut]), sp.csr_matrix(counts_all[cut:]),
                          tf_all[:cut], tf_all[cut:], one_hot(labels[:cut], shape.k),
                          one_hot(labels[cut:], shape.k))


def one_corpus(shape: CorpusShape, seed: int, repetition: int) -> dict[str, dict[str, float]]:
    """Fit the three models to one draw of a shaped corpus and score them."""
    c = prepare_corpus(shape, seed, repetition)
    fit_seed = seeds.derive_int(seed, "topic_models.fit", index=(shape.name, repetition),
                                bits=31)
    fitted = {"NMF": fit_nmf(c.tf, c.tf_test, shape.k),
              "LDA": fit_lda(c.counts, c.counts_test, shape.k, fit_seed),
              "Kmeans": fit_kmeans(c.tf, c.tf_test, shape.k, fit_seed)}
    return {m: score(f, c.counts, c.counts_test, c.tf, c.tf_test, c.Y, c.Y_test)
            for m, f in fitted.items()}


def _order(means: dict[str, float], higher: bool) -> list[str]:
    return sorted(MODELS, key=lambda m: -means[m] if higher else means[m])


def _delta(best: float, second: float, higher: bool) -> float:
    """eq. 1.35 in percent, sign flipped for lower-is-better measures (so a lead is > 0)."""
    if best == second:
        return 0.0
    gap = (best - second) / abs(second) if second != 0 else float("inf")
    return 100.0 * (gap if higher else -gap)


def table_1_4(scores: dict[str, list[dict[str, dict[str, float]]]]) -> dict[str, dict[str, Any]]:
    """Per measure: the best and second model over the corpora, and the mean ∆.

    ``scores[corpus]`` lists one ``{model: {measure: value}}`` per repetition. On each corpus
    the models are ranked by their mean over repetitions; the best overall is the model with
    the most corpus wins (ties to the lower mean rank), the second likewise among the others.
    ∆ is averaged over the corpora; ``consistent`` is the fraction of (corpus, repetition)
    pairs in which the best beats the second. A measure on which the two are equal on every
    corpus (closeness 0 for well separated topics) has best ``"tie"`` and ∆ 0.
    """
    out = {}
    for measure, higher in MEASURES:
        ranks: dict[str, list[int]] = {m: [] for m in MODELS}
        means_by_corpus = {}
        for corpus, reps in scores.items():
            means = {m: float(np.mean([r[m][measure] for r in reps])) for m in MODELS}
            means_by_corpus[corpus] = means
            for place, m in enumerate(_order(means, higher)):
                ranks[m].append(place)
        order = sorted(MODELS, key=lambda m: (-sum(p == 0 for p in ranks[m]),
                                              float(np.mean(ranks[m]))))
        best, second = order[0], order[1]
        deltas = [_delta(v[best], v[second], higher) for v in means_by_corpus.values()]
        wins = [(r[best][measure] > r[second][measure]) == higher
                for reps in scores.values() for r in reps]
        tied = all(v[best] == v[second] for v in means_by_corpus.values())
        out[measure] = {"best": "tie" if tied else best, "second": second,
                        "delta": float(np.mean(deltas)),
                        "delta_by_corpus": deltas, "consistent": float(np.mean(wins)),
                        "means": means_by_corpus}
    return out


def table_1_5(t14: dict[str, dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per model: the measures it is best on and its mean ∆ when best."""
    out = {}
    for m in MODELS:
        deltas = [row["delta"] for row in t14.values() if row["best"] == m]
        out[m] = {"best": len(deltas), "mean_delta": float(np.mean(deltas)) if deltas else 0.0}
    return out


def scaled(shape: CorpusShape, scale: float) -> CorpusShape:
    """``shape`` with ``scale`` of its documents and vocabulary, at least 5 per topic."""
    if scale == 1.0:
        return shape
    return replace(shape, docs=max(round(scale * shape.docs), 5 * shape.k),
                   words=max(round(scale * shape.words), 5 * shape.k))


def compare_topic_models(shapes: Sequence[str] = tuple(SHAPES), repetitions: int = 3,
                         seed: int = 14,
                         progress: Callable[[str, int], None] | None = None,
                         scale: float = 1.0) -> dict[str, Any]:
    """Tables 1.4 and 1.5 on the shaped corpora: ``{"scores", "table_1_4", "table_1_5"}``;
    ``scale`` < 1 shrinks every corpus (:func:`scaled`)."""
    unknown = [s for s in shapes if s not in SHAPES]
    if unknown or not shapes:
        raise InputError(f"corpus shapes {unknown or list(shapes)!r}: choose among "
                         f"{', '.join(SHAPES)}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise InputError(f"repetitions = {repetitions!r} must be an integer ≥ 1")
    _sklearn()
    scores: dict[str, list[dict[str, dict[str, float]]]] = {}
    for name in shapes:
        scores[name] = []
        for rep in range(repetitions):
            scores[name].append(one_corpus(scaled(SHAPES[name], scale), seed, rep))
            if progress is not None:
                progress(name, rep + 1)
    t14 = table_1_4(scores)
    return {"scores": scores, "table_1_4": t14, "table_1_5": table_1_5(t14)}


THESIS_TABLE_1_5 = table_1_5({m: {"best": b, "delta": d} for m, (b, _, d) in THESIS_BEST.items()})
"""Table 1.5 as it follows from the printed Table 1.4 (NMF 6 / 61.89, LDA 7 / 70.32, K-means
4 / 86.40)."""

CENTRALIZED = RevealingRun("every party's documents to the one machine that fits the model "
                           "(a centralized topic model: no protocol runs)", "centralized")
"""What ``[[audit]]`` answers for each model (:mod:`sim.audited_runs`): the comparison fits
centralized models only; PD-NMF's topics are audited by ``pd_nmf_topic_quality``."""


def run(inp: RunInput) -> AlgorithmRun:
    """Entry ``topic_models``: Tables 1.4 / 1.5 on the scenario's shaped corpora.

    The corpora are generated from :data:`SHAPES` (scaled by ``scale``) with the scenario's
    seed; the scenario's ``[data]`` and parties are not used: the three models are centralized.
    """
    p = inp.params
    found = compare_topic_models(p["corpora"], p["repetitions"], inp.seed, progress_of(inp),
                                 p["scale"])
    return report(inp, found)


def progress_of(inp: RunInput) -> Callable[[str, int], None]:
    """A comparison's progress callback reporting corpus draws done to ``inp.progress``."""
    total = len(inp.params["corpora"]) * inp.params["repetitions"]
    done = [0]

    def progress(name: str, rep: int) -> None:
        done[0] += 1
        if inp.progress is not None:
            inp.progress("corpus draws", done[0], total)

    return progress


def report(inp: RunInput, found: dict[str, Any], tuned: bool = False) -> AlgorithmRun:
    """The entry's tables, metrics, outputs and plot from a comparison's ``found`` (untuned,
    or tuned by :mod:`sim.experiments.studies.topic_tuning`, whose searches it adds)."""
    p = inp.params
    t14, t15 = found["table_1_4"], found["table_1_5"]
    shapes = {n: scaled(SHAPES[n], p["scale"]) for n in p["corpora"]}
    metrics: dict[str, Any] = {
        "corpora": {n: {"docs": s.docs, "words": s.words, "k": s.k, "doc_length": s.doc_length,
                        "thesis": s.thesis} for n, s in shapes.items()},
        "repetitions": p["repetitions"],
        "table_1_4": {m: {k: v for k, v in row.items() if k != "means"} | {
            "thesis": list(THESIS_BEST[m])} for m, row in t14.items()},
        "table_1_5": t15, "table_1_5_thesis": THESIS_TABLE_1_5,
        "measures_agreeing_with_thesis": [m for m, row in t14.items()
                                          if row["best"] == THESIS_BEST[m][0]],
        "centralized": True,
        "tuning": found.get("searches", "none"),
    }
    outputs = {f"{model}_{measure}".replace(" ", "_"): np.asarray(
        [[r[model][measure] for r in reps] for reps in found["scores"].values()])
        for model in MODELS for measure, _ in MEASURES}
    rows14 = [[m, row["best"], row["second"], f"{row['delta']:.3g}",
               f"{row['consistent']:.2f}", THESIS_BEST[m][0], THESIS_BEST[m][1],
               THESIS_BEST[m][2]] for m, row in t14.items()]
    rows15 = [[m, t15[m]["best"], f"{t15[m]['mean_delta']:.3g}", THESIS_TABLE_1_5[m]["best"],
               f"{THESIS_TABLE_1_5[m]['mean_delta']:.4g}"] for m in MODELS]
    where = (f"{', '.join(p['corpora'])}; {p['repetitions']} draw(s) each; centralized models"
             + ("; Hyperband-tuned" if tuned else ""))
    return AlgorithmRun(
        result=None, outputs=outputs, metrics=metrics,
        tables=[table(["measure", "best", "2nd", "∆ %", "consistent", "thesis best",
                       "thesis 2nd", "thesis ∆ %"], rows14, f"Table 1.4 analogue ({where})"),
                table(["model", "measures won", "mean ∆ %", "thesis won", "thesis mean ∆ %"],
                      rows15, "Table 1.5 analogue")],
        plots={"table_1_5": lambda: plots.grouped_bars(
            list(MODELS), {"here": [t15[m]["best"] for m in MODELS],
                           "thesis": [THESIS_TABLE_1_5[m]["best"] for m in MODELS]},
            "measures won (of 17)", f"Table 1.5: measures each model is best on ({where})")},
        audit_runs={model: CENTRALIZED for model in MODELS},
    )


FLOPS_PER_CELL = 2 * (50 + 30 + 20)
"""Flops per document × word × topic: NMF's 50 sweeps, LDA's 30 passes, ~20 Lloyd rounds."""


def estimate(inp: EstimateInput) -> Workload:
    """Centralized fits only (no protocol runs): per corpus draw, the three models' sweeps."""
    p = inp.params
    flops = sum(FLOPS_PER_CELL * s.docs * s.words * s.k for s in (
        scaled(SHAPES[n], p["scale"]) for n in p["corpora"])) * p["repetitions"]
    return Workload(simulations=0, flops=float(flops),
                    basis="centralized NMF, LDA and K-means fits on the shaped corpora")
