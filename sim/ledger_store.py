"""The ledger on disk: each MPI rank writes its own parties' rows, rank 0 merges (issue 32).

DESIGN.md, "The driver writes the ledger and the views": a row is written where its message
was sent. Gathering every rank's rows at every rank at the end of an MPI run made each rank's
memory grow with the whole run's messages (M² rows for a key agreement among M parties);
with a :class:`LedgerSink` (:class:`sim.view_store.ViewScratch.ledger_sink`) each rank

1. fills in the delivery times its rows' receivers measured (exchanged among the ranks by the
   driver: two numbers per message, :meth:`sim.drivers.mpi.MpiDriver.gather`),
2. writes its rows, in the ledger's order (:data:`ORDER`: send time, stable), to its own file
   ``run-<k>.rank-<r>.csv`` under the staging directory — under a hidden temporary name,
   renamed into place, so a failed or killed run leaves no partial file — and drops them,
3. exchanges only its row count (the barrier after which every rank's file exists);

rank 0 then merges the files by :data:`ORDER` into ``run-<k>.csv`` (:func:`merge_rows`: a
streaming k-way merge, one row per rank in memory), the ledger's CSV (:meth:`Ledger.to_csv
<sim.ledger.Ledger.to_csv>`, byte for byte the text the gathered rows gave), and every rank
continues with a :class:`StoredLedger` of it: a read-only :class:`~sim.ledger.Ledger` whose
queries stream the file — totals, per-party counts and the per-protocol summary in one pass
with O(parties + calls) state, so rank 0's report needs no row in memory.

The merged ledger is the gathered one: ranks' files concatenated in rank order and stably
sorted by send time equal their stable k-way merge (ties go to the lower rank).
"""

from __future__ import annotations

import csv
import heapq
import io
import itertools
import os
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sim.atomic_file import replace_atomically
from sim.ledger import COLUMNS, Ledger, Row, RowColumns

ORDER = COLUMNS.index("sent_s")
"""The ledger's order key: rows by send time (the driver's clock), stably."""
_INTS = tuple(i for i, name in enumerate(COLUMNS) if name in (
    "sender", "receiver", "call", "round", "elements", "bytes", "hops"))
_FLOATS = (COLUMNS.index("sent_s"), COLUMNS.index("delivered_s"))
_HEADER = ",".join(COLUMNS) + "\n"
_CHUNK = 1 << 20


def row_text(rows: Iterable[Row]) -> str:
    """CSV lines of ``rows`` exactly as :meth:`sim.ledger.Ledger.to_csv` writes them."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for r in rows:
        writer.writerow([*r[:10], repr(float(r.sent_s)), repr(float(r.delivered_s))])
    return buf.getvalue()


def parse_row(fields: Sequence[str]) -> Row:
    """A row from its CSV fields (floats round-trip exactly through ``repr``)."""
    values: list[object] = list(fields)
    for i in _INTS:
        values[i] = int(fields[i])
    for i in _FLOATS:
        values[i] = float(fields[i])
    return Row(*values)  # type: ignore[arg-type]


def write_rows(path: Path, rows: list[Row] | RowColumns) -> int:
    """Write this rank's ``rows`` to ``path`` in the ledger's order; returns their number.

    The text is written :data:`_ROWS_PER_WRITE` rows at a time, never whole in memory.
    """
    # stable: sends of one rank in send order
    ordered = (rows.in_send_order() if isinstance(rows, RowColumns)
               else iter(sorted(rows, key=lambda r: r[ORDER])))

    def write(f: io.TextIOBase) -> None:
        while part := list(itertools.islice(ordered, _ROWS_PER_WRITE)):
            f.write(row_text(part))

    replace_atomically(path, write, text=True)
    return len(rows)


_ROWS_PER_WRITE = 4096


def _lines(path: Path) -> Iterator[tuple[float, str]]:
    """A row file's lines with their send times (the last two fields are floats)."""
    with open(path, encoding="utf-8", newline="") as f:
        for line in f:
            yield float(line.rsplit(",", 2)[1]), line


def merge_rows(parts: Sequence[Path], target: Path) -> int:
    """Merge the ranks' row files ``parts`` (each in the ledger's order, given in rank order)
    into the ledger's CSV at ``target``, by :data:`ORDER`, ties to the earlier part; remove
    the parts. Returns the number of rows."""
    count = 0

    def write(f: io.TextIOBase) -> None:
        nonlocal count
        f.write(_HEADER)
        for _, line in heapq.merge(*(_lines(p) for p in parts), key=lambda x: x[0]):
            f.write(line)
            count += 1

    replace_atomically(target, write, text=True)
    for p in parts:
        p.unlink()
    return count


