"""A view's index digest (:func:`sim.drivers.rank_views.view_digest`): each received message
enters by the SHA-256 of its canonical bytes with its arrival time left out. Those bytes are
spelled out here, field by field as the canonical form writes a record, and the digest of a
message — hashed piece by piece, never copied — must be theirs, whatever its payload's
layout; and it must ignore the arrival time and nothing else."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from parties.view import View, received_message
from sim.drivers.rank_views import message_digest, view_digest


def spelled_out(sender, protocol, call, step, round_, payload) -> bytes:
    """The canonical bytes of a received message, its fields sorted by name, time zeroed."""
    if payload.dtype.hasobject:
        raise AssertionError("spelled out for numeric payloads only")
    elements = np.ascontiguousarray(payload).tobytes()
    fields = [
        b"arrived_s:0.0",
        b"call:" + repr(call).encode(),
        f"payload:a{payload.dtype.str}{payload.shape}".encode() + elements,
        b"protocol:" + repr(protocol).encode(),
        b"round:" + repr(round_).encode(),
        b"sender:" + repr(sender).encode(),
        b"step:" + repr(step).encode(),
    ]
    return b"Message{" + b",".join(fields) + b"}"


RNG = np.random.default_rng(7)
PAYLOADS = [
    np.arange(170, dtype=np.uint64),
    RNG.standard_normal((4, 5)),
    np.asfortranarray(RNG.standard_normal((5, 3))),  # not C-ordered
    RNG.standard_normal((6, 6))[:, ::2],  # a strided view
    np.array(5, dtype=np.int64),  # 0-d
    np.zeros(0, dtype=">i4"),  # empty, big-endian
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=lambda p: f"{p.dtype.str}{p.shape}")
@pytest.mark.parametrize("step", ["sum", "it's \"quoted\"", "é"])
def test_a_messages_digest_is_that_of_its_canonical_bytes(payload, step) -> None:
    message = received_message(3, "secure_sum", 7, step, 2, payload, 0.625)
    expected = hashlib.sha256(spelled_out(3, "secure_sum", 7, step, 2, payload)).digest()
    assert message_digest(message) == expected


def test_the_digest_ignores_the_arrival_time_and_nothing_else() -> None:
    payload = np.arange(12, dtype=np.uint64)
    base = received_message(1, "p", 2, "s", 3, payload, 0.5)
    assert message_digest(received_message(1, "p", 2, "s", 3, payload, 99.0)) == (
        message_digest(base))
    changed = [
        received_message(4, "p", 2, "s", 3, payload, 0.5),
        received_message(1, "q", 2, "s", 3, payload, 0.5),
        received_message(1, "p", 5, "s", 3, payload, 0.5),
        received_message(1, "p", 2, "t", 3, payload, 0.5),
        received_message(1, "p", 2, "s", 6, payload, 0.5),
        received_message(1, "p", 2, "s", 3, payload + np.uint64(1), 0.5),
        received_message(1, "p", 2, "s", 3, payload.astype(np.int64), 0.5),
        received_message(1, "p", 2, "s", 3, payload.reshape(3, 4), 0.5),
    ]
    digests = {message_digest(m) for m in changed}
    assert len(digests) == len(changed) and message_digest(base) not in digests


def test_a_views_digest_takes_its_messages_as_a_multiset() -> None:
    """Messages that arrived in another order (MPI) give the same view digest; one message
    more or one changed does not."""
    messages = [received_message(q, "p", 0, "s", 1, np.full(3, q, dtype=np.uint64), q / 10)
                for q in range(1, 5)]

    def view(received):
        return View(party=0, role="site", received=list(received))

    assert view_digest(view(messages)) == view_digest(view(messages[::-1]))
    assert view_digest(view(messages)) != view_digest(view(messages[:-1]))
    other = received_message(4, "p", 0, "s", 1, np.full(3, 5, dtype=np.uint64), 0.4)
    assert view_digest(view(messages)) != view_digest(view([*messages[:-1], other]))
