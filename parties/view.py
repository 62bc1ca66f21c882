"""Views: what each party saw, and what a coalition of parties sees together.

A party's view (DESIGN.md) holds its inputs, its random seeds, every message it received
(with its arrival time), what ``Compute``, ``RecvAny`` and ``RecvWithin`` handed back, the abort
notices it was given, and its outputs. ``inputs`` are the party's program inputs (its data
shard and parameters); ``protocol_inputs`` and ``outputs`` list, per protocol call, what the
party put into the call and the call's declared outputs. The driver writes it — programs
cannot forget to log — and each received message lies in exactly one view. A coalition's
view is the union of its members' views; the honest-but-curious model lets the members pool
everything they saw.

When a run records mask draws (audits ask for it), ``draws`` also holds every field element a
party drew from its :class:`~protocols.context.Randomness`, keyed by stream; the draws are
functions of the seeds, recorded so that an audit can treat them as part of the view.

Every record is an immutable copy (:func:`frozen`): read-only arrays, tuples, read-only
mappings. Nothing a program holds — the payload it received, the value it put into an
``Input`` or ``Output``, the masks it drew, its own input arrays — is the object the view
records, so neither the program nor the caller can change a view after the fact.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from protocols.effects import Call
from protocols.errors import InputError
from protocols.fresh_bytes import copied_bytes
from protocols.wire import another_array

_SCALARS = (type(None), bool, int, float, complex, str, bytes, np.generic, Call, range)
SPARSE_ARRAYS = ("data", "indices", "indptr")
"""The arrays of a CSR, CSC or BSR matrix that :func:`frozen` makes immutable."""
_frombuffer = np.frombuffer


def frozen(value: Any) -> Any:
    """An immutable copy of ``value``, for a view record.

    * numpy arrays become read-only copies; a numeric array's memory is then an immutable
      ``bytes`` object, so it can never be made writeable again. Read-only arrays of that
      kind are already immutable and are returned as they are (no copy).
    * lists and tuples become tuples, sets frozensets, mappings read-only mappings
      (``types.MappingProxyType``) — each of frozen values;
    * frozen dataclasses are rebuilt from frozen fields; scipy CSR/CSC/BSR matrices are
      copied with read-only arrays;
    * numbers, strings, bytes, numpy scalars and ``Call`` are immutable already;
    * anything else is deep-copied — an independent copy, though not an immutable one
      (:func:`is_immutable` tells the two apart).
    """
    if type(value) is np.ndarray:  # the usual record: a program's own numeric array
        flags = value.flags
        if flags.writeable and flags.c_contiguous and not value.dtype.hasobject:
            return _bytes_copy(value, value.shape)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, np.ndarray):
        return value if _is_sealed_array(value) else _frozen_array(value)
    if isinstance(value, list | tuple):
        items = [frozen(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, set | frozenset):
        return frozenset(frozen(v) for v in value)
    if isinstance(value, Mapping):
        return MappingProxyType({k: frozen(v) for k, v in value.items()})
    if _is_frozen_dataclass(value):
        changes = {f.name: frozen(getattr(value, f.name))
                   for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    sparse = sys.modules.get("scipy.sparse")
    if sparse is not None and sparse.issparse(value) and all(
            isinstance(getattr(value, a, None), np.ndarray) for a in SPARSE_ARRAYS):
        out = copy.copy(value)  # a new matrix object; its arrays are replaced just below
        for name in SPARSE_ARRAYS:
            setattr(out, name, _frozen_array(getattr(value, name)))
        return out
    return copy.deepcopy(value)


def is_immutable(value: Any) -> bool:
    """Whether ``value`` cannot be changed through its public interface.

    True for what :func:`frozen` makes of numbers, strings, numeric arrays, tuples, sets,
    mappings and frozen dataclasses of such values; False for ``object`` arrays (their
    WRITEABLE flag can be set again), sparse matrices (their arrays can be rebound) and
    anything :func:`frozen` deep-copies.
    """
    if isinstance(value, _SCALARS):
        return True
    if isinstance(value, np.ndarray):
        return _is_sealed_array(value)
    if isinstance(value, tuple | frozenset):
        return all(is_immutable(v) for v in value)
    if isinstance(value, MappingProxyType):
        return all(is_immutable(v) for v in value.values())
    if _is_frozen_dataclass(value):
        return all(is_immutable(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def another_sparse(record: Any) -> Any:
    """Another matrix object of a sparse matrix :func:`frozen` made, each array another array
    object over the record's immutable bytes (:func:`protocols.wire.another_array`); None when
    ``record`` is not such a matrix.

    A program may rebind its matrix's arrays or reshape them; the record's stay as they were,
    and neither side can write the shared memory. A party's data shard is then held once, not
    twice.
    """
    sparse = sys.modules.get("scipy.sparse")
    if sparse is None or not sparse.issparse(record):
        return None
    arrays = {}
    for name in SPARSE_ARRAYS:
        arr = getattr(record, name, None)
        again = another_array(arr) if isinstance(arr, np.ndarray) else None
        if again is None:
            return None
        arrays[name] = again
    out = copy.copy(record)
    for name, arr in arrays.items():
        setattr(out, name, arr)
    return out


def _frozen_array(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.hasobject:
        out = np.empty(arr.shape, dtype=arr.dtype)
        out[...] = [frozen(v) for v in arr.ravel().tolist()] if arr.ndim else frozen(arr[()])
        out.flags.writeable = False
        return out
    return _bytes_copy(np.ascontiguousarray(arr), arr.shape)


def _bytes_copy(contiguous: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only copy of a C-contiguous numeric array, of ``shape``, over a new ``bytes``
    object (``shape`` is given: ``np.ascontiguousarray`` makes a 0-d array 1-d)."""
    out = _frombuffer(copied_bytes(contiguous), contiguous.dtype)  # tobytes(), pre-mapped
    return out if len(shape) == 1 else out.reshape(shape)


