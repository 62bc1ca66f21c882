"""One file written whole or not at all: under a hidden temporary name beside it, then renamed
into place (``os.replace`` is atomic within a file system), so a failed or killed run leaves no
partial file. The view store (:mod:`sim.view_store`) and the ledger store
(:mod:`sim.ledger_store`) write every file they leave behind through :func:`replace_atomically`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any


def replace_atomically(path: Path, write: Callable[[IO[Any]], None], *, text: bool = False) -> None:
    """Call ``write`` on a fresh temporary file beside ``path`` (text in UTF-8 with newlines
    untranslated, as the csv module wants, or binary) and rename it to ``path``; on any error
    the temporary file is removed and the error raised."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        if text:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                write(f)
        else:
            with open(tmp, "wb") as fb:
                write(fb)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
