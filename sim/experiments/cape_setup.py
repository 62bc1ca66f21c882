"""What the ``cape_*`` catalogue entries share (seed 003): their privacy keys, the party list
of a CAPE run, trial seeds and the accounting block of the report.

A CAPE run has the S data sites (ids 0..S−1, the scenario's ``network.parties``), then the
untrusted aggregator (id S) and, for the ``cape`` scheme, the trusted noise generator (id S+1);
the simulation links the extra roles to every site. Trials are separate simulations seeded
from the scenario seed and the trial number, so a scenario replays byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from protocols.errors import ScenarioError
from sim.entry import Param, choice, number

if TYPE_CHECKING:
    from parties.party import Party
    from protocols.accounting import Release

TRIAL_SEED_KEY = 1_000_011

# The vocabulary of the CAPE modules, spelled out here so that the catalogue loads without
# numpy (``mpcsim list`` answers at once); tests/sim/test_startup.py holds each equal
# to its source.
NOISE_KINDS = ("float", "discrete")
"""As :data:`protocols.correlated_noise.NOISE_KINDS`."""
SCHEMES = ("cape", "conventional")
"""As :data:`protocols.correlated_noise.SCHEMES`."""
ORDERS = ("eigenvalue", "abs")
"""As :data:`algorithms.cape.pca.ORDERS`."""
MODELS = ("stm", "mog")
"""As :data:`algorithms.cape.moments.MODELS`."""
MODES = ("paper", "robust")
"""As :data:`algorithms.cape.tensor_power.MODES`."""


MAX_EPSILON = 1000.0
_epsilon = number(0.0, MAX_EPSILON, strict_low=True)  # 0 < ε ≤ 1000
_delta = number(0.0, 1.0, strict_low=True, strict_high=True)  # 0 < δ < 1


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ScenarioError(f"{name} = {value!r} must be true or false")
    return value


def epsilon_param(default: float) -> Param:
    return Param(default, _epsilon, "ε")


def delta_param(default: float) -> Param:
    return Param(default, _delta, "δ")


PRIVACY_PARAMS: dict[str, Param] = {
    "epsilon": epsilon_param(1.0),
    "delta": delta_param(0.01),
    "noise": Param("float", choice(*NOISE_KINDS),
                   "float (Gaussian in float64, rounded to the grid) | discrete (on the grid)"),
    "aggregator_noise": Param(True, _flag, "the aggregator's f_s (JSTSP Algorithm 1)"),
}


def scheme_param() -> Param:
    return Param("cape", choice(*SCHEMES), "cape | conventional")


def check_list(name: str, value: Any, check: Callable[[str, Any], Any]) -> list[Any]:
    """A non-empty list whose every item passes ``check``."""
    if not isinstance(value, list) or not value:
        raise ScenarioError(f"{name} = {value!r} must be a non-empty list")
    return [check(f"{name}[{i}]", v) for i, v in enumerate(value)]


def cape_parties(
    site_program: Callable[..., Any],
    site_inputs: Sequence[Mapping[str, Any]],
    aggregator: tuple[Callable[..., Any], Mapping[str, Any]],
    noise_generator: tuple[Callable[..., Any], Mapping[str, Any]] | None,
) -> list[Party]:
    """Sites 0..S−1, the aggregator (S) and, if given, the noise generator (S + 1)."""

    from parties.party import Party
    from protocols.correlated_noise import AGGREGATOR, NOISE_GENERATOR

    S = len(site_inputs)
    parties = [Party(s, site_program, dict(kw)) for s, kw in enumerate(site_inputs)]
    parties.append(Party(S, aggregator[0], dict(aggregator[1]), role=AGGREGATOR))
    if noise_generator is not None:
        parties.append(Party(S + 1, noise_generator[0], dict(noise_generator[1]),
                             role=NOISE_GENERATOR))
    return parties


def trial_seed(seed: int, trial: int) -> int:
    """The seed of trial ``trial`` (trial 0 runs with the scenario seed itself)."""

    import numpy as np

    if trial == 0:
        return seed
    return int(np.random.SeedSequence(seed, spawn_key=(TRIAL_SEED_KEY, trial)).generate_state(
        1, np.uint64)[0] >> np.uint64(1))


def accounting(site: Sequence[Release], aggregate: Sequence[Release],
               delta: float | None = None) -> dict[str, Any]:
    """The report's ``accounting`` block: per site (its releases alone) and for the aggregate,
    each composed over the algorithm's stages (:func:`protocols.accounting.account`; ε is
    reported at ``delta``, by default the paper's total δ)."""

    from protocols.accounting import account

    return {"site": account(site, delta), "aggregate": account(aggregate, delta)}


def accounting_rows(block: Mapping[str, Any]) -> list[list[Any]]:
    """Console rows: scope, paper (ε, δ), exact ε, dp-accounting PLD and RDP ε, met."""
    rows = []
    for scope, a in block.items():
        rows.append([scope, a["paper"]["epsilon"], a["paper"]["delta"], a["exact"]["epsilon"],
                     a["dp_accounting_pld"]["epsilon"], a["dp_accounting_rdp"]["epsilon"],
                     "yes" if a["paper_epsilon_met"] else "no"])
    return rows


ACCOUNTING_HEADERS = ["scope", "paper ε", "paper δ", "exact ε", "PLD ε", "RDP ε",
                      "paper ε met"]
