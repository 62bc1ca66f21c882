"""An equal field with fast exact paths for the audits' linear algebra over large primes.

The audits compare thousands of trials of a coalition's view with rank and affine-relation
tests over GF(p) (:mod:`parties.audit.compare`). For p = 2^127 − 1 (NormedSecureSum's default
preset) :class:`protocols.field.GaloisField` holds elements as object arrays of Python ints and
routes every operation through galois, whose input checks (a vectorised type and range check
on each operand) cost more than the arithmetic: a profile (cProfile) of one NormedSecureSum
audit at M = 3, d = 100 spent 42 s of its 53 s of comparison in ``inv`` (Fermat powers,
2·127 galois products of short arrays) and 23 s in stacked eliminations.

:func:`fast_field` returns a field equal to the given one (same p, same element dtype, so
every array it returns is what the original would return) that

* for object-dtype fields, adds, subtracts and multiplies with numpy's object arithmetic on
  Python ints reduced mod p (exact, canonical), and inverts element by element with Python's
  ``pow(v, -1, p)`` (extended Euclid; zero maps to zero, as Fermat's x^(p−2) does);
* ranks stacks over GF(2^61 − 1) and GF(2^127 − 1) with the compiled Gaussian elimination of
  :mod:`protocols.field.ranks` (exact ranks over GF(p), not over another field) — over
  GF(2^61 − 1) only once they pay: loading numba and the kernels costs a process ~0.45 s
  (seconds more in a fresh clone, whose numba cache is empty), while a one-shot run's audit
  (the quickstart: three single matrices of at most 99 × 40) ranks in tens of milliseconds
  with numpy. Each twin therefore rents before it buys (the ski-rental rule): it ranks with
  numpy while the numpy work it has done, by the cost model :func:`numpy_rank_seconds`, stays
  within :data:`RANK_RENT_SECONDS`, and with the kernels from the first stack that would
  exceed it — at once if the process has loaded them already. Both paths give the exact rank,
  so which one ran never shows in a result.

Other fields and operations are the original's. ``tests/protocols/test_mersenne_ranks.py`` checks
every operation against galois.
"""

from __future__ import annotations

import numpy as np

from protocols.field import GaloisField, Mersenne61Field, PrimeField
from protocols.field import ranks as mersenne_ranks
from protocols.field.prime import SMALL_INV


class _ObjectIntField(GaloisField):
    """GaloisField of a prime ≥ 2^31 with Python-int arithmetic instead of galois's."""

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _canon(np.add(_obj(a), _obj(b)), self.p)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _canon(np.subtract(_obj(a), _obj(b)), self.p)

    def neg(self, a: np.ndarray) -> np.ndarray:
        return _canon(np.negative(_obj(a)), self.p)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return _canon(np.multiply(_obj(a), _obj(b)), self.p)

    def sum(self, a: np.ndarray, axis: int | None = 0) -> np.ndarray:
        arr = _obj(a)
        total = np.sum(arr, axis=axis) if axis is not None else np.sum(arr.ravel())
        return _canon(np.asarray(total, dtype=object), self.p)

    def inv(self, a: np.ndarray) -> np.ndarray:
        arr = _obj(a)
        p = self.p
        values = [pow(int(v), -1, p) if v else 0 for v in arr.ravel().tolist()]
        return np.array(values, dtype=object).reshape(arr.shape)

    def ranks(self, stack: np.ndarray) -> np.ndarray:
        if mersenne_ranks.supported(self.p):
            return mersenne_ranks.ranks(self.p, stack)
        return super().ranks(stack)


RANK_RENT_SECONDS = 0.1
"""Estimated seconds of numpy Gaussian elimination a :func:`fast_field` twin of GF(2^61 − 1)
does before it loads the compiled kernels (~0.45 s to load from numba's cache): at most a
fraction of the load, and more than a one-shot run's audit needs (the quickstart's: ~0.03 s
by :func:`numpy_rank_seconds`)."""

_COLUMN_SECONDS = 40e-6  # numpy elimination: fixed cost of one column step (measured)
_ELEMENT_SECONDS = 100e-9  # ... its cost per element of the stack in that step
_SMALL_INV_SECONDS = 8e-6  # ... per pivot inverted one by one (up to SMALL_INV pivots)
_VECTOR_INV_SECONDS = 9e-3  # ... for the vectorised Fermat inverse of more pivots


def numpy_rank_seconds(shape: tuple[int, ...]) -> float:
    """Estimated seconds of :meth:`protocols.field.PrimeField.ranks` (numpy) on GF(2^61 − 1)
    for a stack of this shape (S, r, c): c column steps, each inverting up to S pivots and
    updating the S·r·c elements, fitted to measured times (``benchmarks/oneshot.py`` prints
    them beside the kernels')."""
    n_mat, n_rows, n_cols = shape
    inv = _SMALL_INV_SECONDS * n_mat if n_mat <= SMALL_INV else _VECTOR_INV_SECONDS
    return n_cols * (_COLUMN_SECONDS + inv + _ELEMENT_SECONDS * n_mat * n_rows * n_cols)


class _RankRent:
    """The numpy rank work (estimated seconds) one :func:`fast_field` twin has done so far.

    The twin is a value like every field (immutable, equal to its original); this counter is
    what it carries of its own, for the one comparison that made it."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds = 0.0


class _CompiledRanks61(Mersenne61Field):
    """Mersenne61Field whose stacked ranks run compiled once they pay (the module docstring)."""

    _rent: _RankRent

    def ranks(self, stack: np.ndarray) -> np.ndarray:
        stack = np.asarray(stack)
        if stack.ndim == 3 and not mersenne_ranks.loaded():
            rent = self._rent.seconds + numpy_rank_seconds(stack.shape)
            if rent <= RANK_RENT_SECONDS:
                self._rent.seconds = rent
                return super().ranks(stack)
        return mersenne_ranks.ranks(self.p, stack)


def _canon(x: object, p: int) -> np.ndarray:
    out = np.mod(x, p)
    return out if isinstance(out, np.ndarray) else np.asarray(out, dtype=object)


def _obj(a: np.ndarray) -> np.ndarray:
    arr = np.asarray(a)
    return arr if arr.dtype == object else arr.astype(object)


def fast_field(field_: PrimeField) -> PrimeField:
    """A field equal to ``field_`` with the fast exact paths above, or ``field_`` itself."""
    if type(field_) is GaloisField and field_.dtype == np.dtype(object):
        cls: type[PrimeField] = _ObjectIntField
    elif type(field_) is Mersenne61Field:
        cls = _CompiledRanks61
    else:
        return field_
    twin = object.__new__(cls)
    twin.__dict__.update(field_.__dict__)
    if cls is _CompiledRanks61:
        object.__setattr__(twin, "_rent", _RankRent())
    return twin
