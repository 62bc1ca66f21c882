"""Received storage (:func:`sim.drivers.mpi_transfer.received_storage`): a new ``bytes`` object
written through a buffer over its characters, large ones advised as huge-page memory and
populated before they are written.

The kernel's own account of the process's mappings (``/proc/self/smaps``, ``VmFlags``: ``hg``
is ``MADV_HUGEPAGE``) is the independent check of the advice; its count of the process's minor
page faults (``getrusage``) the check that populated storage is written without faulting.
"""

from __future__ import annotations

import ctypes
import mmap
import resource
import sys
from pathlib import Path

import numpy as np
import pytest

from protocols.fresh_bytes import HUGE_PAGES_FROM, POPULATE_FROM
from sim.drivers.mpi_transfer import received_storage


def writable_at(address: int, size: int) -> memoryview:
    return memoryview((ctypes.c_char * size).from_address(address)).cast("B")


def vm_flags(address: int) -> set[str]:
    """The ``VmFlags`` of the mapping that holds ``address``."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and line.startswith("VmFlags:"):
            return set(line.split()[1:])
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.parametrize("size", [1 << 16, HUGE_PAGES_FROM + 4321])
def test_the_storage_holds_what_was_written(size: int) -> None:
    raw, writable = received_storage(size, writable_at)
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    writable[:] = data.tobytes()
    assert type(raw) is bytes and len(raw) == size
    np.testing.assert_array_equal(np.frombuffer(raw, dtype=np.uint8), data)


@pytest.mark.skipif(sys.platform != "linux", reason="madvise(MADV_HUGEPAGE) is Linux's")
def test_large_storage_is_advised_as_huge_pages() -> None:
    size = 8 << 20
    raw, writable = received_storage(size, writable_at)
    middle = ctypes.addressof(ctypes.c_char.from_buffer(writable, size // 2))
    assert "hg" in vm_flags(middle)
    del writable, raw


def minor_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.skipif(sys.platform != "linux", reason="madvise(MADV_POPULATE_WRITE) is Linux's")
@pytest.mark.parametrize("size", [POPULATE_FROM, 800_123, 3 << 20])
def test_large_storage_is_written_without_page_faults(size: int) -> None:
    pages = size // mmap.PAGESIZE
    control = mmap.mmap(-1, size)  # fresh anonymous memory: written, it faults page by page
    before = minor_faults()
    control.write(bytes(size))
    assert minor_faults() - before >= pages // 2  # the counter sees faults where there are
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    raw, writable = received_storage(size, writable_at)
    before = minor_faults()
    writable[:] = data
    assert minor_faults() - before <= 2  # at most the two part pages at its ends
    assert raw == data
    del writable, raw
    control.close()


def test_received_storage_is_reused_only_once_nothing_refers_to_it() -> None:
    """:class:`ReceivedStorage`: an object an array (or a name) still refers to is never
    handed out again; one nothing refers to is, with the same writable buffer over it."""
    from sim.drivers.mpi_transfer import ReceivedStorage

    pool = ReceivedStorage(writable_at)
    first, first_writable = pool.take(100_000)
    first_writable[:] = b"\x01" * 100_000
    held = np.frombuffer(memoryview(first)[16:], dtype=np.uint8)  # a program's array over it
    first_id = id(first)
    del first, first_writable
    second, _ = pool.take(100_000)
    assert id(second) != first_id and bool(np.all(held == 1))
    second_id = id(second)
    del second, _
    third, third_writable = pool.take(100_000)  # nothing refers to the second any more
    assert id(third) == second_id
    third_writable[:] = b"\x02" * 100_000
    assert bool(np.all(held == 1)) and third == b"\x02" * 100_000
    del held, third, third_writable
    sizes = {id(pool.take(5_000)[0]) for _ in range(3)}  # each dropped at once: one object
    assert len(sizes) == 1


def test_framing_writes_the_documented_frame_and_reads_it_back() -> None:
    """A frame is ``FRAME`` (kind, sender, receiver, call, round, sealed, row, the three
    lengths) then protocol and step in UTF-8, zero-padded so the data starts at a multiple of
    16 — read here with ``struct`` alone — and ``read_frame`` returns what was written, for
    more (protocol, step) pairs than the framing keeps encoded."""
    import struct

    from protocols.effects import Call
    from sim.drivers import mpi_transfer
    from sim.drivers.mpi_transfer import BufferPool, Framing

    layout = struct.Struct("<BQQQQBQHHQ")
    framing = Framing(BufferPool())
    steps = ["share", "sum", "β-round", *(f"m{i}" for i in range(mpi_transfer._NAMES_KEPT + 5)),
             "share"]
    for i, step in enumerate(steps):
        call = Call("secure_sum" if i % 2 else "pd_nmf·svd", 7 + i)
        data = bytes((i + j) % 256 for j in range(13 + i % 5))
        buffer, view, at = framing.framed(3, 9, call, step, 2 + i, bool(i % 3), 40 + i,
                                          len(data))
        view[at:] = data
        raw = bytes(buffer)
        fields = layout.unpack_from(raw)
        protocol, step_raw = call.protocol.encode(), step.encode()
        assert fields == (1, 3, 9, call.index, 2 + i, int(bool(i % 3)), 40 + i, len(protocol),
                          len(step_raw), len(data))
        names_end = layout.size + len(protocol) + len(step_raw)
        assert raw[layout.size:names_end] == protocol + step_raw
        assert at % 16 == 0 and names_end <= at < names_end + 16
        assert raw[names_end:at] == bytes(at - names_end) and raw[at:] == data
        assert framing.read_frame(raw, 1) == (1, 3, 9, call.index, 2 + i, bool(i % 3), 40 + i,
                                              call.protocol, step, at)
        framing.buffers.give(buffer)
