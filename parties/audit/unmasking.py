"""Unmasking: what an honest key the coalition holds strips off the messages it masks.

Issue 27, class 5 (key flow). When the coalition's view carries an honest key
(:mod:`.keyflow` finds it), the value-testing methods hold the key fixed and test the residual
view. That is not enough when a key feeds derivations whose other inputs are fresh in every
trial: SecAgg's site u hashes a drawn secret into an X25519 key and agrees a pair seed
s_{u,v} with each peer's *fresh* public key, so with sk_u held the pair masks PRG(s_{u,v}) still
change from trial to trial — yet the aggregator, which relays every public key, recomputes
them (Bonawitz et al., CCS 2017, §4: the masked input y_u = x_u + PRG(b_u) + Σ_v ±PRG(s_{u,v})).

The audit controls the randomness, so it recomputes every stream the coalition can derive
(:func:`derived_streams`), in each of several runs with fresh honest randomness and fresh
honest inputs:

* every draw of a stream whose key the coalition owns or holds (its own keys, the keys in
  ``key_flow``; the known prefix of a stream it holds part of), cut into windows of the
  message's length;
* every expansion of a *computable seed* in the message's call — the bytes of those keys, each
  such draw as a seed of field elements (:func:`protocols.context.seed_key`), every payload the
  coalition received as bytes or as elements, and the X25519 agreement
  (:func:`protocols.crypto.key_agreement.agree`) of each such draw, as a mask key, with each 32-byte
  public key in the coalition's view — through AES-CTR (:func:`protocols.context.expand_stream`, and
  the keystream of :func:`protocols.context.stream_number`) and through the audit's programmed
  oracle (:func:`protocols.context.affine_expansion`).

Then, for each message an honest party sends the coalition (a vector P of n field elements),
it asks over GF(p), stacking the runs and the n coordinates: is P[i] = Σ_j c_j D_j[i] +
a·x_h[i] + b_i, with x_h an honest input (its call input, or its program input) and
coefficients the same in every run, while P is *not* such a combination without x_h, and x_h is
not one of what the coalition already knows (its outputs)? If so, the coalition computes
x_h[i] = (P[i] − Σ_j c_j D_j[i] − b_i) / a from its view: a ``leak`` that names the held key,
the message that carried it and the message it unmasks. Rows exceed columns by enough that a
chance fit has probability below 2^-40; a field too small for that (the exact method's) is
not tested here. Finding no such relation proves nothing: the caller's verdict stands.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from parties.audit.randomness import (
    ConditionedRandomness,
    KeyId,
    Runner,
    key_of_stream,
    key_owners,
    stream_of,
)
from parties.audit.result import LEAK, AuditResult
from parties.party import Party
from parties.view import Message, View
from protocols import seeds
from protocols.context import affine_expansion, expand_stream, seed_key, stream_number
from protocols.crypto.key_agreement import agree, keypair
from protocols.crypto.keystream import field_stream
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import PrimeField

UNMASK_TRIAL = (1 << 31) - 1000
"""First trial number of the unmasking runs (apart from the audits' own and the trace's)."""

CHANCE_BITS = 40
"""A fit by chance must have probability below 2^-CHANCE_BITS."""

MAX_COLUMNS = 160
"""Most columns (derived streams and constants) one message's system may have."""

MAX_RUNS = 48
"""Most runs the test makes."""

MAX_SEED_ELEMENTS = 64
"""Longest draw or payload treated as a seed of field elements."""

PUBLIC_KEY_BYTES = 32


class KeyFlow(Protocol):
    """What the unmasking test reads of a :class:`.keyflow.KeyFlow` (this module sits below
    :mod:`.keyflow`, which calls it)."""

    @property
    def known_keys(self) -> Collection[KeyId]: ...

    @property
    def known_streams(self) -> Mapping[tuple[KeyId, int], int]: ...

    @property
    def findings(self) -> Sequence[Any]: ...

    @property
    def beyond_draws(self) -> bool: ...


