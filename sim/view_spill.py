"""Received messages spilled to disk as they are recorded, under MPI (issue 32, item 3).

DESIGN.md, "The driver writes the ledger and the views". A rank of an MPI run recorded its
parties' views in memory message by message — M − 1 payloads per party — and wrote them to
its view directory (:class:`sim.view_store.ViewSink`) only after the run, so a rank's memory
grew with M (262 MB of payloads and 30 MB of records per rank for SecureSum at M = 256,
d = 1,000). With :meth:`sim.view_store.ViewSink.prepare` each of the rank's views gets a
:class:`SpilledReceived` for its ``received`` list before the run: each recorded payload is
written at once to the rank's hidden :class:`SpillFile` in the run's view directory (one open
file per rank), and memory keeps only the message's index entry (sender, protocol, call, step,
round, arrival time, the payload's dtype and shape). :func:`sim.view_store.write_view` then
copies the arrays into the view file one at a time — byte for byte the file a view held in
memory gives — and the spill file is unlinked.
What a rank holds for its views no longer depends on M but for those index entries.
"""

from __future__ import annotations

import json
import os
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

import numpy as np

from parties.view import Message, received_message
from sim.view_codec import decode, dtype_from, encode, padding


@dataclass(frozen=True)
class Spilled:
    """One array of a spill file: where it is and how many bytes it has."""

    fd: int
    offset: int
    nbytes: int

    def read(self) -> bytes:
        return os.pread(self.fd, self.nbytes, self.offset) if self.nbytes else b""


class SpillFile:
    """One hidden file of a run's view directory that a rank's views spill their payloads to.

    Each :class:`SpilledReceived` of the rank appends its arrays here (each at a 64-byte
    aligned offset) and keeps their places: one open file per rank, whatever the number of
    parties it hosts (a file per party would reach the usual limit of 1,024 open files at
    about a thousand parties on one rank). It is unlinked once the views are written
    (:meth:`discard`, from any of them) and its descriptor closed when the last of them goes.
    """

    def __init__(self, directory: str | Path, name: str) -> None:
        fd, path = tempfile.mkstemp(prefix=f".{name}.", suffix=".received",
                                    dir=directory)  # a fresh name: an aborted run's stays
        self.path = Path(path)
        self.fd = fd
        self._closer = weakref.finalize(self, os.close, fd)
        self.at = 0  # where the next array goes

    def append(self, arr: np.ndarray) -> tuple[int, int]:
        """Write ``arr``'s bytes (C order) and their padding; their offset and length."""
        data = memoryview(arr).cast("B") if arr.nbytes else b""
        pad = bytes(padding(arr.nbytes))
        at = self.at
        os.pwrite(self.fd, bytes(data) + pad if pad else data, at)
        self.at += arr.nbytes + len(pad)
        return at, arr.nbytes

    def discard(self) -> None:
        """Unlink the file (what was spilled stays readable until the descriptor closes)."""
        self.path.unlink(missing_ok=True)


class _ArraySpill:
    """What :func:`encode` appends a payload's arrays to: each goes to the file at once."""

    def __init__(self, owner: SpilledReceived) -> None:
        self.owner = owner

    def append(self, arr: np.ndarray) -> None:
        self.owner._write_array(np.ascontiguousarray(arr))

    def __len__(self) -> int:
        return len(self.owner._offsets)


