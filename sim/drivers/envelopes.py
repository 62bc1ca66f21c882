"""What every driver does to a message's bytes: encode and seal it, check and open it.

A driver hands a payload to :func:`encode_payload` (the wire encoding the ledger counts) and
:func:`seal_payload` (AES-GCM under the pair's channel key, message number n of its directed
channel, the header :func:`header` bound as associated data); the receiving side hands the bytes
to :func:`unseal` (or :func:`unseal_in_place`), which checks the sequence number and the tag,
and :func:`decode_received`, which decodes the payload with the run's field;
:class:`ReceivedRecords` turns an opened message into the receiver's view record. A run keeps
its :class:`RunChannels`: one :class:`protocols.crypto.channel.SealedChannel` per directed
channel and endpoint in use (at most :data:`CHANNELS_KEPT` of each; an MPI rank
:data:`CHANNELS_KEPT_PER_PARTY` per party it hosts), so a message on a channel in use does not
rebuild the AES-GCM key schedule, the nonce's channel prefix or the associated data's channel
fields. They are the driver's, never a context's: a channel holds its key schedule, and a
program reaches only what its context holds. The SimPy driver (:mod:`sim.drivers.simpy`) and
the MPI driver (:mod:`sim.drivers.mpi`) share these, so a message means the same bytes under
both.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from parties.view import Message, View, frozen
from protocols import wire
from protocols.context import PartyContext
from protocols.crypto.channel import EncodedHeader, SealedChannel, encode_header
from protocols.crypto.sealing import SEAL_OVERHEAD_BYTES
from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.field import PrimeField

_HEADERS_KEPT = 8  # encoded headers a run keeps (a few calls' worth)
CHANNELS_KEPT = 16_384
"""Channel ends a run keeps per direction (sending, receiving): an end holds an AES-GCM key
schedule, about 3 KB, so at most ~100 MB for both. A run of M parties that all talk to each
other has M(M − 1) directed channels, and keeping every end made sealing cost O(M²) memory
(~6 GB at M = 1,000); beyond this many the oldest end is dropped and rebuilt when used
again (~5 µs), so a run of up to 128 fully connected parties rebuilds nothing."""

CHANNELS_KEPT_PER_PARTY = 32
"""Channel ends an MPI rank keeps per direction for each party it hosts (:func:`kept_for`).

