"""The cryptographic primitives the project uses, in pycryptodome and in `cryptography` (OpenSSL).

Prints one JSON line per (primitive, size): µs per operation for each implementation, from
interleaved repetitions (min and median), and the ratio of the fastest other implementation
to `cryptography` (of the minima and of the medians; above 1 means `cryptography` is faster).
These figures chose the library of each primitive (README, "Dependencies"):

* ``aes_ctr`` — mask keystream: pycryptodome ``MODE_CTR``, pycryptodome ``MODE_ECB`` on
  counter blocks built with numpy (what :mod:`protocols.crypto.keystream` did for short streams),
  and `cryptography`'s CTR, writing into a reused buffer where the API allows;
* ``aes_gcm`` — sealing one message (a fresh cipher object per message, as
  :func:`protocols.crypto.sealing.seal_message` does);
* ``x25519`` — a key pair from seed bytes, and one agreement;
* ``hkdf`` — 64 bytes of HKDF-SHA256: the standard library's ``hmac`` against `cryptography`.

Two more lines place the mask generation of :mod:`protocols.crypto.keystream` against its floor:

* ``mask_floor`` — every party's net mask of one PRG SecureSum call (the one-stream form,
  :meth:`protocols.crypto.mask_sums.signed_stream_sum` with all of its peers), M = 1000,
  d = 1000: M(M − 1)·d = 10^9 elements (M = 400 with ``--quick``), against the floor — the raw
  AES-256-CTR keystream of as many elements (8 bytes each, one OpenSSL context, 1 MiB updates
  into a reused buffer) plus masking them to 61 bits and checking for rejections (512 KiB
  cache-resident passes). ``masks_warm`` is a call of parties that have kept their
  encryptors (what :class:`protocols.context.AesRandomness` does from a key's second use
  on: every call after a party's second), ``masks_cold`` a call that builds them (a party's
  first call; the module functions); each is reported over the floor, the runs interleaved,
  beside the first two calls of the parties that keep them.
* ``mask_small_calls`` — the PD-NMF pattern: M = 4, d + 1 = 2001 elements, three streams per
  party and call; µs per party-call and per stream, with kept and with fresh encryptors.

One line per message size (16 KB, PD-NMF's d = 2001; 8 MB, SecureSum's d = 10^6) for the
channels' cost per message:

* ``seal_open`` — µs to seal and to open one message with the reference functions
  (:func:`protocols.crypto.sealing.seal_message` / :func:`~protocols.crypto.sealing.open_message`,
  what the drivers called per message) and with a kept
  :class:`protocols.crypto.channel.SealedChannel` and an encoded header (what they do now;
  ``channel_seal_into`` / ``channel_open_into``: into reused buffers, as the SimPy driver seals and
  authenticates a message on delivery when nothing observes it in flight), interleaved; old ÷ new
  per direction; and the floor: the AEAD alone, ``AESGCM.encrypt_into`` / ``decrypt_into`` into
  reused buffers (GB/s). At 8 MB the figures are the C library's allocator as much as AES-GCM: in
  this loop, sealing into new ``bytes`` (two 8 MB objects a message, one freed) maps and unmaps
  fresh memory each time (~7 ms against ~0.7 ms for the AEAD); in a run that keeps many messages
  alive every new large buffer is fresh memory anyway (``benchmarks/secure_sum.py`` is the
  figure for that case).

Usage: ``python benchmarks/crypto.py [--quick] [--seal-open-only]``.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import statistics
import time
from collections.abc import Callable

import numpy as np
from Crypto.Cipher import AES
from Crypto.Protocol.DH import import_x25519_public_key, key_agreement
from Crypto.PublicKey import ECC
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from timing import emit, interleaved, pinned, ratio, summary

from protocols.crypto.channel import SealedChannel, encode_header
from protocols.crypto.keystream import CHUNK_WORDS, StreamCiphers
from protocols.crypto.mask_sums import signed_stream_sum
from protocols.crypto.sealing import (
    NONCE_BYTES,
    SEAL_OVERHEAD_BYTES,
    TAG_BYTES,
    associated_data,
    message_nonce,
    open_message,
    seal_message,
)
from protocols.field import MERSENNE61, prime_field

KEY = bytes(range(32))
NONCE = bytes(range(12))
SEED_A = bytes(range(1, 33))
SEED_B = bytes(range(33, 65))


def per_op(fn: Callable[[], object], budget_s: float) -> float:
    """Seconds per call of ``fn``, from a loop of about ``budget_s``."""
    fn()
    n, start = 1, time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    n = max(1, int(budget_s / once))
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def per_op_samples(impls: dict[str, Callable[[], object]], repeats: int, budget_s: float
                   ) -> dict[str, list[float]]:
    """Seconds per operation of each implementation, ``repeats`` samples each, interleaved."""
    return interleaved(repeats, **{name: (lambda fn=fn: per_op(fn, budget_s))
                                   for name, fn in impls.items()})


def microseconds(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Min and median µs per operation of each implementation."""
    return {name: {"min_us": round(1e6 * min(s), 2),
                   "median_us": round(1e6 * statistics.median(s), 2)}
            for name, s in samples.items()}