class SpilledReceived(Sequence[Message]):
    """A view's ``received`` list whose payloads are written to a file as they are recorded.

    Issue 32, item 3: under MPI a rank's parties' views went into memory message by message (M
    − 1 payloads per party), so a rank's memory grew with M. A :class:`ViewSink` gives each of
    its rank's views one of these before the run (:meth:`ViewSink.prepare`), all over one
    :class:`SpillFile` (``file``): ``append`` writes the
    payload's arrays to it (each at a 64-byte aligned offset, padded as the data section of a
    view file lays them out) and keeps in memory only the message's index
    entry — sender, protocol, call, step, round, arrival time and the payload's JSON with
    ``{"a": [i, dtype, shape]}`` references (:func:`encode`) — as compact JSON bytes, and each
    array's offset and length in two integer arrays: ≈ 190 B a message of one array, measured
    with tracemalloc, against ≈ 870 B as Python lists and objects. :func:`write_view` copies
    the arrays into the view file one at a time, so the file is byte for byte the one a view
    held in memory gives. Reading a message back (``[i]``, iteration) reads its arrays from the
    file into fresh read-only arrays. The file is a hidden one in the run's view directory (a
    fresh name per run); it is unlinked once the view files are written (:meth:`discard`) and
    its descriptor closed when the last view over it goes.
    """

    def __init__(self, file: SpillFile) -> None:
        self.file = file
        self.path = file.path
        self._index = bytearray()  # the index entries as JSON, one after the other
        self._starts = array("Q")  # where each entry starts in it
        self._offsets, self._sizes = array("Q"), array("Q")  # each spilled array's place
        self._spilled_bytes = 0

    def _write_array(self, arr: np.ndarray) -> None:
        at, size = self.file.append(arr)
        self._offsets.append(at)
        self._sizes.append(size)
        self._spilled_bytes += size + padding(size)

    def append(self, message: Message) -> None:
        """Record ``message``: its payload's arrays to the file, its index entry kept."""
        entry = [message.sender, message.protocol, message.call, message.step, message.round,
                 float(message.arrived_s).hex(),
                 encode(message.payload, _ArraySpill(self))]  # type: ignore[arg-type]
        self._starts.append(len(self._index))
        self._index += json.dumps(entry, separators=(",", ":")).encode()

    def _entry(self, i: int) -> list[Any]:
        end = self._starts[i + 1] if i + 1 < len(self._starts) else len(self._index)
        return json.loads(self._index[self._starts[i]:end])

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, i: int) -> Message: ...

    @overload
    def __getitem__(self, i: slice) -> list[Message]: ...

    def __getitem__(self, i: int | slice) -> Message | list[Message]:
        if isinstance(i, slice):
            return [self._message(self._entry(j)) for j in range(len(self))[i]]
        return self._message(self._entry(range(len(self))[i]))

    def __iter__(self) -> Iterator[Message]:
        for i in range(len(self)):
            yield self._message(self._entry(i))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (gathered) as the list it stands for
        return (list, (list(self),))

    def _message(self, entry: list[Any]) -> Message:
        s, p, c, st, r, t, payload = entry
        return received_message(s, p, c, st, r, decode(payload, self._array), float.fromhex(t))

    def _array(self, i: int, dtype: Any, shape: list[int]) -> np.ndarray:
        kind = dtype_from(dtype)
        return np.frombuffer(self._spilled(i).read(), dtype=kind).reshape(shape)

    def _spilled(self, i: int) -> Spilled:
        return Spilled(self.file.fd, self._offsets[i], self._sizes[i])

    def spilled_entries(self, shift: int) -> list[list[Any]]:
        """The index entries, each array reference's number increased by ``shift``."""
        return [[*e[:6], _shifted(e[6], shift)] for e in map(self._entry, range(len(self)))]

    def arrays(self) -> list[Spilled]:
        """Where each spilled array is, in order."""
        return [self._spilled(i) for i in range(len(self._offsets))]

    def nbytes(self) -> int:
        """The bytes this view spilled so far (payloads and padding): what memory no longer
        holds."""
        return self._spilled_bytes

    def discard(self) -> None:
        """Unlink the spill file (its data stays readable here until this object goes)."""
        self.file.discard()


def _shifted(value: Any, shift: int) -> Any:
    """An encoded record with every ``{"a": [i, ...]}`` renumbered ``i + shift``."""
    if isinstance(value, list):
        return [_shifted(v, shift) for v in value]
    if not isinstance(value, dict):
        return value
    ((tag, body),) = value.items()
    if tag == "a":
        return {"a": [body[0] + shift, *body[1:]]}
    return {tag: _shifted(body, shift)}
