"""Scale: what a run will cost in memory and time, estimated before it starts.

An entry declares its :class:`~sim.entry.Workload` — messages and field elements from its
protocols' declared cost formulas, simulations, local arithmetic (:mod:`sim.entry`). This module
adds what every run shares — the data, the X25519 key agreement of every simulation
(M(M − 1) messages), the audits — and turns the counts into bytes and seconds with the
per-message and per-element costs of the simulator (:data:`COSTS`). The runner refuses a run whose
memory estimate exceeds the memory available (:func:`check_fits`), with the estimate in the
message, and the command line prints the estimate before the run and reports progress against
it from the first second.

The costs are rough on purpose (within a factor of about two on this simulator, see
``benchmarks/scenarios.py``, which prints estimated against measured figures): they exist
to tell a minute from a day and a megabyte from a terabyte before the run, not to predict it.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocols.errors import InputError
from sim.entry import EstimateInput, Workload

if TYPE_CHECKING:
    from sim.entry import Algorithm
    from sim.scenario import AuditSpec, Scenario

__all__ = [
    "COSTS",
    "Costs",
    "Estimate",
    "available_memory",
    "check_fits",
    "estimate_run",
    "human_bytes",
    "human_seconds",
]


@dataclass(frozen=True)
class Costs:
    """What one message, one element, one flop and one byte of data cost the simulator.

    Attributes
    ----------
    message_bytes : float
        Memory per message: its ledger row, its record in the receiver's view, the payload's
        array object.
    element_bytes : float
        Memory per field element carried: the payload kept in the receiver's view.
    pair_key_bytes : float
        Memory per pair key a party holds in a simulation: the keys and the AES encryptor
        its randomness keeps for a key it uses again (``protocols.prg.StreamCiphers``,
        ≈ 1 KB measured); M(M − 1) of them in an M-party simulation.
    message_s, unsealed_message_s : float
        Wall time per message: the driver's event, encoding, sealing (AES-GCM) and, for key
        agreement, the X25519 exchange; without sealing (``network.sealing = false`` and the
        audits' re-runs).
    element_s : float
        Wall time per element: encoding, masks (AES-CTR), field sums.
    flop_s : float
        Wall time per floating-point operation of vectorised numpy work.
    data_copies : float
        How many copies of the data matrix exist at the peak: the generated or loaded matrix,
        the generator's temporaries, the parties' shards, the algorithms' dense views.
    audit_element_bytes : float
        Memory per element a statistical audit keeps: every trial's coalition view (received
        shares and recorded mask draws) for both input sets.
    base_bytes, base_s : float
        The interpreter and its libraries: memory, and the time to load them.
    """

    message_bytes: float = 2_000.0
    element_bytes: float = 16.0
    pair_key_bytes: float = 1_100.0
    message_s: float = 250e-6
    unsealed_message_s: float = 80e-6
    element_s: float = 0.1e-6
    flop_s: float = 1e-9
    data_copies: float = 4.0
    audit_element_bytes: float = 64.0
    base_bytes: float = 130e6
    base_s: float = 1.5


COSTS = Costs()
"""The costs measured on the simulator (``benchmarks/scenarios.py``)."""

MEMORY_FRACTION = 0.8
"""A run is refused when its memory estimate exceeds this fraction of the available memory."""


@dataclass(frozen=True)
class Estimate:
    """The estimated cost of one scenario run.

    Attributes
    ----------
    messages, elements : int
        Messages and field elements over the run, key agreement and audits included.
    simulations : int
        Simulated protocol runs (the algorithm's and the audits').
    memory_bytes : float
        Peak memory.
    seconds : float
        Wall time on one core.
    basis : str
        How the figures were derived.
    """

    messages: int
    elements: int
    simulations: int
    memory_bytes: float
    seconds: float
    basis: str

    def describe(self) -> str:
        """One line: memory, time, and the counts behind them."""
        return (
            f"about {human_bytes(self.memory_bytes)} and {human_seconds(self.seconds)} "
            f"({self.messages:,} messages, {self.elements:,} field elements in "
            f"{self.simulations:,} simulation{'s' if self.simulations != 1 else ''}; "
            f"{self.basis})"
        )


def human_bytes(n: float) -> str:
    """``n`` bytes as "12 MB", "3.4 GB", ... (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000:
            return f"{n:.3g} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return f"{n:.3g} PB" if n < 1000 else f"{n:,.0f} PB"


def human_seconds(s: float) -> str:
    """``s`` seconds as "under a second", "3 s", "12 min", "2.1 h", "40 days", "3.5 years"."""
    if s < 1:
        return "under a second"
    if s < 60:
        return f"{s:.2g} s"
    if s < 3600:
        return f"{s / 60:.2g} min"
    if s < 86400 * 2:
        return f"{s / 3600:.2g} h"
    if s < 86400 * 730:
        return f"{s / 86400:.0f} days"
    years = s / (86400 * 365.25)
    return f"{years:.3g} years" if years < 1000 else f"{years:,.0f} years"


def _audit_workload(spec: AuditSpec, n_parties: int, length: int) -> Workload:
    """A rough workload of one [[audit]]: the audited SecureSum re-run many times.

    Statistical audits run the protocol ``trials`` times on each of two input sets (without
    key agreement: pre-shared keys) and keep the coalition's views of every trial (received
    shares and mask draws, about three vectors per coalition member and peer); exact audits
    enumerate up to ``max_runs`` tapes of a one-element SecureSum. Explicit shares (the
    costlier variant) are assumed.
    """
    per_call = 2 * n_parties * (n_parties - 1)  # explicit SecureSum: 2(M − 1) messages each
    if spec.method == "linear":  # linear algebra on one recorded run: no re-runs
        return Workload(simulations=0)
    coalitions = _study_size(spec, n_parties)
    members = max(len(spec.coalition), 1)
    if spec.method in ("statistical", "simulation"):  # a simulation audit replays the run
        runs = 2 * spec.trials * coalitions
        kept = 2 * spec.trials * members * (n_parties - 1) * length * 3
        return Workload(runs * per_call, runs * per_call * length, runs, 0.0, kept, "")
    runs = spec.max_runs * coalitions
    return Workload(runs * per_call, runs * per_call, runs, 0.0, 0, "")


def _study_size(spec: AuditSpec, n_parties: int) -> int:
    """How many coalitions an [[audit]] examines (1, or a study's count)."""
    if spec.sizes:
        return sum(math.comb(n_parties, t) for t in spec.sizes if t < n_parties)
    if spec.coalitions == "all":
        return 2**n_parties - 2
    if spec.coalitions:
        return len(spec.coalitions)
    return 1


def estimate_run(scenario: Scenario, entry: Algorithm, params: dict[str, Any], n_rows: int,
                 n_cols: int, missing: bool = False, costs: Costs = COSTS) -> Estimate:
    """The cost of running ``entry`` on data of shape (n_rows, n_cols) as ``scenario`` says.

    Parameters
    ----------
    scenario : Scenario
    entry : Algorithm
        Its ``estimate`` gives the algorithm's workload.
    params : dict
        The entry's checked ``[algorithm]`` keys.
    n_rows, n_cols : int
        The data's shape.
    missing : bool
        Whether the data has unobserved (NaN) entries.
    costs : Costs
        The simulator's unit costs.
    """
    inp = EstimateInput(scenario, params, n_rows, n_cols, missing)
    work = entry.estimate(inp)
    m = scenario.n_parties
    agreement = m * (m - 1) * work.simulations if work.messages else 0  # X25519 per simulation
    messages = work.messages + agreement
    elements = work.elements
    simulations = work.simulations
    message_s = costs.message_s if scenario.sealing else costs.unsealed_message_s
    seconds = message_s * messages  # the algorithm's own messages, then the audits' re-runs
    audit_bytes = 0.0
    for spec in scenario.audits:
        audit = _audit_workload(spec, m, work.audited_length or n_cols)
        messages += audit.messages
        elements += audit.elements
        simulations += audit.simulations
        seconds += costs.unsealed_message_s * audit.messages
        audit_bytes = max(audit_bytes, costs.audit_element_bytes * audit.working_bytes)
    data_bytes = 8.0 * n_rows * n_cols * costs.data_copies
    run_bytes = ((costs.message_bytes + costs.pair_key_bytes) * agreement
                 / max(work.simulations, 1)  # pair keys: one per agreement message
                 + costs.message_bytes * work.messages / max(work.simulations, 1)
                 + costs.element_bytes * work.elements / max(work.simulations, 1))
    memory = (costs.base_bytes + data_bytes + work.working_bytes + max(run_bytes, audit_bytes))
    seconds += (costs.base_s + costs.element_s * elements + costs.flop_s * work.flops
                + 1e-9 * data_bytes)
    basis = work.basis or "no declared cost"
    if scenario.audits:
        basis += f"; {len(scenario.audits)} audit{'s' if len(scenario.audits) > 1 else ''}"
    return Estimate(messages, elements, simulations, memory, seconds, basis)


def available_memory() -> float | None:
    """Bytes of memory available to a new allocation (Linux ``MemAvailable``), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(estimate: Estimate, what: str, limit: float | None = None) -> None:
    """Refuse a run whose memory estimate exceeds the available memory.

    Parameters
    ----------
    estimate : Estimate
    what : str
        The run, for the message (e.g. ``"scenario quickstart (secure_sum, M = 1000)"``).
    limit : float, optional
        Bytes allowed; by default :data:`MEMORY_FRACTION` of :func:`available_memory`.

    Raises
    ------
    InputError
        With the estimate and what to change.
    """
    if limit is None:
        available = available_memory()
        if available is None:
            return
        limit = MEMORY_FRACTION * available
    if estimate.memory_bytes > limit:
        raise InputError(
            f"{what} would need {estimate.describe()}, more than the {human_bytes(limit)} of "
            "memory available; use fewer parties, fewer columns or rows, fewer iterations or "
            "trials"
        )
