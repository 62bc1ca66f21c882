"""The error hierarchy of mpcsim.

Every error the project raises on purpose derives from :class:`MpcsimError`. Errors that
describe a *user's* mistake (a bad scenario key, a data file that cannot be read, a value too
large for the field) derive from :class:`InputError`; the command line prints them as one line
``error: ...`` and exits with status 2. Anything else that escapes is a bug and keeps its
traceback.
"""

from __future__ import annotations


class MpcsimError(Exception):
    """Base class of every error mpcsim raises on purpose."""


class InputError(MpcsimError):
    """A user's mistake: the message says what was wrong and what to change."""


class ScenarioError(InputError):
    """A scenario file (or the equivalent Python arguments) is invalid."""


class DataError(InputError):
    """A data file is missing, unreadable or holds values the algorithm cannot take."""


class EncodingError(InputError):
    """A real value cannot be encoded into the field (NaN or infinity)."""


class FieldOverflowError(EncodingError):
    """A value, or a sum a protocol will form, does not fit the field's signed range.

    Parameters
    ----------
    value : float or int
        The offending value (for a sum, the value whose M-fold sum may exceed the range); an
        integer too large for a float is kept as the integer.
    bound : float
        The largest absolute value that is representable with the field and fixed-point
        precision in use.
    what : str
        What the value is (an argument name, a data column, ...).
    """

    def __init__(self, value: float, bound: float, what: str = "value", hint: str = "") -> None:
        # args are the constructor's arguments, so that copy, pickle and SimPy (which
        # re-creates an exception as ``type(e)(*e.args)``) rebuild it faithfully
        super().__init__(value, bound, what, hint)
        self.value = value
        self.bound = bound
        self.what = what
        self.hint = hint

    def __str__(self) -> str:
        message = (
            f"{self.what} {_short(self.value)} exceeds the field's representable bound "
            f"{self.bound:.6g}"
        )
        return f"{message}; {self.hint}" if self.hint else message


def _short(value: object) -> str:
    """``repr`` of a value, with integers too long to read written as d.ddddde+N."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**21:
        digits = str(abs(value))
        sign = "-" if value < 0 else ""
        return f"{sign}{digits[0]}.{digits[1:6]}e+{len(digits) - 1}"
    return repr(value)


class AuthenticationError(MpcsimError):
    """A sealed payload failed AES-GCM authentication (it was tampered with or mis-keyed)."""


class ProtocolAbort(MpcsimError):
    """A party failed; the run was aborted and every waiting peer was told.

    Two kinds of instance exist, and they differ in what they may say:

    * the *notice* a peer receives (:meth:`notice`) says only which party aborted in which
      protocol call — "party m aborted in call c". A failure's text can carry a private
      value (a :class:`FieldOverflowError` names the offending input), so it never reaches a
      peer: a peer learns only what a message would have told it;
    * the abort the run's *caller* receives (``Simulation.run`` raises it) carries the full
      ``reason`` and, as ``__cause__``, the exception the party raised.

    Parameters
    ----------
    party : int
        The party whose failure caused the abort.
    round : int or None
        That party's communication round when it failed (None in a peer's notice).
    reason : str
        What went wrong, in words ("" in a peer's notice).
    call : str
        The protocol call the party was in, e.g. ``"secure_sum#3"`` ("" before its first).
    """

    def __init__(self, party: int, round: int | None, reason: str, call: str = "") -> None:
        # args are the constructor's arguments: SimPy hands a failed event to each waiting
        # process as a copy made with ``type(e)(*e.args)``, and pickle rebuilds it the same way
        super().__init__(party, round, reason, call)
        self.party = party
        self.round = round
        self.reason = reason
        self.call = call

    @classmethod
    def notice(cls, party: int, call: str = "") -> ProtocolAbort:
        """What a peer is told: the party and its call, no round, no reason, no cause."""
        return cls(party, None, "", call)

    @property
    def is_notice(self) -> bool:
        """True for a peer's notice (no reason and no round)."""
        return self.round is None and not self.reason

    def __str__(self) -> str:
        if self.is_notice:
            where = f"in call {self.call}" if self.call else "before its first call"
            return f"party {self.party} aborted {where}"
        where = f" in call {self.call}" if self.call else ""
        return f"party {self.party} aborted in round {self.round}{where}: {self.reason}"


class PartyInputError(ProtocolAbort, InputError):
    """A party refused its input, so the run aborted: a :class:`ProtocolAbort` that is also a
    user's mistake (:class:`InputError`), printed as ``party m: what was wrong``.

    :meth:`sim.simulation.Simulation.run` raises it when a party's failure was caused by an
    :class:`InputError` (a value too large for the field, inputs of different lengths, ...); the
    original error is its ``__cause__``.
    """

    def __str__(self) -> str:
        return f"party {self.party}: {self.reason}"