def _is_sealed_array(arr: np.ndarray) -> bool:
    """A read-only array whose memory is a ``bytes`` object (it cannot be made writeable)."""
    base: Any = arr
    while isinstance(base, np.ndarray):
        if base.flags.writeable or base.dtype.hasobject:
            return False
        base = base.base
    if isinstance(base, memoryview):
        return base.readonly and isinstance(base.obj, bytes)
    return isinstance(base, bytes)


def _is_frozen_dataclass(value: Any) -> bool:
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and params.frozen and not isinstance(value, type)


@dataclass(frozen=True, slots=True)
class Message:
    """One received message, as its receiver saw it (after unsealing).

    ``arrived_s`` is when it reached the receiver: simulated seconds under SimPy, wall-clock
    seconds since the run's start under MPI (the view's ``clock`` says which). A driver makes
    one per received message (:func:`received_message`), up to millions in a run; the
    fields are slots.
    """

    sender: int
    protocol: str
    call: int
    step: str
    round: int
    payload: np.ndarray
    arrived_s: float = 0.0


_MESSAGE_SLOTS = tuple(getattr(Message, f.name).__set__ for f in dataclasses.fields(Message))


def received_message(
    sender: int, protocol: str, call: int, step: str, round_: int, payload: np.ndarray,
    arrived_s: float = 0.0,
) -> Message:
    """``Message(sender, protocol, call, step, round_, payload, arrived_s)``, made in half
    the time.

    What the frozen dataclass's ``__init__`` does — each field set through its slot,
    bypassing the frozen ``__setattr__`` — without its per-field ``object.__setattr__``
    lookups: the record is the same object, equal to one made by ``Message(...)``.
    """
    message = object.__new__(Message)
    (set_sender, set_protocol, set_call, set_step, set_round, set_payload,
     set_arrived) = _MESSAGE_SLOTS
    set_sender(message, sender)
    set_protocol(message, protocol)
    set_call(message, call)
    set_step(message, step)
    set_round(message, round_)
    set_payload(message, payload)
    set_arrived(message, arrived_s)
    return message


SIMULATED = "simulated"
"""``View.clock`` of a SimPy run: every time in the view is simulated (deterministic)."""
WALL = "wall"
"""``View.clock`` of an MPI run: times are the rank's wall clock since the run's start."""