A rank's parties use ``own · (M − 1)`` ends per direction, so a rank that kept up to
:data:`CHANNELS_KEPT` held ~115 MB of key schedules at M = 256 over 2 ranks, and its memory grew
with M rather than with its own parties. Kept ends only pay when a channel carries several
messages before its party's other channels push it out: a party that talks to up to 32 peers
(the MPC engine's few parties, a star) rebuilds nothing, and an all-to-all protocol among more
parties cycles through every channel before reusing one, so an end it keeps is never used again
before it is dropped (SecureSum sends one message per channel), whatever the cap. A rebuilt end
costs ~9 µs, against ~0.2–1.3 ms per message under MPI."""

Ends = OrderedDict[tuple[int, int], tuple[bytes, SealedChannel]]
"""A run's channel ends of one direction, by (sender, receiver), oldest built first."""
Encoded = dict[int, tuple[bytes, int]]
"""A broadcast's cache of encodings, by ``id`` of the payload (a payload is encoded once)."""


def kept_for(parties: int) -> int:
    """Channel ends kept per direction by a run that hosts ``parties`` parties (MPI: a rank's
    own): :data:`CHANNELS_KEPT_PER_PARTY` each, at least one."""
    return max(1, CHANNELS_KEPT_PER_PARTY * parties)


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


class RunChannels:
    """The sealed channels of one run: a :class:`~protocols.crypto.channel.SealedChannel` per
    directed channel and endpoint, built on first use from that endpoint's own key.

    The sending end of sender → receiver is built from the sender's context key for the
    receiver, the receiving end from the receiver's key for the sender (the two differ only
    if key agreement went wrong, and then the message fails authentication, as it must); when
    the receiver's key is the sending end's, the receiving end is that end. A channel is
    rebuilt when its endpoint's key changes (keys are installed during the run by key
    agreement). At most ``kept`` ends are kept per direction (:data:`CHANNELS_KEPT` by
    default; an MPI rank keeps :func:`kept_for` its own parties). The run object holds this;
    no context does.
    """

    __slots__ = ("_headers", "_kept", "_receiving", "_scratch", "_sealed_scratch", "_sending")

    def __init__(self, kept: int | None = None) -> None:
        self._kept = CHANNELS_KEPT if kept is None else kept  # ends kept per direction
        self._sending: Ends = OrderedDict()
        self._receiving: Ends = OrderedDict()
        self._headers: dict[tuple[int | str, ...], EncodedHeader] = {}
        self._scratch = bytearray()
        self._sealed_scratch = bytearray()

    def seal_and_authenticate(
        self, key: bytes, sequence: int, plaintext: bytes, ctx: PartyContext,
        sender: int, number: int, call: Call, step: str, round_: int,
    ) -> None:
        """Seal ``plaintext`` as the sender did not yet (its channel ``key``, bound when the
        message was sent by :meth:`sending_key`, and its ``sequence``), and
        authenticate the sealed bytes at the receiver ``ctx`` as message ``number`` of its
        channel from ``sender`` — both in the run's scratch buffers.

        For a message nothing observes in flight (no interceptor, no fault plan): sealing it
        on delivery gives the bytes sealing it on sending would (the sender's key, its
        sequence number and header), and the receiver checks them as it would, without
        a fresh buffer per message for either. Raises what :meth:`SealedChannel.open_into`
        raises.

        When the receiver's key for the sender is the sender's key (byte for byte, as key
        agreement makes them), the receiving end *is* the sending end — a channel is a
        function of its key, sender and receiver — so it is not built a second time: a run in
        which every channel carries one message (SecureSum among M = 1,000) builds one AES-GCM
        key schedule per channel, not two. Different keys open with the receiver's own end,
        and fail as they must.
        """
        size = len(plaintext) + SEAL_OVERHEAD_BYTES
        if len(self._sealed_scratch) < size:
            self._sealed_scratch = bytearray(size)
        sealed = memoryview(self._sealed_scratch)[:size]
        header = self.header(call, step, round_)
        sending = self.sending_end(key, sender, ctx.party)
        sending.seal_into(sequence, plaintext, sealed, header)
        receiving = (sending if ctx.channel_keys.get(sender) == key
                     else self.receiving(ctx, sender))
        receiving.open_into(number, sealed, self._plaintext(len(plaintext)), header)

    def open_transient(
        self, ctx: PartyContext, sender: int, number: int, data: bytes,
        call: Call, step: str, round_: int,
    ) -> memoryview:
        """:func:`unseal` into the run's scratch buffer: a view of the plaintext that the
        next call overwrites — for a copy that must authenticate but whose plaintext is not
        kept (fresh memory for it would cost page faults, not just AES-GCM)."""
        size = len(data) - SEAL_OVERHEAD_BYTES
        if size < 0:  # too short: the channel's own refusal
            return memoryview(unseal(self, ctx, sender, number, data, call, step, round_))
        plaintext = self._plaintext(size)
        self.receiving(ctx, sender).open_into(number, data, plaintext,
                                              self.header(call, step, round_))
        return plaintext

    def _plaintext(self, size: int) -> memoryview:
        """``size`` bytes of the run's plaintext scratch buffer (grown when too small)."""
        if len(self._scratch) < size:
            self._scratch = bytearray(size)
        return memoryview(self._scratch)[:size]

    def sending(self, ctx: PartyContext, to: int) -> SealedChannel:
        """The sending end of the channel ``ctx.party`` → ``to``, under ``ctx``'s key for ``to``."""
        key = ctx.channel_keys.get(to)
        if key is None:
            raise MpcsimError(
                f"party {ctx.party} has no channel key for party {to}: sealing needs key "
                "agreement"
            )
        return self._channel(self._sending, key, ctx.party, to)

    def sending_key(self, ctx: PartyContext, to: int) -> bytes:
        """``ctx``'s channel key for ``to``, checked as :meth:`sending` checks it: what a
        message sealed on delivery binds when it is sent (the key, not the channel object, so
        that messages in flight hold 32 bytes each rather than a key schedule)."""
        key = ctx.channel_keys.get(to)
        if key is None:
            self.sending(ctx, to)  # raises, naming the missing key
        return key

    def sending_end(self, key: bytes, sender: int, to: int) -> SealedChannel:
        """The sending end of ``sender`` → ``to`` under ``key`` (:meth:`sending_key`)."""
        return self._channel(self._sending, key, sender, to)

    def receiving(self, ctx: PartyContext, sender: int) -> SealedChannel:
        """The receiving end of the channel ``sender`` → ``ctx.party``, under ``ctx``'s key."""
        key = ctx.channel_keys.get(sender)
        if key is None:
            raise MpcsimError(
                f"party {ctx.party} has no channel key for party {sender}, which sealed a "
                "message to it"
            )
        sending = self._sending.get((sender, ctx.party))
        if sending is not None and sending[0] == key:  # both ends on this run, one key:
            return sending[1]  # a channel is a function of its key, sender and receiver
        return self._channel(self._receiving, key, sender, ctx.party)

    def _channel(
        self, ends: Ends, key: bytes, sender: int,
        receiver: int,
    ) -> SealedChannel:
        end = ends.get((sender, receiver))
        if end is None or end[0] != key:
            if end is None and len(ends) >= self._kept:
                ends.popitem(last=False)  # the oldest built
            end = (bytes(key), SealedChannel(key, sender, receiver))
            ends[(sender, receiver)] = end
        return end[1]

    def header(self, call: Call, step: str, round_: int) -> EncodedHeader:
        """:func:`header` encoded for the associated data, once for the messages that share it.

        The messages of a broadcast share their header, and so do those a party receives
        from each of its peers in one step; a party that opens call k's messages and then
        sends call k + 1's alternates between two. The last few encodings are kept (only for
        exact ``str`` / ``int`` fields, whose equality means equal bytes).
        """
        fields = header(call, step, round_)
        exact = (type(call.protocol) is str and type(call.index) is int and type(step) is str
                 and type(round_) is int)
        if not exact:
            return encode_header(fields)
        kept = self._headers
        encoded = kept.get(fields)
        if encoded is None:
            encoded = encode_header(fields)
            if len(kept) >= _HEADERS_KEPT:
                kept.clear()
            kept[fields] = encoded
        return encoded


def seal_payload(
    channels: RunChannels, ctx: PartyContext, to: int, sequence: int, data: bytes, call: Call,
    step: str, round_: int,
) -> bytes:
    """``data`` sealed as message ``sequence`` of the channel from ``ctx.party`` to ``to``.

    nonce ‖ ciphertext ‖ tag: :data:`protocols.crypto.sealing.SEAL_OVERHEAD_BYTES` more than
    ``data``; the bytes of :func:`protocols.crypto.sealing.seal_message` under ``ctx``'s key.
    """
    return channels.sending(ctx, to).seal(sequence, data, channels.header(call, step, round_))


def unseal(
    channels: RunChannels, ctx: PartyContext, sender: int, number: int,
    data: bytes, call: Call, step: str, round_: int,
) -> bytes:
    """The plaintext of message ``number`` from ``sender`` to ``ctx.party``.

    :func:`protocols.crypto.sealing.open_message` under the receiver's key: the same checks and
    the same errors.
    """
    return channels.receiving(ctx, sender).open(number, data, channels.header(call, step, round_))


def unseal_in_place(
    channels: RunChannels, ctx: PartyContext, sender: int, number: int,
    sealed: memoryview, call: Call, step: str, round_: int,
) -> memoryview:
    """:func:`unseal` over the message's own ciphertext (``sealed`` is writable): the plaintext,
    a view of ``sealed`` (:meth:`protocols.crypto.channel.SealedChannel.open_in_place`)."""
    return channels.receiving(ctx, sender).open_in_place(number, sealed,
                                                        channels.header(call, step, round_))


def decode_received(
    receiver: int, sender: int, data: bytes, call: Call, step: str, field: PrimeField | None,
) -> np.ndarray:
    """A payload's (plaintext) wire encoding decoded with ``field``: the read-only array.

    :func:`protocols.wire.decode`, with a refusal naming the receiver, the sender and the
    message.
    """
    try:
        return wire.decode(data, field)
    except wire.WireFormatError as exc:
        raise wire.WireFormatError(
            f"party {receiver} received from party {sender} a payload it cannot read "
            f"('{step}' of {call.protocol}#{call.index}): {exc}"
        ) from None


class ReceivedRecords:
    """What a driver's run does with a message its program asked for: open it and record it.

    Both drivers' runs mix this in; they provide ``_open(envelope, number)`` (check and open:
    :func:`unseal`, :func:`decode_received`), ``_fail(pid, exc)`` and ``_notice()`` (the abort
    peers are told of), and hold ``views``, ``max_round`` and ``driver.record_messages``. The
    SimPy driver's run, where every message of a large run passes, takes the same steps in a
    :meth:`_consume` of its own that makes no view record when views are not kept.
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
