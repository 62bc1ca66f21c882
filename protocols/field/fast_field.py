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
  :mod:`protocols.field.ranks` (exact ranks over GF(p), not over another field).

Other fields and operations are the original's. ``tests/protocols/test_mersenne_ranks.py`` checks
every operation against galois.
"""

from __future__ import annotations

import numpy as np

from protocols.field import GaloisField, Mersenne61Field, PrimeField
from protocols.field import ranks as mersenne_ranks


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


class _CompiledRanks61(Mersenne61Field):
    """Mersenne61Field whose stacked ranks run compiled."""

    def ranks(self, stack: np.ndarray) -> np.ndarray:
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
    return twin
