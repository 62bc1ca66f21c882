"""GF(p) for primes below 2^31 on numpy ``int64``: tiny fields for exhaustive audits, 2^31 − 1.

Departure from DESIGN.md, which routes tiny fields through galois: a galois operation on a
small array costs about 20 µs against under 1 µs in numpy, and an exact audit makes 10^5
protocol runs of a dozen field operations each. galois (:mod:`protocols.field.galois_field`)
remains the reference this path is tested against.
"""

from __future__ import annotations

import numpy as np

from protocols.errors import InputError
from protocols.field.prime import PrimeField, is_probable_prime


class SmallPrimeField(PrimeField):
    """GF(p) for p < 2^31 on numpy ``int64``: sums and products stay below 2^62."""

    dtype = np.dtype(np.int64)

    def __init__(self, p: int) -> None:
        if not 2 <= p < (1 << 31) or not is_probable_prime(p):
            raise InputError(f"{p} is not a prime below 2^31")
        self.p = int(p)
        self._p = np.int64(p)
        super().__init__()

    def elements(self, values: object) -> np.ndarray:
        arr = np.asarray(values)
        if arr.dtype == np.uint64:  # ≥ 2^63 would wrap negative through int64
            return np.mod(arr, np.uint64(self.p)).astype(np.int64)
        if arr.dtype.kind in "iu":
            return np.mod(arr.astype(np.int64), self._p)
        if arr.dtype == object or arr.dtype.kind == "b":
            flat = [int(v) % self.p for v in arr.ravel().tolist()]
            return np.array(flat, dtype=np.int64).reshape(arr.shape)
        raise TypeError(f"cannot make field elements from dtype {arr.dtype}")

    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        return rng.integers(0, self.p, size=shape, dtype=np.int64)

    def _from_uint64(self, values: np.ndarray) -> np.ndarray:
        return values.astype(np.int64)

    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.mod(np.add(a, b, dtype=np.int64), self._p)

    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.mod(np.subtract(a, b, dtype=np.int64), self._p)

    def neg(self, a: np.ndarray) -> np.ndarray:
        return np.mod(np.negative(np.asarray(a, dtype=np.int64)), self._p)

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.mod(np.multiply(a, b, dtype=np.int64), self._p)

    def sum(self, a: np.ndarray, axis: int | None = 0) -> np.ndarray:
        # Reduce first so that each term is < 2^31; 2^32 terms then fit in int64.
        return np.mod(np.sum(np.mod(np.asarray(a, dtype=np.int64), self._p), axis=axis), self._p)

    def sum_arrays(self, arrays: list[np.ndarray]) -> np.ndarray:
        if not arrays:
            raise ValueError("sum_arrays needs at least one array")
        return np.mod(np.sum(np.stack(arrays), axis=0, dtype=np.int64), self._p)
