"""Syn-SSD: synchronous secure sketched distributed NMF (Qian et al., seed 004, §4.2, Alg. 5).

Node r holds M_r = M_{:J_r}, a local copy U_(r) and its private V_r (orientation and the local
updates: :mod:`algorithms.nmf.dsanls.secure_nmf`). Node r's program, ``sketch_on = "uv"``::

    1   U_(r) ← U^0 (public), V_r ← V^0_r; the sketch seed is broadcast (as Algorithm 2)
    2   for t_1 = 0..T_1 − 1:
    3     for t_2 = 1..T_2:                             t = t_1·T_2 + t_2
    5–6     S_1 ∈ R^{|J_r|×d}; U_(r) ← update on min ‖M_rS_1 − U(V_rᵀS_1)‖
    7       S_2 ∈ R^{d'×m}, the same at every node
    8       All-Reduce: SU ← Σ_j S_2U_(j) / N                   (d'×k)
    9       V_r ← update on min ‖S_2M_r − SU·V_rᵀ‖
    10    All-Reduce: U_(r) ← Σ_j U_(j) / N
    11  return U_(r), V_r

The experiments' variants (§5.1; digest §7.4, "variant naming"): ``sketch_on = "v"`` is
Syn-SSD-V — lines 5–6 in Algorithm 4 (a sketched U update, V updated from the node's own
U_(r), no inner All-Reduce); ``"u"`` is Syn-SSD-U — lines 7–9 with an unsketched U update;
``"uv"`` is Algorithm 5 as printed.

S_2 is drawn by every node from the shared seed, so the sketches S_2U_(j) can be averaged;
S_1 multiplies only the node's own data and is drawn from the shared seed and the node's id
(digest §7.4 item 64: one S_1 for all nodes is impossible when the |J_r| differ).

What a node learns: the declared outputs ``SU_average`` (every inner iteration, "u" and "uv")
and ``U_average`` (every outer iteration), through SecureSum. With N = 2 both reveal the other
node's (sketched) copy exactly. Communication per node: an All-Reduce of d'·k numbers per inner
iteration ("u", "uv") and of m·k per outer iteration.
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
from algorithms.nmf.dsanls.sketches import SKETCH_S1, SKETCH_S_PRIME, SketchStream, shared_seed
from protocols.all_reduce import all_reduce
from protocols.context import PartyContext
from protocols.errors import InputError


def syn_ssd(
    ctx: PartyContext, X: Any, U0: np.ndarray, V0: np.ndarray, config: SecureNmfConfig
) -> Generator[Any, Any, SecureNode]:
    """Algorithm 5 (and its -U, -V variants), node r's program.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (|J_r|, m)
        The node's samples: M_r = Xᵀ.
    U0 : ndarray of shape (m, k)
        The public start U^0.
    V0 : ndarray of shape (|J_r|, k)
        The node's start V^0_r.
    config : SecureNmfConfig
        Public parameters; ``sketch_on`` is "u", "v" or "uv".

    Returns
    -------
    SecureNode
        U_(r) (the final average), V_r and a snapshot after every outer All-Reduce.
    """
    if config.sketch_on not in ("u", "v", "uv"):
        raise InputError(f"Syn-SSD sketches U, V or both: sketch_on = {config.sketch_on!r} "
                         "must be 'u', 'v' or 'uv' (Syn-SD sketches nothing)")
    r = ctx.party
    M_r = node_matrix(X, config, r)
    m, n_r = M_r.shape
    U = np.array(U0, dtype=np.float64, copy=True)
    V = np.array(V0, dtype=np.float64, copy=True)
    reduce = {"method": config.allreduce, "variant": config.variant, "average": True}
    d = config.d_for(r) if "v" in config.sketch_on else 0
    d_prime = config.sketch_d_prime if "u" in config.sketch_on else 0
    seed = yield from shared_seed(ctx)
    stream = SketchStream(seed, config.sketch)
    work = LocalWork(config.seconds_per_flop)
    node = SecureNode(U, V)
    t = 0
    for _ in range(config.outer):
        for _ in range(config.inner):
            t += 1
            S1 = (stream.draw(SKETCH_S1, t, n_r, d, node=r)
                  if "v" in config.sketch_on else None)
            U = u_step(config, U, V, M_r, t, work, S1)
            if "u" in config.sketch_on:
                S2 = stream.draw(SKETCH_S_PRIME, t, m, d_prime)  # S_2 = this ᵀ
                work.add(S2.draw_flops + S2.apply_flops(config.k, m))
                yield from work.spend()
                SU = yield from all_reduce(ctx, S2.apply(U.T).T, output="SU_average", **reduce)
                V = v_step(config, V, M_r, t, work, S2=S2, SU=SU)
            else:
                V = v_step(config, V, M_r, t, work, U=U)
        U = yield from average_copies(ctx, config, U, V, node, work)
    node.U, node.V, node.flops, node.updates = U, V, work.total, t
    return node
