"""SecAgg+ with M = 100 sites, d = 10^4 and 10 dropouts: mpcsim beside Flower 1.42.

Both arms sum the same inputs — site u holds ``x_u = default_rng(SEED + u).uniform(-1, 1, d)``
— on the same sparse graph (SecAgg+, Bell et al., CCS 2020): every site's neighbours are the
k = 14 = 2⌈log2 M⌉ nearest on a ring (7 on each side; Harary's H_{14,100}), Shamir threshold
t = k/2 + 1 = 8, and the same ten sites (0, 10, …, 90) drop out after sharing their keys, before
they send their masked input. Each arm's output is checked against numpy's sum of the 90
survivors' inputs (max absolute error). Each arm runs in a worker process of its own (imports
excluded: every worker runs the protocol once untimed, then ``--reps`` timed runs, and reports
its fastest); the arms' workers are interleaved, their order alternating from one round to the
next, with BLAS, OpenMP and numba pinned to one thread. What each arm includes:

* ``mpcsim`` — :func:`protocols.secagg.secagg` (Bonawitz et al.'s semi-honest protocol with
  SecAgg+'s Harary graph, ``graph = "harary"``, ``degree = 14``, ``threshold = 8``) for the 100
  sites and the aggregator, one process, the SimPy driver: ``Simulation.run`` with the ten
  dropouts scripted as crash faults at the masked-input step. The time covers the X25519
  agreement of the channel keys (``keys = "x25519"``, the default), every site's per-call
  X25519 mask key pair, the Shamir sharing of its key and self-mask seed, the sealed
  (AES-256-GCM) channels, fixed-point encoding (GF(2^61 − 1), 24 fractional bits), the AES-CTR
  mask expansion, the simulated network, the ledger and every party's view, the aggregator's
  reconstruction and unmasking, and the sum sent back to the survivors.
* ``flower`` — Flower 1.42's SecAgg+ as its ``secaggplus_mod`` runs it on each client, in one
  process: for every client and stage, the mod's own steps — the client state restored from and
  saved to a ``ConfigRecord``, ``check_stage`` and ``check_configs``, then the stage function
  (``_setup``: two SECP384R1 key pairs; ``_share_keys``: Shamir shares of the mask seed and the
  key, ECDH and authenticated encryption per neighbour; ``_collect_masked_vectors``: decrypting
  the shares, quantizing the update, ``pseudo_rand_gen`` masks per neighbour;
  ``_unmask``) — driven by the server steps of ``SecAggPlusWorkflow`` reproduced statement by
  statement from its four stages (neighbour ring over a shuffled order, forwarding the
  ciphertexts, summing the masked vectors modulo 2^32, ``combine_shares`` and the mask removal,
  ``dequantize``). Configuration: ``num_shares = 15`` (the neighbours and the client itself),
  ``reconstruction_threshold = 8``, the default clipping range 8.0, quantization range 2^22 and
  modulus 2^32, every client weighted 1 with ``max_weight = 1.0`` (Flower's default 1000 would
  scale the updates by 1/1000 before quantizing, a thousand times the error); the weighted
  average it outputs times the number of survivors is the sum. Not included: Flower's
  ``Message`` envelopes (they need a running SuperLink), its gRPC transport, serialisation of
  the messages and the ``Strategy`` — so Flower's arm is a lower bound on Flower's own time.
  The dropped clients are not called in the masked-vector stage (their replies are missing, as
  a timeout leaves them).

Prints one JSON line per arm and one with the ratio flower ÷ mpcsim (of the minima over rounds,
and the median of the round-by-round ratios); without ``.venv-peers`` (``make peers`` builds it)
Flower's arm is reported as skipped. Run by ``make peers``, or
``python benchmarks/peers/secagg.py [--rounds N] [--reps N] [--m M] [--d D]``.
"""

from __future__ import annotations

import importlib
import math
import os
import random
import sys
import time
from typing import Any

import harness
import numpy as np

BENCHMARK = "peers_secagg"


def inputs(m: int, d: int) -> list[np.ndarray]:
    return harness.party_inputs(m, d)


def dropped(m: int) -> list[int]:
    """The sites that drop out: every tenth (0, 10, …), 10 % of M."""
    return list(range(0, m, 10))


def degree(m: int) -> int:
    """k = 2⌈log2 M⌉, SecAgg+'s neighbourhood size (Bell et al. 2020), at most M − 1."""
    return min(2 * math.ceil(math.log2(m)), m - 1 - (m - 1) % 2)


def error(got: np.ndarray, m: int, d: int) -> float:
    xs = inputs(m, d)
    survivors = sorted(set(range(m)) - set(dropped(m)))
    expected = np.sum([xs[u] for u in survivors], axis=0)
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - expected)))


# -- workers (each in its own process) ---------------------------------------------------------


