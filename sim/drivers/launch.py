"""Starting an MPI job, and supervising a rank under MPICH's Hydra.

``mpcsim run --ranks R`` starts the job itself (:func:`launch`) with the ``mpiexec`` of the
installed MPICH (the ``mpi`` extra), passing ``-disable-auto-cleanup`` so that a rank killed
by a signal is reported by rank 0 rather than ending the job silently.

A rank under MPICH's Hydra runs in a child of the process Hydra started, which only waits for
it (:func:`_supervise_rank`). Hydra's per-host proxy, ``-disable-auto-cleanup`` or not,
SIGKILLs every process it started on its host as soon as it reaps one that a signal ended
(``waitpid`` in the proxy's event loop, ``PMIP_bcast_signal(SIGKILL)``): a rank killed there
took rank 0 with it, before rank 0 could read the death on its liveness connection
(:mod:`sim.drivers.mpi`) whenever the proxy ran first — often on a loaded machine. The
waiting parent ends with ``128 + N`` when its rank died by signal N, an ordinary exit to the
proxy, so the other ranks live on to report. It does so only while the rank has said on a
pipe that its death would be reported (its liveness connections are up); a rank killed while
starting or finishing, which no other rank would notice, the parent follows by the same
signal, so that the proxy ends the job as before and the launcher reports. It ignores SIGUSR1
(the proxy's notice to the survivors that a process of the job ended, which MPICH handles in
the rank) and SIGINT (the proxy delivers it to the rank's whole process group), and passes
SIGTERM on to its rank.

A rank ends without MPI finalisation when a peer is gone or a signal reached every rank
(:func:`exit_lost`, :func:`exit_interrupted`): finalising would wait for the dead. This module
imports neither mpi4py nor numpy, so the launcher and the waiting parent stay light.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Sequence
from pathlib import Path

from protocols.errors import InputError
from sim.interrupt import SIGNALS, Interrupted

EXTRA_HINT = "pip install -e '.[mpi]' (mpi4py and MPICH wheels)"
"""What to install when mpi4py is missing (the error names it)."""


HYDRA_PROXY = "hydra_pmi_proxy"
"""The process name of MPICH Hydra's per-host proxy, the parent of the processes it starts."""


def started_by_hydra() -> bool:
    """Whether this process's parent is MPICH Hydra's proxy (``/proc``; false elsewhere)."""
    try:
        comm = Path(f"/proc/{os.getppid()}/comm").read_text(encoding="utf-8")
    except OSError:
        return False
    return comm.strip() == HYDRA_PROXY


def supervise_rank() -> int:
    """Run this MPI rank in a child process; in the parent, wait for it and exit as it did.

    Returns in the child only, before MPI is initialised (see the module docstring for why):
    the write end of a pipe on which the rank says whether its death would be reported
    (:data:`sim.drivers.liveness.ARMED_FD_ENV`). The parent exits with the child's exit status,
    or ``128 + N`` if signal N ended the child while armed; a death by a signal that nobody
    would report (starting, finishing) the parent repeats on itself, so that Hydra ends the
    job as it would have without it.
    """
    ignored = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGUSR1, signal.SIGINT)}
    said, armed = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(said)
        for sig, handler in ignored.items():
            signal.signal(sig, handler)
        return armed
    os.close(armed)

    def pass_on(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    signal.signal(signal.SIGTERM, pass_on)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        os.set_blocking(said, False)
        states = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(said, 4096):
                states += chunk
        if not states.endswith(b"A"):  # sim.drivers.liveness.ARMED, not imported here
            with contextlib.suppress(OSError, ValueError):  # SIGKILL's action is fixed
                signal.signal(-code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
            os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


def launch(ranks: int, argv: Sequence[str]) -> int:
    """Run this command (``argv``, without the program) on ``ranks`` MPI ranks with the
    installed MPICH's ``mpiexec``; its exit status.

    ``mpiexec`` runs in a process group of its own, so that a Ctrl-C at the terminal reaches
    it once, from this process: SIGINT and SIGTERM received here are passed on to it (it
    passes them to every rank), and the job's end is awaited; the line a rank printed (or
    this process's own, if none did) ends the output, and the status is ``128 + signal``.
    """
    mpiexec = Path(sysconfig.get_path("scripts")) / "mpiexec"
    if not mpiexec.exists():
        raise InputError(f"--ranks needs MPICH's mpiexec, which is not installed; install "
                         f"the MPI extra with {EXTRA_HINT}")
    rest = list(argv)
    for i, arg in enumerate(rest):  # drop --ranks R / --ranks=R and any --driver
        if arg.startswith("--ranks"):
            del rest[i:i + (1 if "=" in arg else 2)]
            break
    command = [str(mpiexec), "-disable-auto-cleanup", "-n", str(ranks), sys.executable,
               "-m", "sim.cli", *rest, "--driver", "mpi"]
    # stderr is relayed line by line, so that a job that ends before rank 0 could report
    # (a rank killed while it starts) still ends with one error line
    began = time.monotonic()
    signalled: list[int] = []
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, process_group=0) as job:
        assert job.stderr is not None

        def pass_on(signum: int, _frame: object) -> None:
            signalled.append(signum)
            with contextlib.suppress(ProcessLookupError):
                job.send_signal(signum)

        previous = {sig: signal.signal(sig, pass_on) for sig in SIGNALS}
        try:
            reported = False
            for line in job.stderr:
                if signalled and not line.startswith(("error:", "interrupted after")):
                    continue  # Hydra's notes on the signal; a rank's start cut short
                reported |= line.startswith(("error:", "interrupted after"))
                sys.stderr.write(line)
                sys.stderr.flush()
            code = job.wait()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    if signalled:
        if not reported:
            sys.stderr.write(Interrupted(signalled[0], time.monotonic() - began).line() + "\n")
        return 128 + signalled[0]
    if code != 0 and not reported:
        sys.stderr.write(f"error: the MPI job of {ranks} ranks ended with status {code} before "
                         "rank 0 could report (a rank died while starting?)\n")
    return 0 if code == 0 else (code if code in (1, 2) else 1)


def exit_lost() -> None:
    """End this process at once, without MPI finalisation (a rank of the job is gone)."""
    os._exit(1)


def exit_interrupted(status: int) -> None:
    """End this rank at once with ``status`` (SIGINT or SIGTERM reached every rank).

    Without MPI finalisation, which would wait for peers that may be mid-message; stdio is
    flushed first. See :mod:`sim.interrupt`.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
