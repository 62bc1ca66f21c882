"""Topic-model quality: UMass and NPMI coherence, perplexity and held-out Frobenius fit.

Thesis seed 001, §1.5 (the measures of Tables 1.4 / 1.5), as the thesis defines them:

* **UMass coherence** (Mimno et al. 2011; thesis eq. 1.27): for a topic with top words
  ``w_1, …, w_M`` (most probable first), ``C(t) = Σ_{m=2}^{M} Σ_{l<m} log((D(w_m, w_l) + 1) /
  D(w_l))``, where ``D(w)`` counts the documents containing ``w`` and ``D(w, w')`` those
  containing both, on the training documents. Higher is better (every term is ≤ 0 when the
  +1 is dropped; with it a term is at most ``log(1 + 1/D(w_l))``). gensim's ``u_mass`` differs
  in two ways the caller can reproduce: it adds ε = 10⁻¹² instead of 1 (``smoothing``) and
  averages the ``M(M−1)/2`` pair scores instead of summing them (divide by that count).
* **Expected coherence of a solution** (thesis eq. 1.28): ``Σ_t C(t) · Σ_i W_it / n`` — each
  topic weighted by the share of the collection it explains (rows of W on Δ_k).
* **NPMI coherence** (Bouma 2009; Röder et al. 2015's C_NPMI, Newman's PMI normalised): the mean
  over the ``M(M−1)/2`` top-word pairs of ``log((P(w_i, w_j) + ε) / (P(w_i) P(w_j))) /
  −log(P(w_i, w_j) + ε)``, probabilities as document frequencies (boolean documents; gensim's
  ``c_npmi`` uses sliding windows over the token sequence, which a bag of words does not
  have). In [−1, 1]; higher is better.
* **Perplexity** (thesis Fig. 1.12, after Wallach et al. [16]): ``exp(−L̂ / ‖E‖₁)`` with
  ``L̂ = Σ_m Σ_j E_mj log((1/n) Σ_i W_i T_j)`` — every unseen document scored under the average
  training mixture, with no weights fitted to it. Lower is better. On term-frequency rows every
  document weighs the same; on counts every word does. NMF's topics are sparse, so the
  function can mix in the uniform distribution (``uniform_mix``) to keep the score finite.
* **Log-likelihood** (thesis Figs. 1.10 / A.7, A.10): ``Σ_ij X_ij log p_ij / ‖X‖₁`` — the mean
  log-probability per word of the documents ``X`` (counts) under each document's own mixture
  ``p_i = W_i T`` normalised to a distribution (in-sample: the training weights; out-of-sample:
  weights fitted to the unseen documents); higher is better. Per word rather than the thesis's
  total, so that corpora of different sizes compare; ``uniform_mix`` as for perplexity.
* **Out-of-sample Fro2** (thesis Fig. 1.11): ``‖E − W_E T‖_F²`` with ``W_E`` fitted to the
  unseen documents with T fixed (:func:`algorithms.nmf.rri.fit_weights`).

Top words are the ``M`` largest entries of a topic row (ties broken by the lower word index).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from algorithms.nmf.rri import fit_weights
from algorithms.nmf.rri_steps import RRIParams
from protocols.errors import InputError

__all__ = [
    "DEFAULT_TOP_WORDS",
    "expected_coherence",
    "heldout_frobenius",
    "loglikelihood",
    "npmi_coherence",
    "perplexity",
    "top_words",
    "topic_recovery",
    "umass_coherence",
]

DEFAULT_TOP_WORDS = 10
"""M, the top words per topic that coherence looks at (Newman's and gensim's default)."""


def _topics(T: ArrayLike) -> np.ndarray:
    T = np.asarray(T, dtype=np.float64)
    if T.ndim != 2 or T.shape[0] < 1 or T.shape[1] < 2:
        raise InputError(f"topics T must be a (k, d) matrix with k ≥ 1, d ≥ 2; got {T.shape}")
    if not np.all(np.isfinite(T)):
        raise InputError("topics T hold NaN or infinite entries")
    return T


def top_words(T: ArrayLike, n_top: int = DEFAULT_TOP_WORDS) -> np.ndarray:
    """The ``n_top`` most probable words of each topic, most probable first.

    Returns
    -------
    ndarray of int, shape (k, n_top)
    """
    T = _topics(T)
    if not 2 <= n_top <= T.shape[1]:
        raise InputError(f"n_top = {n_top} must lie in [2, d = {T.shape[1]}]")
    order = np.argsort(-T, axis=1, kind="stable")
    return order[:, :n_top]


def _occurrence(X: ArrayLike | sp.spmatrix | sp.sparray, d: int) -> sp.csc_matrix:
    """Boolean documents × words: which words each document contains."""
    M = sp.csc_matrix(X) if sp.issparse(X) else sp.csc_matrix(np.asarray(X, dtype=np.float64))
    if M.shape[1] != d:
        raise InputError(f"documents have {M.shape[1]} words; the topics have d = {d}")
    if M.shape[0] < 1:
        raise InputError("no documents to count co-occurrences in")
    data = M.data
    if not np.all(np.isfinite(data)) or (data.size and data.min() < 0):
        raise InputError("documents must hold finite, non-negative word counts or frequencies")
    M = (M > 0).astype(np.float64)
    return sp.csc_matrix(M)


def _document_frequencies(X: ArrayLike | sp.spmatrix | sp.sparray,
                          words: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray, int]:
    """D(w) per top word (k, M) and D(w, w') per pair (k, M, M), and the number of documents."""
    occ = _occurrence(X, d)
    k, m = words.shape
    single = np.empty((k, m))
    pair = np.empty((k, m, m))
    for t in range(k):
        cols = occ[:, words[t]]
        co = (cols.T @ cols).toarray()
        single[t] = np.diag(co)
        pair[t] = co
    return single, pair, occ.shape[0]


def umass_coherence(X: ArrayLike | sp.spmatrix | sp.sparray, T: ArrayLike,
                    n_top: int = DEFAULT_TOP_WORDS, smoothing: float = 1.0) -> np.ndarray:
    """UMass coherence of each topic on the documents ``X`` (thesis eq. 1.27).

    Parameters
    ----------
    X : array_like or sparse, shape (n, d)
        Training documents (counts or frequencies; only which entries are > 0 matters).
    T : array_like, shape (k, d)
        Topics (rows; larger entries are more probable words).
    n_top : int
        M, the top words per topic.
    smoothing : float
        Added to each co-document count (Mimno's 1; gensim's 10⁻¹²). Must be > 0.

    Returns
    -------
    ndarray, shape (k,)
        ``Σ_{m≥2} Σ_{l<m} log((D(w_m, w_l) + smoothing) / D(w_l))`` per topic. A top word
        that no document contains contributes as if it occurred in one.
    """
    if not smoothing > 0:
        raise InputError(f"smoothing = {smoothing!r} must be > 0")
    T = _topics(T)
    words = top_words(T, n_top)
    single, pair, _ = _document_frequencies(X, words, T.shape[1])
    lower = np.tril(np.ones((n_top, n_top), dtype=bool), k=-1)  # (m, l) with l < m
    ratio = (pair + smoothing) / np.maximum(single, 1.0)[:, None, :]
    return np.sum(np.where(lower, np.log(ratio), 0.0), axis=(1, 2))


def npmi_coherence(X: ArrayLike | sp.spmatrix | sp.sparray, T: ArrayLike,
                   n_top: int = DEFAULT_TOP_WORDS, eps: float = 1e-12) -> np.ndarray:
    """NPMI coherence of each topic, document co-occurrence as context.

    Returns
    -------
    ndarray, shape (k,)
        The mean over top-word pairs ``i < j`` of ``log((P_ij + eps) / (P_i P_j)) /
        −log(P_ij + eps)`` with ``P`` document frequencies over ``n`` documents; a pair of
        words each in every document scores 1 (``−log P_ij = 0``: perfectly associated), a word
        no document contains scores its pairs −1.
    """
    if not 0 < eps < 1:
        raise InputError(f"eps = {eps!r} must lie in (0, 1)")
    T = _topics(T)
    words = top_words(T, n_top)
    single, pair, n = _document_frequencies(X, words, T.shape[1])
    p_i = single / n
    p_ij = pair / n
    upper = np.triu(np.ones((n_top, n_top), dtype=bool), k=1)
    joint = p_ij + eps
    marg = p_i[:, :, None] * p_i[:, None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(joint) - np.log(marg)
        npmi = pmi / -np.log(joint)
    npmi = np.where(marg == 0, -1.0, npmi)
    npmi = np.where(pair == n, 1.0, npmi)
    return np.sum(np.where(upper, npmi, 0.0), axis=(1, 2)) / upper.sum()


def expected_coherence(per_topic: ArrayLike, W: ArrayLike) -> float:
    """Coherence of a solution: each topic's weighted by its share ``Σ_i W_it / n`` (eq. 1.28).

    ``W`` (n, k) holds the training documents' topic weights (rows on Δ_k in the topic form).
    """
    c = np.asarray(per_topic, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != c.shape[0] or W.shape[0] < 1:
        raise InputError(f"W has shape {W.shape}; it must be (n ≥ 1, k = {c.shape[0]})")
    return float(c @ W.mean(axis=0))


def perplexity(E: ArrayLike | sp.spmatrix | sp.sparray, W: ArrayLike, T: ArrayLike,
               uniform_mix: float = 0.0) -> float:
    """Held-out perplexity of the unseen documents ``E`` (thesis Fig. 1.12); lower is better.

    Parameters
    ----------
    E : array_like or sparse, shape (n_test, d)
        Unseen documents: counts (each word weighs the same) or term frequencies (each
        document weighs the same).
    W : array_like, shape (n, k)
        The *training* documents' weights; their average mixture scores every test word.
    T : array_like, shape (k, d)
        Topics.
    uniform_mix : float
        λ in [0, 1): score under ``(1 − λ) p + λ/d`` instead of ``p``. NMF's topics are sparse,
        so an unseen document nearly always holds a word of probability 0 and the thesis's
        definition (λ = 0) is infinite; a small λ keeps the comparison finite.

    Returns
    -------
    float
        ``exp(−Σ_mj E_mj log p_j / ‖E‖₁)`` with ``p = mean_i(W_i) T`` normalised to sum 1
        (and mixed with the uniform distribution by ``uniform_mix``). Infinite if a test word
        has zero probability under the model.
    """
    if not 0.0 <= uniform_mix < 1.0:
        raise InputError(f"uniform_mix = {uniform_mix!r} must lie in [0, 1)")
    T = _topics(T)
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] != T.shape[0] or W.shape[0] < 1:
        raise InputError(f"W has shape {W.shape}; it must be (n ≥ 1, k = {T.shape[0]})")
    p = W.mean(axis=0) @ T
    if not np.all(p >= 0) or p.sum() <= 0:
        raise InputError("the mixture mean(W) T must be non-negative with a positive sum")
    p = (1.0 - uniform_mix) * (p / p.sum()) + uniform_mix / p.size
    mass = np.asarray(E.sum(axis=0)).ravel() if sp.issparse(E) else np.asarray(
        E, dtype=np.float64).sum(axis=0)
    if mass.shape != (T.shape[1],):
        raise InputError(f"E has {mass.shape[0]} words; the topics have d = {T.shape[1]}")
    total = float(mass.sum())
    if not total > 0:
        raise InputError("the held-out documents E are empty (‖E‖₁ = 0)")
    seen = mass > 0
    if np.any(p[seen] == 0):
        return float("inf")
    return float(np.exp(-np.sum(mass[seen] * np.log(p[seen])) / total))


def heldout_frobenius(E: ArrayLike | sp.spmatrix | sp.sparray, T: ArrayLike,
                      params: RRIParams | None = None) -> float:
    """Out-of-sample Fro2 (thesis Fig. 1.11): ``‖E − W_E T‖_F²``, ``W_E`` fitted with T fixed."""
    T = _topics(T)
    W_E = fit_weights(E, T, params=params)
    dense = E.toarray() if sp.issparse(E) else np.asarray(E, dtype=np.float64)
    return float(np.sum((dense - W_E @ T) ** 2))


def topic_recovery(true_topics: np.ndarray, topics: np.ndarray) -> float:
    """Mean cosine similarity of the best one-to-one matching of learned to planted topics.

    The matching is the assignment problem on the (k, k) cosines (Hungarian method, scipy's
    ``linear_sum_assignment``). scipy.optimize is imported here, when a run with planted
    topics asks for it: importing it costs every rank of an MPI job ~0.2 s at its start.
    """
    from scipy.optimize import linear_sum_assignment

    a = true_topics / np.maximum(np.linalg.norm(true_topics, axis=1, keepdims=True), 1e-300)
    b = topics / np.maximum(np.linalg.norm(topics, axis=1, keepdims=True), 1e-300)
    cos = a @ b.T
    rows, cols = linear_sum_assignment(-cos)
    return float(cos[rows, cols].mean())


def loglikelihood(X: ArrayLike | sp.spmatrix | sp.sparray, W: ArrayLike, T: ArrayLike,
                  uniform_mix: float = 0.0) -> float:
    """Mean log-probability per word of the documents ``X`` under their own mixtures ``W_i T``
    (rows normalised, mixed with the uniform distribution by ``uniform_mix``); higher is better.
    ``-inf`` if a word of X has probability 0 under its document's mixture."""
    if not 0.0 <= uniform_mix < 1.0:
        raise InputError(f"uniform_mix = {uniform_mix!r} must lie in [0, 1)")
    T = _topics(T)
    W = np.asarray(W, dtype=np.float64)
    C = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
    if W.ndim != 2 or W.shape != (C.shape[0], T.shape[0]) or C.shape[1] != T.shape[1]:
        raise InputError(f"X {C.shape}, W {W.shape} and T {T.shape} must be (n, d), (n, k), "
                         "(k, d)")
    total = float(C.sum())
    if not total > 0 or (C.data.size and C.data.min() < 0):
        raise InputError("X must hold non-negative counts with a positive sum")
    C = C.tocoo()
    p = np.einsum("nk,nk->n", W[C.row], T[:, C.col].T)
    norm = W @ T.sum(axis=1)
    if np.any(norm[C.row] <= 0):
        return float("-inf")
    p = (1.0 - uniform_mix) * p / norm[C.row] + uniform_mix / T.shape[1]
    if np.any(p <= 0):
        return float("-inf")
    return float(np.sum(C.data * np.log(p)) / total)