def worker_mpcsim(m: int, d: int, reps: int) -> dict[str, object]:
    sys.path.insert(0, str(harness.ROOT))
    from protocols.secagg import Config
    from sim.experiments.secagg import secagg_parties
    from sim.faults import parse_faults
    from sim.network import Network
    from sim.simulation import Simulation

    k = degree(m)
    config = Config(threshold=k // 2 + 1, graph="harary", degree=k)
    faults = parse_faults([{"kind": "crash", "party": u, "call": "secagg", "step": "masked_input"}
                           for u in dropped(m)])
    xs = inputs(m, d)

    def once() -> tuple[float, np.ndarray]:
        sim = Simulation(Network.build(m + 1), seed=harness.SEED, faults=faults)
        parties = secagg_parties(xs, config)
        start = time.perf_counter()
        result = sim.run(parties)
        seconds = time.perf_counter() - start
        total, survivors = result.outputs[m]
        if sorted(survivors) != sorted(set(range(m)) - set(dropped(m))):
            raise RuntimeError(f"mpcsim's survivors {survivors} are not the expected ones")
        return seconds, np.asarray(total)

    seconds, total = harness.fastest(once, reps)
    return {"seconds": seconds, "max_abs_error": error(total, m, d), "degree": k,
            "threshold": config.threshold, "fractional_bits": 24}


def flower_round(xs: list[np.ndarray], gone: set[int], k: int, threshold: int,
                 shuffler: random.Random) -> np.ndarray:
    """One SecAgg+ round: Flower's client mod per client and stage, its workflow's server
    steps (``SecAggPlusWorkflow`` stage by stage, without the Grid's messages); the sum."""
    from flwr.app import ConfigRecord
    from flwr.common import bytes_to_ndarray, ndarrays_to_parameters
    from flwr.common.secure_aggregation.crypto.shamir import combine_shares
    from flwr.common.secure_aggregation.crypto.symmetric_encryption import generate_shared_key
    from flwr.common.secure_aggregation.ndarrays_arithmetic import (
        factor_extract,
        get_parameters_shape,
        parameters_addition,
        parameters_mod,
        parameters_subtraction,
    )
    from flwr.common.secure_aggregation.quantization import dequantize
    from flwr.common.secure_aggregation.secaggplus_constants import Key, Stage
    from flwr.common.secure_aggregation.secaggplus_utils import pseudo_rand_gen
    from flwr.supercore.primitives.asymmetric import bytes_to_private_key, bytes_to_public_key

    # the module, not the function of the same name that its package re-exports
    mod = importlib.import_module("flwr.client.mod.secure_aggregation.secaggplus_mod")
    clip, q_range, mod_range = 8.0, 1 << 22, 1 << 32
    records: dict[int, Any] = {}

    def client(nid: int, configs: Any) -> Any:
        """secaggplus_mod's body for one message, without the Message envelope."""
        state = mod.SecAggPlusState(**records.get(nid, ConfigRecord({})))
        mod.check_stage(state.current_stage, configs)
        state.current_stage = configs.pop(Key.STAGE)
        mod.check_configs(state.current_stage, configs)
        if state.current_stage == Stage.SETUP:
            state.nid = nid
            res = mod._setup(state, configs)
        elif state.current_stage == Stage.SHARE_KEYS:
            res = mod._share_keys(state, configs)
        elif state.current_stage == Stage.COLLECT_MASKED_VECTORS:
            fit = ndarrays_to_parameters([xs[nid - 1]])  # the client's update, weight 1
            res = mod._collect_masked_vectors(state, configs, 1, fit)
        else:
            res = mod._unmask(state, configs)
        records[nid] = ConfigRecord(state.to_dict())
        return ConfigRecord(res, False)

    m = len(xs)
    sampled = list(range(1, m + 1))  # node ids; node u + 1 is site u
    num_shares = k + 1
    # stage 0: setup
    order = sampled[:]
    shuffler.shuffle(order)
    half = num_shares >> 1
    neighbours = {nid: {order[(i + o) % m] for o in range(-half, half + 1)}
                  for i, nid in enumerate(order)}
    setup = {Key.SAMPLE_NUMBER: m, Key.SHARE_NUMBER: num_shares, Key.THRESHOLD: threshold,
             Key.CLIPPING_RANGE: clip, Key.TARGET_RANGE: q_range, Key.MOD_RANGE: mod_range,
             Key.MAX_WEIGHT: 1.0}
    public_keys = {}
    for nid in sampled:
        res = client(nid, ConfigRecord({Key.STAGE: Stage.SETUP, **setup}))
        public_keys[nid] = [res[Key.PUBLIC_KEY_1], res[Key.PUBLIC_KEY_2]]
    active = set(sampled)
    # stage 1: share keys
    fwd_ct: dict[int, list[bytes]] = {nid: [] for nid in active}
    fwd_src: dict[int, list[int]] = {nid: [] for nid in active}
    for nid in sorted(active):
        cfg = ConfigRecord({str(v): public_keys[v] for v in neighbours[nid] & active})
        cfg[Key.STAGE] = Stage.SHARE_KEYS
        res = client(nid, cfg)
        for dst, ct in zip(res[Key.DESTINATION_LIST], res[Key.CIPHERTEXT_LIST], strict=True):
            if dst in fwd_ct:
                fwd_ct[dst].append(ct)
                fwd_src[dst].append(nid)
    # stage 2: collect masked vectors (the dropped clients do not answer)
    masked = None
    for nid in sorted(active):
        if nid - 1 in gone:
            continue
        res = client(nid, ConfigRecord({Key.STAGE: Stage.COLLECT_MASKED_VECTORS,
                                        Key.CIPHERTEXT_LIST: fwd_ct[nid],
                                        Key.SOURCE_LIST: fwd_src[nid]}))
        vec = [bytes_to_ndarray(b) for b in res[Key.MASKED_PARAMETERS]]
        masked = vec if masked is None else parameters_addition(masked, vec)
    masked = parameters_mod(masked, mod_range)
    active = {nid for nid in active if nid - 1 not in gone}
    dead = set(sampled) - active
    # stage 3: unmask
    collected: dict[int, list[bytes]] = {nid: [] for nid in sampled}
    for nid in sorted(active):
        res = client(nid, ConfigRecord({Key.STAGE: Stage.UNMASK,
                                        Key.ACTIVE_NODE_ID_LIST: list(neighbours[nid] & active),
                                        Key.DEAD_NODE_ID_LIST: list(neighbours[nid] & dead)}))
        for owner, share in zip(res[Key.NODE_ID_LIST], res[Key.SHARE_LIST], strict=True):
            collected[owner].append(share)
    for nid, shares in collected.items():
        if len(shares) < threshold:
            raise RuntimeError(f"Flower: not enough shares to unmask node {nid}")
        secret = combine_shares(shares)
        if nid in active:
            private_mask = pseudo_rand_gen(secret, mod_range, get_parameters_shape(masked))
            masked = parameters_subtraction(masked, private_mask)
        else:
            others = neighbours[nid]
            others.remove(nid)
            for other in others:
                shared_key = generate_shared_key(bytes_to_private_key(secret),
                                                 bytes_to_public_key(public_keys[other][0]))
                pairwise = pseudo_rand_gen(shared_key, mod_range, get_parameters_shape(masked))
                masked = (parameters_addition(masked, pairwise) if nid > other
                          else parameters_subtraction(masked, pairwise))
    recon = parameters_mod(masked, mod_range)
    q_total, recon = factor_extract(recon)
    aggregated = dequantize(recon, clip, q_range)
    offset = -(len(active) - 1) * clip
    for vec in aggregated:
        vec += offset
        vec *= q_range / q_total
    return aggregated[0] * len(active)  # the weighted average with weights 1, times n


def worker_flower(m: int, d: int, reps: int) -> dict[str, object]:
    import flwr

    xs = inputs(m, d)
    k = degree(m)
    gone = set(dropped(m))
    shuffler = random.Random(harness.SEED)

    def once() -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        total = flower_round(xs, gone, k, k // 2 + 1, shuffler)
        return time.perf_counter() - start, total

    seconds, total = harness.fastest(once, reps)
    return {"seconds": seconds, "max_abs_error": error(total, m, d),
            "version": flwr.__version__, "num_shares": k + 1, "threshold": k // 2 + 1,
            "quantization_range": 1 << 22, "clipping_range": 8.0}


WORKERS = {"mpcsim": worker_mpcsim, "flower": worker_flower}
PEER_ARMS = {"flower"}


# -- the driver ---------------------------------------------------------------------------------


def main() -> None:
    cli = harness.parser(__doc__, WORKERS, reps=1)
    cli.add_argument("--m", type=int, default=100)
    cli.add_argument("--d", type=int, default=10**4)
    args = cli.parse_args()
    if args.m < 20:
        cli.error(f"--m {args.m}: SecAgg+ here needs at least 20 sites (10 % drop out)")
    if args.worker:
        harness.serve_worker(lambda: WORKERS[args.worker](args.m, args.d, args.reps))
        return
    arms = harness.installed_arms(BENCHMARK, args.arms.split(","), PEER_ARMS)
    samples = harness.interleave(BENCHMARK, arms, args.rounds, lambda arm: harness.run_worker(
        __file__, arm, arm in PEER_ARMS,
        ["--m", str(args.m), "--d", str(args.d), "--reps", str(args.reps)]))
    seconds = harness.seconds_of(samples)
    load = os.getloadavg()[0]
    for arm, runs in samples.items():
        harness.emit(harness.arm_line(BENCHMARK, arm, runs, {"m": args.m, "d": args.d,
                                             "dropped": len(dropped(args.m)), "processes": 1},
                      args.rounds, args.reps, load))
    if "mpcsim" in seconds and len(seconds) > 1:
        harness.emit({"benchmark": BENCHMARK, "ratios_peer_over_mpcsim": harness.ratios(
            seconds, "mpcsim", [arm for arm in seconds if arm != "mpcsim"]),
              "load_average": load})


if __name__ == "__main__":
    main()
