"""The compiled GF(2^61 − 1) paths of SecureSum's small calls give what the numpy paths give.

:mod:`protocols.field.mersenne61_kernels` serves fixed-point encoding and decoding, the sums of
:meth:`~protocols.field.Mersenne61Field.combine`, and the masked column sum x̂ + Σ ±s of the
PRG SecureSum. Every result is checked against an independent reference — Python integers,
pycryptodome's AES-CTR keystream — and against the numpy path the kernels replace, taken by
swapping in kernels that decline every call (:class:`Declining`; the code then runs as it did
before the kernels). Whole seeded runs are compared record by record, wire bytes included.
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from Crypto.Cipher import AES
from Crypto.Util import Counter

from parties.party import site_parties
from protocols.context import (
    AesRandomness,
    MaskReuseError,
    PartyContext,
    add_one_stream_mask,
)
from protocols.crypto import keystream, mask_sums
from protocols.crypto.keystream import StreamCiphers
from protocols.effects import Call
from protocols.errors import EncodingError, FieldOverflowError, InputError, MpcsimError
from protocols.field import MERSENNE61, FixedPoint, prime_field
from protocols.field import mersenne61 as field_module
from protocols.secure_sum import ALL_VARIANTS, secure_sum
from sim.network import Network
from sim.simulation import Simulation

P = MERSENNE61
F61 = prime_field("2^61-1")


def _decline(*_args: Any) -> bool:
    return False


class Declining(SimpleNamespace):
    """Kernels that decline every call: the callers take their numpy paths."""

    def __init__(self) -> None:
        super().__init__(encode_fixed=_decline, signed_rows_sum=_decline, add_into=_decline,
                         decode_fixed=_decline, add_into_and_decode=_decline,
                         sum_and_decode=_decline)


@pytest.fixture(autouse=True, params=["compiled", "by_length"])
def kernel_lengths(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Every test twice: with the kernels serving vectors of any length, and with the
    project's threshold (:data:`protocols.field.mersenne61.KERNEL_MIN_ELEMENTS`: short vectors keep
    the numpy paths)."""
    if request.param == "compiled":
        monkeypatch.setattr(field_module, "KERNEL_MIN_ELEMENTS", 1)
    return field_module.KERNEL_MIN_ELEMENTS


@pytest.fixture
def numpy_path(monkeypatch: pytest.MonkeyPatch):
    """Call ``numpy_path(fn)`` to run ``fn()`` with every kernel declining."""

    def run(fn):
        with monkeypatch.context() as patch:
            patch.setattr(field_module, "mersenne61_kernels", Declining)
            return fn()

    return run


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bytes (so −0.0 ≠ +0.0 and NaN payloads count)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- fixed-point encoding ----------------------------------------------------------------------


def reference_encode(values: np.ndarray, frac_bits: int) -> list[int]:
    """round-half-even(x·2^f) mod p with Python's exact arithmetic."""
    out = []
    for x in values.ravel().tolist():
        scaled = Fraction(x) * (1 << frac_bits)
        out.append(round(scaled) % P)  # Fraction rounds half to even, as np.rint does
    return out


def edge_values(fixed: FixedPoint, n_summands: int) -> np.ndarray:
    """Random reals, half-way cases, signed zeros and the bound itself, with both signs."""
    rng = np.random.default_rng(n_summands)
    bound = fixed.bound(n_summands)
    scale = fixed.scale
    halves = (np.arange(-20, 20) + 0.5) / scale  # exactly half-way between two encodings
    values = [rng.uniform(-bound, bound, 300), np.clip(rng.normal(0, 10, 300), -bound, bound),
              halves,
              [0.0, -0.0, 1 / scale, -1 / scale, 0.5 / scale, -0.5 / scale, 1.5 / scale,
               bound, -bound, math.nextafter(bound, 0), -math.nextafter(bound, 0)]]
    return np.concatenate([np.asarray(v, dtype=np.float64) for v in values])


@pytest.mark.parametrize("frac_bits", [0, 1, 24, 40, 58])
@pytest.mark.parametrize("n_summands", [1, 2, 3, 4, 7, 1000])
def test_encode_equals_python_integers_and_the_numpy_path(frac_bits, n_summands, numpy_path):
    fixed = FixedPoint(F61, frac_bits)
    values = edge_values(fixed, n_summands)
    fast = fixed.encode(values, n_summands=n_summands)
    assert [int(v) for v in fast] == reference_encode(values, frac_bits)
    assert same_bits(fast, numpy_path(lambda: fixed.encode(values, n_summands=n_summands)))