def compare(primitive: str, size: int | None, impls: dict[str, Callable[[], object]],
            repeats: int, budget_s: float, note: dict[str, int]) -> None:
    samples = per_op_samples(impls, repeats, budget_s)
    names = list(impls)
    us = microseconds(samples)
    best = {name: min(s) for name, s in samples.items()}
    med = {name: statistics.median(s) for name, s in samples.items()}
    fastest_other = min((n for n in names if n != "cryptography"), key=best.__getitem__)
    emit(benchmark="crypto", primitive=primitive, bytes=size, repeats=repeats, **note,
         implementations=us, fastest=min(best, key=best.__getitem__),
         best_other=fastest_other,
         best_other_to_cryptography_minima=round(best[fastest_other] / best["cryptography"], 2),
         best_other_to_cryptography_medians=round(med[fastest_other] / med["cryptography"], 2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--seal-open-only", action="store_true",
                        help="only the seal_open lines (per-message sealing and opening)")
    args = parser.parse_args()
    repeats, budget = (3, 0.02) if args.quick else (7, 0.1)
    with pinned() as note:
        seal_open(repeats, budget, note)
        if args.seal_open_only:
            return
        for size in (16 * 1024, 1 << 20):
            zeros = bytes(size)
            out = bytearray(size)
            blocks = size // 16

            def pyc_ctr(zeros: bytes = zeros, out: bytearray = out) -> object:
                return AES.new(KEY, AES.MODE_CTR, nonce=bytes(8), initial_value=0).encrypt(
                    zeros, output=out)

            def pyc_ecb(blocks: int = blocks) -> object:
                counters = np.empty((blocks, 2), dtype=">u8")
                counters[:, 0] = 5
                counters[:, 1] = np.arange(blocks, dtype=np.uint64)
                return AES.new(KEY, AES.MODE_ECB).encrypt(counters.tobytes())

            def ossl_ctr(zeros: bytes = zeros, out: bytearray = out) -> object:
                enc = Cipher(algorithms.AES(KEY), modes.CTR(bytes(16))).encryptor()
                return enc.update_into(zeros, out)

            compare("aes_ctr", size, {"pycryptodome_ctr": pyc_ctr, "pycryptodome_ecb": pyc_ecb,
                                      "cryptography": ossl_ctr}, repeats, budget, note)
        aad = bytes(80)
        for size in (64, 16 * 1024, 8 * 10**6):
            message = bytes(size)

            def pyc_gcm(message: bytes = message) -> object:
                cipher = AES.new(KEY, AES.MODE_GCM, nonce=NONCE, mac_len=16)
                cipher.update(aad)
                return cipher.encrypt_and_digest(message)

            def ossl_gcm(message: bytes = message) -> object:
                return AESGCM(KEY).encrypt(NONCE, message, aad)

            compare("aes_gcm", size, {"pycryptodome": pyc_gcm, "cryptography": ossl_gcm},
                    repeats, budget, note)
        compare("x25519_keypair", None, {
            "pycryptodome": lambda: ECC.construct(curve="Curve25519", seed=SEED_A)
            .public_key().export_key(format="raw"),
            "cryptography": lambda: X25519PrivateKey.from_private_bytes(SEED_A)
            .public_key().public_bytes_raw(),
        }, repeats, budget, note)
        pyc_private = ECC.construct(curve="Curve25519", seed=SEED_A)
        ossl_private = X25519PrivateKey.from_private_bytes(SEED_A)
        peer = X25519PrivateKey.from_private_bytes(SEED_B).public_key().public_bytes_raw()
        compare("x25519_agree", None, {
            "pycryptodome": lambda: key_agreement(
                static_priv=pyc_private, static_pub=import_x25519_public_key(peer),
                kdf=lambda z: z),
            "cryptography": lambda: ossl_private.exchange(X25519PublicKey.from_public_bytes(peer)),
        }, repeats, budget, note)

        def stdlib_hkdf() -> bytes:
            prk = hmac.digest(b"salt", SEED_A, hashlib.sha256)
            first = hmac.digest(prk, b"info\x01", hashlib.sha256)
            return first + hmac.digest(prk, first + b"info\x02", hashlib.sha256)

        compare("hkdf_sha256_64", 64, {
            "stdlib_hmac": stdlib_hkdf,
            "cryptography": lambda: HKDF(hashes.SHA256(), 64, b"salt", b"info").derive(SEED_A),
        }, repeats, budget, note)
        mask_floor(400 if args.quick else 1000, 1000, 3, note)
        mask_small_calls(4, 2001, 3 if args.quick else 7, note)


def paired(num: list[float], den: list[float]) -> dict[str, float]:
    """num/den from interleaved per-operation times: ratio of the minima, median of the pairs."""
    return {"ratio_of_minima": round(min(num) / min(den), 3),
            "ratio_median_of_pairs": round(
                statistics.median(a / b for a, b in zip(num, den, strict=True)), 3)}


def seal_open(repeats: int, budget_s: float, note: dict[str, int]) -> None:
    """µs per sealed and per opened message: reference functions, kept channel, AEAD alone."""
    header = ("secure_sum", 17, "column_sum", 2)
    sender, receiver, sequence = 1, 2, 5
    channel = SealedChannel(KEY, sender, receiver)
    encoded = encode_header(header)
    aead = AESGCM(KEY)
    nonce = message_nonce(sender, receiver, sequence)
    aad = associated_data(sender, receiver, sequence, *header)
    for size in (16 * 1024, 8 * 10**6):
        plaintext = bytes(size)
        sealed = seal_message(KEY, sender, receiver, sequence, plaintext, header)
        body = memoryview(sealed)[NONCE_BYTES:]
        out, back, into = bytearray(size + TAG_BYTES), bytearray(size), bytearray(size)
        wire = bytearray(size + SEAL_OVERHEAD_BYTES)
        impls: dict[str, Callable[[], object]] = {
            "seal_message": lambda p=plaintext: seal_message(KEY, sender, receiver, sequence,
                                                             p, header),
            "channel_seal": lambda p=plaintext: channel.seal(sequence, p, encoded),
            "channel_seal_into": lambda p=plaintext, o=wire: channel.seal_into(sequence, p, o,
                                                                               encoded),
            "open_message": lambda s=sealed: open_message(KEY, sender, receiver, sequence, s,
                                                          header),
            "channel_open": lambda s=sealed: channel.open(sequence, s, encoded),
            "channel_open_into": lambda s=sealed, o=into: channel.open_into(sequence, s, o,
                                                                            encoded),
            "aead_encrypt_into": lambda p=plaintext, o=out: aead.encrypt_into(nonce, p, aad, o),
            "aead_decrypt_into": lambda b=body, o=back: aead.decrypt_into(nonce, b, aad, o),
        }
        samples = per_op_samples(impls, repeats, budget_s)
        us = microseconds(samples)
        emit(benchmark="seal_open", bytes=size, repeats=repeats, **note, per_message=us,
             seal_old_to_channel=paired(samples["seal_message"], samples["channel_seal"]),
             open_old_to_channel=paired(samples["open_message"], samples["channel_open"]),
             channel_seal_to_aead=paired(samples["channel_seal"], samples["aead_encrypt_into"]),
             channel_seal_into_to_aead=paired(samples["channel_seal_into"],
                                              samples["aead_encrypt_into"]),
             channel_open_to_aead=paired(samples["channel_open"], samples["aead_decrypt_into"]),
             channel_open_into_to_aead=paired(samples["channel_open_into"],
                                              samples["aead_decrypt_into"]),
             aead_encrypt_gb_per_s=round(size / min(samples["aead_encrypt_into"]) / 1e9, 2),
             aead_decrypt_gb_per_s=round(size / min(samples["aead_decrypt_into"]) / 1e9, 2),
             note="old: seal_message/open_message per message; channel: a kept "
                  "SealedChannel and an encoded header (the drivers' path; seal_into, "
                  "open_into: into reused buffers); aead: AESGCM.encrypt_into/decrypt_into "
                  "into reused buffers (the floor)")


def party_keys(m: int) -> list[tuple[list[bytes], list[int]]]:
    """For each of ``m`` parties: its pair keys with every peer, and the sign of each."""
    rng = np.random.default_rng(17)
    pair = {(a, b): rng.bytes(32) for a in range(m) for b in range(a + 1, m)}
    out = []
    for party in range(m):
        peers = [p for p in range(m) if p != party]
        out.append(([pair[min(party, p), max(party, p)] for p in peers],
                    [1 if party < p else -1 for p in peers]))
    return out


def mask_floor(m: int, d: int, repeats: int, note: dict[str, int]) -> None:
    """Every party's one-stream net mask of one call, against the AES-CTR keystream floor."""
    field = prime_field("2^61-1")
    parties = party_keys(m)
    elements = m * (m - 1) * d
    kept = [StreamCiphers() for _ in parties]
    calls = iter(range(1, 1 << 30))  # a fresh stream number for every call, as in a run

    def keystream() -> float:
        chunk = 1 << 20
        encryptor = Cipher(algorithms.AES(KEY), modes.CTR(bytes(16))).encryptor()
        zeros, out = bytes(chunk), bytearray(chunk + 16)
        full, rest = divmod(8 * elements, chunk)
        start = time.perf_counter()
        for _ in range(full):
            encryptor.update_into(zeros, out)
        encryptor.update_into(zeros[:rest], out)
        return time.perf_counter() - start

    def masking() -> float:
        words = np.random.default_rng(1).integers(0, 2**63, CHUNK_WORDS, dtype=np.uint64)
        p = np.uint64(MERSENNE61)
        full, rest = divmod(elements, CHUNK_WORDS)
        tail = words[:rest]
        start = time.perf_counter()
        for _ in range(full):
            np.bitwise_and(words, p, out=words)
            words.max()
        np.bitwise_and(tail, p, out=tail)
        tail.max()
        return time.perf_counter() - start

    def masks(warm: bool) -> float:
        stream = next(calls)
        start = time.perf_counter()
        for ciphers, (keys, signs) in zip(kept, parties, strict=True):
            if warm:
                signed_stream_sum(keys, signs, stream, d, field, ciphers=ciphers)
            else:
                signed_stream_sum(keys, signs, stream, d, field)
        return time.perf_counter() - start

    first_call = masks(True)  # each party builds its encryptors and lets them go
    second_call = masks(True)  # ... builds them again and keeps them
    runs = interleaved(repeats, keystream=keystream, masking=masking,
                       warm=lambda: masks(True), cold=lambda: masks(False))
    floor = [a + b for a, b in zip(runs["keystream"], runs["masking"], strict=True)]
    emit(benchmark="mask_floor", parties=m, d=d, elements=elements, repeats=repeats, **note,
         keystream_bytes=8 * elements,
         keystream_gb_per_s=round(8 * elements / min(runs["keystream"]) / 1e9, 2),
         keystream=summary(runs["keystream"]), masking=summary(runs["masking"]),
         floor_min_s=round(min(floor), 3),
         masks_warm_to_floor=ratio(runs["warm"], floor),
         masks_cold_to_floor=ratio(runs["cold"], floor),
         first_call_s=round(first_call, 3), second_call_s=round(second_call, 3),
         target_warm_to_floor=2.0, kept_encryptors=sum(c.kept for c in kept),
         note="warm: encryptors kept from earlier calls (about 1 KB each); cold: built "
              "in the call; a party keeps a key's encryptor from the key's second use on")


def mask_small_calls(m: int, n: int, repeats: int, note: dict[str, int]) -> None:
    """PD-NMF's SecureSum calls: per party-call cost of its m − 1 streams of n elements."""
    field = prime_field("2^61-1")
    parties = party_keys(m)
    kept = [StreamCiphers() for _ in parties]
    calls = 2000
    streams = iter(range(1 << 30))

    def per_call(warm: bool) -> float:
        first = next(streams) * calls
        start = time.perf_counter()
        for stream in range(first, first + calls):
            for ciphers, (keys, signs) in zip(kept, parties, strict=True):
                if warm:
                    signed_stream_sum(keys, signs, stream, n, field, ciphers=ciphers)
                else:
                    signed_stream_sum(keys, signs, stream, n, field)
        return (time.perf_counter() - start) / (calls * m)

    per_call(True)
    runs = interleaved(repeats, kept=lambda: per_call(True), fresh=lambda: per_call(False))
    us = {name: {"party_call_us_min": round(1e6 * min(r), 2),
                 "stream_us_min": round(1e6 * min(r) / (m - 1), 2),
                 "party_call_us_median": round(1e6 * statistics.median(r), 2)}
          for name, r in runs.items()}
    emit(benchmark="mask_small_calls", parties=m, elements=n, streams_per_party_call=m - 1,
         repeats=repeats, **note, encryptors=us, kept_to_fresh=ratio(runs["kept"], runs["fresh"]))


if __name__ == "__main__":
    main()
