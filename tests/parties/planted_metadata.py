"""Planted leaks of metadata and aborts (issue 27, classes 1 and 2), for the pattern check.

Every program here is an honest SecureSum with a side channel around it: the sum is right,
every payload of the side channel is a fresh one-time pad (a draw from ``ctx.randomness``) —
so no comparison of payload values can see anything — and yet the coalition learns a function
of an honest input from *whether*, *how long*, *to whom*, *when* or *in which order* messages
come, or from *whether* a peer aborts. Each leak is stated with what a member of the coalition
{0} (or {0, 2}) learns; :func:`recover_parity` and the tests' attacks recover it from views.

``value(x)`` is the integer an honest party's side channel reads: ``x[0]`` for field elements,
``⌊|x[0]|⌋`` for real values (a scenario's column sums).

Class 1 (metadata)
    * :func:`extra_message` — party h ≠ 0 sends party 0 a "status" ping only when value(x_h)
      is even: the ping's presence is the parity (count).
    * :func:`data_length` — party h ≠ 0 pads a status message to 1 + value(x_h) mod 2
      elements (size).
    * :func:`recipient` — party 1 sends its acknowledgement to party 0 when value(x_1) is
      even, else to party 2 (recipient; count for a coalition holding one of them).
    * :func:`compute_time` — every party computes for value(x) mod 16 milliseconds before it
      shares: its shares arrive that much later (time).
    * :func:`recv_any_order` — after the sum, every party h ≠ 0 computes for
      (value(x_h) mod 2)·h ms and sends party 0 a "done" ping; party 0 takes them with
      ``RecvAny``: which came first (and when) tells the parities (recv_any / time).
    * :func:`recv_within_late` — the same pings, party h computing 20 ms when value(x_h) is
      odd, collected by party 0 with ``RecvWithin`` and a 15 ms timeout: who was in time is
      the parity (recv_within; the late ping still arrives, unread, later).

Class 2 (aborts)
    * :func:`abort_over` — a party refuses an input above a threshold (the upper half of the
      field: "negative" in fixed point) and aborts before it shares: its peers get the
      notice "party h aborted in call secure_sum#0" exactly when value(x_h) > threshold.
    * :func:`abort_checksum` — a party aborts when value(x) ≡ 0 (mod 3) (a "checksum").
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from protocols.effects import Call, Compute, Recv, RecvAny, RecvWithin, Send
from protocols.field import MERSENNE61
from protocols.secure_sum import secure_sum_field

SumProgram = Callable[..., Generator[Any, Any, Any]]
STATUS = Call("status", 0)


def value(x: Any) -> int:
    """The integer a side channel reads from an input vector."""
    first = np.ravel(np.asarray(x))[0]
    if np.asarray(x).dtype.kind in "fc":
        return int(np.floor(abs(float(first))))
    return int(first)


def honest_sum(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
    """The honest SecureSum the plants wrap (PRG variant on field vectors)."""
    if not args and "variant" not in kwargs:
        args = ("prg",)
    return (yield from secure_sum_field(ctx, x, *args, **kwargs))


def _ping(ctx: Any, n: int = 1) -> np.ndarray:
    return ctx.randomness.private(STATUS, n)


def extra_message(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        total = yield from inner(ctx, x, *args, **kwargs)
        if ctx.party != 0 and value(x) % 2 == 0:
            yield Send(0, _ping(ctx), STATUS, "ping")
        return total
    return program


def data_length(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        total = yield from inner(ctx, x, *args, **kwargs)
        if ctx.party != 0:
            yield Send(0, _ping(ctx, 1 + value(x) % 2), STATUS, "pad")
        else:
            for h in ctx.peers:
                yield Recv(h, STATUS, "pad")
        return total
    return program


def recipient(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        total = yield from inner(ctx, x, *args, **kwargs)
        if ctx.party == 1:
            yield Send(0 if value(x) % 2 == 0 else 2, _ping(ctx), STATUS, "ack")
        return total
    return program


def compute_time(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        yield Compute(1e-3 * (value(x) % 16))
        return (yield from inner(ctx, x, *args, **kwargs))
    return program


def recv_any_order(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        total = yield from inner(ctx, x, *args, **kwargs)
        if ctx.party != 0:
            yield Compute(1e-3 * (value(x) % 2) * ctx.party)
            yield Send(0, _ping(ctx), STATUS, "done")
        else:
            waiting = list(ctx.peers)
            while waiting:
                index, _ = yield RecvAny(tuple((h, STATUS, "done") for h in waiting))
                waiting.pop(index)
        return total
    return program


def recv_within_late(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        total = yield from inner(ctx, x, *args, **kwargs)
        if ctx.party != 0:
            yield Compute(0.02 * (value(x) % 2))
            yield Send(0, _ping(ctx), STATUS, "done")
        else:
            yield RecvWithin(tuple(ctx.peers), STATUS, "done", 0.015)
        return total
    return program


def abort_over(threshold: int = MERSENNE61 // 2,
               inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        if value(x) > threshold:
            raise ValueError(f"input {value(x)} is out of range")
        return (yield from inner(ctx, x, *args, **kwargs))
    return program


def abort_checksum(inner: SumProgram = honest_sum) -> SumProgram:
    def program(ctx: Any, x: Any, *args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        if value(x) % 3 == 0:
            raise ValueError("checksum failure")
        return (yield from inner(ctx, x, *args, **kwargs))
    return program


def recover_parity(view: Any, sender: int) -> int | None:
    """The attack on :func:`extra_message` from party 0's view: the parity of value(x_sender)
    (0 when the ping came, 1 when not)."""
    got = any(m.sender == sender and m.protocol == "status" for m in view.received)
    return 0 if got else 1
