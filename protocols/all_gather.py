"""All-Gather: every party obtains the concatenation of the parties' blocks, in party order.

The baselines Qian et al. (seed 004, §3.1 and §3.6.1) compare DSANLS with — distributed MU,
HALS and ANLS/BPP — distribute the row-separable subproblem (Eq. 5) by giving every node the
whole fixed factor: node r owns V_{J_r}, and before the U-subproblem the nodes All-Gather
V = [V_{J_1}; …; V_{J_N}] (n×k), which costs O(kn) per node and iteration against DSANLS's
O(kd) (§3.6.1). This is MPI's ``Allgatherv`` on a trusted cluster: every party sends its float64
block to every peer and stacks the blocks in party order, so all parties hold bitwise the same
array. It is a speed-up primitive, not a private one: every peer sees every block, and the
gathered array is the call's declared output.

Declared cost per party per call with a block of b numbers: 1 round, N − 1 messages,
(N − 1)·b elements sent (:func:`all_gather_cost`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.context import PartyContext
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.errors import InputError
from protocols.secure_sum import Cost

PROTOCOL = "all_gather"


def all_gather_cost(n_parties: int, block: int) -> Cost:
    """Rounds, messages and elements one party sends in one All-Gather of its ``block`` numbers."""
    return Cost(rounds=1, messages_sent=n_parties - 1, elements_sent=(n_parties - 1) * block)


def all_gather(
    ctx: PartyContext, block: Any, *, output: str = "gathered"
) -> Generator[Any, Any, np.ndarray]:
    """Party program: the parties' blocks stacked along the first axis, in party order.

    Parameters
    ----------
    ctx : PartyContext
        The party's context; all data-holding parties take part.
    block : array_like of shape (b_r, ...)
        This party's block; the trailing dimensions are the same at every party, the number
        of rows b_r may differ.
    output : str
        Label of the declared output recorded in the party's view.

    Returns
    -------
    ndarray of shape (Σ_r b_r, ...)
        The same array at every party.
    """
    values = np.asarray(block, dtype=np.float64)
    if values.ndim < 1:
        raise InputError(f"all-gather '{output}': a block needs at least one axis")
    call = ctx.new_call(PROTOCOL)
    yield Input(output, values, call)
    yield SendEach(dict.fromkeys(ctx.peers, values), call, "block")
    received = yield RecvEach(ctx.peers, call, "block")
    blocks = []
    for party in ctx.parties:
        part = values if party == ctx.party else np.asarray(received[party], dtype=np.float64)
        if part.ndim != values.ndim or part.shape[1:] != values.shape[1:]:
            raise InputError(
                f"all-gather '{output}': party {party} sent a block of shape {part.shape}, "
                f"party {ctx.party} has {values.shape}; the trailing dimensions must agree"
            )
        blocks.append(part)
    gathered = np.concatenate(blocks, axis=0)
    yield Output(output, gathered.copy(), call)
    return gathered
