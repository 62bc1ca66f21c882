"""Asyn-SD and Asyn-SSD: asynchronous secure distributed NMF (Qian et al., seed 004, §4.3,
Algorithms 6 and 7).

A server (``role = "server"``, the id after the N data holders) keeps U; clients r = 0..N−1
hold M_r = M_{:J_r} (orientation and local updates: :mod:`algorithms.nmf.dsanls.secure_nmf`) and
exchange only with the server, with no barrier.

Server (Algorithm 6), parameter ρ > 0::

    U ← U^0; send U to every client; t ← 0
    while not stopping:
        receive U_(r) from whichever client r is first     (RecvAny: arrival order)
        ω_t ← ρ/(ρ + t);  U ← (1 − ω_t)U + ω_t U_(r);  t ← t + 1
        send U back to client r
    return U

Client r (Algorithm 7), parameter T (``inner``)::

    V_r ← V^0_r
    while the server has not stopped:
        receive U from the server; U_(r) ← U
        for t = 1..T:
            V_r   ← update(M_r, U_(r), V_r)
            U_(r) ← update(M_r, U_(r), V_r)     Asyn-SSD: sketched on V (Algorithm 5 lines 5–6)
        send U_(r) to the server
    return V_r

Stopping (unspecified in the paper): the server makes ``outer`` × N updates — ``outer`` rounds
per client on average; a client with little data makes more — or stops once its clock passes
``time_budget_s``. After that it answers each client's next copy with a ``stop`` message (that
copy is not merged), and the client returns its V_r. ω_0 = 1, so the first copy received
replaces U^0 (digest §7.4 item 67). U cannot be sketched asynchronously (a shared S_2 would need
a synchronous All-Reduce), so Asyn-SSD sketches V only (``sketch_on = "v"``); each client draws
its S_1 from its own generator, since nobody else uses it.

What each party learns: a client sees the server's U; **the server sees every client's copy
U_(r) individually** — declared as its output ``U_client`` — so the paper's (N−1)-privacy claim
for the asynchronous variants does not extend to the server (digest §7.4 item 66). Per client
round: m·k numbers to the server and m·k back (in the clear, sealed per channel).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.nmf.dsanls.sanls import LocalWork
from algorithms.nmf.dsanls.secure_nmf import (
    SecureNmfConfig,
    SecureNode,
    node_matrix,
    u_step,
    v_step,
)
from algorithms.nmf.dsanls.sketches import draw_sketch
from protocols.context import PartyContext
from protocols.effects import Call, Output, RecvAny, Send, SendEach
from protocols.errors import InputError

PROTOCOL = "asyn_sd"
SERVER = "server"


def relaxation(rho: float, t: int) -> float:
    """ω_t = ρ/(ρ + t): 1 at t = 0, → 0 as the server's update counter t grows."""
    return rho / (rho + t)


def _check(config: SecureNmfConfig) -> None:
    if config.sketch_on not in ("", "v"):
        raise InputError(
            f"sketch_on = {config.sketch_on!r}: the asynchronous algorithms cannot sketch U "
            "(that needs a synchronous All-Reduce); use '' (Asyn-SD) or 'v' (Asyn-SSD)"
        )


def asyn_server(
    ctx: PartyContext, U0: np.ndarray, config: SecureNmfConfig
) -> Generator[Any, Any, SecureNode]:
    """Algorithm 6, the server's program.

    Parameters
    ----------
    U0 : ndarray of shape (m, k)
        The initial U.
    config : SecureNmfConfig
        Public parameters (ρ, ``outer``, ``time_budget_s``).

    Returns
    -------
    SecureNode
        The final U and a snapshot (clock, U, None) after every update.
    """
    _check(config)
    clients = ctx.parties
    U = np.array(U0, dtype=np.float64, copy=True)
    rounds = dict.fromkeys(clients, 0)
    total = config.outer * len(clients)
    work = LocalWork(config.seconds_per_flop)
    node = SecureNode(U, None)
    yield SendEach(dict.fromkeys(clients, U), Call(PROTOCOL, 0), "U")
    t = 0
    clock = 0.0
    active = set(clients)
    while active:
        keys = tuple((r, Call(PROTOCOL, rounds[r]), "local_U") for r in sorted(active))
        index, U_r = yield RecvAny(keys)
        r = keys[index][0]
        yield Output("U_client", np.array(U_r, copy=True), keys[index][1])
        rounds[r] += 1
        over_time = config.time_budget_s is not None and clock >= config.time_budget_s
        if t < total and not over_time:
            omega = relaxation(config.rho, t)
            U = (1.0 - omega) * U + omega * np.asarray(U_r)
            t += 1
            work.add(3 * U.size)
            clock = yield from work.spend()
            node.history.append((clock, U.copy(), None))
        stop = t >= total or (config.time_budget_s is not None and clock >= config.time_budget_s)
        if stop:
            yield Send(r, np.zeros(0), Call(PROTOCOL, rounds[r]), "stop")
            active.discard(r)
        else:
            yield Send(r, U, Call(PROTOCOL, rounds[r]), "U")
    node.U, node.flops, node.updates = U, work.total, t
    return node


def asyn_client(
    ctx: PartyContext, X: Any, V0: np.ndarray, config: SecureNmfConfig, server: int
) -> Generator[Any, Any, SecureNode]:
    """Algorithm 7, client r's program.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (|J_r|, m)
        The client's samples: M_r = Xᵀ.
    V0 : ndarray of shape (|J_r|, k)
        The client's start V^0_r.
    config : SecureNmfConfig
        Public parameters (T = ``inner``; ``sketch_on`` "" or "v").
    server : int
        The server's id.

    Returns
    -------
    SecureNode
        V_r, and a snapshot (clock, None, V_r) every time the client sends its copy.
    """
    _check(config)
    r = ctx.party
    M_r = node_matrix(X, config, r)
    n_r = M_r.shape[1]
    d = config.d_for(r) if config.sketch_on == "v" else 0
    V = np.array(V0, dtype=np.float64, copy=True)
    work = LocalWork(config.seconds_per_flop)
    node = SecureNode(None, V)
    t = 0
    j = 0
    while True:
        call = Call(PROTOCOL, j)
        index, U = yield RecvAny(((server, call, "U"), (server, call, "stop")))
        if index == 1:
            break
        U = np.array(U, dtype=np.float64, copy=True)
        yield Output("U_server", U.copy(), call)
        for _ in range(config.inner):
            t += 1
            V = v_step(config, V, M_r, t, work, U=U)
            S1 = (draw_sketch(config.sketch, n_r, d, ctx.rng)
                  if config.sketch_on == "v" else None)
            U = u_step(config, U, V, M_r, t, work, S1)
        clock = yield from work.spend()
        node.history.append((clock, None, V.copy()))
        yield Send(server, U, call, "local_U")
        j += 1
    node.V, node.flops, node.updates = V, work.total, j
    return node
