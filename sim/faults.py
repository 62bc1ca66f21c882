"""Fault injection: the ``[[fault]]`` tables of a scenario and the plan a driver consults.

A fault is injected by the driver, never by a protocol: programs do not know about it. Kinds:

``crash``
    Party ``party`` stops for good — at simulated time ``at_s``, or when it is about to send
    (``when = "before"``, the default) or has just sent (``when = "after"``) the message of
    step ``step`` in protocol call ``call`` (``"secagg#3"``: that invocation; ``"secagg"``: the
    first invocation that sends such a step). Messages sent to it are delivered and unread.
``link_down``
    The network link ``link = [a, b]`` (both directions) loses every message that reaches it
    in [``at_s``, ``at_s + duration_s``).
``delay``
    Messages reaching link ``[a, b]`` in that interval (the whole run when ``at_s`` is
    omitted) take ``extra_ms`` more latency.
``tamper``
    One bit of the ciphertext of one message on the channel ``link = [sender, receiver]`` is
    flipped in transit: the first message sent at or after ``at_s`` (default 0), or of
    ``call``/``step`` when given. The channel layer must detect it (AES-GCM), so sealing must
    be on.
``replay``
    One message on the channel ``[sender, receiver]`` (chosen as for ``tamper``) is delivered
    twice; the per-channel sequence number bound in the associated data must refuse the copy.

Every fault that fires is logged (:class:`FaultLog`): the run's ledger carries the events and
the report lists them under ``faults``, with what each party saw (completed, crashed, or the
abort it was given). A protocol that cannot tolerate a fault ends with a
:class:`~protocols.errors.ProtocolAbort` naming the fault and the party; protocols that wait
with a timeout (:class:`~protocols.effects.RecvWithin`, :mod:`protocols.secagg`) survive.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from protocols.effects import Call
from protocols.errors import ScenarioError

KINDS: tuple[str, ...] = ("crash", "link_down", "delay", "tamper", "replay")
FAULT_KEYS = {"kind", "party", "link", "at_s", "call", "step", "when", "duration_s", "extra_ms"}
_REQUIRED: dict[str, set[str]] = {
    "crash": {"party"},
    "link_down": {"link", "at_s", "duration_s"},
    "delay": {"link", "extra_ms"},
    "tamper": {"link"},
    "replay": {"link"},
}
_ALLOWED: dict[str, set[str]] = {
    "crash": {"kind", "party", "at_s", "call", "step", "when"},
    "link_down": {"kind", "link", "at_s", "duration_s"},
    "delay": {"kind", "link", "at_s", "duration_s", "extra_ms"},
    "tamper": {"kind", "link", "at_s", "call", "step"},
    "replay": {"kind", "link", "at_s", "call", "step"},
}


@dataclass(frozen=True)
class Fault:
    """One injected fault (see the module docstring for the kinds and their keys)."""

    index: int
    kind: str
    party: int | None = None
    link: tuple[int, int] | None = None
    at_s: float | None = None
    call: str | None = None
    step: str | None = None
    when: str = "before"
    duration_s: float | None = None
    extra_ms: float = 0.0

    def describe(self) -> str:
        """``fault 0 (crash of party 2 before 'masked_input' of secagg#1)`` and the like."""
        if self.kind == "crash":
            if self.at_s is not None:
                what = f"crash of party {self.party} at {self.at_s:g} s"
            else:
                what = f"crash of party {self.party} {self.when} '{self.step}' of {self.call}"
        elif self.kind in ("link_down", "delay"):
            a, b = self.link or (0, 0)
            span = ("" if self.at_s is None else
                    f" from {self.at_s:g} s for {self.duration_s:g} s" if self.duration_s
                    else f" from {self.at_s:g} s")
            extra = f" +{self.extra_ms:g} ms" if self.kind == "delay" else ""
            what = f"{self.kind} of link {a}–{b}{extra}{span}"
        else:
            a, b = self.link or (0, 0)
            which = (f"'{self.step}' of {self.call}" if self.call
                     else f"first message at or after {self.at_s or 0:g} s")
            what = f"{self.kind} of {which} on channel {a}→{b}"
        return f"fault {self.index} ({what})"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, "kind": self.kind}
        for key in ("party", "at_s", "call", "step", "duration_s"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.link is not None:
            out["link"] = list(self.link)
        if self.kind == "crash" and self.at_s is None:
            out["when"] = self.when
        if self.kind == "delay":
            out["extra_ms"] = self.extra_ms
        return out

    def matches_call(self, call: Call, step: str) -> bool:
        """Does a message of ``step`` in ``call`` match this fault's ``call``/``step``?"""
        if self.step is not None and step != self.step:
            return False
        if self.call is None:
            return True
        return self.call in (call.protocol, f"{call.protocol}#{call.index}")

    def active(self, t: float) -> bool:
        """Is a link fault in force at time ``t``?"""
        start = self.at_s if self.at_s is not None else 0.0
        end = start + self.duration_s if self.duration_s is not None else math.inf
        return start <= t < end


@dataclass(frozen=True)
class FaultPlan:
    """The faults of a run (immutable; each run keeps its own :class:`FaultLog`)."""

    faults: tuple[Fault, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.faults)

    def of_kind(self, *kinds: str) -> tuple[Fault, ...]:
        return tuple(f for f in self.faults if f.kind in kinds)

    def check_participants(self, participants: Sequence[int], sealing: bool) -> None:
        """Every party and link end names a participant; tamper/replay need sealing."""
        known = set(participants)
        for f in self.faults:
            ends = [f.party] if f.party is not None else list(f.link or ())
            for p in ends:
                if p not in known:
                    raise ScenarioError(
                        f"fault[{f.index}] names party {p}, but the run has parties "
                        f"{sorted(known)}; use one of them"
                    )
            if f.kind in ("tamper", "replay") and not sealing:
                raise ScenarioError(
                    f"fault[{f.index}] ({f.kind}) is detected by the sealed channels; set "
                    "network.sealing = true"
                )


@dataclass
class FaultLog:
    """What the faults of one run did: the events, and which faults have fired."""

    plan: FaultPlan
    events: list[dict[str, Any]] = field(default_factory=list)
    fired: set[int] = field(default_factory=set)
    crashed: dict[int, float] = field(default_factory=dict)

    def record(self, fault: Fault, time_s: float, effect: str, **details: Any) -> None:
        self.fired.add(fault.index)
        self.events.append({"fault": fault.index, "kind": fault.kind, "time_s": time_s,
                            "effect": effect, **details})

    def crash_on_send(self, pid: int, call: Call, step: str) -> Fault | None:
        """The crash fault that fires when ``pid`` sends ``step`` of ``call``, if any."""
        for f in self.plan.faults:
            if (f.kind == "crash" and f.party == pid and f.at_s is None
                    and f.index not in self.fired and f.matches_call(call, step)):
                return f
        return None

    def on_link(self, key: tuple[object, object], t: float) -> tuple[Fault | None, float]:
        """(the link_down fault dropping a message reaching link ``key`` at ``t``, extra s)."""
        ends = set(key)
        extra = 0.0
        for f in self.plan.faults:
            if f.link is None or set(f.link) != ends or not f.active(t):
                continue
            if f.kind == "link_down":
                return f, 0.0
            if f.kind == "delay":
                extra += f.extra_ms / 1000.0
        return None, extra

    def on_delivery(
        self, sender: int, receiver: int, call: Call, step: str, sent_s: float
    ) -> Fault | None:
        """The tamper or replay fault that takes this message, if any (each fires once)."""
        for f in self.plan.faults:
            if (f.kind in ("tamper", "replay") and f.index not in self.fired
                    and f.link == (sender, receiver) and sent_s >= (f.at_s or 0.0)
                    and f.matches_call(call, step)):
                return f
        return None

    def involving(self, party: int) -> list[Fault]:
        """Fired faults that concern ``party`` (crashed, or an end of the link)."""
        return [f for f in self.plan.faults if f.index in self.fired
                and (f.party == party or (f.link is not None and party in f.link))]

    def summary(self, outcome: Mapping[int, str]) -> dict[str, Any]:
        """The report's ``faults`` entry: faults injected, events, what each party saw."""
        return {
            "injected": [f.as_dict() | {"fired": f.index in self.fired}
                         for f in self.plan.faults],
            "events": list(self.events),
            "parties": {str(p): s for p, s in sorted(outcome.items())},
        }


# -- parsing ------------------------------------------------------------------------------------


def parse_faults(tables: Any) -> FaultPlan:
    """The ``[[fault]]`` tables of a scenario; raises ScenarioError naming the bad key."""
    if tables is None:
        return FaultPlan()
    if not isinstance(tables, list):
        raise ScenarioError("fault must be an array of tables: write [[fault]] (double brackets)")
    return FaultPlan(tuple(_parse_one(i, t) for i, t in enumerate(tables)))


def _parse_one(i: int, table: Any) -> Fault:
    where = f"fault[{i}]"
    if not isinstance(table, dict):
        raise ScenarioError(f"{where} must be a table [[fault]]")
    unknown = sorted(set(table) - FAULT_KEYS)
    if unknown:
        raise ScenarioError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in "
            f"[[fault]] {i}; allowed: {', '.join(sorted(FAULT_KEYS))}"
        )
    kind = table.get("kind")
    if kind not in KINDS:
        raise ScenarioError(f"{where}.kind = {kind!r} is unknown; use one of {', '.join(KINDS)}")
    missing = sorted(_REQUIRED[kind] - set(table))
    if missing:
        raise ScenarioError(f"{where} (kind = {kind!r}) needs {', '.join(missing)}")
    extra = sorted(set(table) - _ALLOWED[kind])
    if extra:
        raise ScenarioError(
            f"{where} (kind = {kind!r}) does not take {', '.join(extra)}; it takes "
            f"{', '.join(sorted(_ALLOWED[kind] - {'kind'}))}"
        )
    out: dict[str, Any] = {"index": i, "kind": kind}
    if "party" in table:
        out["party"] = _party(f"{where}.party", table["party"])
    if "link" in table:
        link = table["link"]
        if not (isinstance(link, list) and len(link) == 2):
            raise ScenarioError(f"{where}.link = {link!r} must be a list of two party ids [a, b]")
        a, b = (_party(f"{where}.link", v) for v in link)
        if a == b:
            raise ScenarioError(f"{where}.link = {link!r} must name two different parties")
        out["link"] = (a, b)
    for key in ("at_s", "duration_s", "extra_ms"):
        if key in table:
            out[key] = _number(f"{where}.{key}", table[key], strict=key == "duration_s")
    for key in ("call", "step"):
        if key in table:
            value = table[key]
            if not isinstance(value, str) or not value:
                raise ScenarioError(f"{where}.{key} = {value!r} must be a non-empty string")
            out[key] = value
    if "when" in table:
        if table["when"] not in ("before", "after"):
            raise ScenarioError(f"{where}.when = {table['when']!r} must be 'before' or 'after'")
        out["when"] = table["when"]
    if kind == "crash":
        has_time, has_call = "at_s" in table, "step" in table or "call" in table
        if has_time == has_call:
            raise ScenarioError(
                f"{where} (crash) needs either at_s or call/step (with when), not "
                f"{'both' if has_time else 'neither'}"
            )
        if has_call and "step" not in table:
            raise ScenarioError(f"{where} (crash) with call needs step, the message to crash at")
    return Fault(**out)


def _party(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScenarioError(f"{name} = {value!r} must be a party id (an integer ≥ 0)")
    return value


def _number(name: str, value: Any, strict: bool = False) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not ok or value < 0 or (strict and value == 0):
        bound = "> 0" if strict else "≥ 0"
        raise ScenarioError(f"{name} = {value!r} must be a finite number {bound}")
    return float(value)
