"""Syn-SD: synchronous secure distributed NMF (Qian et al., seed 004, §4.2, Algorithm 4).

Node r holds M_r = M_{:J_r} (its samples; the project's rows of X, transposed at the boundary —
:mod:`algorithms.nmf.dsanls.secure_nmf`), a local copy U_(r) of U and its private V_r. Node r's
program::

    1  U_(r) ← U^0 (public start), V_r ← V^0_r
    2  for t_1 = 0..T_1 − 1:
    3    for t_2 = 1..T_2:                     t = t_1·T_2 + t_2
    5      U_(r) ← update(M_r, U_(r), V_r)
    6      V_r   ← update(M_r, U_(r), V_r)     (the printed U_(i) is U_(r), digest §7.4 item 63)
    7    All-Reduce: U_(r) ← Σ_j U_(j) / N
    8  return U_(r), V_r

Departure: line 1 initialises every U_(r) to one public U^0 (the paper lets each node pick its
own; the first average makes them equal anyway), so that all algorithms of the family start
from the same point in the experiments.

What a node learns (digest §7.4 item 66): the All-Reduce is a SecureSum
(:func:`protocols.all_reduce.all_reduce`) whose declared output, ``U_average``, is the average of
the local copies after every outer iteration — nothing else reaches a node. With N = 2 that
average and the node's own copy give the other node's copy exactly (2·average − own); the
paper's (N−1)-privacy claim holds only with the averages counted as outputs. With
``allreduce = "plain"`` every node sees every copy.

Communication per node per outer iteration: one All-Reduce of m·k numbers — (N − 1)mk elements
sent with the PRG SecureSum; nothing inside the inner loop.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.nmf.dsanls.sanls import LocalWork
from algorithms.nmf.dsanls.secure_nmf import (
    SecureNmfConfig,
    SecureNode,
    average_copies,
    node_matrix,
    u_step,
    v_step,
)
from protocols.context import PartyContext


def syn_sd(
    ctx: PartyContext, X: Any, U0: np.ndarray, V0: np.ndarray, config: SecureNmfConfig
) -> Generator[Any, Any, SecureNode]:
    """Algorithm 4, node r's program.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (|J_r|, m)
        The node's samples: M_r = Xᵀ.
    U0 : ndarray of shape (m, k)
        The public start U^0.
    V0 : ndarray of shape (|J_r|, k)
        The node's start V^0_r.
    config : SecureNmfConfig
        Public parameters; ``sketch_on`` must be "" (no sketches).

    Returns
    -------
    SecureNode
        U_(r) (the final average), V_r and a snapshot after every outer All-Reduce.
    """
    M_r = node_matrix(X, config, ctx.party)
    U = np.array(U0, dtype=np.float64, copy=True)
    V = np.array(V0, dtype=np.float64, copy=True)
    work = LocalWork(config.seconds_per_flop)
    node = SecureNode(U, V)
    t = 0
    for _ in range(config.outer):
        for _ in range(config.inner):
            t += 1
            U = u_step(config, U, V, M_r, t, work)
            V = v_step(config, V, M_r, t, work, U=U)
        U = yield from average_copies(ctx, config, U, V, node, work)
    node.U, node.V, node.flops, node.updates = U, V, work.total, t
    return node
