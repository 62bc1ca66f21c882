"""Prime fields with vectorised arithmetic, and fixed-point encoding of reals into them.

SecureSum (Tsikhanovich thesis, seed 001, §2.2) converts each party's real vector x into a
vector x̂ of a finite field "using a fixed decimal place", adds additive shares in the field and
decodes the sum. This module provides both halves:

* :class:`PrimeField` — add, sub, neg, mul, sum, uniform sampling and a few linear-algebra
  helpers over GF(p), vectorised over numpy arrays.

  - :class:`Mersenne61Field` is the hot path for p = 2^61 − 1 on ``uint64``. numpy's uint64
    multiply wraps silently, so products go through 32-bit halves and the Mersenne identity
    2^61 ≡ 1 (mod p); nothing ever wraps. Sums of a few vectors (SecureSum's
    reconstruction) run in a compiled pass per vector (:mod:`protocols.mersenne61_kernels`)
    from :data:`KERNEL_MIN_ELEMENTS` elements on.
  - :class:`SmallPrimeField` serves primes below 2^31 (tiny fields for exhaustive audits,
    2^31 − 1) on ``int64``, where products fit in 62 bits. Departure from DESIGN.md, which
    routes tiny fields through galois: a galois operation on a small array costs about 20 µs
    against under 1 µs in numpy, and an exact audit makes 10^5 protocol runs of a dozen field
    operations each. galois remains the reference these paths are tested against.
  - :class:`GaloisField` serves any other prime through the ``galois`` package (2^64 − 59,
    2^127 − 1, ...), and is the reference the fast paths are tested against.

  Field elements are plain numpy arrays (``uint64`` for the fast path, ``int64`` or ``object``
  for galois fields), so payloads, ledgers and views never hold library-specific types.

* :class:`FixedPoint` — encode rounds x·2^f to the nearest integer and maps negatives to the
  upper half of the field; decode maps the upper half back to negatives. Encoding refuses NaN
  and infinity, and raises :class:`~protocols.errors.FieldOverflowError` when a value — or the
  sum of the ``n_summands`` values a protocol will form — exceeds the field's signed range
  (p − 1)/2, naming the value and the bound. For GF(2^61 − 1) and :data:`KERNEL_MIN_ELEMENTS`
  values or more, both directions run in one compiled pass; a value the pass cannot encode
  (beyond the bound, or not finite) sends the call down the numpy path, which raises the
  error.
"""

from __future__ import annotations

import math
import numbers
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache, cached_property
from types import ModuleType

import numpy as np

from protocols.errors import EncodingError, FieldOverflowError, InputError

MERSENNE61 = (1 << 61) - 1

_U64 = np.uint64
_F64 = np.dtype(np.float64)
_P61 = np.uint64(MERSENNE61)
SUM_BLOCK = 1 << 14
STACK_BELOW = 256
"""Sums of more than eight arrays shorter than this stack them (:func:`_sum_rows61`); longer
ones are added one by one, block by block, which reads each once (measured on numpy 2: the
stack wins below a few hundred elements, the blocked loop from about a thousand)."""
SMALL_INV = 48  # arrays up to this size are inverted element by element (PrimeField.inv)
KERNEL_MIN_ELEMENTS = 1024
"""Vectors from this length on take the compiled GF(2^61 − 1) paths
(:mod:`protocols.mersenne61_kernels`); shorter ones keep the numpy paths. A process pays once
for the kernels — importing numba and loading them from its disk cache, ~0.5 s — and saves
~80 µs per SecureSum party-call of 2,001 elements; runs of short vectors (the quickstart,
scenarios with a few hundred columns) are over before that would pay."""
_M32 = np.uint64(0xFFFFFFFF)
_M29 = np.uint64((1 << 29) - 1)


@cache
def mersenne61_kernels() -> ModuleType:
    """The compiled GF(2^61 − 1) kernels (:mod:`protocols.mersenne61_kernels`).

    numba is imported on the first call only, and the kernels are compiled once and then
    loaded from numba's on-disk cache.
    """
    from protocols import mersenne61_kernels as kernels

    return kernels


def is_flat_u64(a: object) -> bool:
    """Whether ``a`` is a 1-D, C-contiguous, native ``uint64`` array (what the kernels take)."""
    return (type(a) is np.ndarray and a.dtype == _U64 and a.ndim == 1
            and a.flags.c_contiguous)


