"""A private draw whose first keystream block survives whole as its first elements is that draw,
not its key (:func:`parties.audit.key_search.catalogue`).

At p = 2^61 − 1 a draw's element is a keystream word with its top three bits dropped, so the
draw's first two elements *are* the first AES block's two words — byte for byte in a payload —
whenever both words lie below 2^61: 1 draw in 64. A draw sent as a pair seed to a coalition
member then carries "the first keystream block" of the honest key, and an audit that counted
that as key material held would turn every such coalition ``inconclusive`` and slow (the
key-flow follow-up runs): ``test_statistical_seed_set_up_without_the_bug_is_private`` did so
for coalitions holding party 3 when the seed scheme was first written, before this check — the
traced run's key of party 0 drew such a block at stream 3. It was a false key flow, not a
collision of audit streams and not a lack of power. The catalogue leaves the block out exactly
when it is the draw's own first elements, and keeps it otherwise.
"""

from __future__ import annotations

import hashlib

import numpy as np

from parties.audit.key_search import catalogue
from parties.audit.randomness import key_of_stream, stream_of
from parties.view import View
from protocols.crypto.aes_ctr import keystream_words
from protocols.field import prime_field

F61 = prime_field((1 << 61) - 1)
DRAW = ("private", 0, "secure_sum", 1, 3)  # party 0's draw for peer 3 in secure_sum#1


def _key(coincide: bool) -> bytes:
    """The first of a counter's SHA-256 keys whose first block's words do (or do not) both lie
    below 2^61 — about one key in 64 does."""
    for i in range(4096):
        key = hashlib.sha256(i.to_bytes(4, "big")).digest()
        words = keystream_words(key, stream_of(DRAW), 2)
        if bool(np.all(words < np.uint64(1 << 61))) == coincide:
            return key
    raise AssertionError("no key found")


def _blocks(key: bytes) -> list[str]:
    values = F61.from_words(keystream_words(key, stream_of(DRAW), 32))[:8]
    view = View(party=3, role="site", inputs={})
    view.draws.append((DRAW, values))
    kid = key_of_stream(DRAW)
    return [d.what for d in catalogue({kid: key}, {3: view}, F61, {kid})
            if d.what.startswith("first keystream block")]


def test_a_block_that_is_the_draw_itself_is_not_key_material() -> None:
    key = _key(coincide=True)
    words = keystream_words(key, stream_of(DRAW), 2)
    draw = F61.from_words(keystream_words(key, stream_of(DRAW), 32))[:8]
    assert draw[:2].astype("<u8").tobytes() == words.astype("<u8").tobytes()  # the premise
    assert _blocks(key) == []


def test_a_block_the_draw_does_not_carry_is_still_searched() -> None:
    key = _key(coincide=False)
    assert _blocks(key) == [f"first keystream block of stream {stream_of(DRAW)}"]
