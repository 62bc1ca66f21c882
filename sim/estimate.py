"""Scale: what a run will cost in memory and time, estimated before it starts.

An entry declares its :class:`~sim.entry.Workload` — messages and field elements from its
protocols' declared cost formulas, simulations, local arithmetic (:mod:`sim.entry`). This module
adds what every run shares — the data, the X25519 key agreement of every simulation
(M(M − 1) messages), the audits — and turns the counts into bytes and seconds with the
per-message and per-element costs of the simulator (:data:`COSTS`). The runner refuses a run whose
memory estimate exceeds the memory available (:func:`check_fits`), with the estimate in the
message, and the command line prints the estimate before the run and reports progress against
it from the first second.

Audits are costed per method (:func:`audit_cost`), coalition studies per coalition
(:func:`study_size`: 2^M − 2 for ``coalitions = "all"``), and an exact audit whose enumeration
of the honest inputs alone exceeds ``max_runs`` is refused here (:func:`check_enumerable`),
before ``itertools.product(range(p), ...)`` could try. Since an estimate can be wrong, the
command line also caps its own address space (:func:`cap_allocations`), so that a run that
outgrows it ends in ``MemoryError`` and one ``error:`` line (:func:`out_of_memory`) rather
than in the kernel's OOM killer.

The costs are rough on purpose (within a factor of two of every shipped scenario, see below,
and ``tests/sim/test_estimate_accuracy.py``, which holds the memory and message counts to it
per entry at small size):
they exist to tell a minute from a day and a megabyte from a terabyte before the run, not to
predict it.

Calibration
-----------
``python benchmarks/estimate_accuracy.py`` runs every scenario of ``scenarios/`` as a user
would (``mpcsim run S --quiet --out TMP``, one process each, one after the other, BLAS on one
thread, bytecode compiled) and prints, per scenario, the estimate against the process's CPU
time and peak RSS (``ratio``, ``ratio_mem``: estimate / measured), with the counts behind the
estimate (messages, elements) and the workload the entry declared. The unit costs are fitted
to those lines, one at a time, on the scenarios where that cost dominates:

* ``base_s``, ``base_bytes``: the smallest runs (``quickstart``, ``secagg_dropouts``,
  ``secure_sum_crash``), whose messages are few;
* ``message_s``, ``element_s``: runs dominated by SecureSum's messages and elements (PD-NMF,
  the secure NMF entries), after the base; ``unsealed_message_s``: the audits' re-runs;
* ``probe_*``: SecureSum studies of ``sizes = [1]`` with the linear method at M = 10..40;
* ``flop_s``: the runs dominated by local arithmetic (the corrective NMF tables);
  the NMF sweeps count their flops with a model fitted to measured sweeps on dense and sparse
  inputs (:mod:`sim.experiments.nmf.sweep_cost`, in nanoseconds at this ``flop_s``);
* the entries' own constants (e.g. :data:`sim.experiments.cape.cape_setup.TRIAL_COPIES`,
  :data:`sim.experiments.cape.cape_otd.STM_DOCUMENT_FLOPS`,
  :data:`sim.experiments.dsanls.secure_nmf_cost.STEP_S`), where one of their scenarios was off by
  more than the others, each with the measurement it was fitted to in its docstring.

CPU time, not wall time, is what the estimate predicts: on a shared machine the wall time of
the same run varies threefold while its CPU time stays within about 20 %.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocols.errors import InputError, ScenarioError
from sim.entry import EstimateInput, Workload

if TYPE_CHECKING:
    from sim.entry import Algorithm
    from sim.scenario import AuditSpec, Scenario

__all__ = [
    "COSTS",
    "AuditCost",
    "Costs",
    "Estimate",
    "allocation_cap",
    "audit_cost",
    "available_memory",
    "cap_allocations",
    "check_enumerable",
    "check_fits",
    "estimate_run",
    "human_bytes",
    "human_seconds",
    "memory_limit",
    "out_of_memory",
    "ranks_sharing_memory",
    "study_size",
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
        its randomness keeps for a key it uses again (``protocols.crypto.keystream.StreamCiphers``,
        ≈ 1 KB measured); M(M − 1) of them in an M-party simulation.
    message_s, unsealed_message_s : float
        Wall time per message of a run: the driver's event, encoding, sealing (AES-GCM) and,
        for key agreement, the X25519 exchange; without sealing (``network.sealing = false``).
    audit_message_s : float
        Wall time per message of an audit's re-run (simulation, statistical, exact): the
        run's, its views kept and compared.
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
    coalition_bytes, coalition_s : float
        Memory a coalition study keeps per coalition (its verdict, details, witness, table
        row; ≈ 20 kB measured on the linear study of 10 parties) and the linear audit's time
        per coalition decided (its elimination's Python overhead, ≈ 6.5 ms measured).
    probe_message_s, probe_party_s, probe_message_bytes : float
        The linear audit's probe runs (one-element messages, a tape for randomness, no
        sealing): time per message and per party and run (its program's start and its
        view), and memory kept per message (its pattern, recorded for the comparison of
        every probe with the first). Fitted to SecureSum studies of sizes = [1] at
        M = 10, 20, 30, 40 and d = 1 (``mpcsim run``, CPU time: 0.84, 4.1, 14.5, 41 s beyond
        the interpreter; peak RSS 10, 27, 111, 334 MB beyond it).
    base_bytes, base_s : float
        The interpreter and its libraries: memory, and the time to load them and write the
        report (peak RSS: 95 MB for a small run that plans and runs without plots, 150–236 MB
        for the small shipped runs that write them, 236 once numba's kernels are loaded; CPU
        time 0.7–0.8 s for the smallest runs without an audit, which load neither the audit
        machinery nor scipy.stats).
    audit_import_s : float
        Loading the audit machinery (``parties.audit`` and scipy.stats, imported only when a
        run has an ``[[audit]]``): ≈ 0.9 s of CPU measured (``python -X importtime``).
    bundled_bytes : float
        The libraries a bundled data set loads (scikit-learn for ``source = "digits"``:
        ≈ 50 MB of RSS measured).
    """

    message_bytes: float = 2_000.0
    element_bytes: float = 16.0
    pair_key_bytes: float = 1_100.0
    message_s: float = 250e-6
    unsealed_message_s: float = 25e-6
    audit_message_s: float = 80e-6
    element_s: float = 0.05e-6
    flop_s: float = 1e-9
    data_copies: float = 4.0
    audit_element_bytes: float = 64.0
    coalition_bytes: float = 20_000.0
    coalition_s: float = 6.5e-3
    probe_message_s: float = 21e-6
    probe_party_s: float = 0.4e-3
    probe_message_bytes: float = 270.0
    base_bytes: float = 150e6
    base_s: float = 0.8
    audit_import_s: float = 0.9
    bundled_bytes: float = 50e6