def parse_prime(text: str | int) -> int:
    """Parse a prime written as an integer or as ``"2^a-b"`` / ``"2**a-b"`` / ``"2^a+b"``.

    Raises
    ------
    InputError
        If the text is not of that form or the number is not prime.
    """
    if isinstance(text, bool):
        raise InputError(f"field prime {text!r} is not an integer")
    if isinstance(text, int):
        p = text
    else:
        s = str(text).replace(" ", "").replace("**", "^")
        match = re.fullmatch(r"2\^(\d+)([+-]\d+)?", s)
        if match:
            p = (1 << int(match.group(1))) + int(match.group(2) or 0)
        elif re.fullmatch(r"\d+", s):
            p = int(s)
        else:
            raise InputError(f"field prime {text!r} is not an integer or of the form '2^a-b'")
    if p < 2 or not _is_probable_prime(p):
        raise InputError(f"field prime {text!r} = {p} is not prime")
    return p


def describe_prime(p: int) -> str:
    """``"2^a-b"`` (or ``"2^a+b"``) for a prime above 2^16 within 2^12 of a power of two.

    That is how such primes are written (2^61-1, 2^127-1, 2^64-59); others keep their digits.
    """
    if p > (1 << 16):
        a = p.bit_length()
        for power in (a - 1, a):
            offset = p - (1 << power)
            if abs(offset) < (1 << 12):
                return f"2^{power}{offset:+d}"
    return str(p)


def _is_probable_prime(n: int) -> bool:
    """Deterministic Miller–Rabin for n < 3.3·10^24, strong probable-prime test above."""
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    if n < 2:
        return False
    for q in small:
        if n % q == 0:
            return n == q
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


