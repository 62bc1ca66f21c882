"""What every driver does to a message's bytes: encode and seal it, check and open it.

A driver hands a payload to :func:`encode_payload` (the wire encoding the ledger counts) and
:func:`seal_payload` (AES-GCM under the pair's channel key, message number n of its directed
channel, the header :func:`header` bound as associated data); the receiving side hands the
bytes to :func:`open_payload`, which checks the sequence number and the tag and decodes the
payload with the run's field; :class:`ReceivedRecords` turns an opened message into the
receiver's view record. The SimPy driver (:mod:`sim.drivers.simpy`) and the MPI driver
(:mod:`sim.drivers.mpi`) share these, so a message means the same bytes under both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parties.view import Message, View, frozen
from protocols import wire
from protocols.channels import open_message, seal_message
from protocols.context import PartyContext
from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.field import PrimeField

Encoded = dict[int, tuple[bytes, int]]
"""A broadcast's cache of encodings, by ``id`` of the payload (a payload is encoded once)."""


def header(call: Call, step: str, round_: int) -> tuple[int | str, ...]:
    """What a sealed message's associated data binds besides its channel and number."""
    return (call.protocol, call.index, step, round_)


def detached(exc: BaseException) -> BaseException:
    """``exc`` without traceback, cause or context, fit to be thrown into a program."""
    exc.__traceback__ = None
    exc.__cause__ = None
    exc.__context__ = None
    exc.__suppress_context__ = False
    return exc


def encode_payload(
    ctx: PartyContext, payload: np.ndarray, encoded: Encoded | None = None
) -> tuple[bytes, int]:
    """The payload's wire encoding and its element count (cached in ``encoded`` if given)."""
    cached = encoded.get(id(payload)) if encoded is not None else None
    if cached is None:
        arr = np.asarray(payload)
        width = ctx.field.element_bytes if arr.dtype == object else None
        cached = (wire.encode(arr, width), wire.payload_elements(arr))
        if encoded is not None:
            encoded[id(payload)] = cached
    return cached


def seal_payload(
    ctx: PartyContext, to: int, sequence: int, data: bytes, call: Call, step: str, round_: int
) -> bytes:
    """``data`` sealed as message ``sequence`` of the channel from ``ctx.party`` to ``to``.

    nonce ‖ ciphertext ‖ tag: :data:`protocols.channels.SEAL_OVERHEAD_BYTES` more than
    ``data``.
    """
    channel_key = ctx.channel_keys.get(to)
    if channel_key is None:
        raise MpcsimError(
            f"party {ctx.party} has no channel key for party {to}: sealing needs key agreement"
        )
    return seal_message(channel_key, ctx.party, to, sequence, data, header(call, step, round_))


def open_payload(
    ctx: PartyContext,
    sender: int,
    number: int | None,
    data: bytes,
    call: Call,
    step: str,
    round_: int,
    field: PrimeField | None,
) -> Message:
    """Check, unseal and decode a message to ``ctx.party``: its view record.

    A sealed message (``number`` is not None) must be the ``number``-th to arrive on its
    channel and authenticate under the receiver's key; then the payload is decoded with the
    run's ``field``, so an element outside [0, p) is refused.
    """
    receiver = ctx.party
    if number is not None:
        key = ctx.channel_keys.get(sender)
        if key is None:
            raise MpcsimError(
                f"party {receiver} has no channel key for party {sender}, which sealed a "
                "message to it"
            )
        data = open_message(key, sender, receiver, number, data, header(call, step, round_))
    try:
        payload = wire.decode(data, field)
    except wire.WireFormatError as exc:
        raise wire.WireFormatError(
            f"party {receiver} received from party {sender} a payload it cannot read "
            f"('{step}' of {call.protocol}#{call.index}): {exc}"
        ) from None
    return Message(sender, call.protocol, call.index, step, round_, payload)


class ReceivedRecords:
    """What a driver's run does with a message its program asked for: open it and record it.

    Both drivers' runs mix this in; they provide ``_open(envelope, number)`` (check and open,
    e.g. with :func:`open_payload`), ``_fail(pid, exc)`` and ``_notice()`` (the abort peers
    are told of), and hold ``views``, ``max_round`` and ``driver.record_messages``.
    """

    views: Any
    max_round: dict[int, int]
    driver: Any

    def _open(self, envelope: Any, number: int | None) -> Message:
        raise NotImplementedError

    def _fail(self, pid: int, exc: BaseException) -> None:
        raise NotImplementedError

    def _notice(self) -> BaseException:
        raise NotImplementedError

    def _consume(self, pid: int, envelope: Any, number: int | None) -> np.ndarray:
        """Open a message the program asked for and record it in the receiver's view."""
        try:
            message = self._open(envelope, number)
        except Exception as exc:  # hostile bytes: the receiver's failure, not its program's
            self._fail(pid, exc)
            raise self._notice() from None
        self.max_round[pid] = max(self.max_round[pid], message.round)
        payload = message.payload
        if not self.driver.record_messages:
            # numeric payloads sit on immutable bytes (wire.decode); object arrays do not
            return frozen(payload) if payload.dtype.hasobject else payload
        view: View = self.views[pid]
        view.received.append(message)
        # the program gets an array object of its own, so that reshaping it in place (or
        # changing its dtype) cannot change the view's record
        if payload.dtype.hasobject:
            return frozen(payload)  # a copy: object arrays are never sealed
        own = wire.another_array(payload)
        return own if own is not None else frozen(payload.copy())
