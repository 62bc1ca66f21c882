"""Operations on public values of the MPC engine: constants, opened values, range checks.

Shares are field elements and all arithmetic on them goes through
:class:`~protocols.field.PrimeField`. Opened values and public constants, however, are read as
*integers*: TruncPr needs c mod 2^m, BitDec needs the bits of C, every masked opening is
checked against its declared bound, and outputs are read in the signed view. These functions do
that for the three element representations the engine meets, without a Python loop over
elements for the fast ones:

* ``uint64`` — GF(2^61 − 1) (:class:`~protocols.field.Mersenne61Field`);
* :data:`~protocols.field.mersenne127.ELEMENT127` records — GF(2^127 − 1);
* ``object`` arrays of Python ints — any other prime (galois).
"""

from __future__ import annotations

import numpy as np

from protocols.errors import FieldOverflowError
from protocols.field import PrimeField
from protocols.field.mersenne127 import ELEMENT127

_M64 = (1 << 64) - 1


def constant(field: PrimeField, value: int) -> np.ndarray:
    """The 0-d element array of the integer ``value`` (any sign, any size), reduced mod p."""
    return field.elements(np.array([int(value) % field.p], dtype=object)).reshape(())


def constants(field: PrimeField, values: list[int] | np.ndarray) -> np.ndarray:
    """Element array of a list or array of Python integers (any sign, any size)."""
    arr = np.asarray(values, dtype=object)
    flat = np.array([int(v) % field.p for v in arr.ravel().tolist()], dtype=object)
    return field.elements(flat).reshape(arr.shape)


def small(field: PrimeField, values: np.ndarray) -> np.ndarray:
    """Element array of an ``int64`` array (negatives map to p − |v|)."""
    return field.elements(np.asarray(values, dtype=np.int64))


def to_ints(field: PrimeField, a: np.ndarray) -> np.ndarray:
    """Canonical values as an ``object`` array of Python ints."""
    a = np.asarray(a)
    if a.dtype == ELEMENT127:
        return a["lo"].astype(object) | (a["hi"].astype(object) << 64)
    return a.astype(object)


def low_bits(field: PrimeField, a: np.ndarray, m: int) -> np.ndarray:
    """Elements holding the canonical value of ``a`` modulo 2^m."""
    a = np.asarray(a)
    if a.dtype == ELEMENT127:
        out = a.copy()
        if m <= 64:
            out["lo"] &= np.uint64((1 << m) - 1) if m < 64 else np.uint64(_M64)
            out["hi"] = 0
        else:
            out["hi"] &= np.uint64((1 << (m - 64)) - 1)
        return out
    if a.dtype == np.uint64 and m < 64:
        return a & np.uint64((1 << m) - 1)
    mask = (1 << m) - 1
    return constants(field, [v & mask for v in to_ints(field, a).ravel().tolist()]).reshape(
        a.shape)


def bit_matrix(field: PrimeField, a: np.ndarray, n: int) -> np.ndarray:
    """Bits 0..n−1 of the canonical values of ``a``: int64 array of shape ``a.shape + (n,)``."""
    a = np.asarray(a)
    idx = np.arange(n, dtype=np.uint64)
    if a.dtype == ELEMENT127:
        lo = (a["lo"][..., None] >> np.minimum(idx, 63)) & np.uint64(1)
        hi = (a["hi"][..., None] >> (np.maximum(idx, 64) - np.uint64(64))) & np.uint64(1)
        return np.where(idx < 64, lo, hi).astype(np.int64)
    if a.dtype == np.uint64:
        return ((a[..., None] >> np.minimum(idx, 63)) & np.uint64(1)).astype(np.int64)
    ints = to_ints(field, a)
    return np.array([[(int(v) >> i) & 1 for i in range(n)] for v in ints.ravel().tolist()],
                    dtype=np.int64).reshape((*a.shape, n))


def below(field: PrimeField, a: np.ndarray, bound: int) -> np.ndarray:
    """Boolean array: canonical value of ``a`` < ``bound`` (a non-negative Python int)."""
    a = np.asarray(a)
    if bound > field.p - 1:
        return np.ones(a.shape, dtype=bool)
    if a.dtype == ELEMENT127:
        b_lo, b_hi = np.uint64(bound & _M64), np.uint64(bound >> 64)
        words = np.ascontiguousarray(a).reshape(-1).view(np.uint64)
        lo, hi = words[0::2], words[1::2]
        return ((hi < b_hi) | ((hi == b_hi) & (lo < b_lo))).reshape(a.shape)
    if a.dtype == np.uint64:
        return a < np.uint64(bound)
    return np.array([int(v) < bound for v in to_ints(field, a).ravel().tolist()],
                    dtype=bool).reshape(a.shape)


def signed(field: PrimeField, a: np.ndarray) -> np.ndarray:
    """Signed view (values above (p − 1)/2 are negative) as an ``object`` array of ints."""
    half = (field.p - 1) // 2
    ints = to_ints(field, a)
    return np.where(ints > half, ints - field.p, ints)


def signed_int64(field: PrimeField, a: np.ndarray) -> np.ndarray:
    """:func:`signed` as int64, for values with |v| < 2^63 (an error otherwise); vectorised on
    GF(2^127 − 1)'s limbs: v = lo when hi = 0, and p − v = ~lo when hi = 2^63 − 1."""
    a = np.asarray(a)
    if a.dtype != ELEMENT127:
        return signed(field, a).astype(np.int64)
    lo, hi = a["lo"], a["hi"]
    top = np.uint64((1 << 63) - 1)
    positive = (hi == 0) & (lo <= top)
    negative = (hi == top) & (~lo <= top)
    if not (positive | negative).all():
        raise ValueError("signed_int64: a value is beyond ±(2^63 − 1) in the signed view")
    return np.where(positive, lo.astype(np.int64), -((~lo).astype(np.int64)))


def check_range(
    field: PrimeField, opened: np.ndarray, bound: int, what: str, signed_view: bool = False
) -> None:
    """Raise :class:`FieldOverflowError` unless every opened value lies in its declared range.

    Unsigned: 0 ≤ value < ``bound``. Signed: |value| < ``bound`` in the signed view. An opening
    outside its range means a secret broke its headroom (the value wrapped around p or its
    mask no longer hides it); it is an error, never a silent wrap.
    """
    opened = np.asarray(opened)
    if signed_view:
        ok = below(field, opened, bound) | ~below(field, opened, field.p - bound + 1)
    else:
        ok = below(field, opened, bound)
    if not ok.all():
        idx = int(np.argmin(ok.ravel()))
        value = int(to_ints(field, opened.ravel()[idx : idx + 1])[0])
        if signed_view and value > (field.p - 1) // 2:
            value -= field.p
        shown = f"|value| < 2^{bound.bit_length() - 1}" if signed_view else f"value < {bound}"
        raise FieldOverflowError(
            value, float(bound), f"opened {what} (element {idx})",
            f"the declared headroom is {shown}; the secret left its declared range, so its mask "
            "no longer hides it — check the protocol's parameters against its headroom bounds",
        )
