"""Where the time goes: cProfile breakdowns of the performance figures' cases.

Prints one JSON line per case: the profiled wall time and its split into

* ``simpy`` — SimPy's event scheduling;
* ``driver`` — effect interpretation in the SimPy driver, ledger rows and view records;
* ``wire`` — payload encoding and decoding (:mod:`protocols.wire`);
* ``fixed_point`` — the fixed-point codec (``FixedPoint.encode``/``decode``);
* ``field`` — other field arithmetic (adding shares, reconstructing);
* ``masks`` — mask generation (:mod:`protocols.crypto.keystream`, the randomness, their AES calls);
* ``sealing`` — AES-GCM sealing and opening, and key agreement (:mod:`protocols.crypto.sealing`);
* ``protocol`` — the protocols' own logic (SecureSum, key agreement's program);
* ``local_compute`` — the algorithms' own numpy/scipy work;
* ``other`` — the rest (setup, Python runtime).

A function outside the project (numpy, the AES libraries, builtins) is charged to the
project functions that called it, in proportion to the time spent under each caller, so that,
say, numpy's ``bitwise_and`` inside the PRG counts as mask generation and AES-GCM's C code as
sealing. BLAS threads are pinned to one. The profiler's own overhead inflates small Python
functions; compare shares between runs of this script, not with the benchmarks' wall times.

Usage: ``python benchmarks/profile_cases.py [--case NAME ...] [--quick]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from timing import emit, pinned

import protocols
from algorithms.data import partition_rows, split_rows, synthetic_topic_corpus
from algorithms.nmf.pd_nmf import pd_nmf_iter
from algorithms.nmf.rri_steps import RRIParams
from parties.party import site_parties
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import Simulation

ROOT = str(Path(protocols.__file__).resolve().parent.parent)  # the code under test

CATEGORIES = ("simpy", "driver", "wire", "fixed_point", "field", "masks", "sealing", "protocol",
              "local_compute", "other")


def _own_category(func: tuple[str, int, str]) -> str | None:
    """The category of a function by where it is defined; None if it inherits its callers'."""
    filename = func[0]
    path = filename.replace("\\", "/")
    if "/simpy/" in path:
        return "simpy"
    if not path.startswith(ROOT) or "/.venv/" in path:
        return None
    rel = path[len(ROOT) + 1 :]
    if rel.startswith("benchmarks/"):
        return "other"
    if rel.startswith("sim/drivers/") or rel in ("sim/ledger.py", "parties/view.py"):
        return "driver"
    if rel == "protocols/wire.py":
        return "wire"
    if rel == "protocols/field/fixed_point.py":
        return "fixed_point"
    if rel.startswith("protocols/field/"):
        return "field"
    if rel in ("protocols/crypto/keystream.py", "protocols/crypto/mask_sums.py",
               "protocols/context.py"):
        return "masks"
    if rel == "protocols/crypto/sealing.py":
        return "sealing"
    if rel.startswith("protocols/"):
        return "protocol"
    if rel.startswith("algorithms/"):
        return "local_compute"
    return "other"


def breakdown(stats: pstats.Stats) -> dict[str, float]:
    """Seconds per category: own time of project functions plus what they called outside it."""
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    shares: dict[Any, dict[str, float]] = {}

    def share_of(func: Any, depth: int = 0) -> dict[str, float]:
        """How ``func``'s time divides among categories (fractions summing to 1)."""
        if func in shares:
            return shares[func]
        own = _own_category(func)
        if own is not None or depth > 40:
            result = {own or "other": 1.0}
        else:
            callers = table[func][4] if func in table else {}
            weights = {c: v[3] for c, v in callers.items() if c != func}  # cumulative per caller
            total = sum(weights.values())
            result = {}
            if total <= 0:
                result = {"other": 1.0}
            else:
                shares[func] = {"other": 1.0}  # a cycle resolves to "other"
                for caller, w in weights.items():
                    for cat, f in share_of(caller, depth + 1).items():
                        result[cat] = result.get(cat, 0.0) + f * w / total
        shares[func] = result
        return result

    seconds = dict.fromkeys(CATEGORIES, 0.0)
    for func, (_, _, tottime, _, _) in table.items():
        for cat, f in share_of(func).items():
            seconds[cat] += tottime * f
    return seconds