@pytest.mark.parametrize("shape", [(), (1,), (3, 5), (2, 3, 4)])
def test_encode_keeps_any_shape_and_layout(shape, numpy_path):
    fixed = FixedPoint(F61, 24)
    values = np.random.default_rng(1).normal(0, 100, shape)
    views = [values, np.asfortranarray(values), values.T]
    if values.ndim:
        views.append(values[..., ::-1])  # not contiguous
    read_only = values.copy()
    read_only.flags.writeable = False
    for x in [*views, read_only, values.tolist(), values.astype(np.float32)]:
        fast = fixed.encode(x, n_summands=4)
        assert same_bits(fast, numpy_path(lambda x=x: fixed.encode(x, n_summands=4)))
        assert [int(v) for v in fast.ravel()] == reference_encode(np.asarray(x, float), 24)


@pytest.mark.parametrize("n_summands", [1, 4, 9])
def test_encode_raises_beyond_the_bound_and_on_non_finite_values(n_summands, numpy_path):
    fixed = FixedPoint(F61, 24)
    bound = fixed.bound(n_summands)
    values = np.random.default_rng(0).uniform(-1, 1, 2001)
    for bad, error in ((math.nextafter(bound, math.inf), FieldOverflowError),
                       (-math.nextafter(bound, math.inf), FieldOverflowError),
                       (1e300, FieldOverflowError), (math.inf, EncodingError),
                       (-math.inf, EncodingError), (math.nan, EncodingError)):
        for at in (0, 1000, 2000):
            x = values.copy()
            x[at] = bad
            with pytest.raises(error) as fast:
                fixed.encode(x, n_summands=n_summands, what="SecureSum t")
            with pytest.raises(error) as slow:
                numpy_path(lambda x=x: fixed.encode(x, n_summands=n_summands, what="SecureSum t"))
            assert str(fast.value) == str(slow.value)


