"""SecureSum wall time against its own mask generation, the driver's cost per message, scale.

Prints one JSON line per figure; BLAS pinned to one thread; ratios from interleaved runs, each
with both sets of runs behind it (``benchmarks/timing.py``).

1. ``secure_sum_vs_masks`` — M = 10, d = 10^6, for the PRG variants ``prg`` (one d-element
   stream per pair, the default) and ``prg_two_share`` (the thesis's 2d-element stream): the
   SecureSum run with sealing off and on, against generating the same net masks alone (every
   party's :func:`protocols.crypto.mask_sums.signed_stream_sum` /
   :func:`protocols.crypto.mask_sums.pair_mask_sum` with all of its peers). Target: sealing on ≤ 1.5
   × masks. Beside it, the sealed run's floor, timed in the same rounds: the masks plus sealing and
   opening the messages the run sends (every party's d-element column sum to each of its M − 1
   peers, AES-256-GCM through a kept :class:`protocols.crypto.channel.SealedChannel` per directed
   channel, sealed and opened into two reused buffers, as the SimPy driver does when nothing
   observes a message in flight) — work no implementation of the protocol with sealed channels can
   skip. And the protocol's whole floor: that plus every party's own arithmetic (encode its input,
   add its mask, add up the M column sums, decode), timed alone — the run against it is what the
   driver, the messages and the views cost.
2. ``driver_overhead_per_message`` — 10 parties exchanging one-element messages in 50 rounds
   (the programs do no other work).
3. ``secure_sum_large`` — M = 1000, d = 1000 (target ≤ 20 s): SecureSum with pre-shared pair
   keys and views not kept (they would hold ~10^6 payloads), beside its floor: the same masks
   generated alone (~10^9 mask elements), and the per-message cost times the messages.
4. ``x25519_key_agreement`` — the one-time setup, per pair at M = 40 (the difference between a
   run with X25519 and one with pre-shared keys); at M = 1000 only with ``--full`` (target
   ≤ 20 s), beside its floor: 2·C(M, 2) X25519 agreements (each end of a pair computes the
   shared secret itself: isolation forbids handing it over), each timed in this run
   (``x25519_primitives``: the agreement, the key pair, and the HKDF that follows).

5. ``secure_sum_small_calls`` — PD-NMF's calls: M = 4, d = 2,001 (PD-NMF's d + 1 for
   d = 2,000), 600 sequential calls, sealing off. The program side of a call, step by step,
   µs per party-call: ``encode`` (x → x̂, :meth:`protocols.field.FixedPoint.encode`),
   ``column_sum`` (x̂ + the one-stream mask of three pair streams,
   :func:`protocols.context.add_one_stream_mask`) and ``reconstruct_decode`` (the sum of the
   four column sums and its decoding, :meth:`protocols.field.FixedPoint.decode_sum`, as
   :func:`protocols.secure_sum.secure_sum` runs them); beside them the AES floor of
   ``column_sum`` — encrypting the three streams' counter blocks under kept encryptors,
   nothing else — and, from whole runs,
   the time the parties spend in their programs (:class:`timing.PartyClock`: the steps plus
   effects and bookkeeping) and the run's wall time, both per party-call.
   ``first_use_in_a_process``: what a fresh process pays once for the compiled kernels
   (importing numba, loading them from its disk cache) — its first encode, sum and decode
   minus its second.

Usage: ``python benchmarks/secure_sum.py [--quick] [--full] [--small-calls]``
(``--small-calls``: figure 5 alone).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from timing import PartyClock, emit, interleaved, pinned, ratio

from parties.party import site_parties
from protocols import wire
from protocols.context import AesRandomness, PartyContext, add_one_stream_mask
from protocols.crypto.channel import SealedChannel, encode_header
from protocols.crypto.mask_sums import pair_mask_sum, signed_stream_sum
from protocols.crypto.sealing import SEAL_OVERHEAD_BYTES
from protocols.effects import Call, RecvEach, SendEach
from protocols.field import FixedPoint, prime_field
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import Simulation, preshared_keys


def run_secure_sum(m: int, d: int, *, sealing: bool, keys: str = "preshared",
                   record_views: bool = True, seed: int = 1,
                   variant: str = "prg") -> tuple[float, Any]:
    rng = np.random.default_rng(seed)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]
    sim = Simulation(Network.build(m), seed=seed, sealing=sealing, keys=keys,
                     record_views=record_views)
    parties = site_parties(lambda ctx, x: secure_sum(ctx, x, variant), inputs)
    start = time.perf_counter()
    result = sim.run(parties)
    return time.perf_counter() - start, result


def time_masks(m: int, d: int, variant: str = "prg", seed: int = 1) -> float:
    """Every party's net mask of one PRG SecureSum call, computed alone."""
    field = prime_field("2^61-1")
    pairs = preshared_keys(seed, list(range(m)))
    start = time.perf_counter()
    for party in range(m):
        peers = [p for p in range(m) if p != party]
        keys = [pairs[(min(party, p), max(party, p))][1] for p in peers]
        signs = [1 if party < p else -1 for p in peers]
        if variant == "prg_two_share":
            pair_mask_sum(keys, signs, 0, d, field)
        else:
            signed_stream_sum(keys, signs, 0, d, field)
    return time.perf_counter() - start


