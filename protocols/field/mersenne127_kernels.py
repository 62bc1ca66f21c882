"""Compiled kernels of :mod:`protocols.field.mersenne127` (numba), imported on first use.

Elements are passed as flat ``uint64`` arrays of interleaved limbs (lo0, hi0, lo1, hi1, ...),
the memory of the :data:`~protocols.field.mersenne127.ELEMENT127` records themselves. The helpers
are module-level and inlined: defined inside a function (as closures) numba neither inlined nor
vectorised them, and products ran 6× slower.
"""

from __future__ import annotations

import numba
import numpy as np

u64 = np.uint64
m63 = u64((1 << 63) - 1)
m64 = u64((1 << 64) - 1)
m32 = u64(0xFFFFFFFF)


# Branch-free: carries are compared, not branched on (data-dependent branches on random
# limbs kept the loops from vectorising, 6× slower).

@numba.njit(cache=True, inline="always")
def reduce(lo, hi):  # value lo + 2^64·hi < 2^128 → canonical mod p
    top = hi >> u64(63)
    hi = hi & m63
    lo2 = lo + top
    hi = hi + u64(lo2 < lo)
    lo = lo2  # value ≤ 2^127 now; it is ≥ p iff it is 2^127 or p itself
    ge = (hi >> u64(63)) | u64((hi == m63) & (lo == m64))
    lo2 = lo + ge  # subtract p: add 1, drop 2^127
    hi = hi + u64(lo2 < lo) - (ge << u64(63))
    return lo2, hi

@numba.njit(cache=True, inline="always")
def mul64(a, b):  # 64×64 → (lo, hi) of the 128-bit product
    a0 = a & m32
    a1 = a >> u64(32)
    b0 = b & m32
    b1 = b >> u64(32)
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> u64(32)) + (p01 & m32) + (p10 & m32)
    lo = (p00 & m32) | (mid << u64(32))
    hi = p11 + (p01 >> u64(32)) + (p10 >> u64(32)) + (mid >> u64(32))
    return lo, hi

@numba.njit(cache=True, inline="always")
def addmod(alo, ahi, blo, bhi):
    lo = alo + blo
    return reduce(lo, ahi + bhi + u64(lo < alo))

@numba.njit(cache=True, inline="always")
def mulmod(alo, ahi, blo, bhi):
    l0, h0 = mul64(alo, blo)
    l1, h1 = mul64(alo, bhi)
    l2, h2 = mul64(ahi, blo)
    l3, h3 = mul64(ahi, bhi)  # ahi, bhi < 2^63: h3 < 2^62
    w1 = h0 + l1
    c = u64(w1 < h0)
    t = w1 + l2
    c = c + u64(t < w1)
    w1 = t
    w2 = h1 + h2  # each < 2^63
    t = w2 + l3
    c2 = u64(t < w2)
    w2 = t
    t = w2 + c
    c2 = c2 + u64(t < w2)
    w2 = t
    w3 = h3 + c2
    # product = l0 + 2^64 w1 + 2^128 w2 + 2^192 w3; fold with 2^127 ≡ 1
    s_lo = (w1 >> u64(63)) | (w2 << u64(1))
    s_hi = (w2 >> u64(63)) | (w3 << u64(1))
    lo = l0 + s_lo
    return reduce(lo, (w1 & m63) + s_hi + u64(lo < l0))

# Kernels take flat uint64 arrays of interleaved limbs (lo0, hi0, lo1, hi1, ...): the
# records' own memory, and measured 2–8× faster than 2-D (n, 2) indexing in numba.

@numba.njit(cache=True)
def add(a, b, out):
    for i in range(0, a.shape[0], 2):
        out[i], out[i + 1] = addmod(a[i], a[i + 1], b[i], b[i + 1])

@numba.njit(cache=True)
def sub(a, b, out):
    for i in range(0, a.shape[0], 2):
        out[i], out[i + 1] = addmod(a[i], a[i + 1], m64 - b[i], m63 - b[i + 1])

@numba.njit(cache=True)
def mul(a, b, out):
    for i in range(0, a.shape[0], 2):
        out[i], out[i + 1] = mulmod(a[i], a[i + 1], b[i], b[i + 1])

@numba.njit(cache=True)
def mul_scalar(a, blo, bhi, out):
    for i in range(0, a.shape[0], 2):
        out[i], out[i + 1] = mulmod(a[i], a[i + 1], blo, bhi)

@numba.njit(cache=True)
def sum_rows(a, out):  # a: (k, 2n) → out (2n,)
    for j in range(0, a.shape[1], 2):
        lo = a[0, j]
        hi = a[0, j + 1]
        for i in range(1, a.shape[0]):
            lo, hi = addmod(lo, hi, a[i, j], a[i, j + 1])
        out[j] = lo
        out[j + 1] = hi

@numba.njit(cache=True)
def canonical(a, out):  # any (lo, hi) < 2^128 → canonical
    for i in range(0, a.shape[0], 2):
        out[i], out[i + 1] = reduce(a[i], a[i + 1])



@numba.njit(cache=True)
def beaver(opened, ab, c, leader, out):
    """z = c + ε·b + δ·a (+ ε·δ at the leader) with ε‖δ = ``opened``, a‖b = ``ab``."""
    n = c.shape[0]
    for i in range(0, n, 2):
        elo, ehi = opened[i], opened[i + 1]
        dlo, dhi = opened[n + i], opened[n + i + 1]
        lo, hi = mulmod(elo, ehi, ab[n + i], ab[n + i + 1])
        t_lo, t_hi = mulmod(dlo, dhi, ab[i], ab[i + 1])
        lo, hi = addmod(lo, hi, t_lo, t_hi)
        lo, hi = addmod(lo, hi, c[i], c[i + 1])
        if leader:
            t_lo, t_hi = mulmod(elo, ehi, dlo, dhi)
            lo, hi = addmod(lo, hi, t_lo, t_hi)
        out[i] = lo
        out[i + 1] = hi


@numba.njit(cache=True)
def square(eps, a, a2, leader, out):
    """z = a² + 2ε·a (+ ε² at the leader)."""
    for i in range(0, a.shape[0], 2):
        lo, hi = mulmod(eps[i], eps[i + 1], a[i], a[i + 1])
        lo, hi = addmod(lo, hi, lo, hi)
        lo, hi = addmod(lo, hi, a2[i], a2[i + 1])
        if leader:
            t_lo, t_hi = mulmod(eps[i], eps[i + 1], eps[i], eps[i + 1])
            lo, hi = addmod(lo, hi, t_lo, t_hi)
        out[i] = lo
        out[i + 1] = hi


@numba.njit(cache=True)
def trunc_combine(v, c, r_lo, m, inv_lo, inv_hi, leader, out):
    """[(v − (c mod 2^m) + r_lo) · inv] with (c mod 2^m) subtracted at the leader only."""
    for i in range(0, v.shape[0], 2):
        lo, hi = addmod(v[i], v[i + 1], r_lo[i], r_lo[i + 1])
        if leader:
            if m < 64:
                c_lo = c[i] & ((u64(1) << u64(m)) - u64(1))
                c_hi = u64(0)
            else:
                c_lo = c[i]
                c_hi = c[i + 1] & ((u64(1) << u64(m - 64)) - u64(1))
            lo, hi = addmod(lo, hi, m64 - c_lo, m63 - c_hi)
        out[i], out[i + 1] = mulmod(lo, hi, inv_lo, inv_hi)