def test_one_fixed_point_checks_each_count_of_summands_against_its_own_bound():
    """The float bounds a FixedPoint keeps per count of summands: a value at the bound of
    one summand overflows four, and the bound of four stays four's after both were met."""
    fixed = FixedPoint(F61, 24)
    half = (P - 1) // 2
    for n_summands in (1, 4, 1, 3, 4):
        bound = float(Fraction(half // n_summands, 1 << 24))  # exact: the bound rounds down
        while Fraction(bound) * (1 << 24) > half // n_summands:
            bound = math.nextafter(bound, 0.0)
        x = np.full(2001, bound)
        x[::2] *= -1.0
        assert [int(v) for v in fixed.encode(x, n_summands=n_summands)[:2]] == \
            reference_encode(x[:2], 24)
        past = x.copy()
        past[-1] = math.nextafter(bound, math.inf)
        with pytest.raises(FieldOverflowError):
            fixed.encode(past, n_summands=n_summands)
        if n_summands == 1:
            with pytest.raises(FieldOverflowError):
                fixed.encode(x, n_summands=4)


# -- decoding -----------------------------------------------------------------------------------


@pytest.mark.parametrize("frac_bits", [0, 24, 58])
def test_decode_equals_python_integers_and_the_numpy_path(frac_bits, numpy_path):
    fixed = FixedPoint(F61, frac_bits)
    half = (P - 1) // 2
    rng = np.random.default_rng(frac_bits)
    a = np.concatenate([rng.integers(0, P, 1000, dtype=np.uint64),
                        np.array([0, 1, half - 1, half, half + 1, P - 2, P - 1], np.uint64)])
    fast = fixed.decode(a)
    expected = np.array([float(v if v <= half else v - P) / (1 << frac_bits)
                         for v in a.tolist()])
    assert same_bits(fast, expected)
    assert same_bits(fast, numpy_path(lambda: fixed.decode(a)))
    grid = a[:12].reshape(3, 4)
    assert same_bits(fixed.decode(grid), numpy_path(lambda: fixed.decode(grid)))
    assert same_bits(fixed.decode(grid.T), numpy_path(lambda: fixed.decode(grid.T)))


def test_decode_of_values_outside_the_field_is_the_numpy_paths(numpy_path):
    fixed = FixedPoint(F61, 24)
    a = np.array([0, P, P + 5, 2**63, 2**64 - 1, 7], dtype=np.uint64)
    assert same_bits(fixed.decode(a), numpy_path(lambda: fixed.decode(a)))


# -- sums of arrays -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 255, 256, 2001, 1 << 14, (1 << 14) + 1])
@pytest.mark.parametrize(("n_plus", "n_minus"), [(1, 0), (2, 0), (4, 0), (9, 0), (1, 1),
                                                 (3, 5), (8, 8)])
def test_combine_equals_python_integers_and_the_numpy_path(size, n_plus, n_minus, numpy_path):
    rng = np.random.default_rng(size + 10 * n_plus + n_minus)
    arrays = [rng.integers(0, P, size, dtype=np.uint64) for _ in range(n_plus + n_minus)]
    arrays[0][: min(size, 3)] = [P - 1, 0, P - 1][: min(size, 3)]
    frozen = [np.frombuffer(a.tobytes(), dtype=np.uint64) for a in arrays]  # as received
    plus, minus = frozen[:n_plus], frozen[n_plus:]
    fast = F61.combine(plus, minus)
    expected = [(sum(int(a[i]) for a in plus) - sum(int(a[i]) for a in minus)) % P
                for i in range(size)]
    assert [int(v) for v in fast] == expected
    assert same_bits(fast, numpy_path(lambda: F61.combine(plus, minus)))
    if not minus:
        assert same_bits(F61.sum_arrays(plus), numpy_path(lambda: F61.sum_arrays(plus)))


def test_combine_of_odd_inputs_is_the_numpy_paths(numpy_path):
    """Values ≥ p, a one-element array broadcast against longer ones, 2-D and strided arrays:
    the kernels decline or pass them on, and the numpy path's result stands."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, P, 50, dtype=np.uint64)
    cases = [
        ([a, np.full(50, P, np.uint64)], []),
        ([a, np.full(50, 2**64 - 1, np.uint64)], [a]),
        ([a], [np.array([P + 3] * 50, np.uint64)]),
        ([a, a[:1]], []),
        ([a.reshape(5, 10), a.reshape(5, 10)], [a.reshape(5, 10)]),
        ([a[::2], a[1::2]], [a[::-2]]),
    ]
    for plus, minus in cases:
        assert same_bits(F61.combine(plus, minus),
                         numpy_path(lambda plus=plus, minus=minus: F61.combine(plus, minus)))


# -- reconstruction and decoding in one pass ------------------------------------------------------


def edge_elements(rng: np.random.Generator, size: int) -> np.ndarray:
    """Random elements with the edges of the field and of its signed range planted."""
    half = (P - 1) // 2
    edges = np.array([0, 1, P - 1, P - 2, half, half + 1, half - 1, 2], dtype=np.uint64)
    a = rng.integers(0, P, size, dtype=np.uint64)
    at = rng.choice(size, min(size, len(edges)), replace=False)
    a[at] = edges[: len(at)]
    return a


def reference_decode_sum(arrays: list[np.ndarray], frac_bits: int) -> tuple[list[int], list[float]]:
    """Σ arrays mod p with Python integers, and each sum decoded as a signed fixed-point real
    (the upper half of the field negative), divided by 2^f in correctly rounded floats."""
    half = (P - 1) // 2
    sums = [sum(int(a[i]) for a in arrays) % P for i in range(arrays[0].size)]
    return sums, [float(v if v <= half else v - P) / (1 << frac_bits) for v in sums]


@pytest.mark.parametrize("size", [1, 7, 1023, 1024, 2001])
@pytest.mark.parametrize("n_arrays", [1, 2, 3, 4, 5, 9])
@pytest.mark.parametrize("frac_bits", [0, 24, 58])
def test_decode_sum_equals_python_integers_and_the_two_steps(size, n_arrays, frac_bits,
                                                             numpy_path):
    """SecureSum's reconstruction and decoding in one pass: the sum of the column sums and
    its signed fixed-point value, bit for bit, with 0, p − 1, (p − 1)/2 and its neighbours
    planted, the peers' arrays read-only as received, sums near the signed range's limits."""
    fixed = FixedPoint(F61, frac_bits)
    rng = np.random.default_rng(size * 100 + n_arrays * 10 + frac_bits)
    arrays = [edge_elements(rng, size) for _ in range(n_arrays)]
    if n_arrays >= 2:  # sums that land on the signed range's limits and just past them
        half = (P - 1) // 2
        for i, target in enumerate([half, half + 1, 0, P - 1, 1][: size]):
            arrays[-1][i] = (target - sum(int(a[i]) for a in arrays[:-1])) % P
    arrays = [arrays[0], *(np.frombuffer(a.tobytes(), dtype=np.uint64) for a in arrays[1:])]
    total, values = fixed.decode_sum(arrays)
    sums, reals = reference_decode_sum(arrays, frac_bits)
    assert [int(v) for v in total] == sums
    assert same_bits(values, np.array(reals, dtype=np.float64))
    two_steps = numpy_path(lambda: F61.sum_arrays(arrays))
    assert same_bits(total, two_steps)
    assert same_bits(values, numpy_path(lambda: fixed.decode(two_steps)))
    assert not any(np.shares_memory(total, a) or np.shares_memory(values, a) for a in arrays)
    assert total.flags.writeable and values.flags.writeable


def test_decode_sum_takes_the_compiled_pass_from_the_threshold_on(monkeypatch, kernel_lengths):
    """The tests above compare the compiled passes, not a fallback: they serve two or more flat
    vectors from :data:`~protocols.field.mersenne61.KERNEL_MIN_ELEMENTS` elements on, and only those
    — up to four in one pass, more with the last addition fused."""
    real = field_module.mersenne61_kernels()
    calls: list[tuple[str, int]] = []

    class Counting:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        @staticmethod
        def sum_and_decode(first, second, third, fourth, n_more, half, scale, total, out):
            calls.append(("sum_and_decode", n_more + 1))
            return real.sum_and_decode(first, second, third, fourth, n_more, half, scale,
                                       total, out)

        @staticmethod
        def add_into_and_decode(acc, values, half, scale, out):
            calls.append(("add_into_and_decode", acc.size))
            return real.add_into_and_decode(acc, values, half, scale, out)

    monkeypatch.setattr(field_module, "mersenne61_kernels", Counting)
    fixed = FixedPoint(F61, 24)
    rng = np.random.default_rng(0)
    sizes = sorted({1, kernel_lengths - 1, kernel_lengths, 2001} - {0})
    counts = (1, 2, 3, 4, 5, 9)
    for size in sizes:
        for n_arrays in counts:
            fixed.decode_sum([rng.integers(0, P, size, dtype=np.uint64)
                              for _ in range(n_arrays)])
    assert calls == [("sum_and_decode", n_arrays) if n_arrays <= 4 else
                     ("add_into_and_decode", size)
                     for size in sizes for n_arrays in counts
                     if size >= kernel_lengths and n_arrays >= 2]
    assert ("sum_and_decode", 4) in calls and ("add_into_and_decode", 2001) in calls


@pytest.mark.parametrize("n_arrays", [2, 3, 4, 6])
@pytest.mark.parametrize("where", [0, 1, -1])
def test_decode_sum_of_values_outside_the_field_is_the_two_steps(where, n_arrays, numpy_path):
    """An element ≥ p in the first, a middle or the last array: the compiled pass declines and
    the result is the general path's, bit for bit; so are 2-D, strided and mixed-length
    arrays."""
    fixed = FixedPoint(F61, 24)
    rng = np.random.default_rng(5)
    for bad in (P, P + 5, 2**63, 2**64 - 1):
        arrays = [rng.integers(0, P, 2001, dtype=np.uint64) for _ in range(n_arrays)]
        arrays[where][1000] = bad
        total, values = fixed.decode_sum(arrays)
        expected = numpy_path(lambda arrays=arrays: F61.sum_arrays(arrays))
        assert same_bits(total, expected)
        assert same_bits(values, numpy_path(lambda expected=expected: fixed.decode(expected)))
    a = rng.integers(0, P, 2 * 2001, dtype=np.uint64)
    for arrays in ([a.reshape(2, 2001), a.reshape(2, 2001)], [a[::2], a[1::2]],
                   [a[:2001], a[:1]]):
        total, values = fixed.decode_sum(arrays)
        expected = numpy_path(lambda arrays=arrays: F61.sum_arrays(arrays))
        assert same_bits(total, expected)
        assert same_bits(values, numpy_path(lambda expected=expected: fixed.decode(expected)))


@pytest.mark.parametrize("prime", ["2^31-1", "2^127-1"])
def test_decode_sum_in_other_fields_is_the_two_steps(prime):
    field = prime_field(prime)
    fixed = FixedPoint(field, 8)
    rng = np.random.default_rng(2)
    arrays = [field.random(rng, 40) for _ in range(3)]
    total, values = fixed.decode_sum(arrays)
    sums = [sum(int(a[i]) for a in arrays) % field.p for i in range(40)]
    half = (field.p - 1) // 2
    assert [int(v) for v in total] == sums
    assert values.tolist() == [float(v if v <= half else v - field.p) / 256 for v in sums]


# -- the masked column sum ------------------------------------------------------------------------


def keystream_elements(key: bytes, stream: int, n: int) -> list[int]:
    """The first n elements of a GF(2^61 − 1) stream, from pycryptodome's CTR keystream."""
    counter = Counter.new(64, prefix=stream.to_bytes(8, "big"), initial_value=0)
    data = AES.new(key, AES.MODE_CTR, counter=counter).encrypt(bytes(8 * (n + 8)))
    words = [int.from_bytes(data[8 * i : 8 * i + 8], "little") & P for i in range(n + 8)]
    return [w for w in words if w != P][:n]


def reference_signed_sum(base: list[int], keys, signs, stream: int, n: int, halves: int
                         ) -> list[int]:
    total = list(base) if base else [0] * n
    for key, sign in zip(keys, signs, strict=True):
        row = keystream_elements(key, stream, halves * n)
        for i in range(n):
            total[i] += sign * (row[i] if halves == 1 else row[n + i] - row[i])
    return [v % P for v in total]


@pytest.mark.parametrize("n", [1, 2, 3, 64, 2001, mask_sums.FUSE_MIN_HALF - 1])
@pytest.mark.parametrize("n_keys", [1, 2, 3, 7, 8, 15])
def test_masked_column_sum_equals_the_keystream_by_hand(n, n_keys, numpy_path):
    rng = np.random.default_rng(n * 31 + n_keys)
    keys = [rng.bytes(32) for _ in range(n_keys)]
    signs = [int(s) for s in rng.choice([1, -1], n_keys)]
    base = rng.integers(0, P, n, dtype=np.uint64)
    base[0] = P - 1
    stream = int(rng.integers(0, 2**63))
    ciphers = keystream.StreamCiphers()
    got = mask_sums.add_signed_stream_sum(base, keys, signs, stream, F61, ciphers=ciphers)
    expected = reference_signed_sum([int(v) for v in base], keys, signs, stream, n, 1)
    assert [int(v) for v in got] == expected
    mask = mask_sums.signed_stream_sum(keys, signs, stream, n, F61)
    assert same_bits(got, F61.add(base, mask))
    assert same_bits(got, numpy_path(lambda: F61.add(
        base, mask_sums.signed_stream_sum(keys, signs, stream, n, F61))))
    for halves, fn in ((1, mask_sums.signed_stream_sum), (2, mask_sums.pair_mask_sum)):
        if n <= 64:
            by_hand = reference_signed_sum([], keys, signs, stream, n, halves)
            assert [int(v) for v in fn(keys, signs, stream, n, F61)] == by_hand
        assert same_bits(fn(keys, signs, stream, n, F61),
                         numpy_path(lambda fn=fn: fn(keys, signs, stream, n, F61)))


def test_masked_column_sum_with_base_outside_the_field_or_odd_is_field_add(numpy_path):
    keys = [bytes([k]) * 32 for k in range(1, 5)]
    signs = [1, -1, 1, -1]
    mask = mask_sums.signed_stream_sum(keys, signs, 3, 40, F61)
    odd_bases = [np.full(40, P, np.uint64), np.full(40, 2**64 - 1, np.uint64),
                 np.arange(80, dtype=np.uint64)[::2], np.arange(40, dtype=np.int64)]
    for base in odd_bases[:3]:
        got = mask_sums.add_signed_stream_sum(base, keys, signs, 3, F61, ciphers=StreamCiphers())
        assert same_bits(got, F61.add(base, mask))
    with pytest.raises(TypeError):  # as field.add refuses int64 + uint64
        mask_sums.add_signed_stream_sum(odd_bases[3], keys, signs, 3, F61, ciphers=StreamCiphers())
    with pytest.raises(TypeError):
        F61.add(odd_bases[3], mask)
    assert same_bits(mask_sums.add_signed_stream_sum(
        np.zeros(0, np.uint64), keys, signs, 3, F61, ciphers=StreamCiphers()),
        np.zeros(0, np.uint64))
    assert same_bits(mask_sums.add_signed_stream_sum(
        np.arange(5, dtype=np.uint64), [], [], 3, F61, ciphers=StreamCiphers()),
        np.arange(5, dtype=np.uint64))


class _CorruptingEcb:
    """An ECB encryptor whose keystream word ``word`` masks to p (a rejected candidate)."""

    def __init__(self, inner, word: int) -> None:
        self.inner, self.word = inner, word

    def update_into(self, data, buf):
        written = self.inner.update_into(data, buf)
        at = self.word - 2 * int.from_bytes(bytes(data[8:16]), "big")
        if 0 <= at < written // 8:
            np.frombuffer(buf, dtype=np.uint64, count=written // 8)[at] = np.uint64(2**64 - 1)
        return written


@pytest.mark.parametrize("bad", [0, 2])  # a key that enters with +, one with −
def test_masked_column_sum_draws_exactly_past_a_rejected_word(monkeypatch, bad):
    n, word, stream = 2001, 700, 11
    keys = [bytes([k]) * 32 for k in range(1, 4)]
    signs = [1, -1, -1]
    base = np.random.default_rng(0).integers(0, P, n, dtype=np.uint64)
    clean = mask_sums.add_signed_stream_sum(base, keys, signs, stream, F61, ciphers=StreamCiphers())
    real_ecb = keystream._ecb
    monkeypatch.setattr(keystream, "_ecb", lambda key: _CorruptingEcb(real_ecb(key), word)
                        if key == keys[bad] else real_ecb(key))
    got = mask_sums.add_signed_stream_sum(base, keys, signs, stream, F61, ciphers=StreamCiphers())
    total = [int(v) for v in base]
    for k, (key, sign) in enumerate(zip(keys, signs, strict=True)):
        row = keystream_elements(key, stream, n + 1)
        if k == bad:  # the rejected word moves every later element up one word
            counter = Counter.new(64, prefix=stream.to_bytes(8, "big"), initial_value=0)
            data = AES.new(key, AES.MODE_CTR, counter=counter).encrypt(bytes(8 * (n + 8)))
            words = [int.from_bytes(data[8 * i : 8 * i + 8], "little") & P
                     for i in range(n + 8)]
            words[word] = P
            row = [w for w in words if w != P]
        for i in range(n):
            total[i] += sign * row[i]
    assert [int(v) for v in got] == [v % P for v in total]
    assert not np.array_equal(got, clean)


def test_kept_group_buffers_give_fresh_results_across_sizes_and_streams():
    """One StreamCiphers, calls of changing sizes, key sets and streams: each result equals a
    fresh instance's, and no result shares memory with the kept buffer or another result."""
    rng = np.random.default_rng(5)
    keys = [rng.bytes(32) for _ in range(5)]
    kept = keystream.StreamCiphers()
    results = []
    for call, (n, k) in enumerate([(2001, 3), (2001, 3), (7, 3), (2001, 3), (2001, 4),
                                   (1, 1), (5000, 5), (2001, 3)]):
        base = rng.integers(0, P, n, dtype=np.uint64)
        signs = [1, -1, 1, -1, 1][:k]
        got = mask_sums.add_signed_stream_sum(base, keys[:k], signs, call, F61, ciphers=kept)
        fresh = mask_sums.add_signed_stream_sum(base, keys[:k], signs, call, F61,
                                                ciphers=StreamCiphers(keep=False))
        assert same_bits(got, fresh)
        results.append((got, got.copy()))
        group = kept._group
        assert group is None or group.buffer.size <= keystream.KEPT_GROUP_WORDS + 2  # + slack words
    for got, copy in results:
        assert same_bits(got, copy)  # later calls did not write into earlier results
        assert kept._group is None or not np.shares_memory(got, kept._group.buffer)


@pytest.mark.parametrize("halves", [1, 2])
@pytest.mark.parametrize("per_group", [1, 2, 5])
def test_masked_sums_over_several_groups_equal_the_keystream_by_hand(monkeypatch, halves,
                                                                      per_group):
    """Keys drawn a group at a time (groups of one, two, or all five keys; + and − keys in
    one group and across groups), with and without a base: the sums of the keystream by hand."""
    n, stream = 2001, 11
    keys = [bytes([7 * i + 1]) * 32 for i in range(5)]
    signs = [1, -1, -1, 1, -1]
    words = 2 * -(-halves * n // 2)
    monkeypatch.setattr(keystream, "GROUP_WORDS", per_group * words)
    monkeypatch.setattr(mask_sums, "GROUP_WORDS", per_group * words)
    base = edge_elements(np.random.default_rng(per_group), n)
    fn = mask_sums.signed_stream_sum if halves == 1 else mask_sums.pair_mask_sum
    expected = reference_signed_sum([], keys, signs, stream, n, halves)
    assert [int(v) for v in fn(keys, signs, stream, n, F61)] == expected
    if halves == 1:
        got = mask_sums.add_signed_stream_sum(base, keys, signs, stream, F61,
                                              ciphers=StreamCiphers())
        assert [int(v) for v in got] == reference_signed_sum(
            [int(v) for v in base], keys, signs, stream, n, 1)


def test_signed_keys_are_checked_once_and_put_the_plus_keys_first():
    keys = [bytes([i]) * 32 for i in range(5)]
    signed = mask_sums.SignedKeys(keys, [-1, 1, -1, 1, 1])
    assert signed.keys == (keys[1], keys[3], keys[4], keys[0], keys[2])
    assert signed.n_plus == 3 and signed.signs == [1, 1, 1, -1, -1]
    with pytest.raises(AttributeError):
        signed.n_plus = 0  # type: ignore[misc]
    for bad_keys, bad_signs in ((keys[:2], [1]), (keys[:2], [1, 0]), ([b"short"], [1]),
                                (keys[0], [1]), ([*keys[:1], 7], [1, 1])):
        with pytest.raises(InputError):
            mask_sums.SignedKeys(bad_keys, bad_signs)  # type: ignore[arg-type]
    assert mask_sums.SignedKeys([bytearray(keys[0])], [np.int64(-1)]).keys == (keys[0],)


@pytest.mark.parametrize("n", [1, 1023, 1024, 2001])
def test_a_partys_column_sums_equal_the_keystream_by_hand_call_after_call(n):
    """AesRandomness keeps its peers' signed seeds between calls: every column sum is still
    x̂ + Σ_{j>i} s_ij − Σ_{j<i} s_ij from pycryptodome's keystream, the keys are worked out
    again when a seed is installed anew, a stream is never drawn twice, and a missing seed
    is refused before any stream is claimed."""
    party, peers = 2, (0, 1, 3, 4)
    seeds = {peer: bytes([peer + 1]) * 32 for peer in peers}
    randomness = AesRandomness(F61, bytes(32), party)
    for peer, seed in seeds.items():
        randomness.set_pair_seed(peer, seed)
    rng = np.random.default_rng(n)
    signs = [1 if party < peer else -1 for peer in peers]
    for index in range(3):
        if index == 2:  # a seed installed again: the next call must use it
            seeds[3] = bytes([99]) * 32
            randomness.set_pair_seed(3, seeds[3])
        base = edge_elements(rng, n)
        call = Call("secure_sum", index)
        got = add_one_stream_mask(randomness, party, peers, call, base, F61)
        expected = reference_signed_sum([int(v) for v in base], [seeds[p] for p in peers],
                                        signs, call.index * 65536, n, 1)
        assert [int(v) for v in got] == expected
        assert not np.shares_memory(got, base)
        with pytest.raises(MaskReuseError):
            add_one_stream_mask(randomness, party, peers, call, base, F61)
    with pytest.raises(MpcsimError, match="no mask seed shared with party 5"):
        add_one_stream_mask(randomness, party, (0, 5), Call("secure_sum", 9), base, F61)
    got = add_one_stream_mask(randomness, party, (0,), Call("secure_sum", 9), base, F61)
    assert [int(v) for v in got] == reference_signed_sum(
        [int(v) for v in base], [seeds[0]], [-1], 9 * 65536, n, 1)


# -- whole runs: every record and wire byte as on the numpy path ---------------------------------


def exact(a: np.ndarray) -> Any:
    """dtype, shape and content (bytes; Python ints for object arrays of wide fields)."""
    body = tuple(map(int, a.ravel().tolist())) if a.dtype.hasobject else a.tobytes()
    return a.dtype.str, a.shape, body


def canonical(value: Any) -> Any:
    """A comparable, exact form of a view record (arrays by :func:`exact`)."""
    if isinstance(value, np.ndarray):
        return exact(value)
    if hasattr(value, "items"):
        return tuple(sorted((repr(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(canonical(v) for v in value)
    return repr(value)


def fingerprint(result: Any) -> Any:
    views = {pid: ([(m.sender, m.protocol, m.call, m.step, m.round, exact(m.payload))
                    for m in view.received],
                   canonical(view.protocol_inputs), canonical(view.outputs),
                   canonical(view.seeds), canonical(view.draws))
             for pid, view in sorted(result.views.items())}
    outputs = {pid: [exact(o) for o in out]
               for pid, out in sorted(result.outputs.items())}
    return result.ledger.to_csv(), views, outputs


def run_sums(m: int, d: int, variant: str, *, prime: str = "2^61-1", sealing: bool = False,
             record_draws: bool = False, at_bound: bool = False) -> Any:
    sim = Simulation(Network.build(m), prime=prime, seed=7, sealing=sealing,
                     keys="x25519" if sealing else "preshared", record_draws=record_draws)
    bound = sim.fixed.bound(m)
    inputs = []
    for i in range(m):
        x = np.random.default_rng(i).uniform(-min(bound, 1e3), min(bound, 1e3), d)
        if at_bound:
            x[: min(d, 2)] = [bound, -bound][: min(d, 2)]
        inputs.append({"x": x})

    def program(ctx: PartyContext, x: np.ndarray) -> Any:
        outs = []
        for _ in range(3):
            outs.append((yield from secure_sum(ctx, x, variant)))  # type: ignore[arg-type]
        return outs

    return fingerprint(sim.run(site_parties(program, inputs)))


@pytest.mark.parametrize("m", [2, 3, 4, 5])
@pytest.mark.parametrize("d", [1, 2, 7, 2001])
@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_runs_record_what_the_numpy_path_records(m, d, variant, numpy_path):
    fast = run_sums(m, d, variant, at_bound=d % 2 == 1)
    assert fast == numpy_path(lambda: run_sums(m, d, variant, at_bound=d % 2 == 1))


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize(("sealing", "record_draws", "prime"), [
    (True, False, "2^61-1"), (False, True, "2^61-1"), (True, True, "2^61-1"),
    (False, False, "2^127-1"), (False, True, "2^127-1")])
def test_sealed_recorded_and_wide_field_runs_as_on_the_numpy_path(variant, sealing,
                                                                   record_draws, prime,
                                                                   numpy_path):
    kwargs = {"prime": prime, "sealing": sealing, "record_draws": record_draws}
    fast = run_sums(4, 37, variant, **kwargs)
    assert fast == numpy_path(lambda: run_sums(4, 37, variant, **kwargs))


def test_recorded_draws_are_the_streams_the_column_sums_hold():
    """With draws recorded (the audits' wrapper), party 0's column sum is its encoded input
    plus its recorded pair streams, signed as the one-stream mask signs them."""
    sim = Simulation(Network.build(3), seed=3, sealing=False, keys="preshared",
                     record_draws=True)
    xs = [np.random.default_rng(i).uniform(-5, 5, 11) for i in range(3)]
    result = sim.run(site_parties(lambda ctx, x: secure_sum(ctx, x), [{"x": x} for x in xs]))
    x_hat = sim.fixed.encode(xs[0], n_summands=3)
    column = [int(v) for v in x_hat]
    assert len(result.views[0].draws) == 2  # one stream per pair
    for key, values in result.views[0].draws:
        _, lo, hi, *_ = key
        sign = 1 if lo == 0 else -1  # party 0 is the lower party of every pair it is in
        assert 0 in (lo, hi)
        for i, v in enumerate(values.tolist()):
            column[i] += sign * int(v)
    sent = [m.payload for m in result.views[1].received if m.sender == 0]
    assert [int(v) for v in sent[0]] == [v % P for v in column]


def test_a_value_past_the_bound_raises_before_the_call_starts():
    ctx = PartyContext(party=0, role="site", parties=(0, 1, 2, 3),
                       roles=dict.fromkeys(range(4), "site"), fixed=FixedPoint(F61, 24),
                       randomness=AesRandomness(F61, bytes(32)), rng=np.random.default_rng(0))
    bound = ctx.fixed.bound(4)
    x = np.random.default_rng(0).uniform(-1, 1, 2001)
    x[-1] = bound
    for variant in ALL_VARIANTS:
        list_of_effects = secure_sum(ctx, x, variant)  # type: ignore[arg-type]
        assert next(list_of_effects) is not None  # the bound itself is fine: Input comes out
    x[-1] = math.nextafter(bound, math.inf)
    calls = ctx.new_call("probe").index
    with pytest.raises(FieldOverflowError):
        next(secure_sum(ctx, x))
    assert ctx.new_call("probe").index == calls + 1  # no protocol call was started


def test_add_one_stream_mask_asks_any_other_source_for_the_streams():
    """A source that is not AesRandomness (an audit's tape, the recording wrapper) is asked for
    the streams themselves; the column sum is then x̂ plus the signed streams."""
    asked = []

    class Tape:
        def pairwise_many(self, peers, call, n, sub=0):
            asked.append((peers, call, n, sub))
            return np.arange(len(peers) * n, dtype=np.uint64).reshape(len(peers), n)

    x_hat = np.array([5, P - 1, 0], dtype=np.uint64)
    got = add_one_stream_mask(Tape(), 1, (0, 2, 3), Call("secure_sum", 4), x_hat, F61)
    assert asked == [((0, 2, 3), Call("secure_sum", 4), 3, 0)]
    rows = np.arange(9).reshape(3, 3)
    expected = [(int(x_hat[i]) - rows[0, i] + rows[1, i] + rows[2, i]) % P for i in range(3)]
    assert [int(v) for v in got] == expected


def test_a_context_works_out_its_peers_again_when_its_ids_change():
    ctx = PartyContext(party=1, role="site", parties=(0, 1, 2), roles={0: "site", 1: "site",
                       2: "site"}, fixed=FixedPoint(F61, 24),
                       randomness=AesRandomness(F61, bytes(32)), rng=np.random.default_rng(0))
    assert ctx.peers == (0, 2)
    ctx.parties = (0, 1, 2, 3)
    assert ctx.peers == (0, 2, 3)
    ctx.party = 3
    assert ctx.peers == (0, 1, 2)
