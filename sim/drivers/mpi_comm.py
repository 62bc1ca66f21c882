"""The MPI job's own communication: the extra's import, polite waiting, and collectives.

What every module of the MPI driver (:mod:`sim.drivers.mpi`) shares besides party messages:
``mpi4py`` imported on demand (a missing extra is the user's :class:`InputError`) and MPICH
started with :data:`MPICH_SETTINGS`, completion
of non-blocking operations without spinning a processor (:func:`wait`), and the gathering of
control data (JSON) and results (pickle, among this job's own ranks, which run this same code;
party messages are never pickled).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import sys
import time
from copyreg import dispatch_table
from types import MappingProxyType
from typing import Any

import numpy as np

from protocols.errors import InputError
from sim.drivers.launch import EXTRA_HINT

IDLE_SPINS = 2000  # polls that only yield the processor before an idle rank starts sleeping
IDLE_SLEEP_S = 5e-5
IDLE_SLEEP_MAX_S = 1e-3


MPICH_SETTINGS = MappingProxyType({"MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE": "16384"})
"""MPICH's control variables the driver starts MPI with, unless the environment sets them.

Between ranks of one node MPICH copies a message of up to a cell through shared memory cells
(8 KiB each by default) and reads one of ``MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD`` (8 KiB) or
more straight from the sender's memory (CMA): both need nothing more of the sender. A message
just under 8 KiB with MPICH's header takes a second cell, which moves only when the sender
next calls into MPI — after its parties' next steps, milliseconds later: its receiver waited
in ``Recv`` (2 ms for 8,150–8,191 bytes while the sender computed for 2 ms; the 8,120-byte
sums of a SecureSum at d = 1,000 and M = 256 waited 5–9 s of a 19–22 s run). Cells of 16 KiB
hold every message under the CMA threshold. Set once, by the process's first import of
``mpi4py.MPI`` (:func:`load_mpi`); a program that imports mpi4py itself first must set them
in its environment, for every rank alike (MPICH requires it).
"""


def load_mpi() -> Any:
    """Import ``mpi4py.MPI`` (which starts MPI: with :data:`MPICH_SETTINGS` if this is the
    first import); a missing extra is an :class:`~protocols.errors.InputError`."""
    if "mpi4py.MPI" not in sys.modules:
        for name, value in MPICH_SETTINGS.items():
            os.environ.setdefault(name, value)
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise InputError(f"--driver mpi needs the MPI extra; install it with {EXTRA_HINT}"
                         ) from exc
    return MPI



def wait(request: Any, status: Any = None) -> None:
    """Complete a non-blocking MPI operation without spinning a processor.

    MPICH's blocking calls poll in a busy loop; with more ranks than cores (or cores shared
    with other work) a rank that waits so steals the processor from the ranks it waits for.
    """
    idle = 0
    while not request.Test(status):  # each Test also advances the operation
        idle += 1
        if idle < 20 * IDLE_SPINS:
            os.sched_yield()
        else:
            time.sleep(min(IDLE_SLEEP_S * (idle - IDLE_SPINS + 1), IDLE_SLEEP_MAX_S))


def allgather_bytes(comm: Any, mpi: Any, blob: bytes) -> list[bytes]:
    """Every rank's ``blob``, at every rank (non-blocking collectives, waited politely)."""
    size = comm.Get_size()
    sizes = np.zeros(size, dtype=np.int64)
    wait(comm.Iallgather(np.array([len(blob)], dtype=np.int64), sizes))
    displs = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = bytearray(int(sizes.sum()))
    counts = [int(c) for c in sizes]
    wait(comm.Iallgatherv([blob, mpi.BYTE], [out, (counts, [int(d) for d in displs]),
                                              mpi.BYTE]))
    return [bytes(out[int(d):int(d) + c]) for d, c in zip(displs, counts, strict=True)]


def allgather_json(comm: Any, value: Any) -> list[Any]:
    """Every rank's JSON-encodable ``value``, at every rank (small control data; no pickle)."""
    mpi = load_mpi()
    blobs = allgather_bytes(comm, mpi, json.dumps(value).encode())
    return [json.loads(b) for b in blobs]


def dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = dispatch_table.copy()
    pickler.dispatch_table[MappingProxyType] = lambda m: (MappingProxyType, (dict(m),))
    pickler.dump(value)
    return buffer.getvalue()


def loads(blob: bytes) -> Any:
    return pickle.loads(blob)


def is_root() -> bool:
    """Whether this process is rank 0 of ``MPI.COMM_WORLD`` (the one that reports)."""
    return load_mpi().COMM_WORLD.Get_rank() == 0
