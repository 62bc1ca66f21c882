"""Exact ranks over the Mersenne fields GF(2^61 − 1) and GF(2^127 − 1), compiled.

The audits' linear tests (:mod:`parties.audit.compare`) rank thousands of small matrices of
differences of views. :meth:`protocols.field.PrimeField.ranks` eliminates a whole stack with
numpy, one vectorised step per column; over GF(2^127 − 1) its elements are galois's object
arrays of Python ints (~1–2 µs per operation), and over GF(2^61 − 1) each product is a dozen
numpy passes. Here the same Gaussian elimination (row echelon form, pivot = first nonzero row,
scaled by its Fermat inverse) runs in numba kernels (:mod:`protocols.field.rank_kernels`)
on ``uint64`` words (2^61 − 1) or on two ``uint64`` limbs per element (2^127 − 1, with the
products of :mod:`protocols.field.mersenne127_kernels`). The arithmetic is exact, so the ranks are
the ranks over GF(p) — not a projection into another field — and equal galois's on every matrix
(``tests/protocols/test_mersenne_ranks.py`` checks full-rank, rank-deficient and zero
matrices against galois).

numba is imported on the first call only; kernels are cached on disk.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType

import numpy as np

from protocols.field import MERSENNE61

MERSENNE127 = (1 << 127) - 1
_M64 = (1 << 64) - 1


@cache
def _kernels() -> ModuleType:
    from protocols.field import rank_kernels as mersenne_rank_kernels

    return mersenne_rank_kernels


def loaded() -> bool:
    """Whether this process has loaded the compiled kernels (numba and its cache) already."""
    return _kernels.cache_info().currsize > 0


def supported(p: int) -> bool:
    """Whether :func:`ranks` has a compiled path for GF(p)."""
    return p in (MERSENNE61, MERSENNE127)


def _limbs(stack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (lo, hi) ``uint64`` limbs of canonical GF(2^127 − 1) elements (any dtype)."""
    if stack.dtype.names == ("lo", "hi"):
        return (np.ascontiguousarray(stack["lo"], dtype=np.uint64),
                np.ascontiguousarray(stack["hi"], dtype=np.uint64))
    if stack.dtype == np.dtype(object):
        flat = stack.ravel()
        lo = np.fromiter((int(v) & _M64 for v in flat), dtype=np.uint64, count=flat.size)
        hi = np.fromiter((int(v) >> 64 for v in flat), dtype=np.uint64, count=flat.size)
        return lo.reshape(stack.shape), hi.reshape(stack.shape)
    lo = np.array(stack, dtype=np.uint64, copy=True)
    return lo, np.zeros_like(lo)


def ranks(p: int, stack: np.ndarray) -> np.ndarray:
    """Ranks over GF(p) of a stack of matrices of canonical elements, shape (S, r, c) → (S,).

    Parameters
    ----------
    p : int
        2^61 − 1 or 2^127 − 1 (see :func:`supported`).
    stack : ndarray
        Canonical residues: ``uint64`` words, object arrays of Python ints, or
        :data:`protocols.field.mersenne127.ELEMENT127` records. Not modified.
    """
    stack = np.asarray(stack)
    if stack.ndim != 3:
        raise ValueError("ranks expects a 3-D stack of matrices")
    out = np.zeros(stack.shape[0], dtype=np.int64)
    if stack.size == 0:
        return out
    if p == MERSENNE61:
        words = (np.array(stack, dtype=np.uint64, copy=True) if stack.dtype != object else
                 np.fromiter((int(v) for v in stack.ravel()), dtype=np.uint64,
                             count=stack.size).reshape(stack.shape))
        _kernels().ranks61(words, out)
        return out
    if p == MERSENNE127:
        lo, hi = _limbs(stack)
        _kernels().ranks127(lo, hi, out)
        return out
    raise ValueError(f"no compiled rank path for GF({p})")