@dataclass
class View:
    """Everything one party saw in a run.

    Besides its inputs, seeds, received messages (each with its arrival time), protocol
    inputs and outputs, a view holds what the driver handed back to the program that was not
    a payload, in program order (``observed``):

    * ``("compute", call, clock)`` — what ``Compute`` returned (the party's clock after the
      work); ``call`` is the last protocol call the party made, or None;
    * ``("recv_any", call, index, sender, clock)`` — the message ``RecvAny`` chose (its index
      in the effect's list, its sender) and the clock when it returned;
    * ``("recv_within", call, senders, clock)`` — the senders whose messages came within
      ``RecvWithin``'s timeout, in the effect's order, and the clock when it returned.

    ``aborts`` lists the abort notices the party received: ``(party, call)`` for "party m
    aborted in call c" (``call`` is "" when m failed before its first call). ``clock`` is
    :data:`SIMULATED` or :data:`WALL`: whether the times are simulated or wall-clock ones.
    """

    party: int
    role: str
    inputs: dict[str, Any] = field(default_factory=dict)
    seeds: dict[str, Any] = field(default_factory=dict)
    received: list[Message] = field(default_factory=list)
    protocol_inputs: list[tuple[Call | None, str, Any]] = field(default_factory=list)
    outputs: list[tuple[Call | None, str, Any]] = field(default_factory=list)
    draws: list[tuple[tuple[Any, ...], np.ndarray]] = field(default_factory=list)
    observed: list[tuple[Any, ...]] = field(default_factory=list)
    aborts: list[tuple[int, str]] = field(default_factory=list)
    clock: str = SIMULATED

    def received_from(self, sender: int) -> list[Message]:
        return [m for m in self.received if m.sender == sender]


@dataclass(frozen=True)
class Coalition:
    """A set of colluding parties and the union of their views.

    Parameters
    ----------
    members : tuple of int
        The colluding parties (sorted).
    views : mapping of int to View
        The members' views.
    """

    members: tuple[int, ...]
    views: dict[int, View]

    @classmethod
    def of(cls, members: Any, views: dict[int, View]) -> Coalition:
        """The coalition of ``members`` (distinct party ids, at least one) over ``views``.

        Raises
        ------
        InputError
            An empty or repeated member list, a member that is not a party id, or a party
            without a view.
        """
        if isinstance(members, str | bytes) or not hasattr(members, "__iter__"):
            raise InputError(f"coalition = {members!r} must be a list of party ids")
        given = list(members)
        if not given:
            raise InputError("coalition = [] is empty; name at least one party")
        if not all(isinstance(m, int | np.integer) and not isinstance(m, bool) for m in given):
            raise InputError(f"coalition = {given!r} must be a list of party ids (integers)")
        ids = tuple(sorted(int(m) for m in given))
        if len(set(ids)) != len(ids):
            raise InputError(f"coalition = {given!r} repeats a party; list each party once")
        missing = [m for m in ids if m not in views]
        if missing:
            raise InputError(
                f"coalition names part{'ies' if len(missing) > 1 else 'y'} {missing}, but the "
                f"run has parties {sorted(views)}"
            )
        return cls(ids, {m: views[m] for m in ids})

    def received(self) -> list[tuple[int, Message]]:
        """Every (member, message) the coalition received, member by member, in order."""
        return [(m, msg) for m in self.members for msg in self.views[m].received]

    def inputs(self) -> dict[int, dict[str, Any]]:
        return {m: self.views[m].inputs for m in self.members}

    def outputs(self) -> dict[int, list[tuple[Call | None, str, Any]]]:
        return {m: self.views[m].outputs for m in self.members}

    def draws(self) -> list[tuple[int, tuple[Any, ...], np.ndarray]]:
        return [(m, key, values) for m in self.members for key, values in self.views[m].draws]


class AbortedRun(dict):
    """Every party's view (``{party: View}``) of a run that aborted, and where it did.

    What an audit's runner hands back for an aborted run instead of raising: whether a run
    aborts is part of what a coalition observes. ``party`` failed in ``call``
    (``"protocol#index"``, "" before its first call); ``reason`` is the caller's full text,
    which no party saw. ``refused``: the party refused its input (a
    :class:`~protocols.errors.PartyInputError`) — on the user's inputs a mistake to report,
    not an observation.
    """

    def __init__(self, views: Mapping[int, View], party: int, call: str, reason: str,
                 refused: bool = False) -> None:
        super().__init__(views)
        self.party = party
        self.call = call
        self.reason = reason
        self.refused = refused