COSTS = Costs()
"""The costs measured on the simulator (``benchmarks/estimate_accuracy.py``)."""

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


@dataclass(frozen=True)
class AuditCost:
    """What one ``[[audit]]`` adds to a run: its re-runs, their bytes and seconds.

    Attributes
    ----------
    messages, elements, simulations : int
        Over every re-run of the audited protocol (every coalition of a study).
    memory_bytes : float
        Held at the audit's peak beyond the run's own memory: the views a statistical audit
        keeps, the linear audit's affine map, a study's per-coalition results.
    seconds : float
        Beyond the re-runs' messages and elements: the linear audit's eliminations.
    message_s : float, optional
        Time per message of the re-runs; None: ``Costs.audit_message_s``.
    """

    messages: int = 0
    elements: int = 0
    simulations: int = 0
    memory_bytes: float = 0.0
    seconds: float = 0.0
    message_s: float | None = None


def audit_cost(spec: AuditSpec, n_parties: int, length: int, costs: Costs = COSTS,
               index: int = 0, replay: Workload | None = None) -> AuditCost:
    """The cost of one ``[[audit]]`` of a run of ``n_parties`` on ``length``-element inputs.

    Per method, for each of the coalitions it examines (:func:`study_size`; a study keeps a
    result of about ``costs.coalition_bytes`` for each): *simulation* replays the whole run
    (``replay``: one simulation of the entry's workload) ``trials`` times and draws as many
    simulated views (counted as much again); *statistical* re-runs the audited SecureSum
    (explicit shares, the costlier variant: 2M(M − 1) messages) ``2 × trials`` times; both
    keep every trial's coalition view; *exact* runs up to ``max_runs`` one-element
    SecureSums in the audit's prime (refused here when enumerating the honest inputs alone
    exceeds ``max_runs``: :func:`check_enumerable`); *linear* probes once for all coalitions —
    one run of the PRG SecureSum (M(M − 1) messages) per input element and per drawn element
    (a pair stream of d elements per pair), plus ``probes`` — at ``costs.probe_message_s``
    per message and ``costs.probe_party_s`` per party and run, keeps every probe's message
    pattern (``costs.probe_message_bytes`` per message) and the affine map (view elements ×
    variables), and decides each coalition by a vectorised elimination
    (``costs.coalition_s`` each, measured up to M = 10).

    Raises
    ------
    ScenarioError
        An exact audit whose enumeration cannot fit in ``max_runs``.
    """
    per_call = 2 * n_parties * (n_parties - 1)  # explicit SecureSum: 2(M − 1) messages each
    coalitions = study_size(spec, n_parties)
    members = max(min((len(c) for c in _listed(spec)), default=1), 1)
    kept = coalitions * costs.coalition_bytes if spec.study else 0.0
    if spec.method == "linear":
        # x, then the draws: a pair stream per pair (PRG) of d elements
        variables = n_parties * length + n_parties * (n_parties - 1) // 2 * length
        runs = 1 + variables + spec.probes
        probe_call = n_parties * (n_parties - 1)  # a PRG SecureSum: M − 1 messages each
        view = probe_call * length  # elements received over all parties in one run
        map_bytes = 8.0 * view * (variables + 1)
        patterns = costs.probe_message_bytes * runs * probe_call
        return AuditCost(runs * probe_call, runs * view, runs, map_bytes + patterns + kept,
                         coalitions * costs.coalition_s + runs * n_parties * costs.probe_party_s,
                         message_s=costs.probe_message_s)
    if spec.method in ("statistical", "simulation"):
        runs = 2 * spec.trials * coalitions
        views = 2 * spec.trials * members * (n_parties - 1) * length * 3
        if spec.method == "simulation" and replay is not None:  # the whole run, replayed
            return AuditCost(runs * replay.messages, runs * replay.elements, runs,
                             costs.audit_element_bytes * views + kept,
                             runs * costs.flop_s * replay.flops)
        return AuditCost(runs * per_call, runs * per_call * length, runs,
                         costs.audit_element_bytes * views + kept)
    check_enumerable(spec, n_parties, index)
    runs = spec.max_runs * coalitions
    return AuditCost(runs * per_call, runs * per_call, runs, kept)


