"""Message patterns that follow the declared output (honest) or an honest input (leaks).

Issue 27, class 1 and its false alarm: a pattern that is a function of the functionality's
output is what a simulator is given, so it reveals nothing; one that is a function of an
honest input beyond the output is a leak. Each program is the honest SecureSum (prg variant,
built from the protocol's public pieces, on a flat vector of field elements); after the sum,
every party but 0 sends party 0 a number of fresh one-element pads decided by

* :func:`pings_by_sum` — the sum's first element mod 3 (honest: "iterations" set by the
  public result);
* :func:`ping_over_threshold` — one pad when the sum's first element exceeds a threshold
  (honest: a message sent only when the sum passes it);
* :func:`pings_by_input` — the sender's own first element mod 3 (leak);
* :func:`ping_if_input_over` — one pad when the sender's own first element exceeds the
  threshold (leak).

The threshold is p // 2 (in GF(5): 2). :func:`count_pings` is the attack: it reads the number
of pads from party 0's view.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from protocols.context import add_one_stream_mask
from protocols.effects import Input, Output, RecvAny, RecvEach, Send, SendEach
from protocols.secure_sum import PROTOCOL
from protocols.sharing import additive_reconstruct

Rule = Callable[[Any, np.ndarray, np.ndarray], int]


def _pinged(rule: Rule) -> Callable[..., Generator[Any, Any, Any]]:
    def program(ctx: Any, x: np.ndarray) -> Generator[Any, Any, Any]:
        fld = ctx.field
        call = ctx.new_call(PROTOCOL)
        yield Input("x", x, call)
        colsum = add_one_stream_mask(ctx.randomness, ctx.party, ctx.peers, call,
                                     np.asarray(x), fld)
        yield SendEach(dict.fromkeys(ctx.peers, colsum), call, "column_sum")
        got = yield RecvEach(ctx.peers, call, "column_sum")
        total = additive_reconstruct(fld, [colsum, *(got[p] for p in ctx.peers)])
        yield Output("sum", total, call)
        if ctx.party != 0:
            count = rule(ctx, np.asarray(x), np.asarray(total))
            for k in range(count):
                yield Send(0, ctx.randomness.private(call, 1, sub=1 + k), call, f"ping{k}")
            yield Send(0, ctx.randomness.private(call, 1, sub=9), call, "done")
        else:
            for peer in ctx.peers:
                for k in range(3):  # pads until the peer's "done" (at most 2 pads)
                    index, _ = yield RecvAny(((peer, call, f"ping{k}"), (peer, call, "done")))
                    if index == 1:
                        break
        return total
    return program


def _threshold(ctx: Any) -> int:
    return ctx.field.p // 2


pings_by_sum = _pinged(lambda ctx, x, total: int(total[0]) % 3)
ping_over_threshold = _pinged(lambda ctx, x, total: int(int(total[0]) > _threshold(ctx)))
pings_by_input = _pinged(lambda ctx, x, total: int(x[0]) % 3)
ping_if_input_over = _pinged(lambda ctx, x, total: int(int(x[0]) > _threshold(ctx)))

HONEST = {"pings_by_sum": pings_by_sum, "ping_over_threshold": ping_over_threshold}
LEAKS = {"pings_by_input": pings_by_input, "ping_if_input_over": ping_if_input_over}


def count_pings(view: Any, sender: int) -> int:
    """The attack: how many pads ``sender`` sent party 0."""
    return sum(1 for m in view.received if m.sender == sender and m.step.startswith("ping"))
