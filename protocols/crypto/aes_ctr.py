"""The raw AES-256 counter-mode keystream of one (key, stream): the bytes every mask is read from.

NIST SP 800-38A counter mode with the layout of :mod:`protocols.crypto.keystream`: the 16-byte
counter block is ``stream`` (an unsigned 64-bit number) in its upper 8 bytes and the block
counter, from ``start_block``, in its lower 8 bytes, both big-endian — pycryptodome's
``AES.MODE_CTR`` with ``nonce=stream.to_bytes(8, "big")``. The keystream comes from OpenSSL
through the `cryptography` package. :mod:`protocols.crypto.keystream` turns these words into
field elements; an audit's key search reads them directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from protocols.crypto.arguments import MAX_STREAM, as_count, as_key, as_stream
from protocols.crypto.scratch import WORD_BYTES as _WORD_BYTES
from protocols.errors import InputError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers import CipherContext

__all__ = ["BLOCK_BYTES", "ctr_encryptor", "keystream_arguments", "keystream_words"]

BLOCK_BYTES = 16
"""AES block length: one counter block yields two 64-bit words of keystream."""


def keystream_words(key: bytes, stream: int, n_words: int, start_block: int = 0) -> np.ndarray:
    """Raw AES-256-CTR keystream of one stream, as little-endian 64-bit words.

    Parameters
    ----------
    key : bytes
        32-byte AES-256 key.
    stream : int
        Stream number in [0, 2^64): the upper 8 bytes of every counter block.
    n_words : int
        Number of 64-bit words to return (8·n_words keystream bytes).
    start_block : int
        Block counter of the first block (the lower 8 bytes of the counter block); 0 for
        the start of the stream.

    Returns
    -------
    numpy.ndarray of uint64, shape (n_words,)
        Word i is bytes 8i … 8i+7 of the keystream that starts at block ``start_block``.
    """
    key = as_key(key, "key")
    stream, n_words, start_block = keystream_arguments(stream, n_words, start_block)
    cipher = ctr_encryptor(key, stream, start_block)
    return np.frombuffer(cipher.update(bytes(_WORD_BYTES * n_words)), dtype=np.uint64).copy()


def keystream_arguments(stream: int, n_words: int, start_block: int) -> tuple[int, int, int]:
    """The checked (stream, n_words, start_block) of :func:`keystream_words`."""
    stream = as_stream(stream)
    n_words = as_count(n_words, "n_words")
    start_block = as_count(start_block, "start_block")
    if start_block > MAX_STREAM:
        raise InputError(f"start_block = {start_block} is out of range [0, 2^64 − 1]")
    if start_block + -(-n_words // 2) > MAX_STREAM + 1:
        raise InputError(f"{n_words} words from block {start_block} overflow the block counter")
    return stream, n_words, start_block


def ctr_encryptor(key: bytes, stream: int, start_block: int = 0) -> CipherContext:
    """An AES-256-CTR keystream whose counter block is ``stream`` ‖ ``start_block``.

    OpenSSL's CTR increments the whole 128-bit block; within a stream the lower 64 bits never
    carry (streams are far shorter than 2^64 blocks), so this is the 64-bit-counter layout.
    """
    counter = stream.to_bytes(8, "big") + start_block.to_bytes(8, "big")
    return Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor()
