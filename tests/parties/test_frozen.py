"""View records of arrays: :func:`parties.view.frozen` copies a program's array onto immutable
bytes, whatever its shape, dtype or layout, and the copy can never be written again."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from parties.view import frozen, is_immutable

DTYPES = st.sampled_from([np.dtype(t) for t in (
    "<u8", ">u8", "<i8", "<f8", ">f8", "<f4", "u1", "?", "<c16", [("a", "<i4"), ("b", "<f8")],
)])


def _check_record(record: np.ndarray, source: np.ndarray, expected: bytes) -> None:
    """``record`` equals what ``source`` held (``expected``: its bytes, C order) and is sealed."""
    assert type(record) is np.ndarray
    assert record is not source and not np.shares_memory(record, source)
    assert record.dtype == source.dtype and record.shape == source.shape
    assert record.tobytes() == expected
    assert is_immutable(record)
    with pytest.raises(ValueError):
        record.flags.writeable = True
    with pytest.raises(ValueError):
        record[...] = 0


@settings(max_examples=150, deadline=None)
@given(hnp.arrays(DTYPES, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)),
       st.sampled_from(["c", "f", "strided"]))
def test_a_record_is_an_immutable_copy_of_any_numeric_array(source: np.ndarray,
                                                             layout: str) -> None:
    if layout == "f":
        source = np.asfortranarray(source)
    elif layout == "strided" and source.ndim:
        source = np.repeat(source, 2, axis=-1)[..., ::2]  # same values, not contiguous
    expected = np.ascontiguousarray(source).tobytes()
    record = frozen(source)
    _check_record(record, source, expected)
    if source.size:  # the program overwrites its own array: every byte flipped
        flipped = bytes(b ^ 0xFF for b in expected)
        source[...] = np.frombuffer(flipped, source.dtype).reshape(source.shape)
        assert record.tobytes() == expected


def test_a_sealed_record_is_not_copied_again() -> None:
    record = frozen(np.arange(6, dtype=np.uint64).reshape(2, 3))
    assert frozen(record) is record


def test_a_read_only_array_of_a_program_is_still_copied() -> None:
    """Read-only is not immutable: an array owning its memory can be made writeable again."""
    source = np.arange(5, dtype=np.float64)
    source.flags.writeable = False
    record = frozen(source)
    _check_record(record, source, np.arange(5, dtype=np.float64).tobytes())
    source.flags.writeable = True
    source[0] = 99.0
    assert record[0] == 0.0
