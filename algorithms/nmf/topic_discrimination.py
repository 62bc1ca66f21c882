"""Discriminativeness of a topic model: distances to bad outcomes, discriminability, closeness.

Thesis seed 001, §1.3.5 (Figs. 1.16–1.18; Table 1.4 rows "topic uniform", "topic average",
"doc average", "weights background", "discriminability topics / words" and "closeness").
Every measure weighs a per-topic (or per-word) score by the topic's share of the model,
``w_t = Σ_i W_it / ‖W‖₁``. Topics are the rows of ``T`` normalised to distributions over words
(a model's scale is irrelevant to these measures), ``W`` is the non-negative n × k weight matrix.
Entropies and KL divergences are in nats.

* **Distances to bad outcomes** (AlSumait et al. 2009, the thesis's [44]); higher is better:
  ``Σ_t w_t KL(T_t ‖ b)`` for the uniform topic ``b = 1/d`` ("topic uniform", equal to
  ``Σ_t w_t (log d − H(T_t))``), the mean topic ``b = (1/k) Σ_t T_t`` ("topic average"), the
  mean document ``b = (1/n) Σ_i X_i`` of the rows of X normalised to distributions ("doc
  average"); and ``Σ_t w_t KL(W_:t ‖ 1/n)`` for the column of ``W`` normalised over documents
  ("weights background", ``Σ_t w_t (log n − H(W_:t))``). Departure: Fig. 1.16 writes the mean
  topic as ``(1/k) Σ_t (WT)_t:``, which indexes rows of an n × d product by topics; the text's
  "the mean topic in our model" is what is computed.
* **Discriminability** (Chuang et al. 2012, the thesis's [45]); higher is better: words,
  ``Σ_j v_j (1 − H(T_:j)/log k)`` with ``v_j = Σ_t w_t T_tj`` and ``T_:j`` normalised over
  topics (eq. 1.31); topics, ``Σ_t w_t (1 − H(W_:t)/log n)``. Hence weights background =
  log n × topic discriminability, which is why Table 1.4 reports the same ∆ (159.37) for both.
* **Closeness** ([45]); lower is better: ``Σ_t w_t max_{t'≠t} |V_m(t) ∩ V_m(t')|`` where
  ``V_m(t)`` are the m words of largest uplift ``(1 − λ) T_tj + λ T_tj / Σ_t' T_t'j`` (Sievert
  & Shirley's relevance, λ = 0.6, eq. 1.32).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from protocols.errors import InputError

__all__ = [
    "UPLIFT_LAMBDA",
    "closeness",
    "doc_average_distance",
    "topic_average_distance",
    "topic_discriminability",
    "topic_shares",
    "topic_uniform_distance",
    "uplift_top_words",
    "weights_background_distance",
    "word_discriminability",
]

UPLIFT_LAMBDA = 0.6
"""λ of the uplift that picks a topic's top words for closeness (the thesis's optimum)."""


def _model(W: ArrayLike, T: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    W = np.asarray(W, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    if W.ndim != 2 or T.ndim != 2 or W.shape[1] != T.shape[0]:
        raise InputError(f"W {W.shape} and T {T.shape} must be (n, k) and (k, d)")
    if W.shape[0] < 2 or T.shape[0] < 2 or T.shape[1] < 2:
        raise InputError(f"need n ≥ 2 documents, k ≥ 2 topics and d ≥ 2 words; got "
                         f"n = {W.shape[0]}, k = {T.shape[0]}, d = {T.shape[1]}")
    for name, M in (("W", W), ("T", T)):
        if not np.all(np.isfinite(M)) or M.min() < 0:
            raise InputError(f"{name} must hold finite, non-negative entries")
    if np.any(T.sum(axis=1) <= 0):
        raise InputError("every topic (row of T) needs a positive sum")
    if W.sum() <= 0:
        raise InputError("W is all zero: no topic has any weight")
    return W, T


def _rows(M: np.ndarray) -> np.ndarray:
    s = M.sum(axis=1, keepdims=True)
    return np.divide(M, s, out=np.zeros_like(M), where=s > 0)


def _entropy_rows(P: np.ndarray) -> np.ndarray:
    return -np.sum(np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0), axis=1)


def _kl_rows(P: np.ndarray, q: np.ndarray) -> np.ndarray:
    """KL(P_t ‖ q) per row; ∞ where P_t puts mass on a word q gives none."""
    bad = np.any((P > 0) & (q[None, :] <= 0), axis=1)
    logs = np.where(P > 0, np.log(np.where(P > 0, P, 1.0) / np.where(q > 0, q, 1.0)), 0.0)
    out = np.sum(P * logs, axis=1)
    out[bad] = np.inf
    return out


def topic_shares(W: ArrayLike) -> np.ndarray:
    """``w_t = Σ_i W_it / ‖W‖₁``: each topic's share of the model."""
    W = np.asarray(W, dtype=np.float64)
    return W.sum(axis=0) / W.sum()


