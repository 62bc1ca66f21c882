"""Planted pattern leaks through inputs that are not arrays (issue 27, class 1).

Each program runs the honest SecureSum (PRG variant) on its vector ``x`` and then reveals a
side input through the message *pattern* only: a ping to party 0 that is sent or not. The side
input is a Python int (``bias``), a float inside a dict (``meta["weight"]``), or the second
array of a tuple (``parts[1]``) — each different at every site, so private. The controls read
the same kind of input when it is the same at every site (a public parameter) and stay
``private``; :func:`label_ping` reads a string, which no alternative can redraw.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.context import add_one_stream_mask
from protocols.effects import Input, Output, Recv, RecvEach, Send, SendEach
from protocols.secure_sum import PROTOCOL
from protocols.sharing import additive_reconstruct


def _ping_if(ctx: Any, flag: bool, x: np.ndarray) -> Generator[Any, Any, Any]:
    """SecureSum of x (prg variant, built from the protocol's public pieces) in which every
    party but 0 also tells party 0 whether ``flag`` holds, by the size of a fresh pad: one
    element or two."""
    fld = ctx.field
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x, call)
    if ctx.party != 0:
        yield Send(0, ctx.randomness.private(call, 1 if flag else 2, sub=1), call, "ping")
    else:
        for peer in ctx.peers:
            yield Recv(peer, call, "ping")
    colsum = add_one_stream_mask(ctx.randomness, ctx.party, ctx.peers, call, np.asarray(x), fld)
    yield SendEach(dict.fromkeys(ctx.peers, colsum), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = additive_reconstruct(fld, [colsum, *(got[p] for p in ctx.peers)])
    yield Output("sum", total, call)
    return total


def int_ping(ctx: Any, x: np.ndarray, bias: int) -> Generator[Any, Any, Any]:
    """Leak (private ``bias``) or control (public ``bias``): the ping's size is bias's parity."""
    return (yield from _ping_if(ctx, bias % 2 == 1, x))


def dict_ping(ctx: Any, x: np.ndarray, meta: dict) -> Generator[Any, Any, Any]:
    """The ping's size says whether ``meta["weight"]`` exceeds 0.5."""
    return (yield from _ping_if(ctx, float(meta["weight"]) > 0.5, x))


def tuple_ping(ctx: Any, parts: tuple) -> Generator[Any, Any, Any]:
    """SecureSum of ``parts[0]``; the ping's size is the parity of ``parts[1][0]``."""
    return (yield from _ping_if(ctx, int(parts[1][0]) % 2 == 1, parts[0]))


def label_ping(ctx: Any, x: np.ndarray, label: str) -> Generator[Any, Any, Any]:
    """The ping's size says whether ``label`` starts with "b" (an input of text)."""
    return (yield from _ping_if(ctx, label.startswith("b"), x))


def recover_flag(view: Any, sender: int) -> bool:
    """The attack: party 0 reads the flag from the size of ``sender``'s ping."""
    (msg,) = [m for m in view.received if m.sender == sender and m.step == "ping"]
    return int(np.size(msg.payload)) == 1
