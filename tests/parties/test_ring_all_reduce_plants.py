"""Planted deviations from the ring All-Reduce that its audit must flag where the honest ring
is private (coalition {0, 1, 3} of 4: party 2 alone is honest, its input determined by the
declared sum), one per class of what a member observes: a payload the ring never sends (the
honest party's raw input), a message to a recipient that is not its ring successor, and a
message whose size depends on the honest input. The honest ring must stay ``private``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pytest
from auditing import F61, P, field_inputs

from protocols.effects import Input, Output, Recv, Send
from protocols.ring_all_reduce import PROTOCOL, chunk_bounds, steps
from sim.privacy import audit

HONEST = 2
COALITION = (0, 1, 3)


def planted_ring(plant: str):  # type: ignore[no-untyped-def]
    """The ring of :func:`protocols.ring_all_reduce.ring_sum` on field elements, with one
    deviation by the honest party in its first step."""

    def program(ctx, x) -> Generator[Any, Any, np.ndarray]:  # type: ignore[no-untyped-def]
        call = ctx.new_call(PROTOCOL)
        yield Input("x", x, call)
        flat = np.ravel(x)
        parties = tuple(ctx.parties)
        n, i = len(parties), parties.index(ctx.party)
        acc = [np.array(flat[a:b], copy=True) for a, b in chunk_bounds(flat.size, n)]
        after, before = parties[(i + 1) % n], parties[(i - 1) % n]
        for name, out_chunk, in_chunk in steps(n):
            out = acc[out_chunk(i)]
            if ctx.party == HONEST and name == "reduce0":
                if plant == "payload":  # the raw input instead of the chunk
                    out = flat[: out.size]
                elif plant == "recipient":  # a copy to a member that is not the successor
                    yield Send(parties[(i + 2) % n], out, call, name)
                elif plant == "size" and int(flat[0]) % 2:  # one extra element when x[0] is odd
                    out = np.concatenate([out, flat[:1]])
            yield Send(after, out, call, name)
            got = np.asarray((yield Recv(before, call, name)))[: acc[in_chunk(i)].size]
            c = in_chunk(i)
            acc[c] = ctx.field.add(acc[c], got) if name.startswith("reduce") else got
        total = np.concatenate(acc)
        yield Output("sum", total, call)
        return total

    return program


def test_the_honest_ring_is_private_for_this_coalition() -> None:
    inputs = field_inputs(F61, 4, 6, seed=7)
    result = audit(planted_ring("none"), inputs, COALITION, prime=P, trials=24, seed=3)
    assert result.verdict == "private", result.details


@pytest.mark.parametrize("plant", ["payload", "recipient", "size"])
def test_each_planted_deviation_is_flagged(plant: str) -> None:
    inputs = field_inputs(F61, 4, 6, seed=7)
    if plant == "size":  # the plant fires on an odd x[0]: make the honest input's odd
        inputs[HONEST][0] = inputs[HONEST][0] | 1
    result = audit(planted_ring(plant), inputs, COALITION, prime=P, trials=24, seed=3)
    assert result.verdict == "leak", (plant, result.details)
