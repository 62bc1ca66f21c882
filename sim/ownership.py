"""Output ownership: one run at a time writes an output directory; killed runs leave nothing.

A run that writes ``--out DIR`` holds an exclusive lock on ``.DIR.lock`` beside ``DIR``
(:func:`own_out_dir`, ``flock``) from before the run starts until its files are in place, so a
second run into the same directory is refused at once with the holder's process id, instead of
both succeeding and one result being lost. The kernel releases the lock of a process that died,
so a killed run never blocks the next one.

Files reach ``DIR`` through staging directories beside it (:func:`sim.report.write_files`):
``.DIR.<12 hex>.tmp`` (the new output being written) and ``.DIR.<12 hex>.old.tmp`` (the
previous output, renamed aside for the moment of the swap). Only the lock holder makes them,
so whoever holds the lock knows that any it finds were left by a run that was killed: it
removes them, except that an ``.old`` directory found while ``DIR`` itself is missing — a run
killed between its two renames — is the previous output, complete, and is put back.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from protocols.errors import InputError

__all__ = ["OutputBusy", "OwnedOutput", "lock_path", "own_out_dir", "staging_names"]


class OutputBusy(InputError):
    """Another process holds the output directory's lock (a run writing into it)."""


def lock_path(out_dir: Path) -> Path:
    """The lock file of ``out_dir``: ``.NAME.lock`` beside it."""
    out_dir = Path(out_dir).absolute()
    return out_dir.parent / f".{out_dir.name}.lock"


def staging_names(out_dir: Path) -> re.Pattern[str]:
    """The names of ``out_dir``'s staging directories; group ``old`` is set for a set-aside one.

    ``.NAME.<hex>.tmp`` and ``.NAME.<hex>.old.tmp`` (12 hex digits): no other output
    directory's staging names match (the hex run pins where NAME ends).
    """
    name = re.escape(Path(out_dir).absolute().name)
    return re.compile(rf"\.{name}\.[0-9a-f]{{12}}(?P<old>\.old)?\.tmp")


@dataclass
class OwnedOutput:
    """An output directory this process holds the lock of.

    Attributes
    ----------
    out_dir : Path
    cleaned : list of str
        Staging directories of killed runs removed when the lock was taken.
    restored : str or None
        The set-aside previous output put back as ``out_dir`` (a run killed mid-swap).
    """

    out_dir: Path
    cleaned: list[str] = field(default_factory=list)
    restored: str | None = None


@contextlib.contextmanager
def own_out_dir(out_dir: str | Path, option: str = "--out") -> Iterator[OwnedOutput]:
    """Hold ``out_dir``'s lock over the block (re-entrant within one process).

    Creates ``out_dir``'s parent directories if needed (where :func:`sim.report.check_out_dir`
    found they can be made), then cleans what killed runs left (see the module docstring).

    Raises
    ------
    OutputBusy
        Another process holds the lock (naming it).
    InputError
        The lock file cannot be made.
    """
    path = Path(out_dir).absolute()
    lock = lock_path(path)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {str(out_dir)!r}: cannot create {str(lock.parent)!r} "
                         f"({exc.strerror or exc})") from None
    fd = _acquire(lock, out_dir, option)
    if fd is None:  # this process holds it already (e.g. the CLI, then ScenarioRun.write)
        yield OwnedOutput(path)
        return
    try:
        owned = OwnedOutput(path)
        _clean(path, owned)
        yield owned
    finally:
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


def _acquire(lock: Path, out_dir: str | Path, option: str) -> int | None:
    """An fd holding ``lock``; None if this process holds it already."""
    for _ in range(100):
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(f"{option} {str(out_dir)!r}: cannot create the lock file "
                             f"{str(lock)!r} ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip()
            os.close(fd)
            if holder == str(os.getpid()):
                return None
            who = f"process {holder}" if holder.isdigit() else "another process"
            raise OutputBusy(
                f"{option} {str(out_dir)!r} is being written by another run ({who}, lock "
                f"{str(lock)!r}); wait for it to finish or choose another directory"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # the previous holder removed the file as we opened it: start again
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return fd
    raise InputError(  # pragma: no cover
        f"{option} {str(out_dir)!r}: cannot take the lock {str(lock)!r}")


def _clean(out_dir: Path, owned: OwnedOutput) -> None:
    """Remove killed runs' staging directories; put back a set-aside output if DIR is gone."""
    pattern = staging_names(out_dir)
    try:
        found = sorted(p for p in out_dir.parent.iterdir() if pattern.fullmatch(p.name))
    except OSError:
        return
    old = [p for p in found if pattern.fullmatch(p.name).group("old")]  # type: ignore[union-attr]
    if old and not out_dir.exists():
        with contextlib.suppress(OSError):
            os.rename(old[-1], out_dir)
            owned.restored = old[-1].name
            found.remove(old[-1])
    for stale in found:
        shutil.rmtree(stale, ignore_errors=True)
        owned.cleaned.append(stale.name)
