"""GF(2^61 − 1) on numpy ``uint64``: the hot path of SecureSum and the PRG.

numpy's uint64 multiply wraps silently, so products go through 32-bit halves and the Mersenne
identity 2^61 ≡ 1 (mod p); nothing ever wraps. Sums of a few vectors (SecureSum's
reconstruction) run in a compiled pass per vector (:mod:`protocols.field.mersenne61_kernels`)
from :data:`KERNEL_MIN_ELEMENTS` elements on. :func:`sum_rows61` and :func:`reduce61_inplace`
are the one stacked sum and the one in-place reduction the field and the keystream's fused mask
sums (:mod:`protocols.crypto.mask_sums`) share.
"""

from __future__ import annotations

import math
from functools import cache
from types import ModuleType

import numpy as np

from protocols.field.prime import PrimeField

MERSENNE61 = (1 << 61) - 1

_U64 = np.uint64
_F64 = np.dtype(np.float64)
_P61 = np.uint64(MERSENNE61)
SUM_BLOCK = 1 << 14
STACK_BELOW = 256
"""Sums of more than eight arrays shorter than this stack them (:func:`sum_rows61`); longer
ones are added one by one, block by block, which reads each once (measured on numpy 2: the
stack wins below a few hundred elements, the blocked loop from about a thousand)."""
KERNEL_MIN_ELEMENTS = 1024
"""Vectors from this length on take the compiled GF(2^61 − 1) paths
(:mod:`protocols.field.mersenne61_kernels`); shorter ones keep the numpy paths. A process pays once
for the kernels — importing numba and loading them from its disk cache, ~0.5 s — and saves
~80 µs per SecureSum party-call of 2,001 elements; runs of short vectors (the quickstart,
scenarios with a few hundred columns) are over before that would pay."""
_M32 = np.uint64(0xFFFFFFFF)
_M29 = np.uint64((1 << 29) - 1)


@cache
def mersenne61_kernels() -> ModuleType:
    """The compiled GF(2^61 − 1) kernels (:mod:`protocols.field.mersenne61_kernels`).

    numba is imported on the first call only, and the kernels are compiled once and then
    loaded from numba's on-disk cache.
    """
    from protocols.field import mersenne61_kernels as kernels

    return kernels


def is_flat_u64(a: object) -> bool:
    """Whether ``a`` is a 1-D, C-contiguous, native ``uint64`` array (what the kernels take)."""
    return (type(a) is np.ndarray and a.dtype == _U64 and a.ndim == 1
            and a.flags.c_contiguous)


