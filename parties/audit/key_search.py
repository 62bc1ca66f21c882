"""Where a coalition's view holds honest key material: what the audit recomputes, and the search.

:mod:`parties.audit.keyflow` traces one run of the program; this module does the looking. Every
function of an honest key the audit can recompute (:func:`catalogue`: the key's bytes, its
first keystream blocks, its pair streams and each party's net pairwise mask) is compared with
every record of the coalition's view (:func:`carriers`: received payloads and declared
outputs) as it is (:func:`find`), split over records (:func:`find_pieces`), offset by a
constant across two runs (:func:`find_offsets`), and the honest parties' draws are looked for
element by element (:func:`find_draws`). A match counts only when the matched material carries
at least :data:`MIN_BITS` bits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.audit.randomness import (
    KeyId,
    key_of_stream,
    stream_of,
)
from parties.audit.unmasking import message_name
from parties.view import View
from protocols.crypto.aes_ctr import BLOCK_BYTES, keystream_words
from protocols.field import PrimeField
from protocols.sharing import one_stream_mask_from_streams

MIN_BITS = 48
"""Least entropy (bits) of material whose appearance in a view counts as carrying it."""

MAX_OFFSET_PAIRS = 200_000
"""Most (payload, derivation) pairs the offset search compares; beyond, it is skipped."""

Reveal = tuple[KeyId, int | None, int]
"""(key, stream number or None for the whole key, elements of the stream revealed)."""


@dataclass(frozen=True)
class Derivation:
    """One function of an honest key the audit can recompute, with its value in one run."""

    key: KeyId
    what: str
    form: str  # "bytes" or "elements"
    data: bytes | tuple[int, ...]
    reveals: tuple[Reveal, ...]


@dataclass(frozen=True)
class Carrier:
    """One record of the coalition's view that may carry key material."""

    receiver: int
    where: str
    blob: bytes
    elements: tuple[int, ...] | None


@dataclass(frozen=True)
class Finding:
    """Honest key material found in the coalition's view."""

    key: KeyId
    what: str
    where: str
    receiver: int
    reveals: tuple[Reveal, ...]
    whole: bool = False  # the record is this material and nothing else
    elements: tuple[tuple[KeyId, int, tuple[int, ...]], ...] = ()
    """(key, stream, positions) of the honest draw elements found (a draw finding)."""

    @property
    def draw(self) -> bool:
        """Whether this finding is an honest party's draw (field elements), not key bytes
        or a stream the audit recomputes from a key."""
        return bool(self.elements)

    def describe(self) -> dict[str, Any]:
        name = draw_name(self.elements[0]) if self.draw else key_name(self.key)
        return {"key": name, "as": self.what, "message": self.where,
                "received_by": self.receiver}


def key_name(key: KeyId) -> str:
    """How a verdict names a key."""
    if key[0] == "private":
        return f"private mask key of party {key[1]}"
    return f"pair seed of parties {key[1]} and {key[2]}"


def draw_name(found: tuple[KeyId, int, tuple[int, ...]]) -> str:
    """How a verdict names honest draw elements: party, stream, positions."""
    key, stream, at = found
    span = f"{at[0]}" if len(at) == 1 else f"{at[0]}..{at[-1]}"
    return f"draw of party {key[1]} (private stream {stream}, elements {span})"


# -- what the audit can recompute ------------------------------------------------------------


def _bits(field_: PrimeField, n: int, source_bits: float = math.inf) -> float:
    """Entropy of n field elements, each reduced from ``source_bits`` uniform bits."""
    return n * min(math.log2(field_.p), source_bits)


