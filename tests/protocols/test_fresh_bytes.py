"""New ``bytes`` objects written in place (:mod:`protocols.fresh_bytes`).

numpy's ``tobytes`` is the reference for the copies; the kernel's count of the process's minor
page faults (``getrusage``) the independent check that a populated object is written without
faulting page by page.
"""

from __future__ import annotations

import ctypes
import mmap
import resource
import sys

import numpy as np
import pytest

from parties.view import frozen, is_immutable
from protocols.fresh_bytes import POPULATE_FROM, copied_bytes, new_bytes


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.parametrize("n", [0, 1, 7, POPULATE_FROM // 8 - 1, POPULATE_FROM // 8, 100_003])
@pytest.mark.parametrize("dtype", [np.uint8, np.int64, np.float64, np.complex128])
def test_copied_bytes_are_numpys_bytes(n: int, dtype: type) -> None:
    arr = np.random.default_rng(n).integers(-(2**40), 2**40, n).astype(dtype)
    got = copied_bytes(arr)
    assert type(got) is bytes
    assert got == arr.tobytes()


def test_a_copy_is_independent_of_its_source() -> None:
    arr = np.arange(POPULATE_FROM, dtype=np.int64)
    got = copied_bytes(arr)
    arr[:] = -1
    np.testing.assert_array_equal(np.frombuffer(got, dtype=np.int64),
                                  np.arange(POPULATE_FROM, dtype=np.int64))


def test_a_large_record_stays_immutable() -> None:
    arr = np.random.default_rng(3).standard_normal((300, 400))
    record = frozen(arr)
    np.testing.assert_array_equal(record, arr)
    assert is_immutable(record)
    with pytest.raises(ValueError):
        record.flags.writeable = True


@pytest.mark.parametrize("size", [-1, 0, 1])
def test_too_short_objects_are_refused(size: int) -> None:
    with pytest.raises(ValueError, match="2 bytes or more"):
        new_bytes(size)


@pytest.mark.skipif(sys.platform != "linux", reason="madvise(MADV_POPULATE_WRITE) is Linux's")
@pytest.mark.parametrize("size", [POPULATE_FROM, 800_123, 3 << 20])
def test_large_objects_are_written_without_page_faults(size: int) -> None:
    control = mmap.mmap(-1, size)  # fresh anonymous memory: written, it faults page by page
    before = minor_faults()
    control.write(bytes(size))
    assert minor_faults() - before >= size // mmap.PAGESIZE // 2
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    raw, address = new_bytes(size)
    before = minor_faults()
    ctypes.memmove(address, data.ctypes.data, size)
    assert minor_faults() - before <= 2  # at most the part pages at its two ends
    assert raw == data.tobytes()
    control.close()


def test_objects_not_kept_are_not_populated(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory soon freed is mostly recycled, already mapped: populating it would only cost."""
    import protocols.fresh_bytes as fresh

    calls: list[int] = []
    monkeypatch.setattr(fresh, "populate", lambda address, size: calls.append(size))
    fresh.new_bytes(3 << 20, kept=False)
    assert calls == []
    fresh.new_bytes(3 << 20)
    assert calls == [3 << 20]