def message_name(msg: Message, receiver: int) -> str:
    """How a verdict names a received message."""
    return f"{msg.protocol}#{msg.call}.{msg.step} from {msg.sender} to {receiver}"


@dataclass(frozen=True)
class Unmasked:
    """A message that a held key unmasks: the coalition recomputes an honest input from it."""

    message: str
    parties: tuple[int, ...]
    streams: int

    def describe(self) -> dict[str, Any]:
        return {"message": self.message, "honest_input_of": list(self.parties),
                "derived_streams": self.streams}


def computable_keys(keys: Mapping[KeyId, bytes], members: Sequence[int],
                    flow: KeyFlow) -> set[KeyId]:
    """The keys the coalition owns or holds."""
    return {k for k in keys if key_owners(k) & set(members) or k in flow.known_keys}


def _ints(value: Any) -> np.ndarray | None:
    arr = np.asarray(value)
    if arr.dtype.kind not in "uiO" or arr.size == 0:
        return None
    try:
        return np.array([int(v) for v in arr.ravel().tolist()], dtype=object)
    except (TypeError, ValueError):
        return None


def _public_keys(views: Mapping[int, View], members: Sequence[int]) -> list[tuple[int, bytes]]:
    """(party, key) for every 32-byte public key the coalition received: a payload of 32
    bytes from its sender, or rows of (id, key) bytes."""
    out = []
    for m in members:
        for msg in views[m].received:
            arr = np.asarray(msg.payload)
            if arr.dtype != np.uint8:
                continue
            if arr.ndim == 1 and arr.size == PUBLIC_KEY_BYTES:
                out.append((msg.sender, arr.tobytes()))
            elif arr.ndim == 2 and arr.shape[1] > PUBLIC_KEY_BYTES:
                for row in arr:
                    raw = row.tobytes()
                    out.append((int.from_bytes(raw[:-PUBLIC_KEY_BYTES], "big"),
                                raw[-PUBLIC_KEY_BYTES:]))
    return out


