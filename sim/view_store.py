"""Views on disk: one file per party, written where its party ran, read back lazily (issue 32).

DESIGN.md, "The driver writes the ledger and the views". Under MPI with views kept on their ranks
(:class:`sim.drivers.rank_views.RankViews`) no rank holds every view, yet a scenario's metrics,
audits and attacks read views after the run. Each rank therefore writes its own parties' views
into a directory every rank can read (:class:`ViewSink`), rank 0 merges the ranks' index
entries, and every rank continues with a :class:`ViewStore` — a read-only mapping of party to
:class:`~parties.view.View` that opens a party's file only when that party's view is asked for,
with the payloads memory-mapped. Post-run code then reads only the views it touches (an attack
on a coalition reads the coalition's), and a rank's memory grows with its own parties, not
with M. A SimPy run writes the same files from memory (:func:`write_view`), so ``--out``'s
``views/`` is the same under both drivers but for what MPI measures on the wall clock.

File format (``party-<m>.view``, :data:`MAGIC`): 8 magic bytes, the header's length (8 bytes,
little-endian), the header — JSON of the view's records, each array replaced by a reference
``{"a": [i, dtype, shape]}`` to the i-th array of the data section (the dtype as ``.npy``
headers describe it, :func:`numpy.lib.format.dtype_to_descr`) — zero padding to a multiple
of 64 (:data:`sim.view_codec.ALIGN`), then the arrays' raw C-order bytes, each so aligned
(listed in the header's ``arrays``). Records are typed exactly (tuples, lists, read-only
mappings, frozensets, bytes, numpy scalars, ``Call``, scipy sparse matrices, frozen
dataclasses); an object of any other kind is stored pickled (``{"p": hex}``) — the files are
the run's own output, read by its own user. A file is written to a hidden temporary name and
renamed into place, so a reader never sees half a view.

Under MPI the directory is a :class:`ViewScratch`: made by rank 0 beside ``--out`` (or a
temporary one), removed by rank 0 when the run is done with it; ``--out/views/`` gets hard
links to the main run's files (:func:`link_view`).

The index (``views/index.json``) has one entry per party: its id, the MPI rank that ran it
(0 under SimPy), its file, the number of messages it received and the SHA-256 of its records
without arrival times (:func:`sim.drivers.rank_views.view_digest`) — equal under both
drivers for the same scenario and seed.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from parties.view import View, received_message
from protocols.errors import InputError
from sim.atomic_file import replace_atomically
from sim.drivers.rank_views import RankViews, view_digest
from sim.view_codec import decode, dtype_from, encode, padding

MAGIC = b"MPCVIEW1"
"""The first 8 bytes of a view file (format version 1)."""
INDEX = "index.json"
"""The merged index's file name in a view directory."""

IndexEntry = dict[str, Any]
"""``{"party", "rank", "file", "received", "digest"}``: one party's line of the index."""


def view_file_name(party: int) -> str:
    """The file of party ``party``'s view: ``party-<m>.view``."""
    return f"party-{party}.view"


def _header(view: View, arrays: list[Any]) -> dict[str, Any]:
    enc = encode
    head = {"party": view.party, "role": view.role, "clock": view.clock,
            "inputs": enc(dict(view.inputs), arrays), "seeds": enc(dict(view.seeds), arrays)}
    spilled = getattr(view.received, "spilled_entries", None)
    if spilled is not None:  # already on disk (sim.view_spill): its index, renumbered
        head["received"] = spilled(len(arrays))
        arrays.extend(view.received.arrays())
    else:
        head["received"] = [[m.sender, m.protocol, m.call, m.step, m.round,
                             float(m.arrived_s).hex(), enc(m.payload, arrays)]
                            for m in view.received]
    return head | {
        "protocol_inputs": enc(list(view.protocol_inputs), arrays),
        "outputs": enc(list(view.outputs), arrays), "draws": enc(list(view.draws), arrays),
        "observed": enc(list(view.observed), arrays), "aborts": enc(list(view.aborts), arrays),
    }


def write_view(path: str | Path, view: View) -> Path:
    """Write ``view`` to ``path`` (see the module docstring), atomically: the bytes go to a
    hidden temporary file beside it, renamed into place once complete; on failure the
    temporary file is removed and ``path`` is untouched."""
    path = Path(path)
    arrays: list[Any] = []
    header = _header(view, arrays)
    contiguous = [a if _on_disk(a) else np.ascontiguousarray(a) for a in arrays]
    offsets, at = [], 0
    for arr in contiguous:
        offsets.append([at, arr.nbytes])
        at += arr.nbytes + padding(arr.nbytes)
    header["arrays"] = offsets
    text = json.dumps(header, separators=(",", ":")).encode()
    start = len(MAGIC) + 8 + len(text)

    def write(fh: IO[Any]) -> None:
        fh.write(MAGIC + len(text).to_bytes(8, "little") + text + bytes(padding(start)))
        for arr in contiguous:
            if _on_disk(arr):  # copied from the spill file, one array at a time
                fh.write(arr.read())
            elif arr.nbytes:
                fh.write(memoryview(arr).cast("B"))
            fh.write(bytes(padding(arr.nbytes)))

    replace_atomically(path, write)
    return path


