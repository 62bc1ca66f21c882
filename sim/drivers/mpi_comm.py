"""The MPI job's own communication: the extra's import, polite waiting, and collectives.

What every module of the MPI driver (:mod:`sim.drivers.mpi`) shares besides party messages:
``mpi4py`` imported on demand (a missing extra is the user's :class:`InputError`), completion
of non-blocking operations without spinning a processor (:func:`wait`), and the gathering of
control data (JSON) and results (pickle, among this job's own ranks, which run this same code;
party messages are never pickled).
"""

from __future__ import annotations

import io
import json
import os
import pickle
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


def load_mpi() -> Any:
    """Import ``mpi4py.MPI``; a missing extra is an :class:`~protocols.errors.InputError`."""
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