def profile(name: str, fn: Callable[[], Any], **fields: Any) -> None:
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    fn()
    profiler.disable()
    wall = time.perf_counter() - start
    seconds = breakdown(pstats.Stats(profiler))
    total = sum(seconds.values()) or 1.0
    emit(profile=name, **fields, profiled_wall_s=round(wall, 2),
         seconds={k: round(v, 3) for k, v in seconds.items()},
         share={k: round(v / total, 3) for k, v in seconds.items()})


def secure_sum_case(m: int, d: int, sealing: bool, keys: str = "preshared",
                    views: bool = True) -> Callable[[], Any]:
    rng = np.random.default_rng(1)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]
    sim = Simulation(Network.build(m), seed=1, sealing=sealing, keys=keys, record_views=views)
    parties = site_parties(lambda ctx, x: secure_sum(ctx, x, "prg"), inputs)
    return lambda: sim.run(parties)


def pd_nmf_case(n: int, d: int, k: int, sweeps: int, m: int, sealing: bool) -> Callable[[], Any]:
    rng = np.random.default_rng(7)
    corpus = synthetic_topic_corpus(n, d, k, doc_length=100, alpha=0.3, rng=rng)
    X = sp.csr_array(corpus.tf)
    T0 = rng.uniform(0.0, 1.0, size=(k, d))
    T0 /= T0.sum(axis=1, keepdims=True)
    params = RRIParams(form="plain")
    shards = split_rows(X, partition_rows(n, m, "equal"))
    sim = Simulation(Network.build(m), seed=1, sealing=sealing)
    parties = site_parties(
        lambda ctx, X: pd_nmf_iter(ctx, X, T0, sweeps=sweeps, params=params, variant="prg",
                                   loss="full", track_objective=False),
        [{"X": s} for s in shards],
    )
    return lambda: sim.run(parties)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", action="append", help="profile only these cases")
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args()
    q = args.quick
    big_m = 200 if q else 500  # profiles need shares, not the full M = 1000
    sweeps = 3 if q else 10
    cases: dict[str, tuple[Callable[[], Callable[[], Any]], dict[str, Any]]] = {
        "pd_nmf_sealing_off": (lambda: pd_nmf_case(20000, 2000, 20, sweeps, 4, False),
                               {"n": 20000, "d": 2000, "k": 20, "sweeps": sweeps, "parties": 4}),
        "pd_nmf_sealing_on": (lambda: pd_nmf_case(20000, 2000, 20, sweeps, 4, True),
                              {"n": 20000, "d": 2000, "k": 20, "sweeps": sweeps, "parties": 4}),
        "secure_sum_sealing_on": (lambda: secure_sum_case(10, 10**6, True),
                                  {"parties": 10, "d": 10**6}),
        "secure_sum_large": (lambda: secure_sum_case(big_m, 1000, False, views=False),
                             {"parties": big_m, "d": 1000, "keys": "preshared"}),
        "x25519_setup": (lambda: secure_sum_case(big_m // 2, 1, False, keys="x25519",
                                                 views=False),
                         {"parties": big_m // 2, "d": 1}),
    }
    chosen = args.case or list(cases)
    unknown = [c for c in chosen if c not in cases]
    if unknown:
        sys.exit(f"error: unknown case {unknown[0]!r}; use one of {sorted(cases)}")
    with pinned() as note:
        for name in chosen:
            build, fields = cases[name]
            profile(name, build(), **fields, **note)


if __name__ == "__main__":
    main()
