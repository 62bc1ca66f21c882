"""Interrupting a run: SIGINT and SIGTERM end it with one line and the shell's exit status.

A run holds its results in memory until its last step, which writes ``--out`` atomically
(:func:`sim.report.write_files`), so an interruption at any earlier moment leaves nothing
half-written. :func:`interruptible` turns either signal into :class:`Interrupted` in the main
thread — a :class:`KeyboardInterrupt`, so that code which lets Ctrl-C through lets this through
too — and the command line prints ``interrupted after N s; nothing written`` and exits with
``128 + signal`` (130 for SIGINT, 143 for SIGTERM), as a shell reports a process that a signal
ended. :func:`deferred` holds both signals over the few renames that put an output directory
in place, so that an interruption there cannot leave the earlier output half-replaced; a
signal that arrived meanwhile is delivered as soon as they are done.

Under MPI every rank is signalled (``mpiexec`` passes SIGINT and SIGTERM on to every process
it started), every rank raises :class:`Interrupted`, rank 0 alone prints, and every rank ends
at once without MPI finalisation (its peers may be mid-message): see :mod:`sim.cli`.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["SIGNALS", "Interrupted", "deferred", "interruptible"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that interrupt a run."""


class Interrupted(KeyboardInterrupt):
    """A run ended by SIGINT or SIGTERM.

    Attributes
    ----------
    signum : int
        The signal.
    elapsed_s : float
        Seconds from the start of :func:`interruptible` to the signal.
    """

    written: bool = False
    """Set when the signal arrived while the output was being written, which was completed."""

    def __init__(self, signum: int, elapsed_s: float) -> None:
        super().__init__(signum, elapsed_s)
        self.signum = signum
        self.elapsed_s = elapsed_s

    @property
    def status(self) -> int:
        """The exit status a shell gives a process this signal ended: ``128 + signum``."""
        return 128 + self.signum

    def line(self, written: bool = False) -> str:
        """The one line the command line prints (without a newline)."""
        what = "the output was already written" if written else "nothing written"
        return f"interrupted after {self.elapsed_s:.0f} s; {what}"


@contextmanager
def interruptible(clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` in the main thread.

    The previous handlers are restored on leaving. Outside the main thread (where Python
    cannot set handlers) the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    began = clock()

    def interrupt(signum: int, _frame: Any) -> None:
        raise Interrupted(signum, clock() - began)

    with _handled_by(interrupt):
        yield


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM over the block; deliver one that arrived once it is done.

    For short steps that must not be cut in half (renaming an output directory into place).
    The signal is then handled by whatever handler was in force before the block: under
    :func:`interruptible` it raises :class:`Interrupted` after the block. Outside the main
    thread the block runs unchanged.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def hold(signum: int, _frame: Any) -> None:
        arrived.append(signum)

    try:
        with _handled_by(hold):
            yield
    finally:
        if arrived:  # delivered to the handler the block had replaced
            signal.raise_signal(arrived[0])


@contextmanager
def _handled_by(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """SIGINT and SIGTERM go to ``handler`` over the block; the previous handlers come back."""
    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, earlier in previous.items():
            signal.signal(sig, earlier)