class Mersenne61Field(PrimeField):
    """GF(2^61 − 1) on numpy ``uint64``: the hot path.

    Sums of up to eight elements fit in 64 bits (8·(2^61 − 1) < 2^64), and the Mersenne
    identity x ≡ (x mod 2^61) + ⌊x / 2^61⌋ reduces them in two operations. Products are split
    into 32-bit halves so that no partial product exceeds 64 bits.
    """

    p = MERSENNE61
    dtype = np.dtype(np.uint64)

    def elements(self, values: object) -> np.ndarray:
        arr = np.asarray(values)
        if arr.dtype == np.uint64:
            return _reduce61(arr)
        if arr.dtype.kind in "iu":
            return np.mod(arr.astype(np.int64), np.int64(MERSENNE61)).astype(np.uint64)
        if arr.dtype == object or arr.dtype.kind == "b":
            flat = [int(v) % MERSENNE61 for v in arr.ravel().tolist()]
            return np.array(flat, dtype=np.uint64).reshape(arr.shape)
        raise TypeError(f"cannot make field elements from dtype {arr.dtype}")

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.integers(0, MERSENNE61, size=shape, dtype=np.uint64)

    def _from_uint64(self, values: np.ndarray) -> np.ndarray:
        return values

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        s = np.add(a, b, dtype=np.uint64)
        return _min_wrapped(s, s, _P61, subtract=True)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # a − b wraps mod 2^64 when a < b; adding p then lands in [0, p).
        if np.ndim(a) == 0 and np.ndim(b) == 0:
            with np.errstate(over="ignore"):
                d = np.subtract(a, b, dtype=np.uint64)
        else:
            d = np.subtract(a, b, dtype=np.uint64)
        return _min_wrapped(d, d, _P61, subtract=False)

    def neg(self, a: np.ndarray) -> np.ndarray:
        return self.sub(np.zeros_like(a, dtype=np.uint64), a)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a = np.asarray(a, dtype=np.uint64)
        b = np.asarray(b, dtype=np.uint64)
        a_lo, a_hi = a & _M32, a >> np.uint64(32)  # a_hi < 2^29
        b_lo, b_hi = b & _M32, b >> np.uint64(32)
        lo = a_lo * b_lo  # < 2^64
        mid = a_hi * b_lo + a_lo * b_hi  # < 2^62
        hi = a_hi * b_hi  # < 2^58
        # value = hi·2^64 + mid·2^32 + lo with 2^64 ≡ 2^3 and 2^61 ≡ 1 (mod p)
        s = (hi << np.uint64(3)) + ((mid & _M29) << np.uint64(32)) + (mid >> np.uint64(29))
        s = s + (lo & _P61) + (lo >> np.uint64(61))  # < 2^63
        return _reduce61(s)

    def sum(self, a: np.ndarray, axis: int | None = 0) -> np.ndarray:
        a = np.asarray(a, dtype=np.uint64)
        # Split into 32-bit halves; each half-sum is exact for fewer than 2^32 terms.
        lo = np.sum(a & _M32, axis=axis, dtype=np.uint64)
        hi = np.sum(a >> np.uint64(32), axis=axis, dtype=np.uint64)  # < 2^61
        hi = _reduce61(hi)
        # hi·2^32 mod p = ((hi mod 2^29) << 32) + (hi >> 29)
        shifted = ((hi & _M29) << np.uint64(32)) + (hi >> np.uint64(29))
        return self.add(_reduce61(lo), _reduce61(shifted))

    def sum_arrays(self, arrays: list[np.ndarray]) -> np.ndarray:
        """Sum of equally shaped arrays, reducing once per seven additions.

        Long arrays are summed block by block (:data:`SUM_BLOCK` elements), so that the
        accumulator stays in cache and every input is read from memory once.
        """
        if not arrays:
            raise ValueError("sum_arrays needs at least one array")
        if len(arrays) == 1:
            return np.array(arrays[0], dtype=np.uint64, copy=True)
        return self.combine(arrays, [])

    def combine(self, plus: list[np.ndarray], minus: list[np.ndarray]) -> np.ndarray:
        """Σ plus − Σ minus in one blocked pass: each −r enters as p − r (in [1, p]).

        Many short arrays (fewer than :data:`STACK_BELOW` elements) are stacked and summed along
        the stack instead, in a few vectorised passes rather than a Python step per array
        (:func:`sum_rows61`).
        """
        if not plus:
            raise ValueError("combine needs at least one array to add")
        first = plus[0]
        if (is_flat_u64(first) and KERNEL_MIN_ELEMENTS <= first.size <= SUM_BLOCK
                and len(plus) + len(minus) <= 8):
            # a few flat vectors (SecureSum's column sums): straight to the compiled sums
            fused = _combine_short(plus, minus, first.size)
            if fused is not None:
                return fused
        shape = np.shape(plus[0])
        if len(plus) + len(minus) > 8 and int(np.prod(shape)) < STACK_BELOW:
            total = sum_rows61(np.stack(plus)).reshape(shape)
            if not minus:
                return total
            return self.sub(total, sum_rows61(np.stack(minus)).reshape(shape))
        pos = [np.asarray(a, dtype=np.uint64).reshape(-1) for a in plus]
        neg = [np.asarray(a, dtype=np.uint64).reshape(-1) for a in minus]
        size = pos[0].size
        if KERNEL_MIN_ELEMENTS <= size <= SUM_BLOCK:
            fused = _combine_short(pos, neg, size)
            if fused is not None:
                return fused.reshape(shape)
        out = np.empty(size, dtype=np.uint64)
        scratch = np.empty(min(size, SUM_BLOCK), dtype=np.uint64)
        for start in range(0, size, SUM_BLOCK):
            stop = min(size, start + SUM_BLOCK)
            acc = out[start:stop]
            tmp = scratch[: stop - start]
            acc[:] = pos[0][start:stop]
            pending = 0
            for a in pos[1:]:
                np.add(acc, a[start:stop], out=acc)
                pending += 1
                if pending == 7:  # acc < 8·2^61 = 2^64
                    reduce61_inplace(acc, tmp)
                    pending = 0
            for a in neg:
                np.subtract(_P61, a[start:stop], out=tmp)
                np.add(acc, tmp, out=acc)
                pending += 1
                if pending == 7:
                    reduce61_inplace(acc, tmp)
                    pending = 0
            reduce61_inplace(acc, tmp)
        return out.reshape(shape)

    def from_signed(self, values: np.ndarray) -> np.ndarray:
        """Elements of int64 values with |v| ≤ (p − 1)/2 (negatives map to p − |v|)."""
        ints = np.asarray(values, dtype=np.int64)
        out = ints.view(np.uint64).copy()
        # A negative v reads as 2^64 + v; adding p wraps to p + v (mod 2^64), in [0, p).
        np.add(out, _P61, out=out, where=ints < 0)
        return out


