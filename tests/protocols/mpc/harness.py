"""Run MPC engine primitives in a real simulated run (data holders + dealer), for the tests.

:func:`run_engine` gives each data holder a :class:`~protocols.mpc.session.Session` over the
dealt material of ``plan`` and shares of secrets chosen by the test (party 0 inputs them,
the others input zeros, so the shares are uniform and sum to the secret), runs ``body`` and
opens what it returns. Expected values are computed by the tests with Python integers.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import numpy as np

from parties.party import Party
from protocols.context import PartyContext
from protocols.field.mersenne127 import mpc_field
from protocols.mpc.dealer import Pool, Request, dealer, receive_material
from protocols.mpc.public import constants, to_ints
from protocols.mpc.session import OUTPUT, Session, share_input
from sim.simulation import Result, Simulation

P127 = (1 << 127) - 1
KAPPA = 40

Body = Callable[[Session, np.ndarray], Generator[Any, Any, np.ndarray]]


def run_engine(
    body: Body,
    secrets: Sequence[int],
    plan: Sequence[Request],
    n_parties: int = 3,
    prime: int = P127,
    kappa: int = KAPPA,
    seed: int = 5,
) -> tuple[list[int], Result]:
    """Open ``body(sess, [secrets])`` and return it as Python ints, with the run's result."""

    def site(ctx: PartyContext, values: list[int]) -> Generator[Any, Any, list[int]]:
        field = mpc_field(ctx.field.p)
        call = ctx.new_call("engine")
        mine = constants(field, values if ctx.party == 0 else [0] * len(values))
        shares = yield from share_input(ctx, field, call, mine)
        material = yield from receive_material(ctx, 0)
        sess = Session(ctx, field, call, Pool(field, plan, material), kappa)
        out = yield from body(sess, shares)
        opened = yield from sess.open(out, OUTPUT, "result")
        if sess.pool.left():
            raise AssertionError(f"{sess.pool.left()} dealer requests were not used")
        return [int(v) for v in to_ints(field, opened).ravel().tolist()]

    parties = [Party(m, site, {"values": list(secrets)}) for m in range(n_parties)]
    parties.append(Party(n_parties, dealer, {"plans": [tuple(plan)]}, role="dealer"))
    result = Simulation(prime=prime, seed=seed, keys="preshared", sealing=False).run(parties)
    return result.outputs[0], result


def signed(value: int, p: int = P127) -> int:
    return value - p if value > (p - 1) // 2 else value


def engine_rows(result: Result) -> list[Any]:
    """Ledger rows of the engine call after input sharing, without the final opening."""
    rows = [r for r in result.ledger if r.protocol == "engine"]
    return [r for r in rows if not r.step.startswith("00.") and not r.step.endswith(".result")]

