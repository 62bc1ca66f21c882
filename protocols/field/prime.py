"""Prime fields GF(p): the abstract :class:`PrimeField` and the primes' text forms.

SecureSum (Tsikhanovich thesis, seed 001, §2.2) adds additive shares in a finite field. Every
field of the family (:mod:`protocols.field`) implements :class:`PrimeField` — add, sub, neg, mul,
sum, uniform sampling and a few linear-algebra helpers over GF(p), vectorised over numpy arrays
— and :func:`parse_prime` / :func:`describe_prime` read and write primes as ``"2^a-b"``.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

import numpy as np

from protocols.errors import InputError

SMALL_INV = 48  # arrays up to this size are inverted element by element (PrimeField.inv)


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
    if p < 2 or not is_probable_prime(p):
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


def is_probable_prime(n: int) -> bool:
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
        draws more words for the rest (see :mod:`protocols.crypto.keystream`). Fields wider than 64
        bits take ``ceil(bits/64)`` consecutive words per candidate.
        """
        words = np.asarray(words, dtype=np.uint64)
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
