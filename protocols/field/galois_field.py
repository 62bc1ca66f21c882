"""GF(p) for any prime through the ``galois`` package (2^64 − 59, 2^127 − 1, ...).

The reference the fast paths (:mod:`protocols.field.mersenne61`,
:mod:`protocols.field.small_prime`) are tested against. Elements are plain numpy arrays
(``int64`` below 2^31, ``object`` above), so payloads, ledgers and views never hold galois types.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from protocols.errors import InputError
from protocols.field.prime import PrimeField, is_probable_prime


class GaloisField(PrimeField):
    """GF(p) for any prime through the ``galois`` package (reference and non-hot fields)."""

    def __init__(self, p: int) -> None:
        if not is_probable_prime(p):
            raise InputError(f"{p} is not prime")
        self.p = int(p)
        self.dtype = np.dtype(np.int64) if self.p < (1 << 31) else np.dtype(object)
        super().__init__()
        # A GaloisField for p < 2^31 exists as the reference SmallPrimeField is tested against.

    @cached_property
    def gf(self):
        import galois

        return galois.GF(self.p)

    def _wrap(self, a: np.ndarray):
        return self.gf(np.asarray(a, dtype=self.dtype) if self.dtype != object else np.asarray(a))

    def _unwrap(self, a: object) -> np.ndarray:
        arr = np.asarray(a.view(np.ndarray) if hasattr(a, "view") else a)
        return arr.astype(self.dtype) if arr.dtype != self.dtype else arr

    def elements(self, values: object) -> np.ndarray:
        arr = np.asarray(values)
        if self.dtype == np.int64 and arr.dtype == np.uint64:  # no wrap through int64
            return np.mod(arr, np.uint64(self.p)).astype(np.int64)
        if self.dtype == np.int64 and arr.dtype.kind in "iu":
            return np.mod(arr.astype(np.int64), np.int64(self.p))
        flat = [int(v) % self.p for v in arr.ravel().tolist()]
        return np.array(flat, dtype=self.dtype).reshape(arr.shape)

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        if self.p <= (1 << 63):
            return self._from_uint64(rng.integers(0, self.p, size=shape, dtype=np.uint64))
        size = int(np.prod(shape))
        per = self.words_per_element()
        out: list[int] = []
        while len(out) < size:  # rejection sampling on bits-wide candidates
            words = rng.integers(0, 1 << 64, size=per * (size - len(out) + 8), dtype=np.uint64)
            out.extend(self.from_words(words).tolist())
        return np.array(out[:size], dtype=object).reshape(shape)

    def _from_uint64(self, values: np.ndarray) -> np.ndarray:
        if self.dtype == np.int64:
            return values.astype(np.int64)
        return np.array([int(v) for v in values.tolist()], dtype=object)

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._unwrap(self._wrap(a) + self._wrap(b))

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._unwrap(self._wrap(a) - self._wrap(b))

    def neg(self, a: np.ndarray) -> np.ndarray:
        return self._unwrap(-self._wrap(a))

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._unwrap(self._wrap(a) * self._wrap(b))

    def sum(self, a: np.ndarray, axis: int | None = 0) -> np.ndarray:
        wrapped = self._wrap(a)
        total = np.sum(wrapped, axis=axis) if axis is not None else np.sum(wrapped.ravel())
        return self._unwrap(np.asarray(total) if not hasattr(total, "view") else total)
