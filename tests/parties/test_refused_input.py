"""A party refusing its input on the audit's inputs is the user's mistake (issue 27).

Every method ends in an :class:`InputError` naming the party and what was wrong, never in a
verdict; a refusal under inputs the audit drew itself stays an observation (an abort that
depends on an honest input is a leak).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from parties.audit import audit as audit_with_runner
from protocols.errors import InputError
from protocols.field import prime_field
from protocols.secure_sum import secure_sum_field
from sim.privacy import SimPyRunner, audit

F61 = prime_field(2**61 - 1)
F5 = prime_field(5)


def bounded(ctx: Any, x: Any) -> Generator[Any, Any, Any]:
    """SecureSum that refuses x[0] > 1000 (in GF(5): x[0] = 4) before any message."""
    limit = 3 if ctx.field.p == 5 else 1000
    if int(x[0]) > limit:
        raise InputError(f"x[0] = {int(x[0])} exceeds the bound {limit}")
    return (yield from secure_sum_field(ctx, x, "prg"))


@pytest.mark.parametrize("method", ["simulation", "statistical", "exact", "linear"])
def test_a_refused_input_is_an_error_naming_the_party(method: str) -> None:
    if method == "exact":
        inputs, prime = [F5.elements([v]) for v in (1, 4, 2)], 5
    else:
        inputs, prime = [F61.elements([1, 2]), F61.elements([5000, 4]),
                         F61.elements([5, 6])], 2**61 - 1
    # the audit's runs themselves: the party that refused is named
    with pytest.raises(InputError, match=r"party 1 refused its input.*exceeds the bound"):
        audit_with_runner(bounded, inputs, [0], runner=SimPyRunner(prime), method=method,
                          trials=20)
    # sim.privacy.audit checks the inputs before any audit run, naming the input
    with pytest.raises(InputError,
                       match=r"inputs\[1\] is refused by the program.*exceeds the bound"):
        audit(bounded, inputs, [0], prime=prime, method=method, trials=20)


def test_a_refusal_under_the_audits_own_inputs_is_a_leak() -> None:
    """Honest inputs in range; the exact method enumerates x̂_1 = 4, which aborts."""
    result = audit(bounded, [F5.elements([v]) for v in (1, 2, 3)], [0], prime=5,
                   method="exact")
    assert result.verdict == "leak"
    assert "abort" in result.details.get("property", "") + str(result.details)