def _on_disk(arr: Any) -> bool:
    """Whether ``arr`` is an array of a spill file (:class:`sim.view_spill.Spilled`)."""
    return not isinstance(arr, np.ndarray)


def read_view(path: str | Path) -> View:
    """The view in ``path``, its arrays read-only and memory-mapped from the file (pages are
    read when touched).

    Raises
    ------
    InputError
        ``path`` is not a view file.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(len(MAGIC) + 8)
        if len(head) < len(MAGIC) + 8 or head[:len(MAGIC)] != MAGIC:
            raise InputError(f"{str(path)!r} is not an mpcsim view file")
        length = int.from_bytes(head[len(MAGIC):], "little")
        header = json.loads(fh.read(length))
        start = len(MAGIC) + 8 + length
        start += padding(start)
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if header["arrays"] else None
    offsets = header["arrays"]

    def array(i: int, dtype: Any, shape: list[int]) -> np.ndarray:
        offset, nbytes = offsets[i]
        kind = dtype_from(dtype)
        if nbytes == 0 or mapped is None:
            out = np.frombuffer(b"", dtype=kind)
        else:
            out = np.frombuffer(mapped, dtype=kind, count=nbytes // kind.itemsize,
                                offset=start + offset)
        return out.reshape(shape)

    dec = decode
    return View(
        party=header["party"], role=header["role"], clock=header["clock"],
        inputs=dec(header["inputs"], array), seeds=dec(header["seeds"], array),
        received=[received_message(s, p, c, st, r, dec(payload, array), float.fromhex(t))
                  for s, p, c, st, r, t, payload in header["received"]],
        protocol_inputs=dec(header["protocol_inputs"], array),
        outputs=dec(header["outputs"], array), draws=dec(header["draws"], array),
        observed=dec(header["observed"], array), aborts=dec(header["aborts"], array),
    )


def index_entry(view: View, rank: int = 0) -> IndexEntry:
    """The index line of ``view``, written by ``rank``."""
    return {"party": view.party, "rank": rank, "file": view_file_name(view.party),
            "received": len(view.received), "digest": view_digest(view)}


def index_bytes(entries: list[IndexEntry]) -> bytes:
    """``index.json``: the entries by party, one per line."""
    lines = ",\n".join(f"  {json.dumps(e, sort_keys=True)}"
                       for e in sorted(entries, key=lambda e: e["party"]))
    return f'{{"format": 1, "parties": [\n{lines}\n]}}\n'.encode()


# -- the store ------------------------------------------------------------------------------


class ViewStore(Mapping[int, View]):
    """Every party's view, read from its file when asked for (see the module docstring).

    Nothing is cached: ``store[m]`` opens party m's file each time and maps its payloads,
    so a loop over a coalition holds that coalition's views only while it uses them.

    Parameters
    ----------
    directory : Path
        The directory holding the view files.
    entries : list of dict
        The index: one entry per party (:func:`index_entry`).
    """

    def __init__(self, directory: str | Path, entries: list[IndexEntry]) -> None:
        self.directory = Path(directory)
        self.entries = {int(e["party"]): dict(e) for e in sorted(entries,
                                                                   key=lambda e: e["party"])}

    @classmethod
    def open(cls, directory: str | Path) -> ViewStore:
        """The store of a directory with an ``index.json`` (an ``--out`` directory's
        ``views/``).

        Raises
        ------
        InputError
            The directory has no readable index.
        """
        directory = Path(directory)
        try:
            index = json.loads((directory / INDEX).read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"{str(directory)!r} holds no view index ({INDEX}): {exc}") from None
        return cls(directory, index["parties"])

    def __getitem__(self, pid: int) -> View:
        entry = self.entries.get(pid)
        if entry is None:
            raise KeyError(pid)
        return read_view(self.directory / entry["file"])

    def __iter__(self) -> Iterator[int]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, pid: object) -> bool:
        return pid in self.entries

    def path(self, pid: int) -> Path:
        """The file of party ``pid``'s view."""
        return self.directory / self.entries[pid]["file"]

    def index(self) -> list[IndexEntry]:
        """The index entries, by party."""
        return list(self.entries.values())


def _alone(entries: list[IndexEntry]) -> list[list[IndexEntry]]:
    return [entries]


