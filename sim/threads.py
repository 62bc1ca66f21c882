"""Deterministic numerics: a run's BLAS, OpenMP and numba threads pinned to one count.

A threaded BLAS splits a reduction (a dot product, a matrix product's inner dimension, a
LAPACK panel) into as many partial sums as it has threads, and floating-point addition is not
associative: the same seeded run gave an OTD error of 0.412 with ``OMP_NUM_THREADS=1`` and
0.430 with the default threads (issue 29). A scenario run therefore pins every thread pool it
can reach to :data:`RUN_THREADS` for its whole length — data generation, simulation, audits —
whatever ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` or
``NUMBA_NUM_THREADS`` say, and the report records the count (``numerics``).

How: :func:`threadpoolctl.threadpool_limits` sets the thread count of every BLAS and OpenMP
library loaded in the process, and restores it afterwards. It only reaches libraries already
loaded, so :func:`pinned_threads` loads numpy's and SciPy's BLAS/LAPACK (``scipy.linalg``)
first. numba's pool is set with :func:`numba.set_num_threads` when numba is loaded; the
simulator's numba kernels are not ``parallel``, so its count does not change their results, but
it is pinned all the same so that the recorded count holds for every pool.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["RUN_THREADS", "kernels", "pinned_threads"]

RUN_THREADS = 1
"""The thread count of every BLAS, OpenMP and numba pool during a run.

One thread: the results a seed gives are those of the sequential reductions — the same on every
machine whose libraries run the same kernels (:func:`kernels`; docs/running.md: the Makefile
pins them) — and runs side by side on a shared host do not oversubscribe its cores."""


def kernels() -> dict[str, Any]:
    """The kernel families that decide a run's floats on this machine: OpenBLAS's
    (``blas``, threadpoolctl's ``architecture``, e.g. ``Haswell`` or ``SkylakeX``) and the
    processor features numpy dispatches its loops to (``numpy``, e.g. ``["X86_V3"]``).

    Two machines that report the same give the same bytes for a seed; AVX-512 kernels sum in
    another order than AVX2 ones (``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES`` choose).
    """
    import numpy  # noqa: F401 -- its BLAS, loaded so that threadpoolctl sees it
    from threadpoolctl import threadpool_info

    blas = sorted({str(i.get("architecture")) for i in threadpool_info()
                   if i.get("user_api") == "blas"})
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # a numpy that does not say
        return {"blas": blas, "numpy": None}
    return {"blas": blas, "numpy": [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]}


@contextlib.contextmanager
def pinned_threads(threads: int = RUN_THREADS) -> Iterator[dict[str, Any]]:
    """Pin BLAS, OpenMP and numba to ``threads`` threads inside the ``with`` block.

    Yields
    ------
    dict
        What the report records: ``{"threads": threads, "pools": [...], "kernels": {...}}``,
        the kinds of pool pinned (``blas``, ``openmp``, ``numba``), as a fixed list so that the
        report's bytes do not depend on which libraries happen to be loaded, and
        :func:`kernels`.
    """
    import numpy  # noqa: F401 -- its BLAS, loaded before the limits are set
    import scipy.linalg  # noqa: F401 -- SciPy's BLAS and LAPACK, likewise
    from threadpoolctl import threadpool_limits

    numba = sys.modules.get("numba")
    before = numba.get_num_threads() if numba is not None else None
    with threadpool_limits(limits=threads):
        if numba is not None:
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            yield {"threads": threads, "pools": ["blas", "openmp", "numba"],
                   "kernels": kernels()}
        finally:
            if numba is not None and before is not None:
                numba.set_num_threads(before)
