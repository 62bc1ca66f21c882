"""One directed channel's sealed messages, its key schedule and channel fields built once.

:class:`SealedChannel` seals and opens the bytes of :func:`protocols.crypto.sealing.seal_message`
/ :func:`~protocols.crypto.sealing.open_message` (AES-256-GCM, NIST SP 800-38D) for a driver
that sends many messages on one directed channel: the AES-GCM key schedule, the nonce's channel
prefix and the associated data's channel fields are built once per channel, and a header
(:func:`encode_header`) once for every channel it is sealed on, so a message costs the AEAD
call and a few concatenations; :meth:`SealedChannel.open_into` authenticates a message into a
buffer the caller reuses, :meth:`SealedChannel.open_in_place` over its own ciphertext. The two
functions of :mod:`protocols.crypto.sealing` stay the reference it is tested against (same
bytes, same refusals, same error messages).
"""

from __future__ import annotations

from typing import NamedTuple

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from protocols.crypto.arguments import KEY_BYTES, as_bytes, as_id
from protocols.crypto.sealing import (
    AAD_LABEL,
    INT_FIELD,
    NONCE_BYTES,
    NONCE_COUNTER_LIMIT,
    NONCE_PARTY_LIMIT,
    SEAL_OVERHEAD_BYTES,
    describe_parties,
    encode_fields,
)
from protocols.errors import AuthenticationError, InputError

__all__ = ["EncodedHeader", "SealedChannel", "encode_header"]


class EncodedHeader(NamedTuple):
    """A message header encoded once for the associated data of every channel it is sealed on.

    Attributes
    ----------
    n_fields : int
        The number of header fields.
    raw : bytes
        The fields as :func:`associated_data` lays them out after its count (typed,
        length-prefixed).
    lead : bytes
        What a channel message's associated data starts with: :data:`AAD_LABEL` and its
        field count, 3 + ``n_fields`` (sender, receiver and sequence number come first).
    """

    n_fields: int
    raw: bytes
    lead: bytes


def encode_header(header: tuple[int | str, ...]) -> EncodedHeader:
    """``header`` encoded for :meth:`SealedChannel.seal` and :meth:`SealedChannel.open`.

    A broadcast binds one header to the messages of every channel it goes out on (and a party
    receives one from each of its peers), so a driver encodes it once.

    Parameters
    ----------
    header : tuple of int or str
        The fields :func:`seal_message` would take as ``header``.

    Returns
    -------
    EncodedHeader

    Raises
    ------
    InputError
        If a field is neither an integer in [0, 2^64) nor a string.
    """
    header = tuple(header)
    return EncodedHeader(len(header), encode_fields(header),
                         AAD_LABEL + (3 + len(header)).to_bytes(4, "big"))


