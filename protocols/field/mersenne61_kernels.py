"""Compiled kernels of GF(2^61 − 1) for SecureSum's small calls (numba), imported on first use.

A SecureSum call of a few thousand elements does little arithmetic per element — encode, add
a handful of masks, add a handful of column sums, decode — so with numpy its cost is mostly
the ufunc calls and temporaries of each step (PD-NMF makes 2,400 party-calls of d = 2,001).
Each kernel here is one pass over its arrays with no temporaries:

* :func:`encode_fixed` — fixed-point encoding x ↦ round(x·2^f) mod p with the bound check
  (:meth:`protocols.field.FixedPoint.encode`);
* :func:`signed_rows_sum` — base + Σ ± masked keystream rows (the one-stream mask of
  :func:`protocols.crypto.mask_sums.signed_stream_sum`, or the two-share form of
  :func:`protocols.crypto.mask_sums.pair_mask_sum`), with the rejection check;
* :func:`add_into` — acc ← acc ± a (the sums of :meth:`protocols.field.Mersenne61Field.combine`);
* :func:`decode_fixed` — field elements back to reals (:meth:`~protocols.field.FixedPoint.decode`);
* :func:`sum_and_decode` — SecureSum's reconstruction from up to four column sums and the
  decoding of the sum in one pass, and :func:`add_into_and_decode`, the last addition and the
  decoding for more (:meth:`~protocols.field.FixedPoint.decode_sum`).

Every kernel reports what it cannot do exactly as the numpy path does — a value out of range,
a non-finite input, an element ≥ p in an input, a rejected keystream word — instead of doing
it: the caller then takes the numpy path, which raises or computes as before. So results
(canonical residues, and IEEE-754 roundings identical to numpy's) do not depend on which path
ran; ``tests/protocols/test_mersenne61_kernels.py`` checks them against Python integers and
the numpy path. Kernels are cached on disk (``cache=True``), so only the first run after a
change compiles them; they hold no state. Loading them costs a process ~0.5 s once (numba's
import and its first dispatch), so the callers use them for vectors of at least
:data:`protocols.field.mersenne61.KERNEL_MIN_ELEMENTS` elements only.
"""

from __future__ import annotations

import numba
import numpy as np

u64 = np.uint64
P = u64((1 << 61) - 1)
_P_SIGNED = np.int64((1 << 61) - 1)


@numba.njit(cache=True, inline="always")
def _canonical(acc):  # any value < 2^64 → [0, p)
    acc = (acc & P) + (acc >> u64(61))  # < 2^61 + 8
    return acc - P if acc >= P else acc


@numba.njit(cache=True, inline="always")
def _add_mod(s, v):  # s, v < p → s + v mod p
    s += v
    return s - P if s >= P else s


@numba.njit(cache=True, inline="always")
def _decoded(s, half, scale):  # an element of [0, p) → its signed fixed-point value
    signed = np.int64(s) - _P_SIGNED if s > half else np.int64(s)
    return np.float64(signed) / scale


@numba.njit(cache=True)
def encode_fixed(values, scale, limit, out):
    """out[i] = round(values[i]·scale) mod p; False when a value is out of range.

    ``limit`` is the largest float not above the integer bound, so ``|s| ≤ limit`` holds for
    a float s exactly when ``|s|`` is within the bound; NaN fails the comparison. The loop has
    no early exit and no branch (it vectorises: ~3× faster than stopping at the first bad
    value); on False, ``out`` holds meaningless values and must be discarded.
    """
    ok = True
    for i in range(values.shape[0]):
        s = np.rint(values[i] * scale)
        ok &= (s <= limit) & (-s <= limit)
        v = np.int64(s)
        out[i] = u64(v + (_P_SIGNED & (v >> 63)))  # a negative v maps to p + v
    return ok