def _combine_short(pos: list[np.ndarray], neg: list[np.ndarray], size: int
                   ) -> np.ndarray | None:
    """Σ pos − Σ neg of arrays of ``size`` elements (flattened), one compiled pass per array.

    None — the caller then takes the numpy path — when an array's size differs or one holds a
    value ≥ p (numpy broadcasts the former and computes its own result for the latter).
    """
    add_into = mersenne61_kernels().add_into
    total = np.zeros(size, dtype=np.uint64)
    for negate, arrays in ((False, pos), (True, neg)):
        for a in arrays:
            if not is_flat_u64(a):
                a = np.ascontiguousarray(a, dtype=np.uint64).reshape(-1)
            if a.size != size or not add_into(total, a, negate):
                return None
    return total


def _reduce61(x: np.ndarray) -> np.ndarray:
    """Reduce uint64 values modulo 2^61 − 1."""
    x = np.asarray(x, dtype=np.uint64)
    s = (x & _P61) + (x >> np.uint64(61))  # < 2^61 + 8
    return _min_wrapped(s, s, _P61, subtract=True)


def sum_rows61(stacked: np.ndarray) -> np.ndarray:
    """Σ over the first axis of a stack of values below 2^61, modulo 2^61 − 1.

    Eight values below 2^61 sum to less than 2^64, so the rows are summed in slabs of eight,
    each slab's sum reduced in place, and so on until at most eight rows are left: a few passes
    over the data, with temporaries an eighth of its size (the 32-bit split of
    :meth:`Mersenne61Field.sum` makes four full-size ones, which cost more than the sum itself
    for a stack of many short arrays). The one stacked sum of the family: the field's
    :meth:`~Mersenne61Field.combine` and the fused mask sums of
    :mod:`protocols.crypto.mask_sums` both call it.

    Parameters
    ----------
    stacked : numpy.ndarray of uint64, shape (n, ...)
        ``n`` ≥ 1 arrays of values in [0, 2^61), stacked (elements in [0, p] — a negated zero
        p − 0 included).

    Returns
    -------
    numpy.ndarray of uint64, shape (prod(stacked.shape[1:]),)
        Their sum in [0, p), flattened.
    """
    width = math.prod(stacked.shape[1:])
    rows = stacked.reshape(len(stacked), width)
    while True:
        count = len(rows)
        if count <= 8:
            total = rows.sum(axis=0, dtype=np.uint64)
            reduce61_inplace(total, np.empty_like(total))
            return total
        slabs, rest = divmod(count, 8)
        sums = rows[: 8 * slabs].reshape(slabs, 8, width).sum(axis=1, dtype=np.uint64)
        if rest:
            tail = rows[8 * slabs :].sum(axis=0, dtype=np.uint64, keepdims=True)
            sums = np.concatenate([sums, tail])
        flat = sums.reshape(-1)
        reduce61_inplace(flat, np.empty_like(flat))
        rows = sums


def reduce61_inplace(x: np.ndarray, tmp: np.ndarray) -> None:
    """Reduce uint64 values (any, below 2^64) modulo 2^61 − 1 in place.

    ``x`` is a 1-D array and ``tmp`` scratch space of the same size; used by the blocked sums
    here and by the fused mask sums of :mod:`protocols.crypto.mask_sums`.
    """
    np.right_shift(x, np.uint64(61), out=tmp)
    np.bitwise_and(x, _P61, out=x)
    np.add(x, tmp, out=x)  # < 2^61 + 8
    np.subtract(x, _P61, out=tmp)  # wraps (huge) where x < p
    np.minimum(x, tmp, out=x)


WRAP_BLOCK = 1 << 13
"""Block length of :func:`_min_wrapped` on a long array: its scratch block (64 KiB) stays below
malloc's mmap threshold. ``np.minimum(s, s − p)`` on a fresh 10^5-element ``s`` allocates two
more arrays of 800 KB; the allocator hands the second out as fresh pages and returns them on
free, so every call paid ~200 page faults: 0.65 ms where the blocked pass takes 0.07 ms
(numpy 2, one core) — a SecureSum party-call of 10^5 elements adds its mask with it."""


def _min_wrapped(s: np.ndarray, base: np.ndarray, p: np.uint64, subtract: bool) -> np.ndarray:
    """min(s, base ∓ p) with uint64 wrap-around intended; numpy warns on 0-d wraps only.

    When ``base`` is ``s`` itself, a fresh array of the caller's (every caller here), a long
    one is reduced in place, block by block (:data:`WRAP_BLOCK`); the values are the same.
    """
    if np.ndim(base) == 0:
        with np.errstate(over="ignore"):
            other = base - p if subtract else base + p
            return np.minimum(s, other)
    if base is s and s.size > WRAP_BLOCK and s.flags.c_contiguous and s.flags.writeable:
        flat = s.reshape(-1)
        scratch = np.empty(WRAP_BLOCK, dtype=np.uint64)
        for start in range(0, flat.size, WRAP_BLOCK):
            block = flat[start:start + WRAP_BLOCK]
            other = scratch[:block.size]
            if subtract:
                np.subtract(block, p, out=other)
            else:
                np.add(block, p, out=other)
            np.minimum(block, other, out=block)
        return s
    return np.minimum(s, base - p if subtract else base + p)