@dataclass
class ViewSink:
    """Writes each run's hosted views into ``root/run-<k>`` and hands back their store.

    :class:`sim.simulation.Simulation`'s ``view_sink``: called with the views the driver
    returned (a :class:`~sim.drivers.rank_views.RankViews` under MPI with ``views="rank"``:
    this rank's own are written; a dict: all of them). ``gather`` exchanges the ranks' index
    entries (every rank's list, at every rank; under MPI an all-gather, which is also the
    barrier after which every file exists); rank 0 writes ``index.json``. Every rank must
    call it after every run, as every rank runs the same code.
    """

    root: Path
    rank: int = 0
    gather: Callable[[list[IndexEntry]], list[list[IndexEntry]]] = _alone
    runs: int = 0

    def prepare(self, views: Mapping[int, View]) -> None:
        """Before the run: each of ``views`` (this rank's, still empty of messages) records
        its received messages into the rank's spill file in the next run's directory as they
        come (:class:`sim.view_spill.SpilledReceived` over one
        :class:`~sim.view_spill.SpillFile`), so that the run holds no payload of them."""
        from sim.view_spill import SpilledReceived, SpillFile

        directory = Path(self.root) / f"run-{self.runs}"
        directory.mkdir(parents=True, exist_ok=True)
        spill: SpillFile | None = None  # one file for all of them: one descriptor per rank
        for view in views.values():
            if not view.received:
                spill = spill or SpillFile(directory, f"rank-{self.rank}")
                view.received = SpilledReceived(spill)

    def __call__(self, views: Mapping[int, View]) -> ViewStore:
        local = views.local() if isinstance(views, RankViews) else dict(views)
        directory = Path(self.root) / f"run-{self.runs}"
        self.runs += 1
        directory.mkdir(parents=True, exist_ok=True)
        entries = []
        for view in local.values():
            write_view(directory / view_file_name(view.party), view)
            entries.append(index_entry(view, self.rank))
            discard = getattr(view.received, "discard", None)
            if discard is not None:  # the spill file: its bytes are in the view file now
                discard()
        merged = [e for part in self.gather(entries) for e in part]
        if self.rank == 0:
            replace_atomically(directory / INDEX, lambda f: f.write(index_bytes(merged)))
        return ViewStore(directory, merged)


@dataclass
class ViewScratch:
    """The directory an MPI run's ranks write their views (:class:`ViewSink`) and ledger rows
    (:meth:`ledger_sink`) into.

    Rank 0 makes it — ``.NAME.<hex>.tmp`` beside the output directory ``NAME`` (a staging
    name, so a killed run's is removed by the next run into ``NAME``: :mod:`sim.ownership`)
    or a temporary directory — and tells every rank; rank 0 alone removes it
    (:meth:`remove`, or when this object is collected or the process exits: the run's views
    stay readable while the run is held). Every rank must read the same directory: one
    machine, or a file system the job's hosts share.
    """

    root: Path
    rank: int
    comm: Any

    @classmethod
    def make(cls, beside: Path | None) -> ViewScratch:
        """Rank 0 makes the directory (beside ``beside``, or a temporary one); every rank
        gets it (collective)."""
        from sim.drivers.mpi_comm import allgather_json, load_mpi
        from sim.report import fresh_dir

        comm = load_mpi().COMM_WORLD
        rank = comm.Get_rank()
        made = None
        if rank == 0:
            made = (fresh_dir(beside.absolute().parent, f".{beside.absolute().name}")
                    if beside is not None else Path(tempfile.mkdtemp(prefix="mpcsim-views-")))
        scratch = cls(Path(allgather_json(comm, str(made) if made else None)[0]), rank, comm)
        if rank == 0:  # removed with the run object (or at exit) unless removed before
            weakref.finalize(scratch, shutil.rmtree, str(scratch.root), True)
        return scratch

    def sink(self) -> ViewSink:
        """The simulation's ``view_sink``: this rank's views to disk, the index gathered."""
        from sim.drivers.mpi_comm import allgather_json

        return ViewSink(self.root, self.rank, lambda e: allgather_json(self.comm, e))

    def ledger_sink(self) -> Any:
        """The simulation's ``ledger_sink``: this rank's ledger rows to ``ledger/``, merged by
        rank 0 (:class:`sim.ledger_store.LedgerSink`)."""
        from sim.drivers.mpi_comm import allgather_json
        from sim.ledger_store import LedgerSink

        return LedgerSink(self.root / "ledger", self.rank,
                          lambda value: allgather_json(self.comm, value))

    def remove(self) -> None:
        """Remove the directory and every view in it (rank 0; other ranks leave it)."""
        if self.rank == 0:
            shutil.rmtree(self.root, ignore_errors=True)


def link_view(source: Path, target: Path) -> None:
    """``target`` as a hard link to ``source`` (a copy across file systems)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
