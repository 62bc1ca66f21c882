"""Fixed-point encoding of reals into a prime field.

SecureSum (Tsikhanovich thesis, seed 001, §2.2) converts each party's real vector x into a
vector x̂ of a finite field "using a fixed decimal place", adds additive shares and decodes the
sum. :class:`FixedPoint` encode rounds x·2^f to the nearest integer and maps negatives to the
upper half of the field; decode maps the upper half back to negatives. Encoding refuses NaN and
infinity, and raises :class:`~protocols.errors.FieldOverflowError` when a value — or the sum of
the ``n_summands`` values a protocol will form — exceeds the field's signed range (p − 1)/2,
naming the value and the bound. For GF(2^61 − 1) and
:data:`~protocols.field.mersenne61.KERNEL_MIN_ELEMENTS` values or more, both directions run in
one compiled pass; a value the pass cannot encode (beyond the bound, or not finite) sends the
call down the numpy path, which raises the error.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from protocols.errors import EncodingError, FieldOverflowError, InputError
from protocols.field import mersenne61
from protocols.field.mersenne61 import MERSENNE61, Mersenne61Field
from protocols.field.prime import PrimeField


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
                and x.dtype == np.float64 and x.size >= mersenne61.KERNEL_MIN_ELEMENTS
                and x.flags.c_contiguous
                and self._is_mersenne61):
            # SecureSum's case — a float64 vector of a party's statistics into GF(2^61 − 1):
            # the checks below hold by construction, and the kernel checks the bound; a
            # value it refuses falls through to the general path, which names it
            out = np.empty(x.shape, dtype=np.uint64)
            limit = self._encode_limits.get(n_summands)
            if limit is None:
                limit = self._encode_limits[n_summands] = _float_at_most(self.half // n_summands)
            flat = x.ndim == 1
            encode_fixed = mersenne61.mersenne61_kernels().encode_fixed
            if encode_fixed(x if flat else x.reshape(-1), self.scale, limit,
                            out if flat else out.reshape(-1)):
                return out
        n_summands = _check_summands(n_summands)
        arr = self._real_array(x, n_summands, what)
        limit = self.half // n_summands
        if (isinstance(self.field, Mersenne61Field) and arr.dtype == np.float64
                and arr.flags.c_contiguous and arr.size >= mersenne61.KERNEL_MIN_ELEMENTS):
            out = np.empty(arr.shape, dtype=np.uint64)
            if mersenne61.mersenne61_kernels().encode_fixed(
                    arr.reshape(-1), self.scale, _float_at_most(limit), out.reshape(-1)):
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
            np.add(out, np.uint64(MERSENNE61), out=out, where=ints < 0)
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
        decoded in one compiled pass (:func:`protocols.field.mersenne61_kernels.sum_and_decode`:
        M ≤ 4 column sums); more are added one by one, the last addition with the decoding
        (:func:`~protocols.field.mersenne61_kernels.add_into_and_decode`). An element ≥ p in any
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
        if (mersenne61.is_flat_u64(first) and first.size >= mersenne61.KERNEL_MIN_ELEMENTS
                and all(mersenne61.is_flat_u64(a) and a.size == first.size for a in arrays)):
            kernels = mersenne61.mersenne61_kernels()
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
                and a.flags.c_contiguous and a.size >= mersenne61.KERNEL_MIN_ELEMENTS):
            out = np.empty(a.shape, dtype=np.float64)
            if mersenne61.mersenne61_kernels().decode_fixed(a.reshape(-1), np.uint64(self.half),
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