def _listed(spec: AuditSpec) -> list[tuple[int, ...]]:
    """The coalitions an [[audit]] names, or one of each size it studies ([] for "all")."""
    if spec.sizes:
        return [tuple(range(t)) for t in spec.sizes]
    if spec.coalitions == "all":
        return [(0,)]
    if spec.coalitions:
        return list(spec.coalitions)  # type: ignore[arg-type]
    return [spec.coalition]


def check_enumerable(spec: AuditSpec, n_parties: int, index: int = 0) -> None:
    """Refuse an exact audit whose honest inputs alone outnumber ``max_runs``.

    The exact audit (:mod:`parties.audit.exact`) first runs the protocol once for each of the
    p^(M − |C|) one-element inputs of the honest parties, in the audit's prime p, then every
    honest tape for each input with the same output; it refuses when the total exceeds
    ``max_runs``, but only after that first enumeration — which at p = 2^61 − 1 never ends
    (``itertools.product(range(p), ...)`` raises ``MemoryError``). The smallest coalition of a
    study leaves the most honest parties.

    Raises
    ------
    ScenarioError
        Naming the audit, p, the count and what to change.
    """
    smallest = min(len(c) for c in _listed(spec)) if _listed(spec) else 1
    honest = max(n_parties - smallest, 0)
    bits = honest * math.log2(spec.prime)
    too_many = bits > 62 or spec.prime**honest + 1 > spec.max_runs
    if too_many:
        count = f"{spec.prime**honest:,}" if bits <= 62 else f"about 2^{bits:.0f}"
        raise ScenarioError(
            f"[[audit]] {index}: an exact audit of a coalition of {smallest} among "
            f"{n_parties} parties enumerates every honest input in GF({spec.prime}): "
            f"{spec.prime}^{honest} = {count} runs before any random tape, more than "
            f"max_runs = {spec.max_runs:,}; use a small audit prime (prime = 5), fewer "
            "parties, or method = 'linear' or 'statistical'"
        )