class PrimeField(ABC):
    """GF(p) with vectorised arithmetic on numpy arrays.

    Attributes
    ----------
    p : int
        The prime modulus.
    dtype : numpy.dtype
        The dtype of element arrays.
    """

    p: int
    dtype: np.dtype

    def __init__(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def __setattr__(self, name: str, value: object) -> None:
        """Fields are values: once built, their attributes cannot be assigned."""
        if self.__dict__.get("_frozen"):
            raise AttributeError(f"{type(self).__name__} is immutable; cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __copy__(self) -> PrimeField:
        """An equal field object of one's own (the simulation gives one to each party)."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    @property
    def bits(self) -> int:
        """Bit length of p."""
        return self.p.bit_length()

    @property
    def name(self) -> str:
        return f"GF({self.p})"

    @property
    def element_bytes(self) -> int:
        """Bytes one element takes on the wire (fixed width)."""
        return 8 if self.dtype != np.dtype(object) else (self.bits + 7) // 8

    def __repr__(self) -> str:
        return f"{type(self).__name__}(p={self.p})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PrimeField) and other.p == self.p

    def __hash__(self) -> int:
        return hash(("PrimeField", self.p))

    # -- construction -----------------------------------------------------------------------

    @abstractmethod
    def elements(self, values: object) -> np.ndarray:
        """Reduce integers (any sign, any size) modulo p into an element array."""

    def zeros(self, shape: int | tuple[int, ...]) -> np.ndarray:
        return np.zeros(shape, dtype=self.dtype) if self.dtype != np.dtype(object) else (
            np.full(shape, 0, dtype=object)
        )

    @abstractmethod
    def random(self, rng: np.random.Generator, shape: int | tuple[int, ...]) -> np.ndarray:
        """Uniform elements drawn from ``rng`` (exactly uniform, no modulo bias)."""

    def from_words(self, words: np.ndarray) -> np.ndarray:
        """Map uniform 64-bit words to uniform elements by masking and rejection.

        Each word is masked to ``bits`` bits; values ≥ p are rejected, so the accepted
        elements are exactly uniform. The result may be shorter than ``words``; the caller
        draws more words for the rest (see :mod:`protocols.prg`). Fields wider than 64 bits
        take ``ceil(bits/64)`` consecutive words per candidate.
        """
        words = np.asarray(words, dtype=_U64)
        if self.bits <= 64:
            masked = words & np.uint64((1 << self.bits) - 1) if self.bits < 64 else words.copy()
            keep = masked < np.uint64(self.p)
            accepted = masked if keep.all() else masked[keep]
            return self._from_uint64(accepted)
        per = (self.bits + 63) // 64
        n = len(words) // per
        mask = (1 << self.bits) - 1
        out = []
        for i in range(n):
            value = 0
            for j in range(per):
                value |= int(words[i * per + j]) << (64 * j)
            value &= mask
            if value < self.p:
                out.append(value)
        return self.elements(np.array(out, dtype=object))

    def words_per_element(self) -> int:
        return max(1, (self.bits + 63) // 64)

    @abstractmethod
    def _from_uint64(self, values: np.ndarray) -> np.ndarray:
        """Convert uint64 values already < p into this field's dtype."""

    # -- arithmetic -------------------------------------------------------------------------

    @abstractmethod
    def add(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def sub(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def neg(self, a: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def sum(self, a: np.ndarray, axis: int | None = 0) -> np.ndarray:
        """Sum of elements along ``axis`` (all elements when ``axis`` is None)."""

    def sum_arrays(self, arrays: list[np.ndarray]) -> np.ndarray:
        """Sum of a list of equally shaped element arrays."""
        if not arrays:
            raise ValueError("sum_arrays needs at least one array")
        total = arrays[0]
        for a in arrays[1:]:
            total = self.add(total, a)
        return total

    def combine(self, plus: list[np.ndarray], minus: list[np.ndarray]) -> np.ndarray:
        """Σ plus − Σ minus for equally shaped arrays (``plus`` must not be empty)."""
        total = self.sum_arrays(plus)
        return self.sub(total, self.sum_arrays(minus)) if minus else total

    def inv_scalar(self, a: int) -> int:
        """Multiplicative inverse of one non-zero element."""
        a = int(a) % self.p
        if a == 0:
            raise ZeroDivisionError("0 has no inverse in a field")
        return pow(a, self.p - 2, self.p)

    def validate(self, a: np.ndarray, what: str = "array") -> np.ndarray:
        """Check that ``a`` holds elements of this field (right dtype, 0 ≤ a < p)."""
        a = np.asarray(a)
        if a.dtype != self.dtype:
            raise InputError(f"{what} has dtype {a.dtype}, expected {self.dtype} for {self.name}")
        if a.size and (np.any(a < 0) or np.any(a >= self.p)):
            raise InputError(f"{what} holds values outside [0, {self.p}) for {self.name}")
        return a

    # -- linear algebra (used by audits) ----------------------------------------------------

    def power(self, a: np.ndarray, exponent: int) -> np.ndarray:
        """Elementwise a^exponent by square-and-multiply (vectorised)."""
        result = self.elements(np.ones(np.shape(a), dtype=np.int64))
        base = np.asarray(a)
        e = int(exponent)
        while e:
            if e & 1:
                result = self.mul(result, base)
            e >>= 1
            if e:
                base = self.mul(base, base)
        return result

    def inv(self, a: np.ndarray) -> np.ndarray:
        """Elementwise inverse (Fermat: a^(p−2)); zeros map to zero.

        Short arrays (the pivots of small eliminations) go through Python's ``pow`` element by
        element, which beats ~2·log2(p) vectorised multiplications below a few dozen elements.
        """
        arr = np.asarray(a)
        if arr.size <= SMALL_INV:
            p = self.p
            values = [pow(int(v), p - 2, p) for v in arr.ravel()]
            return self.elements(np.array(values, dtype=object)).reshape(arr.shape)
        return self.power(a, self.p - 2)

    def ranks(self, stack: np.ndarray) -> np.ndarray:
        """Ranks of a stack of matrices, shape (S, r, c) → (S,), eliminated all at once.

        Gaussian elimination runs column by column over every matrix of the stack together,
        each with its own pivot row, so thousands of small ranks cost a few vector operations
        per column.
        """
        a = np.array(stack, dtype=self.dtype, copy=True)
        if a.ndim != 3:
            raise ValueError("ranks expects a 3-D stack of matrices")
        n_mat, n_rows, n_cols = a.shape
        rank = np.zeros(n_mat, dtype=np.int64)
        rows = np.arange(n_rows)
        for j in range(n_cols):
            eligible = (a[:, :, j] != 0) & (rows[None, :] >= rank[:, None])
            has = np.nonzero(eligible.any(axis=1))[0]
            if has.size == 0:
                continue
            piv = np.argmax(eligible[has], axis=1)
            top = rank[has]
            pivot_rows = a[has, piv].copy()
            a[has, piv] = a[has, top]
            a[has, top] = pivot_rows
            scale = self.inv(pivot_rows[:, j])
            pivot_rows = self.mul(pivot_rows, scale[:, None])
            a[has, top] = pivot_rows
            factors = a[has, :, j].copy()
            factors[np.arange(has.size), top] = 0
            sub = a[has]
            a[has] = self.sub(sub, self.mul(factors[:, :, None], pivot_rows[:, None, :]))
            rank[has] += 1
        return rank

    def rank(self, matrix: np.ndarray) -> int:
        """Rank of a 2-D element array over GF(p) (Gaussian elimination, vectorised rows)."""
        return len(self.row_reduce(matrix)[1])

    def row_reduce(self, matrix: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """Reduced row echelon form and pivot columns of a 2-D element array."""
        a = np.array(matrix, dtype=self.dtype, copy=True)
        if a.ndim != 2:
            raise ValueError("row_reduce expects a 2-D array")
        rows, cols = a.shape
        pivots: list[int] = []
        r = 0
        for c in range(cols):
            if r == rows:
                break
            nz = np.nonzero(a[r:, c] != 0)[0]
            if nz.size == 0:
                continue
            piv = r + int(nz[0])
            if piv != r:
                a[[r, piv]] = a[[piv, r]]
            inv = self.inv_scalar(int(a[r, c]))
            a[r] = self.mul(a[r], self.elements(np.array([inv], dtype=object)))
            others = np.nonzero(a[:, c] != 0)[0]
            others = others[others != r]
            if others.size:
                factors = a[others, c][:, None]
                a[others] = self.sub(a[others], self.mul(factors, a[r][None, :]))
            pivots.append(c)
            r += 1
        return a, pivots


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
        (:func:`_sum_rows61`).
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
            total = _sum_rows61(np.stack(plus)).reshape(shape)
            if not minus:
                return total
            return self.sub(total, _sum_rows61(np.stack(minus)).reshape(shape))
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


class SmallPrimeField(PrimeField):
    """GF(p) for p < 2^31 on numpy ``int64``: sums and products stay below 2^62."""

    dtype = np.dtype(np.int64)

    def __init__(self, p: int) -> None:
        if not 2 <= p < (1 << 31) or not _is_probable_prime(p):
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


def _sum_rows61(stacked: np.ndarray) -> np.ndarray:
    """Σ over the first axis of an array of GF(2^61 − 1) elements, modulo 2^61 − 1.

    Seven elements add up without overflow (7·(2^61 − 2) < 2^64), so the rows are summed in
    groups of seven and reduced, and again, until at most seven remain: a few passes over the
    data, with temporaries a seventh of its size (the 32-bit split of :meth:`sum` makes four
    full-size ones, which cost more than the sum itself for a stack of many short arrays).

    Parameters
    ----------
    stacked : numpy.ndarray, shape (n, ...)
        ``n`` ≥ 1 arrays of elements in [0, p), stacked.

    Returns
    -------
    numpy.ndarray, shape (prod(stacked.shape[1:]),)
        Their sum, flattened.
    """
    width = math.prod(stacked.shape[1:])
    rows = stacked.reshape(len(stacked), width)
    while len(rows) > 7:
        whole = len(rows) // 7 * 7
        sums = _reduce61(rows[:whole].reshape(whole // 7, 7, width).sum(axis=1))
        rows = np.concatenate([sums, rows[whole:]]) if whole < len(rows) else sums
    return _reduce61(rows.sum(axis=0))


def reduce61_inplace(x: np.ndarray, tmp: np.ndarray) -> None:
    """Reduce uint64 values (any, below 2^64) modulo 2^61 − 1 in place.

    ``x`` is a 1-D array and ``tmp`` scratch space of the same size; used by the blocked sums
    here and by the fused mask sum of :mod:`protocols.prg`.
    """
    np.right_shift(x, np.uint64(61), out=tmp)
    np.bitwise_and(x, _P61, out=x)
    np.add(x, tmp, out=x)  # < 2^61 + 8
    np.subtract(x, _P61, out=tmp)  # wraps (huge) where x < p
    np.minimum(x, tmp, out=x)


def _min_wrapped(s: np.ndarray, base: np.ndarray, p: np.uint64, subtract: bool) -> np.ndarray:
    """min(s, base ∓ p) with uint64 wrap-around intended; numpy warns on 0-d wraps only."""
    if np.ndim(base) == 0:
        with np.errstate(over="ignore"):
            other = base - p if subtract else base + p
            return np.minimum(s, other)
    return np.minimum(s, base - p if subtract else base + p)


class GaloisField(PrimeField):
    """GF(p) for any prime through the ``galois`` package (reference and non-hot fields)."""

    def __init__(self, p: int) -> None:
        if not _is_probable_prime(p):
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


def _check_summands(n_summands: object) -> int:
    if isinstance(n_summands, bool) or not isinstance(n_summands, int | np.integer):
        raise InputError(f"n_summands = {n_summands!r} must be an integer of at least 1")
    if n_summands < 1:
        raise InputError(
            f"n_summands = {n_summands} is out of range: it counts the values a protocol sums "
            "(M for SecureSum), at least 1"
        )
    return int(n_summands)


def _float_at_most(limit: int) -> float:
    """The largest float not above the integer ``limit``: for a float s, s ≤ limit exactly
    when s ≤ this value."""
    as_float = float(limit)  # rounds to nearest, possibly above
    return math.nextafter(as_float, 0.0) if as_float > limit else as_float


def prime_field(p: int | str) -> PrimeField:
    """GF(p): the uint64 path for 2^61 − 1, int64 below 2^31, galois for any other prime."""
    prime = parse_prime(p)
    if prime == MERSENNE61:
        return Mersenne61Field()
    if prime < (1 << 31):
        return SmallPrimeField(prime)
    return GaloisField(prime)


FRAC_BITS = 24
"""The one default of fixed-point fractional bits: :class:`~sim.simulation.Simulation`, the
audits (:func:`sim.privacy.audit`), coalition studies and scenarios (``field.frac_bits``) all
start from it (:func:`default_frac_bits` caps it for a field too small to hold it)."""


def default_frac_bits(field: PrimeField) -> int:
    """:data:`FRAC_BITS`, or ``bits(p) − 2`` for a field too small for it (GF(7): 1)."""
    return max(0, min(FRAC_BITS, field.bits - 2))


@dataclass(frozen=True)
class FixedPoint:
    """Fixed-point encoding of reals with ``frac_bits`` fractional bits into ``field``.

    encode(x) = round(x·2^f) mod p, with negatives in the upper half of the field;
    decode(a) = (a if a ≤ (p−1)/2 else a − p) / 2^f. Rounding is to nearest, so one encoded
    value is within 2^−(f+1) of x, and a sum of M encoded values within M·2^−(f+1) of the sum.
    """

    field: PrimeField
    frac_bits: int

    def __post_init__(self) -> None:
        if not isinstance(self.frac_bits, int) or isinstance(self.frac_bits, bool):
            raise InputError(f"frac_bits must be an integer, got {self.frac_bits!r}")
        if not 0 <= self.frac_bits < self.field.bits - 1:
            raise InputError(
                f"frac_bits = {self.frac_bits} is out of range [0, {self.field.bits - 2}] "
                f"for {self.field.name}"
            )

    @cached_property
    def scale(self) -> float:
        """2^f, the factor a real is multiplied by before rounding (worked out once)."""
        return float(1 << self.frac_bits)

    @cached_property
    def half(self) -> int:
        """Largest encoded magnitude: (p − 1) / 2 (worked out once)."""
        return (self.field.p - 1) // 2

    def bound(self, n_summands: int = 1) -> float:
        """Largest |x| whose encoding can be summed ``n_summands`` times without wrapping."""
        limit = self.half // _check_summands(n_summands)
        return _float_at_most(limit) / self.scale  # exact: scale is a power of two

    def encode(self, x: object, n_summands: int = 1, what: str = "value") -> np.ndarray:
        """Encode reals into field elements, refusing NaN/inf and values beyond the bound.

        Parameters
        ----------
        x : array_like of float, any shape
            The values to encode.
        n_summands : int
            How many such values a protocol will add up (M for SecureSum); every |x| must be
            at most ``bound(n_summands)`` so that the sum cannot wrap around the field.
        what : str
            Name used in error messages.

        Raises
        ------
        EncodingError
            If ``x`` holds anything but real numbers (text, complex, None, ragged lists) or
            NaN/infinity.
        FieldOverflowError
            If a value exceeds ``bound(n_summands)``, including integers too large for a
            float (10^400).
        InputError
            If ``n_summands`` is not an integer of at least 1.
        """
        if (type(x) is np.ndarray and type(n_summands) is int and n_summands >= 1
                and x.dtype == _F64 and x.size >= KERNEL_MIN_ELEMENTS and x.flags.c_contiguous
                and self._is_mersenne61):
            # SecureSum's case — a float64 vector of a party's statistics into GF(2^61 − 1):
            # the checks below hold by construction, and the kernel checks the bound; a
            # value it refuses falls through to the general path, which names it
            out = np.empty(x.shape, dtype=np.uint64)
            limit = self._encode_limits.get(n_summands)
            if limit is None:
                limit = self._encode_limits[n_summands] = _float_at_most(self.half // n_summands)
            flat = x.ndim == 1
            if mersenne61_kernels().encode_fixed(x if flat else x.reshape(-1), self.scale,
                                                 limit, out if flat else out.reshape(-1)):
                return out
        n_summands = _check_summands(n_summands)
        arr = self._real_array(x, n_summands, what)
        limit = self.half // n_summands
        if (isinstance(self.field, Mersenne61Field) and arr.dtype == np.float64
                and arr.flags.c_contiguous and arr.size >= KERNEL_MIN_ELEMENTS):
            out = np.empty(arr.shape, dtype=np.uint64)
            if mersenne61_kernels().encode_fixed(arr.reshape(-1), self.scale,
                                                 _float_at_most(limit), out.reshape(-1)):
                return out
            # a value beyond the bound, or not finite: the numpy path below names it
        scaled = np.empty_like(arr)
        np.multiply(arr, self.scale, out=scaled)
        np.rint(scaled, out=scaled)
        low, high = (float(scaled.min()), float(scaled.max())) if arr.size else (0.0, 0.0)
        if not (np.isfinite(low) and np.isfinite(high)):  # NaN and ±inf reach min or max
            finite = np.isfinite(arr)
            if not finite.all():
                bad = arr[~finite].ravel()[0]
                raise EncodingError(f"{what} holds {bad!r}; only finite values can be encoded")
        # Python floats against the int limit compare exactly (numpy would round the limit);
        # a finite value whose scaling overflowed to ±inf lands here too.
        if max(-low, high) > limit:
            idx = int(np.argmax(np.abs(scaled)))
            if abs(float(scaled.ravel()[idx])) > limit:
                hint = (
                    f"{n_summands} such values are summed in the field; lower frac_bits "
                    f"(now {self.frac_bits}) or use a larger prime"
                    if n_summands > 1
                    else f"lower frac_bits (now {self.frac_bits}) or use a larger prime"
                )
                raise FieldOverflowError(float(arr.ravel()[idx]), self.bound(n_summands), what,
                                         hint)
        if isinstance(self.field, Mersenne61Field):
            ints = scaled.astype(np.int64)
            out = ints.view(np.uint64)  # ints is this call's own array: reuse its memory
            # a negative v reads as 2^64 + v; adding p wraps to p + v (mod 2^64), in [0, p)
            np.add(out, _P61, out=out, where=ints < 0)
            return out
        if self.field.bits <= 62:
            return self.field.elements(scaled.astype(np.int64))
        ints = np.array([int(v) for v in scaled.ravel().tolist()], dtype=object)
        return self.field.elements(ints.reshape(arr.shape))

    def _real_array(self, x: object, n_summands: int, what: str) -> np.ndarray:
        """``x`` as float64, refusing text, complex numbers and other non-reals.

        An integer too large for a float (10^400) is a :class:`FieldOverflowError`, as any
        value beyond the bound is.
        """
        try:
            arr = np.asarray(x)
        except (TypeError, ValueError) as exc:
            raise EncodingError(f"{what} is not an array of real numbers: {exc}") from None
        if arr.dtype.kind in "biuf":
            return arr.astype(np.float64, copy=False)
        if arr.dtype.kind != "O":
            hint = "; convert text with float() first" if arr.dtype.kind in "US" else ""
            raise EncodingError(
                f"{what} has dtype {arr.dtype}; only real numbers (bool, int, float) can be "
                f"encoded{hint}"
            )
        out = np.empty(arr.shape, dtype=np.float64)
        flat = out.reshape(-1)
        for i, v in enumerate(arr.reshape(-1).tolist()):
            if isinstance(v, str | bytes) or not isinstance(v, numbers.Real):
                raise EncodingError(
                    f"{what} holds {v!r} ({type(v).__name__}); only real numbers can be encoded"
                )
            try:
                flat[i] = float(v)
            except OverflowError:
                raise FieldOverflowError(v, self.bound(n_summands), what) from None
        return out

    def decode_sum(self, arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(Σ arrays, its decoding): SecureSum's reconstruction and decoding in one step.

        Every party adds up the M column sums, Σ_j r^(j) = Σ_i x̂_i (thesis seed 001, §2.2,
        Table 2.1), and decodes the sum. The result is ``(field.sum_arrays(arrays),
        decode(field.sum_arrays(arrays)))``, bit for bit, and both arrays are new. For
        GF(2^61 − 1) and two or more flat ``uint64`` vectors of
        :data:`KERNEL_MIN_ELEMENTS` elements or more, up to four arrays are summed and the sum
        decoded in one compiled pass (:func:`protocols.mersenne61_kernels.sum_and_decode`:
        M ≤ 4 column sums); more are added one by one, the last addition with the decoding
        (:func:`~protocols.mersenne61_kernels.add_into_and_decode`). An element ≥ p in any
        array sends the call down the general path, which computes it as before.

        Parameters
        ----------
        arrays : list of numpy.ndarray
            At least one array of field elements, all of one shape.

        Returns
        -------
        total : numpy.ndarray of ``field.dtype``
            Their sum in the field.
        values : numpy.ndarray of float64, the shape of ``total``
            ``decode(total)``.
        """
        first = arrays[0] if len(arrays) >= 2 and self._is_mersenne61 else None
        if is_flat_u64(first) and first.size >= KERNEL_MIN_ELEMENTS and all(
                is_flat_u64(a) and a.size == first.size for a in arrays):
            kernels = mersenne61_kernels()
            values = np.empty(first.size, dtype=np.float64)
            more = len(arrays) - 1
            if more <= 3:  # unused slots repeat the last array, which the kernel does not read
                total = np.empty(first.size, dtype=np.uint64)
                rest = [*arrays[1:], *[arrays[-1]] * (3 - more)]
                if kernels.sum_and_decode(first, rest[0], rest[1], rest[2], more,
                                          self._half_u64, self.scale, total, values):
                    return total, values
            else:
                total = first.copy()
                for a in arrays[1:-1]:
                    if not kernels.add_into(total, a, False):
                        break
                else:
                    if kernels.add_into_and_decode(total, arrays[-1], self._half_u64,
                                                   self.scale, values):
                        return total, values
        total = self.field.sum_arrays(arrays)
        return total, self.decode(total)

    @cached_property
    def _is_mersenne61(self) -> bool:
        """Whether the field is GF(2^61 − 1) on the uint64 path (worked out once)."""
        return isinstance(self.field, Mersenne61Field)

    @cached_property
    def _encode_limits(self) -> dict[int, float]:
        """The float bound of a scaled value for each count of summands met so far
        (:func:`_float_at_most` of ``half // n_summands``): a party's SecureSum calls all have
        M summands, and the comparison of a float with a 60-bit integer takes Python's slow
        path. This FixedPoint's own record of public constants."""
        return {}

    @cached_property
    def _half_u64(self) -> np.uint64:
        """:attr:`half` as a uint64 scalar, for the compiled decoding."""
        return np.uint64(self.half)

    def decode(self, a: np.ndarray) -> np.ndarray:
        """Decode field elements to reals (upper half of the field is negative)."""
        a = np.asarray(a)
        if (a.dtype == np.uint64 and isinstance(self.field, Mersenne61Field)
                and a.flags.c_contiguous and a.size >= KERNEL_MIN_ELEMENTS):
            out = np.empty(a.shape, dtype=np.float64)
            if mersenne61_kernels().decode_fixed(a.reshape(-1), np.uint64(self.half),
                                                 self.scale, out.reshape(-1)):
                return out
        if a.dtype == np.uint64:
            signed = a.astype(np.int64)
            signed = np.where(a > np.uint64(self.half), signed - np.int64(self.field.p), signed)
            return signed.astype(np.float64) / self.scale
        if a.dtype == np.int64:
            signed = np.where(a > self.half, a - self.field.p, a)
            return signed.astype(np.float64) / self.scale
        flat = [(int(v) - self.field.p if int(v) > self.half else int(v)) for v in a.ravel()]
        return (np.array([float(v) for v in flat]) / self.scale).reshape(a.shape)
