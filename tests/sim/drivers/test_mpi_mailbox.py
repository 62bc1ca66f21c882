"""A rank's mailboxes (:mod:`sim.drivers.mpi_mailbox`), in one process: what passes the budget
waits in the mailbox file and comes back byte for byte, in order of arrival per key.

The expected bytes are the ones put in (random, from numpy); the expected order is arrival's.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from sim.drivers.mpi_mailbox import SPILL_FROM, Mailboxes
from sim.drivers.mpi_transfer import Envelope, ReceivedStorage


def writable_at(address: int, size: int) -> memoryview:
    return memoryview((ctypes.c_char * size).from_address(address)).cast("B")


def envelope(sender: int, step: str, data: bytes, sealed: bool = False) -> Envelope:
    return Envelope(sender, 9, "probe", 0, step, 1, memoryview(data), sealed)


def test_past_the_budget_messages_wait_on_disk_and_come_back_as_they_were() -> None:
    rng = np.random.default_rng(4)
    sent = [rng.integers(0, 256, n, dtype=np.uint8).tobytes()
            for n in (5000, 3000, 100, 8000, 4000)]
    boxes = Mailboxes([9], ReceivedStorage(writable_at), budget=6000)
    for i, data in enumerate(sent):
        boxes.put(envelope(i % 2, f"m{i}", data, sealed=i == 3))
    # 5000 fits; 3000 would pass 6000: spilled; 100 is short: kept; 8000 and 4000 spilled
    assert boxes.peak == 5100 and boxes.spilled == 3000 + 8000 + 4000
    taken = boxes.take(9, (1, "probe", 0, "m3"))
    assert taken is not None and bytes(taken.data) == sent[3]
    assert taken.writable is not None and bytes(taken.writable) == sent[3]  # sealed: in place
    assert boxes.take(9, (1, "probe", 0, "m3")) is None
    unread = {e.step: bytes(e.data) for e in boxes.unread(9)}
    assert unread == {f"m{i}": sent[i] for i in (0, 1, 2, 4)}
    boxes.close()


def test_messages_under_one_key_come_in_order_of_arrival() -> None:
    boxes = Mailboxes([9], ReceivedStorage(writable_at), budget=0)
    payloads = [bytes([k]) * (SPILL_FROM + k) for k in range(4)]
    for data in payloads:
        boxes.put(envelope(0, "same", data))
    got = [boxes.take(9, (0, "probe", 0, "same")) for _ in payloads]
    assert [bytes(e.data) for e in got if e is not None] == payloads
    assert boxes.held == 0 and boxes.peak == 0


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        Mailboxes([0], ReceivedStorage(writable_at), budget=-1)
