"""The verdict of an audit: four answers, and the figures that justify each.

``private``
    Every test ran with the power to see a deviation, and none did. A private verdict always
    states that power (:attr:`AuditResult.power`): the smallest deviation the tests would
    have caught at α, with probability 0.9 — as a distance between distributions of one view
    element, and as the families of GF(p)-linear relations the linear tests cover.
``leak``
    A test rejected at α after the multiple-testing correction (or an exact comparison found
    different distributions). :attr:`AuditResult.call` and :attr:`AuditResult.message` name the
    first call and message where it did. A leak found with few trials is still a leak.
``inconclusive``
    Nothing was found, but the trials could not have found it: some test cannot reach α, or
    some slice of the view is undetermined (too few trials to saturate its affine hull).
    :attr:`AuditResult.details` says how many trials would do.
``not applicable``
    The method does not fit the program: no simulator for one of its protocols, a program
    that does not draw or send what its declared protocol does, inputs that cannot be
    re-split with the same outputs, outputs that depend on randomness (exact method).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PRIVATE = "private"
LEAK = "leak"
INCONCLUSIVE = "inconclusive"
NOT_APPLICABLE = "not applicable"
VERDICTS = (PRIVATE, LEAK, INCONCLUSIVE, NOT_APPLICABLE)


@dataclass(frozen=True)
class AuditResult:
    """The verdict of one audit of one coalition.

    Attributes
    ----------
    coalition : tuple of int
        The audited coalition, sorted.
    method : str
        ``"simulation"``, ``"statistical"`` or ``"exact"``.
    verdict : str
        One of :data:`VERDICTS`.
    p_value : float or None
        The smallest multiplicity-adjusted p-value of the statistical tests (None for exact
        comparisons and when nothing was tested).
    call : int or None
        The call number (the parties' call counter) of the first failing call.
    message : str or None
        The first failing message, ``"protocol#call.step from S to R"`` (or what failed
        instead of a message, e.g. ``"view shape"``).
    power : dict or None
        What a ``private`` verdict could have detected (see the module docstring).
    details : dict
        The method's figures: trials, tests, reasons; the linear method's leaks also hold a
        ``witness`` (:mod:`parties.audit.linear`), which the report lifts to its own key.
    """

    coalition: tuple[int, ...]
    method: str
    verdict: str
    p_value: float | None = None
    call: int | None = None
    message: str | None = None
    power: dict[str, Any] | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    @property
    def leaks(self) -> bool:
        return self.verdict == LEAK

    def to_dict(self) -> dict[str, Any]:
        """The report's ``privacy`` entry (README, report schema)."""
        return {
            "coalition": list(self.coalition),
            "method": self.method,
            "verdict": self.verdict,
            "p_value": self.p_value,
            "call": self.call,
            "message": self.message,
            "power": self.power,
            "witness": self.details.get("witness"),
            "details": {k: v for k, v in self.details.items() if k != "witness"},
        }
