"""An independent reviewer's audit matrix: planted leak class × audit method → verdict and time.

Issue 27 names five classes of leaks that pass as ``private`` and two false alarms. This script
plants leaks of its own design in each class (at least two per class, distinct from the planted
programs of ``tests/parties``), honest controls and the false-alarm programs, and runs every
audit method of the Python API (:func:`sim.privacy.audit`: simulation, statistical, exact,
linear) on each. Every program is ``program(ctx, x)`` on a flat vector of field elements whose
honest functionality is SecureSum's column sum, so every method can be asked.

Each leak is grounded by a tiny attack before it is audited: the program runs (on the SimPy
driver, as an audit runs it) on two input sets A and B with the same functionality output
(the same sum) but a different value of some function of an honest input, and an attack that
reads only what the coalition observes (its views, or the abort notice a peer receives)
must name that value correctly for both. ``attack_recovers`` reports it. A control has no
attack (``null``).

Prints JSON lines, one per program × method::

    {"bench": "audit_matrix", "program", "class", "method", "coalition", "verdict",
     "expected", "ok", "seconds", "attack_recovers", "details"}

``verdict`` is the audit's answer, or ``"error: <ExceptionType>"`` when the audit raised.
``expected`` is ``"leak"`` for a planted leak (``"not applicable"`` is then acceptable too:
``ok``) and ``"private"`` for a control or a false-alarm program. A last line
``{"bench": "audit_matrix_summary", ...}`` counts the cells; ``--markdown`` prints the table
class × method (verdict and seconds per cell) after the JSON lines.

Sizes are small on purpose: M = 3 (M = 4 or 2 where the class needs it), vectors of 2
elements in GF(2^61 − 1) for the simulation, statistical and linear methods, 1 element in
GF(5) for the exact method. By default the simulation and statistical methods run 200
trials (the API's default; the statistical one against 6 alternative input sets), the exact
one up to 5·5^5 + 50 runs, the linear one 3 probes: about a minute and a half on one core
(``make bench`` runs it so). ``--quick`` (24 trials, 3 alternatives, a smaller exact budget)
is a smoke run whose verdicts may be ``inconclusive``; ``--full`` runs 600 trials. The audits'
seeds are fixed (``SEED``), so the figures replay; ``--program`` and ``--method`` select
cells. The script uses only the public API of the audits as it stands, so the same script
runs on the code before and after the issue's changes.

Run from the repository root:
``python benchmarks/audit_matrix.py [--quick | --full] [--markdown]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from parties.audit import ConditionedRandomness
from parties.party import Party, site_parties
from parties.view import View
from protocols.context import PartyContext, add_one_stream_mask
from protocols.crypto.keystream import field_stream
from protocols.effects import (
    Call,
    Compute,
    Input,
    Output,
    RecvAny,
    RecvEach,
    RecvWithin,
    SendEach,
)
from protocols.errors import InputError, ProtocolAbort
from protocols.field import PrimeField, prime_field
from protocols.secagg import Config, secagg_aggregator, secagg_field
from protocols.secure_sum import PROTOCOL
from protocols.sharing import additive_reconstruct, column_sum, own_share
from sim.privacy import SimPyRunner, audit, secure_sum_program

SEED = 27
BIG = prime_field(2**61 - 1)
TINY = prime_field(5)
METHODS = ("simulation", "statistical", "exact", "linear")
LEAK, PRIVATE, NA = "leak", "private", "not applicable"

Program = Callable[[PartyContext, np.ndarray], Generator[Any, Any, Any]]


# -- shared steps (SecureSum, prg variant, built from the protocol's public pieces) ---------------


def _start(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Call]:
    call = ctx.new_call(PROTOCOL)
    yield Input("x", x, call)
    return call


def _masked(ctx: PartyContext, call: Call, x: np.ndarray) -> np.ndarray:
    """The prg column sum x̂ + Σ_{j>i} s_ij − Σ_{j<i} s_ij."""
    return add_one_stream_mask(ctx.randomness, ctx.party, ctx.peers, call, np.asarray(x),
                               ctx.field)


def _finish(ctx: PartyContext, call: Call, colsum: np.ndarray,
            received: Mapping[int, np.ndarray] | None = None) -> Generator[Any, Any, Any]:
    """Broadcast the column sum (unless ``received`` holds the peers' already), add up."""
    if received is None:
        yield SendEach(dict.fromkeys(ctx.peers, colsum), call, "column_sum")
        received = yield RecvEach(ctx.peers, call, "column_sum")
    total = additive_reconstruct(
        ctx.field, [colsum, *(received[p][: len(colsum)] for p in ctx.peers)])
    yield Output("sum", total, call)
    return total


def _odd(x: np.ndarray) -> bool:
    return int(x[0]) % 2 == 1


def expand(field_: PrimeField, seed: np.ndarray, stream: int, n: int) -> np.ndarray:
    """A short seed of field elements expanded by AES-CTR (key = SHA-256 of its bytes)."""
    key = hashlib.sha256(np.asarray(seed, dtype="<u8").tobytes()).digest()
    return field_stream(key, stream, n, field_)


# -- class 1: metadata that depends on an honest input ------------------------------------------


def notify_if_odd(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """1 extra message: a party whose first value is odd sends party 0 a (uniform) "flag"."""
    call = yield from _start(ctx, x)
    if ctx.party != 0 and _odd(x):  # BUG: whether the message exists depends on x
        yield SendEach({0: ctx.randomness.private(call, 1, sub=1)}, call, "flag")
    if ctx.party == 0:
        yield RecvWithin(ctx.peers, call, "flag", 0.5)
    return (yield from _finish(ctx, call, _masked(ctx, call, x)))


def pad_by_parity(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """1 element count: each party sends party 0 uniform padding of 1 + (x[0] mod 2) elements."""
    call = yield from _start(ctx, x)
    if ctx.party != 0:
        n = 1 + int(x[0]) % 2  # BUG: the padding's length depends on x
        yield SendEach({0: ctx.randomness.private(call, n, sub=1)}, call, "padding")
    else:
        yield RecvEach(ctx.peers, call, "padding")
    return (yield from _finish(ctx, call, _masked(ctx, call, x)))


def route_by_parity(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """1 recipient: a uniform token goes to the lowest peer if x[0] is odd, else the next one."""
    call = yield from _start(ctx, x)
    target = ctx.peers[0] if _odd(x) else ctx.peers[1]  # BUG: the recipient depends on x
    yield SendEach({target: ctx.randomness.private(call, 1, sub=1)}, call, "token")
    yield RecvWithin(ctx.peers, call, "token", 0.5)
    return (yield from _finish(ctx, call, _masked(ctx, call, x)))


def slow_if_odd_any(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """1 timing (RecvAny): local work takes 30 ms for an odd x[0], 1 ms otherwise; the column
    sums are read in their order of arrival."""
    call = yield from _start(ctx, x)
    colsum = _masked(ctx, call, x)
    yield Compute(0.030 if _odd(x) else 0.001)  # BUG: the work's duration depends on x
    yield SendEach(dict.fromkeys(ctx.peers, colsum), call, "column_sum")
    keys = [(p, call, "column_sum") for p in ctx.peers]
    got: dict[int, np.ndarray] = {}
    while keys:
        i, values = yield RecvAny(tuple(keys))
        got[keys.pop(i)[0]] = values
    return (yield from _finish(ctx, call, colsum, got))


def slow_if_odd_within(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """1 timing (RecvWithin): as above, the sums that arrive within 20 ms are read first, the
    late ones after."""
    call = yield from _start(ctx, x)
    colsum = _masked(ctx, call, x)
    yield Compute(0.030 if _odd(x) else 0.001)  # BUG: the work's duration depends on x
    yield SendEach(dict.fromkeys(ctx.peers, colsum), call, "column_sum")
    got = dict((yield RecvWithin(ctx.peers, call, "column_sum", 0.020)))
    late = tuple(p for p in ctx.peers if p not in got)
    if late:
        got.update((yield RecvEach(late, call, "column_sum")))
    return (yield from _finish(ctx, call, colsum, got))


# -- class 2: aborts that depend on an honest input ---------------------------------------------


def abort_on_three(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """2: a "format check" refuses x[0] ≡ 3 (mod 4) before the first message."""
    call = yield from _start(ctx, x)
    if int(x[0]) % 4 == 3:  # BUG: the run aborts for some honest inputs
        raise InputError("x[0] ≡ 3 (mod 4) is not supported")
    return (yield from _finish(ctx, call, _masked(ctx, call, x)))


def abort_on_zero_later(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """2: the sum, then a second call that inverts x[0] — an abort in call 2 when x[0] = 0."""
    call = yield from _start(ctx, x)
    total = yield from _finish(ctx, call, _masked(ctx, call, x))
    second = yield from _start(ctx, ctx.field.elements([1]))
    if int(x[0]) == 0:  # BUG: "normalise by x[0]" — a division by zero ends the run
        raise ZeroDivisionError("x[0] has no inverse")
    yield from _finish(ctx, second, _masked(ctx, second, ctx.field.elements([1])))
    return total


# -- class 3: declared outputs beyond the functionality -----------------------------------------


def extra_coordinate(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """3: the summed vector gets one more coordinate: x[0] at party 1, 0 elsewhere."""
    extra = x[:1] if ctx.party == 1 else ctx.field.zeros(1)
    y = np.concatenate([np.asarray(x), extra])  # BUG: the declared "sum" ends in x_1[0]
    call = yield from _start(ctx, y)
    return (yield from _finish(ctx, call, _masked(ctx, call, y)))


def weighted_sum(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """3: party m adds its input m + 1 times (a loop bug): the declared sum is Σ (m + 1) x_m."""
    y = ctx.field.mul(np.asarray(x), ctx.field.elements([ctx.party + 1] * len(x)))
    call = yield from _start(ctx, y)
    return (yield from _finish(ctx, call, _masked(ctx, call, y)))


def squares_coordinate(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """3: a "variance" coordinate Σ_m x_m[0]² is appended to the declared sum."""
    y = np.concatenate([np.asarray(x), ctx.field.mul(x[:1], x[:1])])  # BUG
    call = yield from _start(ctx, y)
    return (yield from _finish(ctx, call, _masked(ctx, call, y)))


# -- class 4: determined calls whose messages carry more than the call's input -------------------


def tagged_column_sum(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """4 (M = 2): SecureSum of x[:-1]; the column sum message carries x[-1] on its end."""
    a = np.asarray(x[:-1])
    call = yield from _start(ctx, a)
    colsum = _masked(ctx, call, a)
    message = np.concatenate([colsum, np.asarray(x[-1:])])  # BUG: raw x[-1] rides along
    yield SendEach(dict.fromkeys(ctx.peers, message), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    return (yield from _finish(ctx, call, colsum, got))


def tagged_shares(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """4 (M = 3, one honest party): explicit SecureSum of x[:-1]; each share carries x[-1]."""
    fld, peers = ctx.field, ctx.peers
    a = np.asarray(x[:-1])
    d = len(a)
    call = yield from _start(ctx, a)
    draws = ctx.randomness.private(call, len(peers) * d)
    shares = [draws[k * d : (k + 1) * d] for k in range(len(peers))]
    kept = own_share(fld, a, shares)
    yield SendEach({p: np.concatenate([s, np.asarray(x[-1:])])  # BUG: raw x[-1] rides along
                    for p, s in zip(peers, shares, strict=True)}, call, "share")
    got = yield RecvEach(peers, call, "share")
    colsum = column_sum(fld, kept, [got[p][:d] for p in peers])
    return (yield from _finish(ctx, call, colsum))


# -- class 5: randomness that reaches the wrong party (and its honest forms) ---------------------


def _seeded_pairs(ctx: PartyContext, call: Call, x: np.ndarray, escrow: bool
                  ) -> Generator[Any, Any, np.ndarray]:
    """Pair masks from short seeds: the lower party of each pair draws 2 elements, sends them
    to the higher one, and both expand them with AES. ``escrow``: a party also sends party 0
    the seeds of its pairs that do not include party 0 (the bug)."""
    me, d = ctx.party, len(x)
    higher = [p for p in ctx.peers if p > me]
    lower = tuple(p for p in ctx.peers if p < me)
    seeds = {p: ctx.randomness.private(call, 2, sub=p) for p in higher}
    if higher:
        yield SendEach(seeds, call, "pair_seed")
    got = (yield RecvEach(lower, call, "pair_seed")) if lower else {}
    if escrow:
        if me != 0 and higher:  # BUG: a "backup" of the pair seeds goes to party 0
            yield SendEach({0: np.concatenate([seeds[p] for p in higher])}, call, "backup")
        if me == 0:
            yield RecvEach(tuple(range(1, ctx.n_parties - 1)), call, "backup")
    plus = [expand(ctx.field, seeds[p], call.index, d) for p in higher]
    minus = [expand(ctx.field, got[p], call.index, d) for p in lower]
    return ctx.field.combine([np.asarray(x), *plus], minus)


def seeded_prg(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Control / false alarm 2: pair masks from AES-expanded short seeds, sent to the pair."""
    call = yield from _start(ctx, x)
    colsum = yield from _seeded_pairs(ctx, call, x, escrow=False)
    return (yield from _finish(ctx, call, colsum))


def seed_backup(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """5: as :func:`seeded_prg`, and a party hands party 0 the seeds of its other pairs."""
    call = yield from _start(ctx, x)
    colsum = yield from _seeded_pairs(ctx, call, x, escrow=True)
    return (yield from _finish(ctx, call, colsum))


def _keyed_explicit(ctx: PartyContext, x: np.ndarray, escrow: bool) -> Generator[Any, Any, Any]:
    """Explicit SecureSum whose shares expand one private 2-element key by AES. ``escrow``:
    every party sends its key to a "recovery buddy" (party 0; party 0's buddy is 1)."""
    fld, peers, d = ctx.field, ctx.peers, len(x)
    call = yield from _start(ctx, x)
    key = ctx.randomness.private(call, 2)
    stream = expand(fld, key, call.index, len(peers) * d)
    shares = [stream[k * d : (k + 1) * d] for k in range(len(peers))]
    kept = own_share(fld, np.asarray(x), shares)
    yield SendEach(dict(zip(peers, shares, strict=True)), call, "share")
    if escrow:
        buddy = 1 if ctx.party == 0 else 0
        yield SendEach({buddy: key}, call, "key_backup")  # BUG: the mask key leaves the party
        backers = tuple(p for p in peers if (1 if p == 0 else 0) == ctx.party)
        if backers:
            yield RecvEach(backers, call, "key_backup")
    got = yield RecvEach(peers, call, "share")
    return (yield from _finish(ctx, call, column_sum(fld, kept, [got[p] for p in peers])))


def keyed_explicit(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Control / false alarm 2: explicit SecureSum with shares from an AES-expanded key."""
    return (yield from _keyed_explicit(ctx, x, escrow=False))


def key_backup(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """5: :func:`keyed_explicit` whose parties send their mask key to a recovery buddy."""
    return (yield from _keyed_explicit(ctx, x, escrow=True))


# -- false alarm 1: members receive the same broadcast value ------------------------------------


def broadcast_nonce(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """False alarm 1: each party broadcasts one fresh uniform nonce (a session id) to all."""
    call = yield from _start(ctx, x)
    yield SendEach(dict.fromkeys(ctx.peers, ctx.randomness.private(call, 1, sub=1)), call,
                   "nonce")
    yield RecvEach(ctx.peers, call, "nonce")
    return (yield from _finish(ctx, call, _masked(ctx, call, x)))


def broadcast_salt_after(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """False alarm 1: after the sum, each party broadcasts a fresh 2-element salt."""
    call = yield from _start(ctx, x)
    total = yield from _finish(ctx, call, _masked(ctx, call, x))
    yield SendEach(dict.fromkeys(ctx.peers, ctx.randomness.private(call, 2, sub=1)), call,
                   "salt")
    yield RecvEach(ctx.peers, call, "salt")
    return total


# -- attacks: what the coalition reads from its observation --------------------------------------


@dataclass(frozen=True)
class Observation:
    """What the coalition observed in one run: its views, or the abort notice (party, call)."""

    views: Mapping[int, View] | None
    abort: tuple[int, str] | None
    field: PrimeField


def _received(obs: Observation, member: int, sender: int, step: str) -> list[np.ndarray]:
    assert obs.views is not None
    return [np.asarray(m.payload) for m in obs.views[member].received
            if m.sender == sender and m.step == step]


def _order(obs: Observation, member: int, step: str) -> list[int]:
    assert obs.views is not None
    return [m.sender for m in obs.views[member].received if m.step == step]


def _output(obs: Observation, member: int) -> np.ndarray:
    assert obs.views is not None
    return np.asarray(obs.views[member].outputs[0][2])


def _own_private(obs: Observation, member: int, sub: int) -> np.ndarray:
    assert obs.views is not None
    for key, values in obs.views[member].draws:
        if key[0] == "private" and key[1] == member and key[4] == sub:
            return np.asarray(values)
    raise LookupError(f"party {member} drew no private stream {sub}")


def _call_index(obs: Observation, member: int) -> int:
    assert obs.views is not None
    call = obs.views[member].protocol_inputs[0][0]
    return call.index


def _sqrt(a: int, p: int) -> int:
    """A square root mod p for p ≡ 3 (mod 4) (2^61 − 1), by search for tiny p."""
    if p % 4 == 3:
        return pow(a, (p + 1) // 4, p)
    return next(r for r in range(p) if r * r % p == a % p)


def attack_squares(obs: Observation, mine: Sequence[np.ndarray]) -> tuple[int, int]:
    """From Σ x[0] and Σ x[0]²: the honest pair {x_1[0], x_2[0]} as the roots of a quadratic."""
    p = obs.field.p
    out = [int(v) for v in _output(obs, 0)]
    x0 = int(mine[0][0])
    s1, s2 = (out[0] - x0) % p, (out[-1] - x0 * x0) % p
    prod = (s1 * s1 - s2) * pow(2, -1, p) % p
    root = _sqrt((s1 * s1 - 4 * prod) % p, p)
    half = pow(2, -1, p)
    return tuple(sorted(((s1 + root) * half % p, (s1 - root) * half % p)))  # type: ignore


def attack_seed_backup(obs: Observation, mine: Sequence[np.ndarray]) -> tuple[int, ...]:
    """x_1 = c_1 − s_12 + s_01: s_12 expanded from the backed-up seed, s_01 party 0's own."""
    fld, d = obs.field, len(mine[0])
    call = _call_index(obs, 0)
    s12 = expand(fld, _received(obs, 0, 1, "backup")[0], call, d)
    s01 = expand(fld, _own_private(obs, 0, sub=1), call, d)
    c1 = _received(obs, 0, 1, "column_sum")[0]
    return tuple(int(v) for v in fld.add(fld.sub(c1, s12), s01))


def attack_key_backup(obs: Observation, mine: Sequence[np.ndarray]) -> tuple[int, ...]:
    """Every party's shares from its backed-up key: x_1 = c_1 − Σ_j r_j^(1) + Σ_j r_1^(j)."""
    fld, d, m = obs.field, len(mine[0]), len(mine) + 2
    call = _call_index(obs, 0)
    keys = {0: _own_private(obs, 0, sub=0), 1: _received(obs, 0, 1, "key_backup")[0],
            2: _received(obs, 0, 2, "key_backup")[0]}

    def share(i: int, j: int) -> np.ndarray:  # r_i^(j): i's share for peer j
        peers = [p for p in range(m) if p != i]
        stream = expand(fld, keys[i], call, len(peers) * d)
        k = peers.index(j)
        return stream[k * d : (k + 1) * d]

    c1 = _received(obs, 0, 1, "column_sum")[0]
    incoming = fld.sum_arrays([share(0, 1), share(2, 1)])
    outgoing = fld.sum_arrays([share(1, 0), share(1, 2)])
    return tuple(int(v) for v in fld.add(fld.sub(c1, incoming), outgoing))


# -- cases -------------------------------------------------------------------------------------


Secret = Callable[[Sequence[np.ndarray], PrimeField], Any]
Attack = Callable[[Observation, Sequence[np.ndarray]], Any]


@dataclass(frozen=True)
class Case:
    """One audited program.

    ``first`` fixes first coordinates of A (party → value); B is A with ``shift`` added to the
    first coordinate of the parties it names (the shifts add up to 0, so A and B have the same
    sum). ``extra`` is the number of input coordinates beyond the summed ones (class 4).
    """

    name: str
    cls: str
    program: Program
    n_parties: int
    coalition: tuple[int, ...]
    expected: str
    secret: Secret | None = None
    attack: Attack | None = None
    first: Mapping[int, int] = field(default_factory=dict)
    shift: Mapping[int, int] = field(default_factory=lambda: {1: 1, 2: -1})
    extra: int = 0
    shift_extra: bool = False
    parties: Callable[[Sequence[np.ndarray]], list[Party]] | None = None
    methods: tuple[str, ...] = METHODS


def _parity(h: int) -> Secret:
    return lambda xs, fld: int(xs[h][0]) % 2


def _at(h: int, k: int) -> Secret:
    return lambda xs, fld: int(xs[h][k])


def secagg_parties(inputs: Sequence[np.ndarray]) -> list[Party]:
    """M sites running SecAgg on their vectors and the aggregator (party M)."""
    config = Config(threshold=2)

    def site(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secagg_field(ctx, x, config))

    def aggregator(ctx: PartyContext, length: int) -> Generator[Any, Any, Any]:
        return (yield from secagg_aggregator(ctx, length, config))

    m = len(inputs)
    return [Party(u, site, {"x": x}) for u, x in enumerate(inputs)] + [
        Party(m, aggregator, {"length": len(inputs[0])}, role="aggregator")]


C1, C2, C3, C4, C5 = ("1 metadata", "2 abort", "3 output beyond functionality",
                      "4 determined call", "5 randomness to wrong party")
CTRL, FA1, FA2 = "0 honest control", "FA1 same broadcast", "FA2 AES seed expansion"

CASES: tuple[Case, ...] = (
    Case("secure_sum/prg", CTRL, secure_sum_program("prg"), 3, (0,), PRIVATE),
    Case("secure_sum/explicit", CTRL, secure_sum_program("explicit"), 3, (0,), PRIVATE),
    Case("secagg (aggregator)", CTRL, secure_sum_program("prg"), 3, (0, 3), PRIVATE,
         parties=secagg_parties, methods=("simulation",)),
    Case("notify_if_odd", C1, notify_if_odd, 3, (0,), LEAK, _parity(1),
         lambda o, mine: int(bool(_received(o, 0, 1, "flag"))), {1: 2, 2: 1, 0: 0}),
    Case("pad_by_parity", C1, pad_by_parity, 3, (0,), LEAK, _parity(1),
         lambda o, mine: len(_received(o, 0, 1, "padding")[0]) - 1, {1: 2, 2: 1}),
    Case("route_by_parity", C1, route_by_parity, 4, (0, 2), LEAK, _parity(1),
         lambda o, mine: int(bool(_received(o, 0, 1, "token"))), {1: 2, 3: 1},
         shift={1: 1, 3: -1}),
    Case("slow_if_odd (RecvAny)", C1, slow_if_odd_any, 3, (0,), LEAK, _parity(1),
         lambda o, mine: int(_order(o, 0, "column_sum")[0] != 1), {0: 0, 1: 2, 2: 1}),
    Case("slow_if_odd (RecvWithin)", C1, slow_if_odd_within, 3, (0,), LEAK, _parity(1),
         lambda o, mine: int(_order(o, 0, "column_sum")[0] != 1), {0: 0, 1: 2, 2: 1}),
    Case("abort_on_three", C2, abort_on_three, 3, (0,), LEAK,
         lambda xs, fld: int(int(xs[1][0]) % 4 == 3),
         lambda o, mine: int(o.abort is not None and o.abort[0] == 1), {0: 0, 1: 2, 2: 1}),
    Case("abort_on_zero_later", C2, abort_on_zero_later, 3, (0,), LEAK,
         lambda xs, fld: int(int(xs[1][0]) == 0),
         lambda o, mine: int(o.abort is not None and o.abort[0] == 1), {0: 1, 1: 1, 2: 1},
         shift={1: -1, 2: 1}),
    Case("extra_coordinate", C3, extra_coordinate, 3, (0,), LEAK, _at(1, 0),
         lambda o, mine: int(_output(o, 0)[-1])),
    Case("weighted_sum", C3, weighted_sum, 3, (0,), LEAK,
         lambda xs, fld: (2 * int(xs[1][0]) + 3 * int(xs[2][0])) % fld.p,
         lambda o, mine: (int(_output(o, 0)[0]) - int(mine[0][0])) % o.field.p),
    Case("squares_coordinate", C3, squares_coordinate, 3, (0,), LEAK,
         lambda xs, fld: tuple(sorted((int(xs[1][0]), int(xs[2][0])))), attack_squares,
         {1: 1, 2: 3}),
    Case("tagged_column_sum (M=2)", C4, tagged_column_sum, 2, (0,), LEAK, _at(1, -1),
         lambda o, mine: int(_received(o, 0, 1, "column_sum")[0][-1]), shift={1: 1},
         extra=1, shift_extra=True),
    Case("tagged_shares (1 honest)", C4, tagged_shares, 3, (0, 1), LEAK, _at(2, -1),
         lambda o, mine: int(_received(o, 0, 2, "share")[0][-1]), shift={2: 1}, extra=1,
         shift_extra=True),
    Case("seed_backup (prg seeds)", C5, seed_backup, 3, (0,), LEAK,
         lambda xs, fld: tuple(int(v) for v in xs[1]), attack_seed_backup),
    Case("key_backup (explicit key)", C5, key_backup, 3, (0,), LEAK,
         lambda xs, fld: tuple(int(v) for v in xs[1]), attack_key_backup),
    Case("broadcast_nonce", FA1, broadcast_nonce, 4, (0, 1), PRIVATE,
         shift={2: 1, 3: -1}),
    Case("broadcast_salt_after", FA1, broadcast_salt_after, 4, (1, 3), PRIVATE,
         shift={0: 1, 2: -1}),
    Case("seeded_prg (honest)", FA2, seeded_prg, 3, (0,), PRIVATE),
    Case("keyed_explicit (honest)", FA2, keyed_explicit, 3, (0,), PRIVATE),
)


# -- inputs, grounding, audits ------------------------------------------------------------------


def input_pair(case: Case, fld: PrimeField, d: int, seed: int = SEED
               ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Inputs A and B with the same sum of the summed coordinates (B: A shifted).

    First coordinates are small (0..3, or ``case.first``) so that a shift stays in range in
    GF(5); the rest are uniform. A class-4 case shifts its extra coordinate instead.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(len(case.name),)))
    a, b = [], []
    for m in range(case.n_parties):
        x = [int(v) for v in fld.random(rng, d + case.extra)]
        x[0] = case.first.get(m, int(rng.integers(0, 3)))
        y = list(x)
        k = d if case.shift_extra else 0
        y[k] = (y[k] + case.shift.get(m, 0)) % fld.p
        a.append(fld.elements(x))
        b.append(fld.elements(y))
    return a, b


def observe(case: Case, inputs: Sequence[np.ndarray], fld: PrimeField) -> Observation:
    """One run as an audit makes it (SimPy driver, injected randomness): the coalition's share."""
    runner = SimPyRunner(fld.p, 0, SEED)
    parties = (case.parties or (lambda xs: site_parties(case.program,
                                                        [{"x": x} for x in xs])))(inputs)
    ids = [p.id for p in parties]
    try:
        views = runner(parties, ConditionedRandomness(ids, case.coalition, SEED, 0))
    except ProtocolAbort as exc:  # a peer's notice says: party m aborted in call c
        return Observation(None, (exc.party, exc.call), fld)
    # Where views record abort notices, the runner hands an aborted run's views back instead
    # of raising: the notice is then read from the coalition's own views.
    notices = [notice for m in case.coalition for notice in getattr(views[m], "aborts", ())]
    if notices:
        party, call = notices[0]
        return Observation(None, (int(party), str(call)), fld)
    return Observation({m: views[m] for m in case.coalition}, None, fld)


def ground(case: Case, fld: PrimeField, d: int) -> bool | None:
    """Does the attack name the secret for both A and B (same sum, different secret)?"""
    if case.attack is None or case.secret is None:
        return None
    a, b = input_pair(case, fld, d)
    if not np.array_equal(_ideal(a, fld, d), _ideal(b, fld, d)):
        return False  # the pair must not differ in what the functionality reveals
    if case.secret(a, fld) == case.secret(b, fld):
        return False
    for xs in (a, b):
        try:
            guess = case.attack(observe(case, xs, fld), [xs[m] for m in case.coalition])
        except Exception:  # an attack that cannot read the view fails
            return False
        if guess != case.secret(xs, fld):
            return False
    return True


def _ideal(xs: Sequence[np.ndarray], fld: PrimeField, d: int) -> np.ndarray:
    return fld.sum_arrays([np.asarray(x[:d]) for x in xs])


@dataclass(frozen=True)
class Budget:
    trials: int
    pairs: int
    max_runs: int
    probes: int


STANDARD = Budget(trials=200, pairs=6, max_runs=5 * 5**5 + 50, probes=3)
QUICK = Budget(trials=24, pairs=3, max_runs=5 * 5**4 + 50, probes=2)
FULL = Budget(trials=600, pairs=6, max_runs=5 * 5**6 + 50, probes=5)


def run_cell(case: Case, method: str, budget: Budget) -> dict[str, Any]:
    """One audit: verdict (or "error: <type>"), seconds and a short detail."""
    fld, d = (TINY, 1) if method == "exact" else (BIG, 2)
    a, _ = input_pair(case, fld, d)
    program: Any = case.program if case.parties is None else case.parties(a)
    inputs = a if case.parties is None else None
    start = time.perf_counter()
    try:
        result = audit(program, inputs, case.coalition, prime=fld.p, method=method,
                       trials=budget.trials, pairs=budget.pairs, max_runs=budget.max_runs,
                       seed=SEED)
        verdict = result.verdict
        details = {k: v for k, v in (("call", result.call), ("message", result.message),
                                     ("reason", str(result.details.get("reason", ""))[:100]))
                   if v not in (None, "")}
    except Exception as exc:  # the table reports what the audit does
        verdict = f"error: {type(exc).__name__}"
        details = {"error": str(exc)[:100]}
    return {"verdict": verdict, "seconds": round(time.perf_counter() - start, 2),
            "details": details}


def acceptable(expected: str, verdict: str) -> bool:
    return verdict == expected or (expected == LEAK and verdict == NA)


def matrix(cases: Sequence[Case], methods: Sequence[str], budget: Budget,
           emit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Ground every case, audit it with every method; emit and return the rows."""
    rows = []
    for case in cases:
        grounded = ground(case, BIG, 2)
        for method in (m for m in methods if m in case.methods):
            cell = run_cell(case, method, budget)
            row = {"bench": "audit_matrix", "program": case.name, "class": case.cls,
                   "method": method, "coalition": list(case.coalition),
                   "verdict": cell["verdict"], "expected": case.expected,
                   "ok": acceptable(case.expected, cell["verdict"]),
                   "seconds": cell["seconds"], "attack_recovers": grounded,
                   "details": cell["details"]}
            emit(row)
            rows.append(row)
    return rows


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    leaks = [r for r in rows if r["expected"] == LEAK]
    honest = [r for r in rows if r["expected"] == PRIVATE]
    return {"bench": "audit_matrix_summary", "cells": len(rows),
            "leak_cells": len(leaks),
            "leaks_caught": sum(r["verdict"] == LEAK for r in leaks),
            "leaks_not_applicable": sum(r["verdict"] == NA for r in leaks),
            "leaks_passed_private": sum(r["verdict"] == PRIVATE for r in leaks),
            "leaks_errors": sum(r["verdict"].startswith("error") for r in leaks),
            "honest_cells": len(honest),
            "honest_private": sum(r["verdict"] == PRIVATE for r in honest),
            "false_alarms": sum(r["verdict"] == LEAK for r in honest),
            "attacks_grounded": sum(1 for c in {r["program"]: r for r in leaks}.values()
                                    if c["attack_recovers"]),
            "leak_programs": len({r["program"] for r in leaks}),
            "seconds": round(sum(r["seconds"] for r in rows), 1)}


def markdown(rows: Sequence[dict[str, Any]], methods: Sequence[str]) -> str:
    """The table class × method: one row per program, "verdict (seconds)" per cell."""
    lines = ["| class | program | coalition | attack | expected | "
             + " | ".join(methods) + " |",
             "|---|---|---|---|---|" + "---|" * len(methods)]
    by_program: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        by_program.setdefault(r["program"], {})[r["method"]] = r
    for cells in by_program.values():
        first = next(iter(cells.values()))
        attack = {True: "recovers", False: "FAILS", None: "—"}[first["attack_recovers"]]
        marks = []
        for method in methods:
            r = cells.get(method)
            marks.append("" if r is None else
                         f"{r['verdict']}{'' if r['ok'] else ' ✗'} ({r['seconds']:.1f}s)")
        lines.append(f"| {first['class']} | {first['program']} | "
                     f"{{{', '.join(map(str, first['coalition']))}}} | {attack} | "
                     f"{first['expected']} | " + " | ".join(marks) + " |")
    lines.append("")
    lines.append("✗: not the expected verdict (for a leak, `not applicable` counts as caught).")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="24 trials, 3 pairs: a smoke run (verdicts may be inconclusive)")
    mode.add_argument("--full", action="store_true", help="600 trials, 6 pairs")
    parser.add_argument("--markdown", action="store_true", help="print the table too")
    parser.add_argument("--program", action="append", default=None,
                        help="only this program (repeatable)")
    parser.add_argument("--method", action="append", default=None, choices=METHODS,
                        help="only this method (repeatable)")
    args = parser.parse_args(argv)
    budget = FULL if args.full else QUICK if args.quick else STANDARD
    cases = [c for c in CASES if args.program is None or c.name in args.program]
    methods = tuple(args.method or METHODS)

    def emit(record: dict[str, Any]) -> None:
        print(json.dumps(record), flush=True)

    with threadpool_limits(1):
        rows = matrix(cases, methods, budget, emit)
    emit(summary(rows))
    if args.markdown:
        print(markdown(rows, methods))


if __name__ == "__main__":
    main()
