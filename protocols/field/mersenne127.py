"""GF(2^127 − 1) on pairs of 64-bit limbs, with compiled kernels: the MPC engine's field.

The nonlinear MPC engine (:mod:`protocols.mpc`) needs p = 2^127 − 1 so that a masked opening of
an 85-bit value with κ = 40 bits of statistical masking never wraps (spec
``normed_secure_sum.md`` §1.3). galois serves that prime with object arrays of Python ints,
which cost ~1.4 µs per product and ~2 µs per element on the wire; a NormedSecureSum call at
d = 10^4 makes ~10^6 such element operations. Here an element is one record of the structured
dtype :data:`ELEMENT127` — two little-endian ``uint64`` limbs, ``lo`` (bits 0..63) and ``hi``
(bits 64..126), always canonical (value < p) — so that

* addition, subtraction and the wire encoding are plain vectorised operations (the wire format
  writes the 16 bytes of a record as they are: :mod:`protocols.wire` dtype code 6);
* products run in a numba kernel: four 64×64 → 128-bit products from 32-bit halves, then the
  Mersenne identity 2^127 ≡ 1 (mod p) folds the 254-bit product twice, branch-free. Measured
  at d = 10^4 on this 2-core machine: ~0.15 ms per vector product and ~0.03 ms per sum,
  against ~1.4–2.2 ms and ~0.5–0.9 ms with object arrays of Python ints (10–20×); the wire
  encoding of 10^4 elements takes ~0.02 ms against ~4 ms. (Limbs stored apart — lo and hi in
  two arrays — would let the product loop vectorise, ~4× faster again, but records keep one
  element per entry for slicing, broadcasting and the ledger.) The Beaver and square-pair
  recombinations are fused kernels (:func:`beaver_combine`, :func:`square_combine`);
* ``payload.size`` counts field elements, so the ledger counts one element per record.

Departure from DESIGN.md ("galois serves 2^127 − 1"): the general galois path stays what
:func:`protocols.field.prime_field` returns for this prime (SecureSum and the audits use it);
the MPC engine converts to this class (:func:`mpc_field`). Every operation is tested against
Python integers and galois.

numba is imported on first use only (it is already a dependency of galois), and kernels are
cached on disk, so importing this module costs nothing.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from protocols.errors import InputError
from protocols.field import MERSENNE61, Mersenne61Field, PrimeField, prime_field

MERSENNE127 = (1 << 127) - 1
ELEMENT127 = np.dtype([("lo", "<u8"), ("hi", "<u8")])
"""One element of GF(2^127 − 1): value = lo + 2^64·hi, canonical (< p)."""

_M64 = (1 << 64) - 1
_M63 = (1 << 63) - 1


@cache
def _kernels() -> Any:
    """The compiled kernels (numba compiles them on first use, then loads them from disk)."""
    from protocols.field import mersenne127_kernels

    return mersenne127_kernels


def _records(a: object) -> np.ndarray:
    """``a`` as an :data:`ELEMENT127` array (no copy when it already is one)."""
    if type(a) is np.ndarray and a.dtype == ELEMENT127:
        return a
    return np.asarray(a, dtype=ELEMENT127)


def _words(a: np.ndarray) -> np.ndarray:
    """The flat interleaved limbs of a record array (a view when it is contiguous).

    Built with the ndarray constructor on the records' buffer: ``.view`` on a structured dtype
    runs Python-level safety checks (~1.4 µs against ~0.4 µs), and small arrays make many.
    """
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return np.ndarray((2 * a.size,), dtype=np.uint64, buffer=a)


def concatenate(arrays: list[np.ndarray]) -> np.ndarray:
    """Flat concatenation of record arrays (numpy's own is slow on structured dtypes)."""
    words = np.concatenate([_words(_records(a)) for a in arrays])
    return words.view(ELEMENT127)


def beaver_combine(opened: np.ndarray, ab: np.ndarray, c: np.ndarray, leader: bool
                   ) -> np.ndarray:
    """[xy] = [c] + ε[b] + δ[a] (+ εδ at the leader); flat arrays, ε‖δ and a‖b stacked."""
    out = np.empty(c.size, dtype=ELEMENT127)
    _kernels().beaver(_words(opened), _words(ab), _words(c), leader, _words(out))
    return out


def square_combine(eps: np.ndarray, a: np.ndarray, a2: np.ndarray, leader: bool) -> np.ndarray:
    """[x²] = [a²] + 2ε[a] (+ ε² at the leader); flat arrays."""
    out = np.empty(a.size, dtype=ELEMENT127)
    _kernels().square(_words(eps), _words(a), _words(a2), leader, _words(out))
    return out


def trunc_combine(v: np.ndarray, c: np.ndarray, r_lo: np.ndarray, m: int, inverse: int,
                  leader: bool) -> np.ndarray:
    """TruncPr's local step [(v − (c mod 2^m) + r_lo)·(2^m)^−1] on flat record arrays."""
    out = np.empty(v.size, dtype=ELEMENT127)
    _kernels().trunc_combine(_words(v), _words(c), _words(r_lo), m,
                             np.uint64(inverse & ((1 << 64) - 1)), np.uint64(inverse >> 64),
                             leader, _words(out))
    return out


def limbs(a: np.ndarray) -> np.ndarray:
    """The interleaved limbs (lo0, hi0, lo1, ...) of an :data:`ELEMENT127` array, flat."""
    flat = np.ascontiguousarray(a, dtype=ELEMENT127).reshape(-1)
    return flat.view(np.uint64)


def from_limbs(words: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The element array of ``shape`` whose records are the limb pairs in ``words``."""
    return np.ascontiguousarray(words, dtype=np.uint64).reshape(-1).view(ELEMENT127).reshape(
        shape)


class Mersenne127Field(PrimeField):
    """GF(2^127 − 1) on :data:`ELEMENT127` records (two uint64 limbs), numba kernels.

    Besides the :class:`~protocols.field.PrimeField` interface it converts to and from Python
    integers (:meth:`to_ints`), which the MPC engine uses for public values.
    """

    p = MERSENNE127
    dtype = ELEMENT127

    @property
    def element_bytes(self) -> int:
        return 16

    def zeros(self, shape: int | tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, dtype=ELEMENT127)

    def elements(self, values: object) -> np.ndarray:
        arr = np.asarray(values)
        if arr.dtype == ELEMENT127:
            return from_limbs(self._canonical(limbs(arr)), arr.shape)
        out = np.zeros(arr.shape, dtype=ELEMENT127)
        if arr.dtype.kind == "u":
            out["lo"] = arr.astype(np.uint64)
            return out
        if arr.dtype.kind in "ib":
            ints = arr.astype(np.int64)
            neg = ints < 0
            # p + v for v < 0: hi = 2^63 − 1, lo = (2^64 + v) − 1
            out["lo"] = np.where(neg, ints.view(np.uint64) - np.uint64(1), ints.view(np.uint64))
            out["hi"] = np.where(neg, np.uint64(_M63), np.uint64(0))
            return out
        if arr.dtype == object:
            flat = [int(v) % MERSENNE127 for v in arr.ravel().tolist()]
            out = out.reshape(-1)
            out["lo"] = np.array([v & _M64 for v in flat], dtype=np.uint64)
            out["hi"] = np.array([v >> 64 for v in flat], dtype=np.uint64)
            return out.reshape(arr.shape)
        raise TypeError(f"cannot make GF(2^127-1) elements from dtype {arr.dtype}")

    def to_ints(self, a: np.ndarray) -> np.ndarray:
        """The canonical values as an ``object`` array of Python ints (same shape)."""
        a = np.asarray(a, dtype=ELEMENT127)
        return a["lo"].astype(object) | (a["hi"].astype(object) << 64)

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """Uniform elements: two raw 64-bit words per element, the high one cut to 63 bits.

        The value p itself (probability 2^−127 per element) is drawn again, so the result is
        exactly uniform on [0, p).
        """
        out = np.empty(shape, dtype=ELEMENT127)
        words = out.reshape(-1).view(np.uint64)
        words[:] = rng.bit_generator.random_raw(words.size)
        words[1::2] >>= np.uint64(1)
        flat = out.reshape(-1)
        bad = np.nonzero((flat["hi"] == _M63) & (flat["lo"] == np.uint64(_M64)))[0]
        for i in bad.tolist():
            flat[i] = self.random(rng, 1)[0]
        return out

    def from_words(self, words: np.ndarray) -> np.ndarray:
        """Two words per candidate (lo, then hi masked to 63 bits); the value p is rejected."""
        words = np.asarray(words, dtype=np.uint64)
        pairs = words[: len(words) // 2 * 2].reshape(-1, 2).copy()
        pairs[:, 1] &= np.uint64(_M63)
        keep = ~((pairs[:, 1] == _M63) & (pairs[:, 0] == np.uint64(_M64)))
        if not keep.all():
            pairs = pairs[keep]
        return from_limbs(pairs, (len(pairs),))

    def _from_uint64(self, values: np.ndarray) -> np.ndarray:
        return self.elements(np.asarray(values, dtype=np.uint64))

    def _canonical(self, pairs: np.ndarray) -> np.ndarray:
        out = np.empty_like(pairs)
        _kernels().canonical(pairs, out)
        return out

    def _binary(self, kernel: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _records(a), _records(b)
        if a.shape != b.shape:
            shape = np.broadcast_shapes(a.shape, b.shape)
            a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
        out = np.empty(a.shape, dtype=ELEMENT127)
        kernel(_words(a), _words(b), _words(out))
        return out

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._binary(_kernels().add, a, b)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._binary(_kernels().sub, a, b)

    def neg(self, a: np.ndarray) -> np.ndarray:
        return self.sub(self.zeros(np.shape(a)), a)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _records(a), _records(b)
        if b.size == 1 and a.size != 1:
            out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=ELEMENT127)
            scalar = b.reshape(-1)[0]
            _kernels().mul_scalar(_words(a), np.uint64(scalar["lo"]), np.uint64(scalar["hi"]),
                                  _words(out))
            return out
        if a.size == 1 and b.size != 1:
            return self.mul(b, a)
        return self._binary(_kernels().mul, a, b)

    def sum(self, a: np.ndarray, axis: int | None = 0) -> np.ndarray:
        a = np.asarray(a, dtype=ELEMENT127)
        if axis is None:
            a, axis = a.reshape(-1, 1), 0
        moved = np.moveaxis(a, axis, 0)
        rest = moved.shape[1:]
        stack = np.ascontiguousarray(moved).reshape(moved.shape[0], -1)
        words = stack.view(np.uint64).reshape(stack.shape[0], -1)
        out = np.empty(words.shape[1], dtype=np.uint64)
        _kernels().sum_rows(words, out)
        result = from_limbs(out, rest)
        return result

    def sum_arrays(self, arrays: list[np.ndarray]) -> np.ndarray:
        if not arrays:
            raise ValueError("sum_arrays needs at least one array")
        return self.sum(np.stack([np.asarray(a, dtype=ELEMENT127) for a in arrays]), axis=0)

    def combine(self, plus: list[np.ndarray], minus: list[np.ndarray]) -> np.ndarray:
        total = self.sum_arrays(plus)
        return self.sub(total, self.sum_arrays(minus)) if minus else total

    def validate(self, a: np.ndarray, what: str = "array") -> np.ndarray:
        a = np.asarray(a)
        if a.dtype != ELEMENT127:
            raise InputError(f"{what} has dtype {a.dtype}, expected GF(2^127-1) records")
        if a.size and np.any((a["hi"] > _M63) | ((a["hi"] == _M63) & (a["lo"] == _M64))):
            raise InputError(f"{what} holds values outside [0, 2^127-1)")
        return a


def mpc_field(p: int) -> PrimeField:
    """The field the MPC engine computes in for prime ``p``.

    :class:`Mersenne127Field` for 2^127 − 1, the uint64 fast path for 2^61 − 1, and
    :func:`protocols.field.prime_field` (galois, object arrays) for any other prime.
    """
    if p == MERSENNE127:
        return Mersenne127Field()
    if p == MERSENNE61:
        return Mersenne61Field()
    return prime_field(p)
