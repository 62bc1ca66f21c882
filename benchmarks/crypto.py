"""The cryptographic primitives the project uses, in pycryptodome and in `cryptography` (OpenSSL).

Prints one JSON line per (primitive, size): µs per operation for each implementation, from
interleaved repetitions (min and median), and the ratio of the fastest other implementation
to `cryptography` (of the minima and of the medians; above 1 means `cryptography` is faster).
These figures chose the library of each primitive (README, "Dependencies"):

* ``aes_ctr`` — mask keystream: pycryptodome ``MODE_CTR``, pycryptodome ``MODE_ECB`` on
  counter blocks built with numpy (what :mod:`protocols.prg` did for short streams), and
  `cryptography`'s CTR, writing into a reused buffer where the API allows;
* ``aes_gcm`` — sealing one message (a fresh cipher object per message, as the driver does);
* ``x25519`` — a key pair from seed bytes, and one agreement;
* ``hkdf`` — 64 bytes of HKDF-SHA256: the standard library's ``hmac`` against `cryptography`.

Usage: ``python benchmarks/crypto.py [--quick]``.
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
from timing import emit, pinned

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


def compare(primitive: str, size: int | None, impls: dict[str, Callable[[], object]],
            repeats: int, budget_s: float, note: dict[str, int]) -> None:
    samples: dict[str, list[float]] = {name: [] for name in impls}
    names = list(impls)
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            samples[name].append(per_op(impls[name], budget_s))
    us = {name: {"min_us": round(1e6 * min(s), 2),
                 "median_us": round(1e6 * statistics.median(s), 2)} for name, s in samples.items()}
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
    args = parser.parse_args()
    repeats, budget = (3, 0.02) if args.quick else (7, 0.1)
    with pinned() as note:
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


if __name__ == "__main__":
    main()