def catalogue(keys: Mapping[KeyId, bytes], views: Mapping[int, View], field_: PrimeField,
              honest: set[KeyId]) -> list[Derivation]:
    """Every derivation of the ``honest`` keys in one run (keys' bytes, streams, masks)."""
    out: list[Derivation] = []
    streams: dict[KeyId, dict[int, np.ndarray]] = {}
    for view in views.values():
        for skey, values in view.draws:
            key = key_of_stream(skey)
            if key in honest:
                streams.setdefault(key, {}).setdefault(stream_of(skey), np.asarray(values))
    whole = ((None, 0),)
    for key in sorted(honest, key=repr):
        raw = keys[key]
        reveal: tuple[Reveal, ...] = tuple((key, s, n) for s, n in whole)
        out.append(Derivation(key, "raw bytes", "bytes", raw, reveal))
        if _bits(field_, len(raw), 8) >= MIN_BITS:
            out.append(Derivation(key, "bytes as field elements", "elements",
                                  tuple(b % field_.p for b in raw), reveal))
        words = np.frombuffer(raw, dtype="<u8")
        if _bits(field_, len(words), 64) >= MIN_BITS:
            out.append(Derivation(key, "64-bit words as field elements", "elements",
                                  tuple(int(w) % field_.p for w in words.tolist()), reveal))
        for stream, values in sorted(streams.get(key, {}).items()):
            block = keystream_words(raw, stream, BLOCK_BYTES // 8)
            first = len(field_.from_words(block))
            ints = tuple(int(v) for v in np.ravel(values).tolist())
            if first and tuple(int(w) for w in block.tolist()) == ints[:len(block)]:
                # the block's words are the draw's own first elements (no bit of either word
                # was reduced away — 1 in 2^(3·words) at p = 2^61 − 1): a payload carrying the
                # draw carries these bytes, and that is the draw (find_draws), not the key
                first = 0
            if first:
                out.append(Derivation(key, f"first keystream block of stream {stream}", "bytes",
                                      block.tobytes(), ((key, stream, first),)))
            if key[0] == "pair" and _bits(field_, len(ints)) >= MIN_BITS:
                out.append(Derivation(key, f"mask stream {stream}", "elements", ints,
                                      ((key, stream, len(ints)),)))
    out.extend(_net_masks(views, field_, honest))
    return out


def _net_masks(views: Mapping[int, View], field_: PrimeField,
               honest: set[KeyId]) -> list[Derivation]:
    """Each party's one-stream pairwise mask per (call, sub), when its streams are honest.

    Not in a call where the party's every input is zero: there its masked message (SecureSum's
    column sum x + mask) *is* the mask, which only the audit, knowing the streams, can tell —
    the coalition holds a masked zero, not the key material (a sparse sketched factor makes
    such inputs in DSANLS). A mask sent beside it is then a copy of that message, which the
    value comparison of the simulation method relates."""
    out = []
    for party, view in sorted(views.items()):
        zero = _zero_input_calls(view)
        groups: dict[tuple[Any, ...], dict[int, np.ndarray]] = {}
        for skey, values in view.draws:
            if skey[0] == "pair" and tuple(skey[3:5]) not in zero:
                peer = skey[2] if skey[1] == party else skey[1]
                groups.setdefault(tuple(skey[3:]), {})[peer] = np.asarray(values)
        for where, rows in sorted(groups.items(), key=repr):
            keys = [key_of_stream(("pair", *sorted((party, p)), *where)) for p in rows]
            lengths = {len(r) for r in rows.values()}
            if len(rows) < 2 or len(lengths) != 1 or not any(k in honest for k in keys):
                continue
            peers = tuple(sorted(rows))
            mask = one_stream_mask_from_streams(field_, party, peers,
                                                np.stack([rows[p] for p in peers]))
            ints = tuple(int(v) for v in np.ravel(mask).tolist())
            if _bits(field_, len(ints)) < MIN_BITS:
                continue
            stream = stream_of(("pair", 0, 1, *where))
            reveals = tuple((k, stream, len(ints)) for k in keys if k in honest)
            out.append(Derivation(keys[0], f"net pairwise mask of party {party} in "
                                  f"{where[0]}#{where[1]}", "elements", ints, reveals))
    return out


def _zero_input_calls(view: View) -> set[tuple[str, int]]:
    """(protocol, call number) of every call whose inputs, as the party recorded them, are all
    zero."""
    seen: dict[tuple[str, int], bool] = {}
    for call, _, value in view.protocol_inputs:
        if call is None:
            continue
        arr = np.ravel(np.asarray(value))
        zero = arr.dtype.kind in "uifO" and all(v == 0 for v in arr.tolist())
        key = (call.protocol, call.index)
        seen[key] = seen.get(key, True) and zero
    return {k for k, z in seen.items() if z}


# -- where the coalition may hold it -----------------------------------------------------------


def _elements(value: np.ndarray) -> tuple[int, ...] | None:
    if value.dtype.kind in "ui" or (value.dtype.kind == "O" and all(
            isinstance(v, int | np.integer) for v in value.ravel().tolist())):
        return tuple(int(v) for v in value.ravel().tolist())
    return None


def carriers(views: Mapping[int, View], members: Sequence[int]) -> list[Carrier]:
    """Every received payload and declared output of the coalition, as bytes and elements."""
    out = []
    for m in members:
        view = views[m]
        records: list[tuple[str, Any]] = [(message_name(msg, m), msg.payload)
                                          for msg in view.received]
        records += [(f"output {label} of {m}", value) for _, label, value in view.outputs]
        for where, value in records:
            arr = np.asarray(value)
            if arr.dtype.kind not in "uiOfcbV" and arr.dtype.kind != "S":
                continue
            blob = arr.tobytes() if arr.dtype.kind != "O" else b""
            out.append(Carrier(m, where, blob, _elements(arr)))
    return out


def find(found_in: Sequence[Carrier], derivations: Sequence[Derivation]) -> list[Finding]:
    """Derivations that appear verbatim in a carrier: elements as a run of consecutive
    elements, bytes at an 8-byte-aligned offset of the payload's bytes (or of its elements
    read as bytes, when they all are < 256). Each derivation is indexed by its first element
    (first 8 bytes), so a view is scanned once whatever the number of derivations."""
    by_element: dict[int, list[Derivation]] = {}
    by_word: dict[bytes, list[Derivation]] = {}
    for d in derivations:
        if d.form == "bytes":
            assert isinstance(d.data, bytes)
            by_word.setdefault(d.data[:8], []).append(d)
        elif d.data:
            by_element.setdefault(int(d.data[0]), []).append(d)
    out = []
    for c in found_in:
        hits: dict[int, tuple[Derivation, bool]] = {}
        values = c.elements
        if values is not None and by_element:
            for i, v in enumerate(values):
                for d in by_element.get(v, ()):
                    n = len(d.data)
                    if values[i : i + n] == d.data:
                        hits[id(d)] = (d, hits.get(id(d), (d, False))[1] or n == len(values))
        blobs = [c.blob]
        if values is not None and all(0 <= v < 256 for v in values):
            blobs.append(bytes(values))
        for blob in blobs:
            for i in range(0, len(blob) - 7, 8):
                for d in by_word.get(blob[i : i + 8], ()):
                    n = len(d.data)
                    if blob[i : i + n] == d.data:
                        hits[id(d)] = (d, hits.get(id(d), (d, False))[1] or n == len(blob))
        out += [Finding(d.key, d.what, c.where, c.receiver, d.reveals, whole)
                for d, whole in hits.values()]
    found = {(f.key, f.what) for f in out}
    return out + find_pieces(found_in, [d for d in derivations if d.what == "raw bytes"
                                        and (d.key, d.what) not in found])


def find_pieces(found_in: Sequence[Carrier], derivations: Sequence[Derivation]
                ) -> list[Finding]:
    """Key bytes split over several records (say one half to each of two members): every
    8-byte word of the key found at an aligned offset of some record's bytes. A word is 64
    bits, so a chance match is negligible; the finding names every record that carried a
    piece."""
    out = []
    for d in derivations:
        assert isinstance(d.data, bytes)
        words = [d.data[i : i + 8] for i in range(0, len(d.data) - 7, 8)]
        if len(words) < 2:
            continue
        where: dict[int, Carrier] = {}
        for c in found_in:
            blobs = [c.blob]
            if c.elements is not None and all(0 <= v < 256 for v in c.elements):
                blobs.append(bytes(c.elements))
            for blob in blobs:
                for i in range(0, len(blob) - 7, 8):
                    for k, w in enumerate(words):
                        if blob[i : i + 8] == w:
                            where.setdefault(k, c)
        if len(where) == len(words):
            carriers_ = sorted({(c.receiver, c.where) for c in where.values()})
            out.append(Finding(d.key, "raw bytes in pieces", " + ".join(w for _, w in carriers_),
                               carriers_[0][0], d.reveals))
    return out


def find_offsets(runs: Sequence[tuple[Sequence[Carrier], Sequence[Derivation]]],
                 field_: PrimeField) -> tuple[list[Finding], list[str]]:
    """Derivations carried plus or XOR a constant: the same P − D (P ⊕ D) in both runs."""
    (c0, d0), (c1, d1) = runs
    by_where = {(c.receiver, c.where): c for c in c1}
    other = {(d.key, d.what): d for d in d1}
    pairs = len(c0) * len(d0)
    if pairs > MAX_OFFSET_PAIRS:
        return [], [f"offsets not searched: {pairs} (payload, derivation) pairs exceed "
                    f"{MAX_OFFSET_PAIRS}"]
    out = []
    p = field_.p
    for a in c0:
        b = by_where.get((a.receiver, a.where))
        if b is None:
            continue
        for da in d0:
            db = other.get((da.key, da.what))
            if db is None or len(da.data) != len(db.data):
                continue
            if da.form == "bytes":
                assert isinstance(da.data, bytes) and isinstance(db.data, bytes)
                if len(a.blob) == len(da.data) == len(b.blob) and _xor(a.blob, da.data) == _xor(
                        b.blob, db.data):
                    out.append(Finding(da.key, f"{da.what} XOR a constant the coalition knows",
                                       a.where, a.receiver, da.reveals, True))
                continue
            if a.elements is None or b.elements is None or not (
                    len(a.elements) == len(da.data) == len(b.elements)):
                continue
            x0, x1 = np.array(a.elements, dtype=object), np.array(b.elements, dtype=object)
            y0, y1 = np.array(da.data, dtype=object), np.array(db.data, dtype=object)
            if np.array_equal((x0 - y0) % p, (x1 - y1) % p):
                how = "plus a constant the coalition knows"
            elif np.array_equal(x0 ^ y0, x1 ^ y1):
                how = "XOR a constant the coalition knows"
            else:
                continue
            out.append(Finding(da.key, f"{da.what} {how}", a.where, a.receiver, da.reveals,
                               True))
    return out, []


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def find_draws(found_in: Sequence[Carrier], views: Mapping[int, View], field_: PrimeField,
               honest: set[KeyId]) -> list[Finding]:
    """Honest parties' private draws that reach the coalition, whole or in part.

    A party's draw (field elements from ``ctx.randomness.private``) may be a share it owes a
    peer, a nonce — or a short seed it expands itself (a key in all but name). Every run of
    consecutive elements of a draw that appears as consecutive elements of a received
    payload or output, carrying at least :data:`MIN_BITS` bits, is found; the finding names
    the positions, which the audit then holds fixed (:meth:`ConditionedRandomness.knowing`).
    """
    index: dict[int, list[tuple[KeyId, int, np.ndarray, int]]] = {}
    for view in views.values():
        for skey, values in view.draws:
            key = key_of_stream(skey)
            if key[0] != "private" or key not in honest:
                continue
            flat = np.ravel(np.asarray(values))
            if flat.dtype.kind not in "uiO":
                continue
            ints = np.array([int(v) for v in flat.tolist()], dtype=object)
            for i, v in enumerate(ints.tolist()):
                index.setdefault(v, []).append((key, stream_of(skey), ints, i))
    if not index:
        return []
    per_element = math.log2(field_.p)
    out = []
    for c in found_in:
        values = c.elements
        if values is None:
            continue
        i = 0
        covered = 0
        found: list[tuple[KeyId, int, tuple[int, ...]]] = []
        while i < len(values):
            best: tuple[int, KeyId, int, int] | None = None
            for key, stream, draw, at in index.get(values[i], ()):
                n = 0
                while (i + n < len(values) and at + n < len(draw)
                       and values[i + n] == draw[at + n]):
                    n += 1
                if best is None or n > best[0]:
                    best = (n, key, stream, at)
            if best is not None and best[0] * per_element >= MIN_BITS:
                n, key, stream, at = best
                found.append((key, stream, tuple(range(at, at + n))))
                covered += n
                i += n
            else:
                i += 1
        if found:
            what = "draw elements" if len(found) == 1 else f"{len(found)} runs of draw elements"
            reveals = tuple((k, s, 0) for k, s, _ in found)
            out.append(Finding(found[0][0], what, c.where, c.receiver, reveals,
                               covered == len(values), tuple(found)))
    return out


