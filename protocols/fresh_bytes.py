"""New ``bytes`` objects written in place, their fresh pages mapped in one system call.

What a view keeps (a received message's storage, an immutable copy of an input or an output:
:func:`parties.view.frozen`) is new memory every time, and new memory costs a page fault per
4 KiB page as it is first written. On this machine (a virtual machine, two cores) a fault
costs about 4 µs: writing a fresh 800 KB took 0.83–0.87 ms, against 0.04 ms for warm memory.
Asking the kernel to map the whole range at once (``madvise(MADV_POPULATE_WRITE)``, Linux
5.14) took 0.53–0.56 ms for the same 800 KB (``benchmarks/peers/secure_sum_phases.py`` shows a
call's share). The contents are untouched by it, and where the kernel declines (another
system, an older kernel) nothing changes but the time.

The ``bytes`` object is made as CPython makes the result of ``socket.recv`` or ``os.read`` —
``PyBytes_FromStringAndSize(NULL, size)``, then filled — and is written only while its maker
holds the one reference to it, before anything hashed or saw it.
"""

from __future__ import annotations

import ctypes
import mmap
import sys

import numpy as np

POPULATE_FROM = 64 << 10
"""New storage of at least this many bytes is populated before it is written (smaller
objects come from memory the allocator already holds)."""
HUGE_PAGES_FROM = 4 << 20
"""New storage of at least this many bytes is advised as huge-page memory (numpy's threshold
for its own arrays)."""

_MADV_HUGEPAGE = 14  # Linux
_MADV_POPULATE_WRITE = 23  # Linux 5.14; older kernels answer EINVAL, and nothing changes

_new_bytes = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_ssize_t)(
    ("PyBytes_FromStringAndSize", ctypes.pythonapi))
_BYTES_DATA = bytes.__basicsize__ - 1
"""Where a ``bytes`` object's characters start from its address (CPython: after the header;
the one extra byte of ``__basicsize__`` is the terminating NUL)."""

_madvise = None
if sys.platform == "linux":
    _madvise = ctypes.CDLL(None, use_errno=True).madvise
    _madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    _madvise.restype = ctypes.c_int


def _advise(address: int, size: int, advice: int) -> None:
    """``madvise`` over the whole pages of ``[address, address + size)``, as a hint: where
    the kernel declines, the memory stays as it was, valid and writable."""
    if _madvise is None:
        return
    start = -(-address // mmap.PAGESIZE) * mmap.PAGESIZE
    end = (address + size) // mmap.PAGESIZE * mmap.PAGESIZE
    if end > start:
        _madvise(start, end - start, advice)


def advise_huge_pages(address: int, size: int) -> None:
    """Ask for transparent huge pages over the whole pages of ``[address, address + size)``."""
    _advise(address, size, _MADV_HUGEPAGE)


def populate(address: int, size: int) -> None:
    """Map the whole pages of ``[address, address + size)`` now, writable, in one call (pages
    already mapped stay as they are, and so do the contents)."""
    _advise(address, size, _MADV_POPULATE_WRITE)


def new_bytes(size: int, kept: bool = True) -> tuple[bytes, int]:
    """A new ``bytes`` object of ``size`` bytes, and the address of its characters.

    Its characters are uninitialised: the caller writes every byte, while it holds the one
    reference to the object. Large objects are advised as huge pages
    (:data:`HUGE_PAGES_FROM`) and, if they are to be ``kept`` (a view's record: new memory
    every time), populated first (:data:`POPULATE_FROM`). An object soon freed is not: its
    memory is mostly recycled by the allocator, already mapped, and populating mapped pages
    still walks them (measured here: 5.6 µs per warm 64 KiB, 0.2 ms per warm 1 MiB, more than
    copying them). Sizes below 2 are refused: CPython shares its empty and one-byte objects.
    """
    if size < 2:
        raise ValueError(f"a new bytes object to write in place needs 2 bytes or more, "
                         f"not {size}")
    raw = _new_bytes(None, size)
    address = id(raw) + _BYTES_DATA
    if size >= HUGE_PAGES_FROM:  # fresh memory, about to be written: fewer, larger faults
        advise_huge_pages(address, size)
    if kept and size >= POPULATE_FROM:  # and mapped at once rather than a fault per page
        populate(address, size)
    return raw, address


def copied_bytes(contiguous: np.ndarray) -> bytes:
    """``contiguous.tobytes()`` for a C-contiguous array, large ones into populated memory."""
    size = contiguous.nbytes
    if size < POPULATE_FROM:
        return contiguous.tobytes()
    raw, address = new_bytes(size)
    ctypes.memmove(address, contiguous.ctypes.data, size)
    return raw