def study_size(spec: AuditSpec, n_parties: int) -> int:
    """How many coalitions an [[audit]] examines (1, or a study's count: 2^M − 2 for "all")."""
    if spec.sizes:
        return sum(math.comb(n_parties, t) for t in spec.sizes if t < n_parties)
    if spec.coalitions == "all":
        return 2**n_parties - 2
    if spec.coalitions:
        return len(spec.coalitions)
    return 1


def estimate_run(scenario: Scenario, entry: Algorithm, params: dict[str, Any], n_rows: int,
                 n_cols: int, missing: bool = False, costs: Costs = COSTS,
                 stored: int | None = None) -> Estimate:
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
    stored : int, optional
        The stored entries of a sparse X (None: dense).
    """
    inp = EstimateInput(scenario, params, n_rows, n_cols, missing, stored)
    work = entry.estimate(inp)
    m = scenario.n_parties
    agreement = m * (m - 1) * work.simulations if work.messages else 0  # X25519 per simulation
    messages = work.messages + agreement
    elements = work.elements
    simulations = work.simulations
    message_s = costs.message_s if scenario.sealing else costs.unsealed_message_s
    seconds = message_s * messages  # the algorithm's own messages, then the audits' re-runs
    audit_bytes = 0.0
    runs = max(work.simulations, 1)
    replay = Workload(work.messages // runs, work.elements // runs, 1, work.flops / runs)
    for i, spec in enumerate(scenario.audits):
        audit = audit_cost(spec, m, work.audited_length or n_cols, costs, i, replay)
        messages += audit.messages
        elements += audit.elements
        simulations += audit.simulations
        per_message = costs.audit_message_s if audit.message_s is None else audit.message_s
        seconds += per_message * audit.messages + audit.seconds
        audit_bytes = max(audit_bytes, audit.memory_bytes)
    data_bytes = 8.0 * n_rows * n_cols * costs.data_copies
    if scenario.data.get("source") not in ("synthetic", "file"):  # a bundled data set
        data_bytes += costs.bundled_bytes
    run_bytes = ((costs.message_bytes + costs.pair_key_bytes) * agreement
                 / max(work.simulations, 1)  # pair keys: one per agreement message
                 + costs.message_bytes * work.messages / max(work.simulations, 1)
                 + costs.element_bytes * work.elements / max(work.simulations, 1))
    memory = (costs.base_bytes + data_bytes + work.working_bytes + max(run_bytes, audit_bytes))
    seconds += (costs.base_s + costs.element_s * elements + costs.flop_s * work.flops
                + 1e-9 * data_bytes + work.seconds
                + (costs.audit_import_s if scenario.audits else 0.0))
    basis = work.basis or "no declared cost"
    if scenario.audits:
        basis += f"; {len(scenario.audits)} audit{'s' if len(scenario.audits) > 1 else ''}"
        studied = sum(study_size(spec, m) for spec in scenario.audits if spec.study)
        if studied:
            basis += f" of {studied:,} coalition{'s' if studied > 1 else ''} in studies"
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


VIRTUAL_HEADROOM = 1e9
"""Address space a run may reserve beyond the memory it may fill: libraries map more than they
touch (numba's LLVM, BLAS buffers, thread stacks; a NormedSecureSum run peaks at 1.03 GB of
address space for 0.71 GB resident)."""


LOCAL_RANKS_ENV = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_SIZE")
"""Where an MPI launcher says how many ranks share this host's memory: MPICH Hydra's count of
the job's ranks on this host, Open MPI's, and (a bound from above) the job's size."""