class StoredLedger(Ledger):
    """A ledger read from its CSV file whenever it is queried (see the module docstring).

    The file is opened once and read with ``pread``, so the ledger stays readable after its
    directory is removed (rank 0 removes the staging directory once ``--out`` is written) and
    several iterations may run at once. ``len`` is known without reading.
    """

    def __init__(self, path: str | Path, rows: int,
                 faults: Iterable[Mapping[str, object]] = (), *, fd: int | None = None) -> None:
        self.path = Path(path)
        self._n = rows
        self._fd = os.open(self.path, os.O_RDONLY) if fd is None else fd
        self._closer = weakref.finalize(self, os.close, self._fd)
        self.faults: tuple[Mapping[str, object], ...] = tuple(faults)

    def with_faults(self, faults: Iterable[Mapping[str, object]]) -> StoredLedger:
        """This ledger with the run's fault events (the same file, even if removed since)."""
        return StoredLedger(self.path, self._n, faults, fd=os.dup(self._fd))

    @property
    def _rows(self) -> tuple[Row, ...]:  # type: ignore[override]
        return tuple(self)

    def _text_lines(self) -> Iterator[str]:
        offset, rest, first = 0, b"", True
        while chunk := os.pread(self._fd, _CHUNK, offset):
            offset += len(chunk)
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            if first and lines:  # the header's line is complete: skip it
                lines, first = lines[1:], False
            yield from (ln.decode() for ln in lines)
        if rest and not first:
            yield rest.decode()

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Row]:
        return (parse_row(f) for f in csv.reader(self._text_lines()))

    def __reduce__(self) -> tuple[type[Ledger], tuple[list[Row], tuple]]:
        """Pickled as the rows themselves (a file descriptor does not travel)."""
        return Ledger, (list(self), self.faults)

    def __getitem__(self, i: int) -> Row:  # type: ignore[override]
        if isinstance(i, slice):
            return self._rows[i]  # type: ignore[return-value]
        if not -self._n <= i < self._n:
            raise IndexError(i)
        i %= self._n
        for k, row in enumerate(self):
            if k == i:
                return row
        raise IndexError(i)

    def to_csv(self) -> str:
        return _HEADER + "".join(ln + "\n" for ln in self._text_lines())

    def write_csv(self, path: str | Path) -> None:
        """Write :meth:`to_csv`'s text to ``path``: the merged file (which is that text)
        copied a chunk at a time, so that no rank holds the whole ledger to write it."""
        with open(path, "wb") as f:
            offset = 0
            while chunk := os.pread(self._fd, _CHUNK, offset):
                f.write(chunk)
                offset += len(chunk)


@dataclass
class LedgerSink:
    """Writes each run's rows of this rank under ``root`` and hands back the merged ledger.

    ``gather(value)`` gives every rank's ``value`` at every rank (under MPI an all-gather of
    JSON, also the barrier); every rank must call the sink after every run, as every rank
    runs the same code. Run k's files are ``run-<k>.rank-<r>.csv`` until rank 0 merges them
    into ``run-<k>.csv``.
    """

    root: Path
    rank: int
    gather: Callable[[object], list[object]]
    runs: int = 0

    def __call__(self, rows: list[Row] | RowColumns) -> StoredLedger:
        """Write ``rows`` (this rank's, delivery times filled in) and empty the list; merge at
        rank 0; every rank gets the merged ledger (collective)."""
        k = self.runs
        self.runs += 1
        root = Path(self.root)
        root.mkdir(parents=True, exist_ok=True)
        mine = root / f"run-{k}.rank-{self.rank}.csv"
        count = write_rows(mine, rows)
        rows.clear()  # written: this rank keeps none
        counts = [int(c) for c in self.gather(count)]  # type: ignore[call-overload]
        merged = root / f"run-{k}.csv"
        if self.rank == 0:
            parts = [root / f"run-{k}.rank-{r}.csv" for r in range(len(counts))]
            written = merge_rows(parts, merged)
            if written != sum(counts):
                raise RuntimeError(f"merged {written} ledger rows of {sum(counts)} written")
        self.gather(None)  # the merged file exists for every rank
        return StoredLedger(merged, sum(counts))
