"""Re-record ``replays.json`` (see :mod:`replays`): ``PYTHONPATH=$PWD python
tests/sim/replays/record.py [NAME...]`` from the repository root, with the settings of
:data:`replays.PORTABLE` (the Makefile's) in the environment."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replays import RECORD, replay, shipped, unportable_floats


def main(names: list[str]) -> int:
    unportable = unportable_floats()
    if unportable is not None:
        sys.stderr.write(f"error: {unportable}\n")
        return 2
    failed = 0
    record = json.loads(RECORD.read_text()) if RECORD.exists() and names else {}
    for name in names or shipped():
        began = time.perf_counter()
        try:
            record[name] = replay(name)
        except Exception as exc:
            sys.stderr.write(f"{name}: FAILED {type(exc).__name__}: {exc}\n")
            failed += 1
            continue
        sys.stderr.write(f"{name}: {time.perf_counter() - began:.1f} s\n")
    RECORD.write_text(json.dumps(dict(sorted(record.items())), indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
