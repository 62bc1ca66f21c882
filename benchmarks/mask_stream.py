"""The mask stream of :mod:`protocols.crypto.keystream` against raw AES-256-CTR, size by size.

One JSON line per size n (10^3 … 10^7 elements of GF(2^61 − 1)), from interleaved runs of:

* ``raw_aes`` — the floor: a fresh output array of n words and one `cryptography`
  AES-256-CTR cipher (built from the key bytes, with the stream's counter block) encrypting 8n
  zero bytes into it (``update_into``; the zero plaintext is made once, outside the timing).
  These are exactly the bytes the mask stream masks: its words are this keystream masked to
  61 bits (the script checks so);
* ``mask`` — :func:`protocols.crypto.keystream.field_stream` (a fresh cipher per call, the
  module function);
* ``mask_kept`` — :meth:`protocols.crypto.keystream.StreamCiphers.field_stream` of one owner
  that keeps its encryptors and scratch buffers (what a party's
  :class:`protocols.context.AesRandomness` does);
* ``before`` (with ``--before REV``) — ``field_stream`` of ``protocols/crypto/keystream.py``
  (``protocols/prg.py`` before the crypto family) as it was at the
  git revision REV, loaded from ``git show`` beside the current one.

Each line gives, per arm, the min and median seconds of its runs and the minor page faults per
call (``resource.getrusage(RUSAGE_SELF).ru_minflt`` before and after a loop of calls), and the
ratios arm ÷ ``raw_aes`` (of the minima, and the median of the pair-by-pair ratios). Each sample
is the mean of a loop of about ``--budget`` seconds, so that small sizes are not timer noise.

Usage: ``python benchmarks/mask_stream.py [--quick] [--before REV]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from timing import emit, interleaved, pinned, ratio

from protocols.crypto import keystream as prg
from protocols.field import MERSENNE61, prime_field

KEY = bytes(range(32))
STREAM = 12345
F61 = prime_field(MERSENNE61)
ROOT = Path(__file__).resolve().parent.parent


def load_before(rev: str) -> ModuleType:
    """The keystream module at git revision ``rev`` (``protocols/crypto/keystream.py``, or
    ``protocols/prg.py`` before the crypto family), as a module of its own."""
    for where in ("protocols/crypto/keystream.py", "protocols/prg.py"):
        shown = subprocess.run(["git", "show", f"{rev}:{where}"], cwd=ROOT,
                               capture_output=True, text=True)
        if shown.returncode == 0:
            source = shown.stdout
            break
    else:
        raise SystemExit(f"error: no keystream module at {rev}")
    path = Path(tempfile.mkdtemp()) / "prg_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("prg_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["prg_before"] = module
    spec.loader.exec_module(module)
    return module


def raw_arm(n: int) -> Callable[[], np.ndarray]:
    """Fresh n-word output + one AES-256-CTR context writing the keystream into it."""
    zeros = bytes(8 * n)
    counter = STREAM.to_bytes(8, "big") + bytes(8)

    def run() -> np.ndarray:
        out = np.empty(n + 2, dtype=np.uint64)  # update_into wants 15 bytes of room
        Cipher(algorithms.AES(KEY), modes.CTR(counter)).encryptor().update_into(
            zeros, memoryview(out).cast("B"))
        return out[:n]

    return run


def per_call(fn: Callable[[], object], budget_s: float) -> float:
    """Mean seconds per call of ``fn`` over a loop of about ``budget_s``."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    loops = max(1, int(budget_s / once))
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    return (time.perf_counter() - start) / loops


def faults_per_call(fn: Callable[[], object], calls: int) -> float:
    """Minor page faults per call of ``fn`` (after one warm-up call)."""
    fn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--before", metavar="REV",
                        help="also time the keystream module at this git revision")
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per sample")
    args = parser.parse_args()
    repeats = 5 if args.quick else 11
    before = load_before(args.before) if args.before else None
    with pinned() as note:
        for n in (10**3, 10**4, 10**5, 10**6, 10**7):
            raw = raw_arm(n)
            kept = prg.StreamCiphers()
            arms: dict[str, Callable[[], object]] = {
                "raw_aes": raw,
                "mask": lambda n=n: prg.field_stream(KEY, STREAM, n, F61),
                "mask_kept": lambda n=n, kept=kept: kept.field_stream(KEY, STREAM, n, F61),
            }
            if before is not None:
                arms["before"] = lambda n=n, m=before: m.field_stream(KEY, STREAM, n, F61)
            expected = raw() & np.uint64(MERSENNE61)
            for name, fn in arms.items():
                if name != "raw_aes":
                    got = fn()
                    assert isinstance(got, np.ndarray)
                    np.testing.assert_array_equal(got, expected, err_msg=name)
            budget = args.budget if n < 10**7 else 0.0
            samples = interleaved(repeats, **{name: (lambda fn=fn, b=budget: per_call(fn, b))
                                              for name, fn in arms.items()})
            calls = max(3, min(200, 10**6 // n))
            faults = {name: round(faults_per_call(fn, calls), 1) for name, fn in arms.items()}
            emit(benchmark="mask_stream", n=n, field="2^61-1", repeats=repeats, **note,
                 before=args.before,
                 seconds={name: {"min": min(s), "median": sorted(s)[len(s) // 2]}
                          for name, s in samples.items()},
                 minor_faults_per_call=faults,
                 over_raw_aes={name: {k: v for k, v in ratio(s, samples["raw_aes"]).items()
                                      if k.startswith("ratio")}
                               for name, s in samples.items() if name != "raw_aes"})


if __name__ == "__main__":
    main()
