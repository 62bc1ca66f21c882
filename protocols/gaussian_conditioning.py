"""Gaussian conditioning and whitening: the linear algebra of a randomized functionality's
simulator (:mod:`protocols.cape_simulator`).

A CAPE release is a linear form in independent Gaussian noise latents; what a coalition holds
is another set of forms. These functions give the law of the releases given what is held
(:func:`condition`, :func:`conditional_variance`, a pseudo-inverse for exact constraints) and
the residuals that are standard normal exactly when the received values follow that law
(:func:`whiten`: marginal, and sequential — each message given the earlier ones).
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np


def whiten(keys: list[Hashable], y: np.ndarray, mean: np.ndarray, before: np.ndarray,
            cov: np.ndarray, var_before: np.ndarray,
            tol: float) -> tuple[dict[Hashable, np.ndarray], dict[Hashable, np.ndarray]]:
    """Marginal and sequential residuals of the received values ``y`` (R × m, every column
    with covariance ``cov`` across the R messages):
    :meth:`protocols.cape_simulator.CapeSimulator.residuals`."""
    marginal: dict[Hashable, np.ndarray] = {}
    joint: dict[Hashable, np.ndarray] = {}
    kept: list[int] = []
    floor = 1e-9 * max(float(np.max(np.abs(np.diag(cov)), initial=0.0)), 1e-300)
    for i, key in enumerate(keys):
        if kept:
            sub = cov[np.ix_(kept, kept)]
            coef = np.linalg.solve(sub, cov[kept, i])
            cm = mean[i] + coef @ (y[kept] - mean[kept])
            var = float(cov[i, i] - cov[i, kept] @ coef)
        else:
            cm, var = mean[i], float(cov[i, i])
        if var > floor:
            joint[key] = (y[i] - cm) / np.sqrt(var)
            kept.append(i)
        else:
            joint[key] = np.full(int(np.sum(np.abs(y[i] - cm) > tol)), np.inf)
        if var_before[i] > floor:
            marginal[key] = (y[i] - before[i]) / np.sqrt(var_before[i])
        else:
            marginal[key] = np.full(int(np.sum(np.abs(y[i] - before[i]) > tol)), np.inf)
    return marginal, joint


def condition(forms: np.ndarray, known: np.ndarray,
               sd2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gain and covariance of the forms' values given the known forms' (Gaussian conditioning,
    a pseudo-inverse for exact constraints), independent latents with variances ``sd2``."""
    c_rr = (forms * sd2) @ forms.T
    if len(known) == 0:
        return np.zeros((len(forms), 0)), c_rr
    c_rk = (forms * sd2) @ known.T
    c_kk = (known * sd2) @ known.T
    gain = c_rk @ np.linalg.pinv(c_kk, rcond=1e-10, hermitian=True)
    cov = c_rr - gain @ c_rk.T
    return gain, (cov + cov.T) / 2.0


def conditional_variance(target: np.ndarray, forms: np.ndarray, sd2: np.ndarray) -> float:
    """Var(target · z | forms · z) for independent z with variances ``sd2``."""
    t = target * np.sqrt(sd2)
    if forms.size == 0:
        return float(t @ t)
    F = forms * np.sqrt(sd2)
    c = F @ t
    return float(t @ t - c @ np.linalg.pinv(F @ F.T, rcond=1e-10, hermitian=True) @ c)