def ranks_sharing_memory(environ: Mapping[str, str] | None = None) -> int:
    """How many processes of this MPI job share this host's memory: 1 outside MPI.

    Read from the launcher's environment (:data:`LOCAL_RANKS_ENV`, the first that holds a
    positive integer), so it is known before MPI is initialised. Under MPI every rank plans
    the whole run (the data, and at the end every rank's views and ledger rows gathered), so
    each may take its share of the memory only: :func:`memory_limit` and
    :func:`allocation_cap` divide by this.
    """
    environ = os.environ if environ is None else environ
    for name in LOCAL_RANKS_ENV:
        value = environ.get(name, "")
        if value.isdigit() and int(value) >= 1:
            return int(value)
    return 1


def memory_limit(share: int = 1) -> float | None:
    """Bytes a run may fill: :data:`MEMORY_FRACTION` of the available memory, divided among
    ``share`` processes (the ranks on this host); None when the memory cannot be read."""
    free = available_memory()
    return None if free is None else MEMORY_FRACTION * free / max(share, 1)


def allocation_cap(available: float | None = None, current: float | None = None,
                   headroom: float | None = None, share: int = 1) -> int | None:
    """The address space a run may take: what it holds now, its memory share, headroom.

    ``current`` is this process's address space (``/proc/self/statm``), ``available`` the
    memory :func:`check_fits` allows (:data:`MEMORY_FRACTION` of :func:`available_memory`)
    for all the ``share`` processes on this host (MPI ranks: :func:`ranks_sharing_memory`),
    of which this process may fill its ``1/share``; ``headroom`` :data:`VIRTUAL_HEADROOM` by
    default (address space reserved, not filled: each process keeps its own). None when
    either cannot be read.
    """
    headroom = VIRTUAL_HEADROOM if headroom is None else headroom
    if available is None:
        available = memory_limit()
    if current is None:
        current = _address_space()
    if available is None or current is None:
        return None
    return int(current + available / max(share, 1) + headroom)


def cap_allocations(cap: int | None = None, share: int = 1) -> int | None:
    """Limit this process's address space (``RLIMIT_AS``) to ``cap`` (:func:`allocation_cap`
    with ``share``, the processes on this host that divide the memory, by default).

    A run the estimate let through that then grows past what the machine can hold ends with
    ``MemoryError`` in this process — which the command line turns into one ``error:`` line —
    instead of the kernel's OOM killer ending it, or a neighbour, with no message. A limit
    already set (``ulimit -v``, ``prlimit``, an earlier run in the same process) is kept, so
    that repeated runs do not ratchet it down. Returns the limit in force, or None when there
    is none.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        return soft
    cap = allocation_cap(share=share) if cap is None else cap
    if cap is None:
        return None
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    return cap


def _address_space() -> float | None:
    """This process's address space in bytes (Linux ``/proc/self/statm``), or None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[0])
        return float(pages * os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def out_of_memory(cap: int | None, estimate: Estimate | None) -> InputError:
    """The error of a run that hit its allocation cap (``MemoryError``)."""
    limit = f" of {human_bytes(cap)} of address space" if cap else ""
    expected = f" (estimated {estimate.describe()})" if estimate is not None else ""
    return InputError(
        f"the run ran out of the memory it may take{limit}{expected}; nothing was written; "
        "use fewer parties, fewer columns or rows, fewer iterations or trials, or fewer "
        "audited coalitions"
    )


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
            "trials, or fewer audited coalitions (an [[audit]]'s sizes)"
        )