def time_seal_open(m: int, d: int, seed: int = 1) -> float:
    """Seal every message of one SecureSum call (d-element column sums to M − 1 peers), open it."""
    field = prime_field("2^61-1")
    pairs = preshared_keys(seed, list(range(m)))
    rng = np.random.default_rng(seed)
    sums = [wire.encode(field.random(rng, d)) for _ in range(m)]
    header = encode_header(("secure_sum", 0, "column_sum", 1))
    channels = {(a, b): SealedChannel(pairs[(min(a, b), max(a, b))][0], a, b)
                for a in range(m) for b in range(m) if a != b}
    sealed = bytearray(len(sums[0]) + SEAL_OVERHEAD_BYTES)
    opened = bytearray(len(sums[0]))
    start = time.perf_counter()
    for party in range(m):
        for peer in range(m):
            if peer != party:
                channel = channels[(party, peer)]
                channel.seal_into(0, sums[party], sealed, header)
                channel.open_into(0, sealed, opened, header)
    return time.perf_counter() - start


def time_arithmetic(m: int, d: int, seed: int = 1) -> float:
    """Every party's own arithmetic of one PRG SecureSum call, masks left out: encode its input,
    add a (given) mask, add up the M column sums, decode the total."""
    field = prime_field("2^61-1")
    fixed = FixedPoint(field, 24)
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(0.0, 1.0, d) for _ in range(m)]
    masks = [field.random(rng, d) for _ in range(m)]
    columns = [field.random(rng, d) for _ in range(m)]
    start = time.perf_counter()
    for party in range(m):
        x_hat = fixed.encode(inputs[party], n_summands=m)
        field.add(x_hat, masks[party])
        fixed.decode_sum(columns)
    return time.perf_counter() - start


def x25519_primitives(budget_s: float = 0.2) -> dict[str, float]:
    """Microseconds per X25519 agreement, per key pair, per HKDF-SHA256 of 64 bytes."""
    from crypto import per_op
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

    from protocols.crypto.hkdf import hkdf_sha256

    own = X25519PrivateKey.generate()
    peer = X25519PrivateKey.generate().public_key()
    secret = own.exchange(peer)
    return {name: round(1e6 * per_op(fn, budget_s), 2) for name, fn in (
        ("agreement_us", lambda: own.exchange(peer)),
        ("key_pair_us", lambda: X25519PrivateKey.generate().public_key().public_bytes_raw()),
        ("hkdf_us", lambda: hkdf_sha256(secret, b"salt", b"info", 64)),
    )}