class SealedChannel:
    """The directed channel sender → receiver: its messages sealed and opened, key set up once.

    ``SealedChannel(key, s, r).seal(n, plaintext, encode_header(h))`` returns the bytes of
    ``seal_message(key, s, r, n, plaintext, h)``, and ``open`` accepts, refuses and explains
    exactly what :func:`open_message` accepts, refuses and explains (the same
    :class:`~protocols.errors.AuthenticationError` messages). What does not change from one
    message to the next is built when the channel is: the AES-256-GCM key schedule
    (SP 800-38D), the nonce's first 6 bytes (sender ‖ receiver, :func:`message_nonce`) and the
    associated data's channel fields (:func:`associated_data`); a message then costs its
    6-byte counter, its 8-byte sequence field, the encoded header and the AEAD call.

    One object serves one endpoint: a driver keeps the sender's channel (built from the
    sender's key) apart from the receiver's (built from the receiver's key), and keeps both
    out of every party's context — a channel holds its key schedule.

    Parameters
    ----------
    key : bytes
        The pair's 32-byte channel key (``PairKeys.channel_key``).
    sender, receiver : int
        Party ids in [0, 2^24).

    Raises
    ------
    InputError
        If the key is not 32 bytes or an id is out of range (the messages of
        :func:`message_nonce` and :func:`seal`).
    """

    __slots__ = ("_aad_channel", "_aead", "_nonce_prefix", "receiver", "sender")

    def __init__(self, key: bytes, sender: int, receiver: int) -> None:
        sender = as_id(sender, "sender", NONCE_PARTY_LIMIT)
        receiver = as_id(receiver, "receiver", NONCE_PARTY_LIMIT)
        key = as_bytes(key, "key")
        if len(key) != KEY_BYTES:
            raise InputError(f"key must be {KEY_BYTES} bytes (AES-256), got {len(key)}")
        self.sender = sender
        self.receiver = receiver
        self._aead = AESGCM(key)
        self._nonce_prefix = sender.to_bytes(3, "big") + receiver.to_bytes(3, "big")
        # associated_data(sender, receiver, sequence, *header) after its label and count,
        # up to the sequence number's 8 bytes
        self._aad_channel = (INT_FIELD + sender.to_bytes(8, "big") + INT_FIELD
                             + receiver.to_bytes(8, "big") + INT_FIELD)

    def __repr__(self) -> str:
        return f"SealedChannel(sender={self.sender}, receiver={self.receiver})"

    @property
    def _who(self) -> str:
        """The channel an error names, made only for an error (a driver rebuilds channel
        ends it did not keep, so building one does no more than a message needs)."""
        return describe_parties(self.sender, self.receiver)

    def _nonce_and_aad(
        self, sequence: int, plaintext: bytes, header: EncodedHeader | tuple[int | str, ...]
    ) -> tuple[bytes, bytes]:
        """The checked arguments of a seal: its nonce and associated data (as
        :func:`seal_message` makes them)."""
        if type(sequence) is not int or not 0 <= sequence < NONCE_COUNTER_LIMIT:
            sequence = as_id(sequence, "counter", NONCE_COUNTER_LIMIT)
        if type(plaintext) is not bytes and not isinstance(plaintext, (bytearray, memoryview)):
            raise InputError(f"plaintext must be bytes, got {type(plaintext).__name__}")
        if type(header) is not EncodedHeader:
            header = encode_header(header)
        number = sequence.to_bytes(8, "big")  # < 2^48: the nonce takes its last 6 bytes
        aad = header.lead + self._aad_channel + number + header.raw
        return self._nonce_prefix + number[2:], aad

    def seal(
        self, sequence: int, plaintext: bytes, header: EncodedHeader | tuple[int | str, ...] = ()
    ) -> bytes:
        """Message number ``sequence`` sealed: nonce ‖ ciphertext ‖ tag (:func:`seal_message`).

        Parameters
        ----------
        sequence : int
            The message's number on this channel, in [0, 2^48); never reused under one key.
        plaintext : bytes
            The payload's wire encoding (bytes, bytearray or memoryview).
        header : EncodedHeader or tuple of int or str
            The header the receiver must agree on (encoded here if given as a tuple).

        Returns
        -------
        bytes
            :data:`SEAL_OVERHEAD_BYTES` more than ``plaintext``.
        """
        nonce, aad = self._nonce_and_aad(sequence, plaintext, header)
        # nonce ‖ ciphertext ‖ tag by concatenation. Sealing in place (AESGCM.encrypt_into
        # into one fresh buffer) saves the copy in a loop that recycles memory, but not in a
        # run, where every large message is fresh memory either way: measured slower there
        # (benchmarks/secure_sum.py, M = 10, d = 10^6), so the wire stays plain bytes
        return nonce + self._aead.encrypt(nonce, plaintext, aad)

    def seal_into(
        self, sequence: int, plaintext: bytes, into: bytearray | memoryview,
        header: EncodedHeader | tuple[int | str, ...] = (),
    ) -> None:
        """:meth:`seal`, the sealed message written into ``into`` (no new buffer).

        Parameters
        ----------
        sequence, plaintext, header
            As for :meth:`seal`.
        into : bytearray or memoryview
            A writable buffer of exactly ``len(plaintext)`` + :data:`SEAL_OVERHEAD_BYTES`
            bytes; it then holds the bytes :meth:`seal` returns.

        Raises
        ------
        InputError
            As :meth:`seal`, or if ``into`` is not of the sealed message's size.
        """
        nonce, aad = self._nonce_and_aad(sequence, plaintext, header)
        out = memoryview(into)
        size = memoryview(plaintext).nbytes + SEAL_OVERHEAD_BYTES
        if out.nbytes != size:
            raise InputError(f"into must be {size} bytes (the sealed message's), got "
                             f"{out.nbytes}")
        out = out.cast("B")
        out[:NONCE_BYTES] = nonce
        self._aead.encrypt_into(nonce, plaintext, aad, out[NONCE_BYTES:])

    def seal_in_place(
        self, sequence: int, into: bytearray | memoryview,
        header: EncodedHeader | tuple[int | str, ...] = (),
    ) -> None:
        """:meth:`seal_into` of the plaintext ``into`` already holds: one pass over the bytes.

        ``into`` is nonce room ‖ plaintext ‖ tag room (:data:`SEAL_OVERHEAD_BYTES` more than
        the plaintext); afterwards it holds the bytes :meth:`seal` returns. For a transport
        that writes a payload's encoding straight into its send buffer: GCM is a counter mode,
        so the ciphertext takes the plaintext's place (OpenSSL encrypts in place).

        Raises
        ------
        InputError
            As :meth:`seal`, or if ``into`` is not a writable contiguous buffer of at least
            :data:`SEAL_OVERHEAD_BYTES` bytes.
        """
        out = memoryview(into)
        if out.readonly or not out.c_contiguous or out.nbytes < SEAL_OVERHEAD_BYTES:
            raise InputError("into must be a writable contiguous buffer of at least "
                             f"{SEAL_OVERHEAD_BYTES} bytes, got {type(into).__name__}")
        out = out.cast("B")
        plaintext = out[NONCE_BYTES:len(out) - (SEAL_OVERHEAD_BYTES - NONCE_BYTES)]
        nonce, aad = self._nonce_and_aad(sequence, plaintext, header)
        out[:NONCE_BYTES] = nonce
        self._aead.encrypt_into(nonce, plaintext, aad, out[NONCE_BYTES:])

    def open(
        self, sequence: int, sealed: bytes, header: EncodedHeader | tuple[int | str, ...] = ()
    ) -> bytes:
        """Check and open message number ``sequence`` (:func:`open_message`).

        Parameters
        ----------
        sequence : int
            The number the receiver expects next on this channel.
        sealed : bytes
            nonce ‖ ciphertext ‖ tag, as received (bytes, bytearray or memoryview; the body
            is read in place, not copied).
        header : EncodedHeader or tuple of int or str
            The header the sender bound, as the receiver knows it.

        Returns
        -------
        bytes
            The plaintext.

        Raises
        ------
        AuthenticationError
            With :func:`open_message`'s message: too short, the nonce of another channel or
            of another sequence number, or GCM authentication failed.
        """
        sealed, nonce, aad = self._checked(sequence, sealed, header)
        try:
            # the body as a view: slicing would copy the whole message once more
            return self._aead.decrypt(nonce, memoryview(sealed)[NONCE_BYTES:], aad)
        except InvalidTag:
            raise AuthenticationError(self._forged) from None

    def open_into(
        self, sequence: int, sealed: bytes, into: bytearray | memoryview,
        header: EncodedHeader | tuple[int | str, ...] = (),
    ) -> None:
        """:meth:`open`, the plaintext written into ``into`` (no new buffer).

        For a receiver that needs to authenticate a message but not to keep its plaintext
        (the driver's copies of a broadcast whose encoding another receiver has checked):
        the same checks and errors as :meth:`open` (and :func:`open_message`).

        Parameters
        ----------
        sequence, sealed, header
            As for :meth:`open`.
        into : bytearray or memoryview
            A writable buffer of exactly ``len(sealed)`` − :data:`SEAL_OVERHEAD_BYTES` bytes.
            What it holds after an :class:`~protocols.errors.AuthenticationError` is
            undefined.

        Raises
        ------
        AuthenticationError
            As :meth:`open`.
        InputError
            If ``into`` is not of the plaintext's size.
        """
        sealed, nonce, aad = self._checked(sequence, sealed, header)
        size = len(sealed) - SEAL_OVERHEAD_BYTES
        if memoryview(into).nbytes != size:
            raise InputError(f"into must be {size} bytes (the plaintext's), got "
                             f"{memoryview(into).nbytes}")
        try:
            self._aead.decrypt_into(nonce, memoryview(sealed)[NONCE_BYTES:], aad, into)
        except InvalidTag:
            raise AuthenticationError(self._forged) from None

    def open_in_place(
        self, sequence: int, sealed: bytearray | memoryview,
        header: EncodedHeader | tuple[int | str, ...] = (),
    ) -> memoryview:
        """:meth:`open`, the plaintext decrypted over its own ciphertext: one pass over the bytes.

        For a transport that received the sealed message into memory that becomes the
        payload's storage (:mod:`sim.drivers.mpi_transfer`): GCM is a counter mode, so the
        plaintext takes the ciphertext's place (OpenSSL decrypts in place); the nonce before
        it and the tag after it stay as they were. The same checks and errors as :meth:`open`
        (and :func:`open_message`).

        Parameters
        ----------
        sequence, header
            As for :meth:`open`.
        sealed : bytearray or memoryview
            nonce ‖ ciphertext ‖ tag in a writable buffer. After an
            :class:`~protocols.errors.AuthenticationError` its ciphertext part is undefined.

        Returns
        -------
        memoryview
            The plaintext: ``sealed[NONCE_BYTES:len(sealed) - 16]``, writable.

        Raises
        ------
        AuthenticationError
            As :meth:`open`.
        InputError
            If ``sealed`` is not writable bytes.
        """
        if (not isinstance(sealed, (bytearray, memoryview)) or memoryview(sealed).readonly
                or not memoryview(sealed).c_contiguous):
            raise InputError("sealed must be a writable contiguous buffer, got "
                             f"{type(sealed).__name__}")
        view, nonce, aad = self._checked(sequence, sealed, header)
        body = memoryview(view)[NONCE_BYTES:]
        plaintext = body[:len(body) - (SEAL_OVERHEAD_BYTES - NONCE_BYTES)]
        try:
            self._aead.decrypt_into(nonce, body, aad, plaintext)
        except InvalidTag:
            raise AuthenticationError(self._forged) from None
        return plaintext

    def _checked(
        self, sequence: int, sealed: bytes, header: EncodedHeader | tuple[int | str, ...]
    ) -> tuple[bytes | memoryview, bytes, bytes]:
        """``sealed`` as bytes or a byte view, its nonce and its associated data, after the
        checks :func:`open_message` makes before the tag (in its order, with its messages)."""
        if type(sealed) is not bytes:
            if not isinstance(sealed, (bytearray, memoryview)):
                raise InputError(f"sealed must be bytes, got {type(sealed).__name__}")
            view = memoryview(sealed)
            sealed = view.cast("B") if view.c_contiguous else view.tobytes()
        if len(sealed) < SEAL_OVERHEAD_BYTES:
            raise AuthenticationError(
                f"sealed message{self._who} is {len(sealed)} bytes, shorter than the "
                f"{SEAL_OVERHEAD_BYTES}-byte nonce and tag"
            )
        if type(sequence) is not int or not 0 <= sequence < NONCE_COUNTER_LIMIT:
            sequence = as_id(sequence, "counter", NONCE_COUNTER_LIMIT)
        number = sequence.to_bytes(8, "big")
        nonce = self._nonce_prefix + number[2:]
        if sealed[:NONCE_BYTES] != nonce:
            carried = bytes(sealed[:NONCE_BYTES])
            if carried[:6] != self._nonce_prefix:
                raise AuthenticationError(
                    f"sealed message{self._who} carries the nonce of another channel "
                    f"(party {int.from_bytes(carried[:3], 'big')} to party "
                    f"{int.from_bytes(carried[3:6], 'big')})"
                )
            raise AuthenticationError(
                f"sealed message{self._who} is number {int.from_bytes(carried[6:], 'big')} on "
                f"its channel where number {sequence} was expected: a replayed, reordered or "
                "dropped message"
            )
        if type(header) is not EncodedHeader:
            header = encode_header(header)
        return sealed, nonce, header.lead + self._aad_channel + number + header.raw

    @property
    def _forged(self) -> str:
        return (f"sealed message{self._who} failed AES-GCM authentication: its ciphertext, tag, "
                "nonce or associated data were altered, or the key is wrong")