@numba.njit(cache=True)
def signed_rows_sum(words, n, n_plus, halves, base, out):
    """out = base + Σ_r sign_r·term_r (mod p) over the masked keystream rows of ``words``.

    ``words`` has shape (R, ≥ halves·n): row r is a stream's raw keystream, masked here to 61
    bits; rows below ``n_plus`` enter with +, the others with −. With ``halves`` = 1 a row's
    term is its first n elements; with 2 it is (second half − first half). ``base`` is added
    when it holds n elements (it may be empty). −r enters as p − r, so the running sum stays
    below 2^64 when made canonical every seven terms.

    Returns False — and ``out`` must be discarded — when a masked word equals p (a rejected
    candidate: the stream's later elements sit one word further on) or ``base`` holds a value
    ≥ p.
    """
    bad = u64(0)
    if base.shape[0] == n:
        for i in range(n):
            b = base[i]
            bad |= u64(b >= P)
            out[i] = b
    else:
        for i in range(n):
            out[i] = 0
    pending = 0
    for r in range(words.shape[0]):
        plus = r < n_plus
        for h in range(halves):
            # halves = 2: the second half enters with the row's sign, the first with the other
            positive = plus if (halves == 1 or h == 1) else not plus
            offset = h * n
            if positive:
                for i in range(n):
                    w = words[r, offset + i] & P
                    bad |= u64(w == P)
                    out[i] += w
            else:
                for i in range(n):
                    w = words[r, offset + i] & P
                    bad |= u64(w == P)
                    out[i] += P - w
            pending += 1
            if pending == 7:  # out < p + 7·p < 2^64
                for i in range(n):
                    out[i] = _canonical(out[i])
                pending = 0
    for i in range(n):
        out[i] = _canonical(out[i])
    return bad == 0


@numba.njit(cache=True)
def add_into(acc, values, negate):
    """acc ← acc + values (or acc − values) mod p.

    Returns False when ``values`` or ``acc`` holds an element ≥ p (then ``acc`` must be
    discarded): a caller may start ``acc`` as a copy of an unchecked array.
    """
    bad = u64(0)
    if negate:
        for i in range(acc.shape[0]):
            a = acc[i]
            v = values[i]
            bad |= u64(v >= P) | u64(a >= P)
            s = a + (P - v)
            acc[i] = s - P if s >= P else s
    else:
        for i in range(acc.shape[0]):
            a = acc[i]
            v = values[i]
            bad |= u64(v >= P) | u64(a >= P)
            s = a + v
            acc[i] = s - P if s >= P else s
    return bad == 0


@numba.njit(cache=True)
def add_into_and_decode(acc, values, half, scale, out):
    """acc ← acc + values mod p, and out[i] = (s if s ≤ half else s − p) / scale for the new
    s = acc[i]: :func:`add_into` and :func:`decode_fixed` in one pass.

    Returns False when ``values`` or ``acc`` holds an element ≥ p (then ``acc`` and ``out``
    must be discarded).
    """
    # sum_and_decode of the two, written into acc: element i is read before it is written
    return sum_and_decode(acc, values, values, values, 1, half, scale, acc, out)


@numba.njit(cache=True)
def sum_and_decode(first, second, third, fourth, n_more, half, scale, total, out):
    """total = first + the next ``n_more`` (1 to 3) of second, third, fourth, mod p, and
    out[i] = (s if s ≤ half else s − p) / scale for s = total[i]: one pass.

    The arrays past ``n_more`` are not read (a caller passes any array of the same type).
    Returns False when a summed array holds an element ≥ p (then ``total`` and ``out`` must
    be discarded).
    """
    half = u64(half)
    bad = u64(0)
    for i in range(first.shape[0]):
        s = first[i]
        v = second[i]
        bad |= u64(s >= P) | u64(v >= P)
        s = _add_mod(s, v)
        if n_more >= 2:
            v = third[i]
            bad |= u64(v >= P)
            s = _add_mod(s, v)
        if n_more >= 3:
            v = fourth[i]
            bad |= u64(v >= P)
            s = _add_mod(s, v)
        total[i] = s
        out[i] = _decoded(s, half, scale)
    return bad == 0


@numba.njit(cache=True)
def decode_fixed(values, half, scale, out):
    """out[i] = (a if a ≤ half else a − p) / scale for a = values[i].

    Returns False when an element is ≥ p (then ``out`` must be discarded).
    """
    half = u64(half)
    bad = u64(0)
    for i in range(values.shape[0]):
        a = values[i]
        bad |= u64(a >= P)
        out[i] = _decoded(a, half, scale)
    return bad == 0