def per_call(fn: Any, calls: int) -> float:
    """Seconds per call of ``fn`` over ``calls`` calls (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def small_call_steps(m: int, d: int, seed: int = 1) -> dict[str, Any]:
    """The steps of one party's SecureSum call at (m, d), each a function of no arguments."""
    field = prime_field("2^61-1")
    fixed = FixedPoint(field, 24)
    party, peers = 1, tuple(p for p in range(m) if p != 1)
    pairs = preshared_keys(seed, list(range(m)))
    randomness = AesRandomness(field, bytes(32), party)
    for peer in peers:
        randomness.set_pair_seed(peer, pairs[(min(party, peer), max(party, peer))][1])
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 10.0, d)
    x_hat = fixed.encode(x, n_summands=m)
    received = [np.frombuffer(field.random(rng, d).tobytes(), dtype=np.uint64)
                for _ in peers]  # as a party receives them: read-only, over bytes
    column = field.random(rng, d)
    counters = np.zeros((-(-d // 2), 2), dtype=">u8")
    counter_bytes = memoryview(counters).cast("B")
    keystream = memoryview(np.empty(2 * len(counters) + 2, dtype=np.uint64)).cast("B")
    encryptors = [Cipher(algorithms.AES(pairs[(min(party, peer), max(party, peer))][1]),
                         modes.ECB()).encryptor() for peer in peers]
    calls = iter(range(1 << 40))
    return {
        "encode": lambda: fixed.encode(x, n_summands=m, what="SecureSum t_statistics"),
        "column_sum": lambda: add_one_stream_mask(randomness, party, peers,
                                                  Call("secure_sum", next(calls)), x_hat, field),
        "reconstruct_decode": lambda: fixed.decode_sum([column, *received]),
        "aes_floor": lambda: [e.update_into(counter_bytes, keystream) for e in encryptors],
    }


FIRST_USE = """
import sys, time
import numpy as np
from protocols.field import FixedPoint, prime_field
fixed = FixedPoint(prime_field("2^61-1"), 24)
x = np.ones(2001)
start = time.perf_counter()
fixed.decode(fixed.field.sum_arrays([fixed.encode(x, n_summands=4)] * 4))
first = time.perf_counter() - start
start = time.perf_counter()
fixed.decode(fixed.field.sum_arrays([fixed.encode(x, n_summands=4)] * 4))
print(first, time.perf_counter() - start, "numba" in sys.modules)
"""


def first_use(repeats: int) -> dict[str, Any]:
    """Seconds a fresh process spends on its first encode, sum and decode against its second:
    importing numba and loading the compiled kernels from numba's disk cache, once a process."""
    import subprocess
    import sys
    from pathlib import Path

    runs = []
    numba_loaded = ""
    for _ in range(repeats):
        done = subprocess.run([sys.executable, "-c", FIRST_USE], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).resolve().parents[1])
        first, second, numba_loaded = done.stdout.split()
        runs.append(float(first) - float(second))
    return {"min_s": round(min(runs), 3), "median_s": round(statistics.median(runs), 3),
            "numba_loaded": numba_loaded == "True"}


def small_calls(repeats: int, note: dict[str, int], quick: bool = False) -> None:
    """Figure 5: the program side of PD-NMF's SecureSum calls, step by step and whole."""
    m, d, calls = 4, 2001, 60 if quick else 600
    steps = small_call_steps(m, d)
    step_runs = interleaved(repeats, **{name: (lambda fn=fn: per_call(fn, 2000 // (
        10 if quick else 1))) for name, fn in steps.items()})

    def whole_run() -> tuple[float, float]:
        clock = PartyClock()
        rng = np.random.default_rng(1)
        inputs = [{"x": rng.uniform(0.0, 10.0, d)} for _ in range(m)]

        def program(ctx: PartyContext, x: np.ndarray) -> Any:
            for _ in range(calls):
                yield from secure_sum(ctx, x, label="t_statistics")

        sim = Simulation(Network.build(m), seed=1, sealing=False, keys="preshared")
        parties = site_parties(clock.wrap(program), inputs)
        start = time.perf_counter()
        sim.run(parties)
        return time.perf_counter() - start, sum(clock.seconds.values())

    whole = [whole_run() for _ in range(repeats)]
    party_calls = m * calls

    def us(runs: list[float], per: int = 1) -> dict[str, float]:
        return {"min": round(1e6 * min(runs) / per, 2),
                "median": round(1e6 * statistics.median(runs) / per, 2)}

    step_us = {name: us(runs) for name, runs in step_runs.items() if name != "aes_floor"}
    steps_min = sum(v["min"] for v in step_us.values())
    program = [p for _, p in whole]
    emit(benchmark="secure_sum_small_calls", parties=m, d=d, calls=calls, variant="prg",
         sealing=False, repeats=repeats, **note, steps_us_per_party_call=step_us,
         aes_floor_us=us(step_runs["aes_floor"]),
         column_sum_to_aes_floor={
             "ratio_of_minima": round(min(step_runs["column_sum"])
                                      / min(step_runs["aes_floor"]), 3),
             "ratio_median_of_pairs": round(statistics.median(
                 a / b for a, b in zip(step_runs["column_sum"], step_runs["aes_floor"],
                                       strict=True)), 3)},
         steps_total_us_min=round(steps_min, 2),
         program_us_per_party_call=us(program, party_calls),
         run_us_per_party_call=us([w for w, _ in whole], party_calls),
         program_minus_steps_us_min=round(1e6 * min(program) / party_calls - steps_min, 2),
         first_use_in_a_process=first_use(3),
         note="steps timed alone for one party (party 1 of 4, three pair streams); program: "
              "time inside the parties' programs in whole runs (steps, effects, bookkeeping); "
              "run: wall time of the whole run, driver included")


def ping(ctx: PartyContext, rounds: int) -> Any:
    payload = np.zeros(1, dtype=np.uint64)
    for r in range(rounds):
        call = Call("ping", r)
        yield SendEach(dict.fromkeys(ctx.peers, payload), call, "ping")
        yield RecvEach(ctx.peers, call, "ping")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repetitions")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--full", action="store_true", help="also X25519 setup at M = 1000")
    parser.add_argument("--small-calls", action="store_true",
                        help="only figure 5 (PD-NMF-sized calls)")
    args = parser.parse_args()
    m, d = (10, 10**5) if args.quick else (10, 10**6)
    repeats = args.repeats or (5 if args.quick else 7)
    with pinned() as note:
        small_calls(repeats, note, args.quick)
        if args.small_calls:
            return
        for variant in ("prg", "prg_two_share"):
            runs = interleaved(
                repeats,
                masks=lambda v=variant: time_masks(m, d, v),
                off=lambda v=variant: run_secure_sum(m, d, sealing=False, variant=v)[0],
                on=lambda v=variant: run_secure_sum(m, d, sealing=True, variant=v)[0],
                seal_open=lambda: time_seal_open(m, d),
                arithmetic=lambda: time_arithmetic(m, d),
            )
            floor = [a + b for a, b in zip(runs["masks"], runs["seal_open"], strict=True)]
            unsealed = [a + b for a, b in zip(runs["masks"], runs["arithmetic"], strict=True)]
            whole = [a + b for a, b in zip(unsealed, runs["seal_open"], strict=True)]
            emit(benchmark="secure_sum_vs_masks", parties=m, d=d, variant=variant,
                 repeats=repeats, **note,
                 sealing_on_to_masks=ratio(runs["on"], runs["masks"]),
                 sealing_off_to_masks=ratio(runs["off"], runs["masks"]),
                 sealing_on_to_off=ratio(runs["on"], runs["off"]), target_ratio_on=1.5,
                 sealed_floor_to_masks=ratio(floor, runs["masks"]),
                 sealing_on_to_sealed_floor=ratio(runs["on"], floor),
                 sealed_floor_note="masks + AES-GCM sealing and opening of the run's "
                                   f"{m * (m - 1)} column-sum messages (into reused "
                                   "buffers: the AEAD's work)",
                 protocol_floor_to_masks=ratio(whole, runs["masks"]),
                 sealing_on_to_protocol_floor=ratio(runs["on"], whole),
                 sealing_off_to_unsealed_floor=ratio(runs["off"], unsealed),
                 protocol_floor_note="the sealed floor plus every party's own arithmetic "
                                     "(encode, add the mask, add up the M column sums, "
                                     "decode): what any run of the protocol computes, "
                                     "without a driver, messages or views")

        n, rounds = 10, 50
        messages = n * (n - 1) * rounds
        sim = Simulation(Network.build(n), seed=1, sealing=False, keys="none")
        parties = site_parties(lambda ctx: ping(ctx, rounds), [{} for _ in range(n)])
        per_run = []
        for _ in range(repeats):
            start = time.perf_counter()
            sim.run(parties)
            per_run.append(time.perf_counter() - start)
        us_per_message = 1e6 * min(per_run) / messages
        emit(benchmark="driver_overhead_per_message", parties=n, messages=messages, **note,
             us_per_message_min=round(us_per_message, 2),
             us_per_message_median=round(1e6 * statistics.median(per_run) / messages, 2))

        m_big, d_big = (200, 1000) if args.quick else (1000, 1000)
        wall, result = run_secure_sum(m_big, d_big, sealing=False, record_views=False)
        masks = time_masks(m_big, d_big)
        totals = result.ledger.totals()
        emit(benchmark="secure_sum_large", parties=m_big, d=d_big, variant="prg",
             keys="preshared", sealing=False, views_kept=False, **note, wall_s=round(wall, 2),
             messages=totals["messages"], elements=totals["elements"],
             masks_alone_s=round(masks, 2), mask_elements=m_big * (m_big - 1) * d_big,
             per_message_floor_s=round(us_per_message * totals["messages"] / 1e6, 2),
             floor_s=round(masks + us_per_message * totals["messages"] / 1e6, 2),
             target_s=20)

        m_ka = 40
        runs = interleaved(
            3,
            x25519=lambda: run_secure_sum(m_ka, 10, sealing=False, keys="x25519")[0],
            preshared=lambda: run_secure_sum(m_ka, 10, sealing=False, keys="preshared")[0],
        )
        with_ka, without = min(runs["x25519"]), min(runs["preshared"])
        pairs = m_ka * (m_ka - 1) // 2
        emit(benchmark="x25519_key_agreement", parties=m_ka, pairs=pairs, **note,
             setup_s=round(with_ka - without, 3),
             ms_per_pair=round(1000 * (with_ka - without) / pairs, 3),
             runs=ratio(runs["x25519"], runs["preshared"]),
             note="one-time setup: both ends of a pair run X25519 and HKDF")
        primitives = x25519_primitives()
        emit(benchmark="x25519_primitives", **note, **primitives,
             floor_s_at_1000=round(1000 * 999 * primitives["agreement_us"] / 1e6, 1),
             note="floor at M = 1000: 999,000 agreements on one core")
        if args.full:
            wall_ka, _ = run_secure_sum(m_big, 1, sealing=False, keys="x25519",
                                        record_views=False)
            wall_pre, _ = run_secure_sum(m_big, 1, sealing=False, keys="preshared",
                                         record_views=False)
            emit(benchmark="x25519_key_agreement", parties=m_big,
                 pairs=m_big * (m_big - 1) // 2, **note, wall_s_with_x25519=round(wall_ka, 1),
                 wall_s_preshared=round(wall_pre, 1), setup_s=round(wall_ka - wall_pre, 1),
                 agreements=m_big * (m_big - 1), target_s=20,
                 floor_s=round(m_big * (m_big - 1) * primitives["agreement_us"] / 1e6, 1),
                 floor_with_hkdf_s=round(m_big * (m_big - 1) * (primitives["agreement_us"]
                                                                + primitives["hkdf_us"]) / 1e6, 1))

if __name__ == "__main__":
    main()