def derived_streams(
    views: Mapping[int, View], keys: Mapping[KeyId, bytes], members: Sequence[int],
    flow: KeyFlow, field_: PrimeField, call: Call, n: int,
) -> dict[tuple[Any, ...], np.ndarray]:
    """Every n-element stream the coalition can derive in ``call`` from what it owns, holds
    and received (see the module docstring), by name (the same name in every run)."""
    known = computable_keys(keys, members, flow)
    out: dict[tuple[Any, ...], np.ndarray] = {}
    seeds: dict[tuple[Any, ...], bytes | np.ndarray] = {}
    secrets: list[tuple[tuple[Any, ...], int, np.ndarray]] = []
    for view in views.values():
        for skey, values in view.draws:
            key = key_of_stream(skey)
            ints = _ints(values)
            if ints is None:
                continue
            if key in known:
                usable = ints
            elif (key, stream_of(skey)) in flow.known_streams:
                usable = ints[: flow.known_streams[(key, stream_of(skey))]]
            else:
                continue
            name = ("draw", *skey)
            if (skey[3], skey[4]) == (call.protocol, call.index):
                for w in range(len(usable) // n):
                    out[(*name, w)] = usable[w * n : (w + 1) * n]
            if len(usable) == len(ints) and len(ints) <= MAX_SEED_ELEMENTS:
                seeds[name] = ints
                if key[0] == "private":
                    secrets.append((name, int(key[1]), ints))
    for key in sorted(known, key=repr):
        seeds[("key", *key)] = keys[key]
    for m in members:
        for msg in views[m].received:
            ints = _ints(msg.payload)
            if ints is not None and len(ints) <= MAX_SEED_ELEMENTS:
                seeds[("payload", message_name(msg, m))] = ints
            arr = np.asarray(msg.payload)
            if arr.dtype == np.uint8 and arr.size == PUBLIC_KEY_BYTES:
                seeds[("payload bytes", message_name(msg, m))] = arr.tobytes()
    publics = _public_keys(views, members)
    for name, owner, ints in secrets:
        if not publics:
            break
        private = keypair(seed_key(ints)).private
        for peer, public in publics:
            if peer == owner:
                continue
            try:
                seeds[("agreed", *name, peer)] = agree(private, public, owner, peer).mask_seed
            except InputError:
                continue
    for name, seed in seeds.items():
        if isinstance(seed, bytes):
            out[("aes", *name)] = expand_stream(seed, call, n, field_)
            out[("keystream", *name)] = field_stream(seed, stream_number(call, 0), n, field_)
        else:
            values = field_.elements(np.array([v % field_.p for v in seed.tolist()],
                                               dtype=object))
            out[("aes", *name)] = expand_stream(values, call, n, field_)
            out[("oracle", *name)] = affine_expansion(values, call, n, field_)
    return {k: _ints(v) for k, v in out.items() if len(v) == n}  # type: ignore[misc]


def _redrawn(parties: Sequence[Party], honest: set[int], field_: PrimeField,
             rng: np.random.Generator) -> list[Party]:
    """``parties`` with every honest flat vector of field elements redrawn uniformly."""
    out = []
    for party in parties:
        inputs = dict(party.inputs)
        if party.id in honest:
            for name, value in party.inputs.items():
                arr = np.asarray(value)
                if arr.ndim == 1 and arr.size and arr.dtype.kind in "uiO" and all(
                        0 <= int(v) < field_.p for v in arr.tolist()):
                    inputs[name] = field_.random(rng, arr.size)
        out.append(dataclasses.replace(party, inputs=inputs))
    return out


@dataclass
class _Run:
    views: Mapping[int, View]
    keys: Mapping[KeyId, bytes]
    inputs: dict[int, dict[str, Any]]


def unmask(runner: Runner, parties: Sequence[Party], coalition: Sequence[int], seed: int,
           flow: KeyFlow) -> Unmasked | None:
    """The first message from an honest party that the coalition unmasks with what it
    derives from the honest keys it holds (see the module docstring), or None."""
    field_ = runner.field
    members = sorted(int(m) for m in coalition)
    ids = sorted(p.id for p in parties)
    honest = set(ids) - set(members)
    extra = math.ceil(CHANCE_BITS / math.log2(field_.p)) + 2
    if extra > 8 or (not flow.known_keys and not flow.known_streams):
        return None
    rng = seeds.rng(seed, "audit.unmasking")
    runs: list[_Run] = []

    def run(t: int) -> None:
        randomness = ConditionedRandomness(ids, members, seed, UNMASK_TRIAL + t)
        alt = _redrawn(parties, honest, field_, rng)
        runs.append(_Run(runner(alt, randomness), randomness.keys(),
                         {p.id: dict(p.inputs) for p in alt}))

    run(0)
    first = runs[0]
    messages = [(m, msg) for m in members for msg in first.views[m].received
                if msg.sender in honest and _ints(msg.payload) is not None]
    for m, msg in messages:
        name = message_name(msg, m)
        n = len(_ints(msg.payload))  # type: ignore[arg-type]
        call = Call(msg.protocol, msg.call)
        streams = derived_streams(first.views, first.keys, members, flow, field_, call, n)
        columns = len(streams) + n + 8
        if columns > MAX_COLUMNS:
            continue
        needed = math.ceil((columns + extra) / n) + 1
        if needed > MAX_RUNS:
            continue
        while len(runs) < needed:
            run(len(runs))
        found = _fit(runs[:needed], m, name, n, call, members, honest, flow, field_,
                     sorted(streams))
        if found is not None:
            return Unmasked(name, found, len(streams))
    return None


def _fit(runs: Sequence[_Run], receiver: int, name: str, n: int, call: Call,
         members: Sequence[int], honest: set[int], flow: KeyFlow, field_: PrimeField,
         names: Sequence[tuple[Any, ...]]) -> tuple[int, ...] | None:
    """Honest parties whose inputs the payload ``name`` is affine in, given the derived
    streams ``names`` and the coalition's outputs; None when it is not."""
    base: list[np.ndarray] = []  # (runs·n) columns the coalition knows
    inputs: dict[int, list[np.ndarray]] = {}
    payload: list[np.ndarray] = []
    for r in runs:
        msg = next((x for x in r.views[receiver].received
                    if message_name(x, receiver) == name), None)
        values = None if msg is None else _ints(msg.payload)
        if values is None or len(values) != n:
            return None
        streams = derived_streams(r.views, r.keys, members, flow, field_, call, n)
        if any(k not in streams for k in names):
            return None
        known = [streams[k] for k in names]
        outs = [_ints(v) for m in members for _, _, v in r.views[m].outputs]
        for out in (o for o in outs if o is not None):
            known += [out] if len(out) == n else [np.full(n, v, dtype=object) for v in out]
        base.append(np.stack([*known, *np.eye(n, dtype=np.int64).astype(object)], axis=1)
                    if known else np.eye(n, dtype=np.int64).astype(object))
        for h in sorted(honest):
            vectors = [_ints(v) for _, _, v in r.views[h].protocol_inputs]
            vectors += [_ints(v) for v in r.inputs[h].values()]
            inputs.setdefault(h, []).append(
                [v for v in vectors if v is not None and len(v) == n])
        payload.append(values)
    B = np.concatenate(base, axis=0)
    P = np.concatenate(payload)[:, None]

    def rank(*blocks: np.ndarray) -> int:
        return field_.rank(field_.elements(np.concatenate(blocks, axis=1) % field_.p))

    r_base = rank(B)
    if rank(B, P) == r_base:
        return None  # the coalition explains the payload without any honest input
    blocks = {}
    for h, per_run in inputs.items():
        counts = {len(v) for v in per_run}
        if len(counts) != 1 or counts == {0}:
            continue
        blocks[h] = np.stack([np.concatenate([v[j] for v in per_run])
                              for j in range(counts.pop())], axis=1)
    if not blocks:
        return None
    alone = tuple(h for h, X in blocks.items()
                  if rank(B, X) > r_base and rank(B, X, P) == rank(B, X))
    if alone:
        return alone
    X = np.concatenate(list(blocks.values()), axis=1)
    if rank(B, X, P) == rank(B, X):
        return tuple(blocks)
    return None


def judged(result: AuditResult, runner: Runner, parties: Sequence[Party],
           coalition: Sequence[int], seed: int, flow: KeyFlow) -> AuditResult:
    """A value-testing method's ``result`` on a run whose coalition holds honest keys,
    answered ``leak`` when a held key unmasks an honest input (:func:`unmask`); otherwise
    ``result`` as it is. The exact method enumerates the keys itself and is left alone."""
    if result.verdict == LEAK or result.method == "exact" or not flow.beyond_draws:
        return result
    found = unmask(runner, parties, coalition, seed, flow)
    if found is None:
        return result
    carriers = sorted({f.where for f in flow.findings if not f.draw})
    details = {
        "reason": f"with the honest key material the coalition holds ({', '.join(carriers)}) "
                  f"it recomputes {found.streams} derived streams, and {found.message} minus "
                  "an affine combination of them is an affine function of the honest input "
                  f"of party {', '.join(map(str, found.parties))}: the coalition reads it",
        "unmasked": found.describe(),
        "replaces": {"verdict": result.verdict,
                     "reason": str(result.details.get("reason", ""))},
    }
    call = int(found.message.split("#", 1)[1].split(".", 1)[0])
    return AuditResult(result.coalition, result.method, LEAK, call=call,
                       message=found.message, details=details)
