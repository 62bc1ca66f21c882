"""Compiled Gaussian elimination over GF(2^61 − 1) and GF(2^127 − 1) (numba), imported on use.

The kernels of :mod:`protocols.field.ranks`. A stack of matrices (S, r, c) is eliminated
matrix by matrix, column by column: the first row at or below the current rank with a nonzero
entry in the column is the pivot, it is scaled by its inverse (Fermat: x^(p−2)), and the rows
below it are cleared. Only the row echelon form is built (a rank needs no back substitution).
Every operation is exact modular arithmetic on canonical residues, so the rank is the rank over
GF(p), the same number galois's object arrays give (tests/protocols/test_mersenne_ranks.py).

GF(2^127 − 1) elements come as two ``uint64`` arrays of limbs (``lo``, ``hi``) and reuse the
product and reduction of :mod:`protocols.field.mersenne127_kernels`; GF(2^61 − 1) elements are
single ``uint64`` words, products split into 32-bit halves and folded with 2^61 ≡ 1.
"""

from __future__ import annotations

import numba
import numpy as np

from protocols.field.mersenne127_kernels import addmod, m63, m64, mul64, mulmod

u64 = np.uint64
P61 = u64((1 << 61) - 1)
E127_LO = u64((1 << 64) - 3)  # p − 2 = 2^127 − 3: low limb
E127_HI = u64((1 << 63) - 1)  # high limb
E61 = u64((1 << 61) - 3)


@numba.njit(cache=True, inline="always")
def _mulmod61(a, b):
    lo, hi = mul64(a, b)  # product < 2^122
    s = (lo & P61) + ((lo >> u64(61)) | (hi << u64(3)))
    s = (s & P61) + (s >> u64(61))
    return s - P61 if s >= P61 else s


@numba.njit(cache=True, inline="always")
def _addmod61(a, b):
    s = a + b
    return s - P61 if s >= P61 else s


@numba.njit(cache=True)
def _inv61(a):
    result = u64(1)
    base = a
    e = E61
    while e:
        if e & u64(1):
            result = _mulmod61(result, base)
        base = _mulmod61(base, base)
        e = e >> u64(1)
    return result


@numba.njit(cache=True)
def _inv127(lo, hi):
    r_lo, r_hi = u64(1), u64(0)
    b_lo, b_hi = lo, hi
    for limb in range(2):
        e = E127_LO if limb == 0 else E127_HI
        for _ in range(64):
            if e & u64(1):
                r_lo, r_hi = mulmod(r_lo, r_hi, b_lo, b_hi)
            b_lo, b_hi = mulmod(b_lo, b_hi, b_lo, b_hi)
            e = e >> u64(1)
    return r_lo, r_hi


@numba.njit(cache=True)
def ranks61(a, out):
    """Ranks of a stack (S, r, c) of canonical GF(2^61 − 1) words; ``a`` is overwritten."""
    n_mat, n_rows, n_cols = a.shape
    for s in range(n_mat):
        m = a[s]
        rank = 0
        for j in range(n_cols):
            if rank == n_rows:
                break
            piv = -1
            for i in range(rank, n_rows):
                if m[i, j] != 0:
                    piv = i
                    break
            if piv < 0:
                continue
            if piv != rank:
                for k in range(j, n_cols):
                    t = m[piv, k]
                    m[piv, k] = m[rank, k]
                    m[rank, k] = t
            inv = _inv61(m[rank, j])
            for k in range(j + 1, n_cols):
                m[rank, k] = _mulmod61(m[rank, k], inv)
            for i in range(rank + 1, n_rows):
                f = m[i, j]
                if f == 0:
                    continue
                neg = P61 - f
                for k in range(j + 1, n_cols):
                    m[i, k] = _addmod61(m[i, k], _mulmod61(neg, m[rank, k]))
            rank += 1
        out[s] = rank


@numba.njit(cache=True)
def ranks127(lo, hi, out):
    """Ranks of a stack (S, r, c) of canonical GF(2^127 − 1) limbs; ``lo``, ``hi`` overwritten."""
    n_mat, n_rows, n_cols = lo.shape
    for s in range(n_mat):
        ml = lo[s]
        mh = hi[s]
        rank = 0
        for j in range(n_cols):
            if rank == n_rows:
                break
            piv = -1
            for i in range(rank, n_rows):
                if ml[i, j] != 0 or mh[i, j] != 0:
                    piv = i
                    break
            if piv < 0:
                continue
            if piv != rank:
                for k in range(j, n_cols):
                    t = ml[piv, k]
                    ml[piv, k] = ml[rank, k]
                    ml[rank, k] = t
                    t = mh[piv, k]
                    mh[piv, k] = mh[rank, k]
                    mh[rank, k] = t
            i_lo, i_hi = _inv127(ml[rank, j], mh[rank, j])
            for k in range(j + 1, n_cols):
                ml[rank, k], mh[rank, k] = mulmod(ml[rank, k], mh[rank, k], i_lo, i_hi)
            for i in range(rank + 1, n_rows):
                f_lo = ml[i, j]
                f_hi = mh[i, j]
                if f_lo == 0 and f_hi == 0:
                    continue
                n_lo = m64 - f_lo  # p − f, f canonical and nonzero
                n_hi = m63 - f_hi
                for k in range(j + 1, n_cols):
                    t_lo, t_hi = mulmod(n_lo, n_hi, ml[rank, k], mh[rank, k])
                    ml[i, k], mh[i, k] = addmod(ml[i, k], mh[i, k], t_lo, t_hi)
            rank += 1
        out[s] = rank