def topic_uniform_distance(W: ArrayLike, T: ArrayLike) -> float:
    """``Σ_t w_t KL(T_t ‖ uniform)``; higher is better."""
    W, T = _model(W, T)
    P = _rows(T)
    return float(topic_shares(W) @ (np.log(T.shape[1]) - _entropy_rows(P)))


def topic_average_distance(W: ArrayLike, T: ArrayLike) -> float:
    """``Σ_t w_t KL(T_t ‖ mean topic)``; higher is better."""
    W, T = _model(W, T)
    P = _rows(T)
    return float(topic_shares(W) @ _kl_rows(P, P.mean(axis=0)))


def doc_average_distance(W: ArrayLike, T: ArrayLike,
                         X: ArrayLike | sp.spmatrix | sp.sparray) -> float:
    """``Σ_t w_t KL(T_t ‖ mean document of X)``; higher is better (∞ if a topic holds a word
    no document of X contains)."""
    W, T = _model(W, T)
    X = sp.csr_matrix(X) if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
    if X.shape[1] != T.shape[1]:
        raise InputError(f"X has {X.shape[1]} words; the topics have d = {T.shape[1]}")
    lengths = np.asarray(X.sum(axis=1)).ravel()
    if np.any(lengths <= 0) or (X.data.size and X.data.min() < 0):
        raise InputError("every document of X needs non-negative counts and a positive sum")
    mean_doc = np.asarray((sp.diags(1.0 / lengths) @ X).mean(axis=0)).ravel()
    return float(topic_shares(W) @ _kl_rows(_rows(T), mean_doc))


def weights_background_distance(W: ArrayLike, T: ArrayLike) -> float:
    """``Σ_t w_t KL(W_:t ‖ 1/n)``, columns of W normalised over documents; higher is better."""
    W, _ = _model(W, T)
    cols = _rows(W.T)
    return float(topic_shares(W) @ (np.log(W.shape[0]) - _entropy_rows(cols)))


def topic_discriminability(W: ArrayLike, T: ArrayLike) -> float:
    """``Σ_t w_t (1 − H(W_:t)/log n)``; higher is better."""
    W, T = _model(W, T)
    return weights_background_distance(W, T) / float(np.log(W.shape[0]))


def word_discriminability(W: ArrayLike, T: ArrayLike) -> float:
    """``Σ_j v_j (1 − H(T_:j)/log k)``, ``v_j = Σ_t w_t T_tj`` (eq. 1.31); higher is better."""
    W, T = _model(W, T)
    P = _rows(T)
    v = topic_shares(W) @ P
    disc = 1.0 - _entropy_rows(_rows(P.T)) / np.log(T.shape[0])
    return float(v @ disc)


def uplift_top_words(T: ArrayLike, m: int, lam: float = UPLIFT_LAMBDA) -> np.ndarray:
    """The ``m`` words of largest uplift per topic (eq. 1.32), ties to the lower index."""
    T = np.asarray(T, dtype=np.float64)
    if not 1 <= m <= T.shape[1]:
        raise InputError(f"m = {m} must lie in [1, d = {T.shape[1]}]")
    if not 0.0 <= lam <= 1.0:
        raise InputError(f"λ = {lam!r} must lie in [0, 1]")
    P = _rows(T)
    col = P.sum(axis=0)
    lift = (1.0 - lam) * P + lam * np.divide(P, col, out=np.zeros_like(P), where=col > 0)
    return np.argsort(-lift, axis=1, kind="stable")[:, :m]


def closeness(W: ArrayLike, T: ArrayLike, m: int = 10, lam: float = UPLIFT_LAMBDA) -> float:
    """``Σ_t w_t max_{t'≠t} |V_m(t) ∩ V_m(t')|``; lower is better."""
    W, T = _model(W, T)
    words = uplift_top_words(T, m, lam)
    k = T.shape[0]
    member = np.zeros((k, T.shape[1]))
    member[np.arange(k)[:, None], words] = 1.0
    shared = member @ member.T
    np.fill_diagonal(shared, -1.0)
    return float(topic_shares(W) @ shared.max(axis=1))
