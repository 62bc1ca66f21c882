"""Attacks: what a coalition can compute from its own logged views.

An attack reads only a :class:`~parties.view.Coalition` — its members' inputs, the seeds they
hold, the messages they received and the outputs declared to them — and returns an estimate of
something private. The simulator scores it against the truth it alone knows
(:meth:`Attack.score`), so a scenario can report how much a coalition recovers.

``dsanls_recovery`` — Theorem 3 of Qian et al. (seed 004, §4.1)
    In federated ("modified") DSANLS every node receives the All-Reduced sketched matrix
    Y^t = MS^t (m×d) in every iteration, and every node knows the seed from which all S^t are
    drawn. "If we view M·S = MS as a system of linear equations with a variable matrix M ...
    each row of M can be solved ... given a sufficient number of (S, MS) pairs." The attack
    (digest §5.3):

    * regenerates S^1..S^T from the seed in the coalition's declared outputs
      (:func:`algorithms.nmf.dsanls.sketches.shared_seed`) and the public configuration in its
      inputs;
    * subtracts the members' own columns, R^t = Y^t − Σ_{r∈C} M_{:J_r}S^t_{J_r} = M_{:Ū}S^t_{Ū}
      with Ū the n_u columns the coalition does not hold;
    * solves M_{:Ū}[S^1_{Ū} … S^T_{Ū}] = [R^1 … R^T] by least squares (minimum norm).

    Column j of M is determined exactly when e_j lies in the column space of the stacked
    sketches (the projector's diagonal entry is 1). With Gaussian sketches that is every
    column, with probability 1, once T·d ≥ n_u (⌈n_u/d⌉ iterations) and no column before; with
    subsampling sketches each Y^t is d scaled columns of M, so the columns drawn so far are
    known from the first iteration on and the rest are not. A single node suffices (it needs
    no collusion); a larger coalition needs fewer iterations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.nmf.dsanls.dsanls import DsanlsConfig
from algorithms.nmf.dsanls.sketches import SKETCH_S, SketchStream
from parties.view import Coalition
from protocols.errors import InputError

DETERMINED_TOL = 1e-8


@dataclass(frozen=True)
class Recovery:
    """What an attack recovered.

    Attributes
    ----------
    estimate : ndarray
        The estimate of the target (for ``dsanls_recovery``: M, m×n).
    determined : ndarray of bool
        Which parts are determined exactly by the view (for ``dsanls_recovery``: M's columns).
    details : dict
        Attack-specific figures (equations and unknowns, iterations used, rank).
    """

    estimate: np.ndarray
    determined: np.ndarray
    details: dict[str, Any]

    def relative_error(self, truth: np.ndarray) -> float:
        """‖estimate − truth‖_F / ‖truth‖_F."""
        norm = float(np.linalg.norm(truth))
        return float(np.linalg.norm(self.estimate - truth)) / (norm if norm > 0 else 1.0)


@dataclass(frozen=True)
class Attack:
    """A named attack: ``run(coalition) -> Recovery`` and the truth it is scored against.

    ``target(data)`` maps the scenario's pooled data (rows are samples) to what the attack
    estimates; only the simulator calls it.
    """

    name: str
    run: Callable[[Coalition], Recovery]
    target: Callable[[Any], np.ndarray]
    summary: str = ""

    def score(self, coalition: Coalition, data: Any) -> tuple[Recovery, float]:
        """Run the attack on the coalition's views and score it against the truth."""
        recovery = self.run(coalition)
        return recovery, recovery.relative_error(self.target(data))


def _dsanls_config(coalition: Coalition) -> DsanlsConfig:
    configs = [view.inputs.get("config") for view in coalition.views.values()]
    if not configs or not all(isinstance(c, DsanlsConfig) for c in configs):
        raise InputError(
            "attack 'dsanls_recovery' reads federated DSANLS's All-Reduced sketches MS^t, which "
            f"the views of coalition {list(coalition.members)} do not hold; run algorithm "
            "'dsanls' with setting = 'federated'"
        )
    config = configs[0]
    if config.setting != "federated":
        raise InputError(
            f"attack 'dsanls_recovery' needs setting = 'federated' (the general setting never "
            f"All-Reduces MS^t); this run used setting = {config.setting!r}"
        )
    return config


def _declared(coalition: Coalition, label: str) -> list[Any]:
    """The values a member was declared under ``label``, in order (all members agree)."""
    member = coalition.members[0]
    return [value for _, lab, value in coalition.views[member].outputs if lab == label]


def dsanls_recovery(coalition: Coalition) -> Recovery:
    """Theorem 3: recover M from the coalition's views of a federated DSANLS run.

    Parameters
    ----------
    coalition : Coalition
        The colluding nodes' views (one node is enough).

    Returns
    -------
    Recovery
        ``estimate`` (m×n), ``determined`` (n,) — the columns the views fix exactly (the
        coalition's own columns included) — and ``details``: ``iterations`` (T pairs used),
        ``unknown_columns`` (n_u), ``equations_per_row`` (T·d) and ``rank`` of the stacked
        sketches restricted to the unknown columns.
    """
    config = _dsanls_config(coalition)
    seeds = _declared(coalition, "sketch_seed")
    sketched = _declared(coalition, "MS")
    if len(seeds) != 1:
        raise InputError(f"the views hold {len(seeds)} sketch seeds; a DSANLS run has one")
    m, n = config.n_features, config.n_samples
    d = config.sketch_d
    stream = SketchStream(int(seeds[0]), config.sketch)
    own = np.zeros(n, dtype=bool)
    own_blocks = []
    for member in coalition.members:
        lo, hi = config.columns[member]
        X = coalition.views[member].inputs["X"]
        block = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64).T
        own[lo:hi] = True
        own_blocks.append((lo, hi, block))
    unknown = np.flatnonzero(~own)
    lhs, rhs = [], []
    for t, Y in enumerate(sketched):
        S = stream.draw(SKETCH_S, t, n, d).dense()
        R = np.array(Y, dtype=np.float64, copy=True)
        for lo, hi, block in own_blocks:
            R -= block @ S[lo:hi]
        lhs.append(S[unknown])  # n_u × d
        rhs.append(R)  # m × d
    estimate = np.zeros((m, n))
    for lo, hi, block in own_blocks:
        estimate[:, lo:hi] = block
    determined = own.copy()
    rank = 0
    if lhs and unknown.size:
        S_all = np.hstack(lhs)  # n_u × T·d
        R_all = np.hstack(rhs)  # m × T·d
        solution, _, rank, _ = np.linalg.lstsq(S_all.T, R_all.T, rcond=None)
        estimate[:, unknown] = solution.T
        # column j is fixed iff e_j lies in the column space of S_all: P_jj = 1
        Q, s, _ = np.linalg.svd(S_all, full_matrices=False)
        basis = Q[:, s > s.max(initial=0.0) * max(S_all.shape) * np.finfo(float).eps]
        determined[unknown] = np.sum(basis**2, axis=1) > 1.0 - DETERMINED_TOL
    return Recovery(estimate, determined, {
        "iterations": len(sketched),
        "unknown_columns": int(unknown.size),
        "equations_per_row": len(sketched) * d,
        "rank": int(rank),
        "columns_determined": int(determined.sum()),
    })


def _data_transposed(data: Any) -> np.ndarray:
    """M = Xᵀ: seed 004's orientation of the project's data (rows are samples)."""
    return np.asarray(data.todense() if sp.issparse(data) else data, dtype=np.float64).T


ATTACKS: dict[str, Attack] = {
    "dsanls_recovery": Attack(
        "dsanls_recovery", dsanls_recovery, _data_transposed,
        "Theorem 3 of seed 004: M from federated DSANLS's (S^t, MS^t) pairs",
    ),
}


def get_attack(name: str) -> Attack:
    """The attack called ``name``, or an InputError listing the known ones."""
    if name not in ATTACKS:
        raise InputError(f"attack {name!r} is unknown; use one of {', '.join(sorted(ATTACKS))}")
    return ATTACKS[name]
