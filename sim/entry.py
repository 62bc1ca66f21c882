"""What a catalogue entry is: a runnable algorithm, its scenario keys, its input and its output.

Each entry (:class:`Algorithm`) names the paper and algorithm it implements, declares its
scenario keys with defaults and checks (:class:`Param`), and provides ``run``: given the
validated scenario, the parties' data shards and a configured :class:`~sim.simulation.Simulation`
(:class:`RunInput`), it returns an :class:`AlgorithmRun` — the simulation result, the public
outputs, metrics, the protocol its audits examine, and plots.

The entries are declared as data in :mod:`sim.catalog` (name, summary, keys, ranges,
vocabularies), each naming its run code as ``"module:function"`` (:class:`Code`), which is
imported only when it is called: the code lives in :mod:`sim.experiments`, by family. Imports
run one way: ``sim.entry ← sim.catalog ← sim.experiments``.

Scale (:class:`Workload`)
-------------------------
Before a run starts, the runner asks the entry what it will cost: ``estimate`` maps the
scenario's sizes (:class:`EstimateInput`) to a :class:`Workload` — messages and field elements
over the whole run, from the protocols' declared cost formulas, the number of simulations, and
the local arithmetic. :mod:`sim.estimate` turns that into memory and time, shows it, and refuses
a run that cannot fit in memory. An entry without ``estimate`` gets :func:`data_only`, which
counts the data and nothing else (and says so).

This module imports nothing heavy, and neither does the catalogue, so that ``mpcsim list`` and
``--help`` answer at once; the run code imports what it needs at its top.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from protocols.errors import ScenarioError
from sim.checks import Boolean, Choice, Described, Integer, Number

if TYPE_CHECKING:
    import numpy as np

    from parties.audit import Progress
    from sim.privacy import AuditTarget
    from sim.scenario import Scenario
    from sim.simulation import Result, Simulation


@dataclass(frozen=True)
class Code:
    """Run code named ``"module:function"``, imported when it is first called.

    A catalogue entry names its ``run``, ``estimate``, ``attack`` and ``other_roles`` this way
    (:class:`Algorithm` turns such strings into a ``Code``), so that declaring an entry
    imports none of the code that runs it.
    """

    path: str

    def __post_init__(self) -> None:
        module, sep, name = self.path.partition(":")
        if not (sep and module and name.isidentifier()
                and all(part.isidentifier() for part in module.split("."))):
            raise ScenarioError(f"run code {self.path!r} must be 'package.module:function'")

    def load(self) -> Callable[..., Any]:
        """The function, imported now."""
        module, _, name = self.path.partition(":")
        found = getattr(importlib.import_module(module), name, None)
        if not callable(found):
            raise ScenarioError(f"run code {self.path!r}: {module} has no function {name!r}")
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)


CODE_FIELDS = ("run", "estimate", "attack", "other_roles")
"""The :class:`Algorithm` fields that may name their code as ``"module:function"``."""


@dataclass(frozen=True)
class Param:
    """One scenario key of an algorithm: its default, a check that normalises it, what it means.

    ``check(name, value)`` returns the normalised value or raises
    :class:`~protocols.errors.ScenarioError`; checks built by :func:`integer`, :func:`number`
    and :func:`choice` also describe their range (:meth:`allowed`).
    """

    default: Any
    check: Callable[[str, Any], Any]
    help: str = ""

    def allowed(self) -> str:
        """The documented range or choices of the key ("" if the check cannot say)."""
        describe = getattr(self.check, "describe", None)
        return describe() if describe is not None else ""


@dataclass
class RunInput:
    """What an algorithm's ``run`` receives."""

    scenario: Scenario
    params: dict[str, Any]
    data: Any  # the pooled matrix (rows are samples), dense or CSR
    shards: list[Any]  # one row block per data-holding party
    simulation: Simulation
    seed: int
    progress: Progress | None = None
    extras: dict[str, Any] = field(default_factory=dict)  # e.g. ground truth of synthetic data
    attack: dict[str, Any] | None = None  # the [attack] table, checked by Algorithm.attack


@dataclass
class AlgorithmRun:
    """What an algorithm's ``run`` returns."""

    result: Result | None
    outputs: dict[str, np.ndarray]
    metrics: dict[str, Any] = field(default_factory=dict)
    audit_target: AuditTarget | None = None
    # a multi-run experiment's distinct runs, by arm: AuditTarget or sim.audited_runs.RevealingRun
    audit_runs: dict[str, Any] = field(default_factory=dict)
    plots: dict[str, Callable[[], Any]] = field(default_factory=dict)  # name -> figure builder
    tables: list[str] = field(default_factory=list)  # extra text tables for the console
    communication_by_phase: bool = False


@dataclass(frozen=True)
class EstimateInput:
    """What an entry's ``estimate`` receives: the scenario, its checked keys, the data's shape.

    Attributes
    ----------
    scenario : Scenario
    params : dict
        The ``[algorithm]`` keys after :meth:`Algorithm.validate`.
    n_rows, n_cols : int
        The shape of the pooled data (synthetic: from the scenario; a file: as loaded).
    missing : bool
        Whether the data has unobserved entries (NaN): synthetic ratings, or a loaded file
        that holds NaN.
    stored : int, optional
        The stored entries of a scipy.sparse X (a loaded ``.npz`` file); None for dense data.
    """

    scenario: Scenario
    params: dict[str, Any]
    n_rows: int
    n_cols: int
    missing: bool = False
    stored: int | None = None

    @property
    def n_parties(self) -> int:
        return self.scenario.n_parties


@dataclass(frozen=True)
class Workload:
    """What a run will cost, as an entry declares it before the run.

    Attributes
    ----------
    messages : int
        Messages over the whole run (every simulation), from the declared cost formulas. Key
        agreement is added by :mod:`sim.estimate` (M(M − 1) messages per simulation).
    elements : int
        Field elements those messages carry.
    simulations : int
        Simulated runs (e.g. trials × initialisations).
    flops : float
        Local arithmetic outside the protocols (e.g. centralized NMF sweeps), in floating-point
        operations.
    working_bytes : int
        Memory the algorithm holds beyond the data and the messages (models, copies).
    basis : str
        How the figures were derived, for the message a user sees.
    audited_length : int
        Elements each party inputs to the protocol call an ``[[audit]]`` examines (0: the
        data's column count).
    seconds : float
        Time not counted by messages, elements or flops (e.g. loading numba's kernels).
    """

    messages: int = 0
    elements: int = 0
    simulations: int = 1
    flops: float = 0.0
    working_bytes: int = 0
    basis: str = ""
    audited_length: int = 0
    seconds: float = 0.0

    def __add__(self, other: Workload) -> Workload:
        """Two parts of one simulation (or of the same runs): messages, elements, work add up."""
        return Workload(
            self.messages + other.messages, self.elements + other.elements,
            max(self.simulations, other.simulations), self.flops + other.flops,
            self.working_bytes + other.working_bytes,
            "; ".join(b for b in (self.basis, other.basis) if b),
            self.audited_length or other.audited_length, self.seconds + other.seconds,
        )

    def times(self, runs: int) -> Workload:
        """The same workload repeated in ``runs`` simulations."""
        return Workload(runs * self.messages, runs * self.elements, runs * self.simulations,
                        runs * self.flops, self.working_bytes, self.basis, self.audited_length,
                        runs * self.seconds)

    def described(self, basis: str, simulations: int | None = None) -> Workload:
        """This workload with another basis (and number of simulations)."""
        return Workload(self.messages, self.elements,
                        self.simulations if simulations is None else simulations, self.flops,
                        self.working_bytes, basis, self.audited_length, self.seconds)


NUMBA_BYTES = 60_000_000
"""Memory numba and the simulator's field kernels add once loaded (≈ 57 MB measured): the
GF(2^127 − 1) kernels of NormedSecureSum, and SecureSum on vectors of 1,024 elements or more."""
NUMBA_S = 0.4
"""Time to import numba and load those kernels from its disk cache (≈ 0.5 s on an idle
machine)."""


def data_only(inp: EstimateInput) -> Workload:
    """The default estimate: no declared cost, so only the data counts (and the basis says so)."""
    return Workload(simulations=1, basis="no declared cost; data only")


def no_other_roles(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The default roles beyond the data-holding parties: none."""
    return ()


@dataclass(frozen=True)
class Algorithm:
    """A catalogue entry.

    Attributes
    ----------
    name, summary, reference : str
        The scenario's ``[algorithm] name``, one line for ``mpcsim list``, the paper and its
        algorithm number.
    params : mapping of str to Param
        The ``[algorithm]`` keys.
    run : callable or str
        ``run(RunInput) -> AlgorithmRun``; a ``"module:function"`` string (here and for
        ``estimate``, ``attack`` and ``other_roles``) is imported when called (:class:`Code`).
    estimate : callable
        ``estimate(EstimateInput) -> Workload``, from the declared cost formulas of the
        protocols the entry runs; :func:`data_only` by default.
    data_kind : str
        The synthetic kind used when a scenario asks for synthetic data without a kind.
    nonnegative, allow_missing : bool
        Data checks at load time: negative values refused; NaN accepted as "unobserved".
    min_parties : int
        The smallest ``network.parties`` the entry runs with (2 for a secure computation).
    attack : callable, optional
        ``attack(table, n_parties)`` checks the scenario's ``[attack]`` table (the entry's
        attack model); None: the entry has none and ``[attack]`` is refused.
    other_roles : callable
        ``other_roles(params) -> tuple of role names``: the participants a run of these
        checked ``[algorithm]`` keys has beyond its ``network.parties`` data holders, in its
        largest simulation (CAPE's aggregator and noise generator, NormedSecureSum's dealer,
        SecAgg's aggregator, ...); none by default. ``--ranks`` is bounded by
        :meth:`participants` (an MPI rank beyond them would host nobody).
    """

    name: str
    summary: str
    reference: str
    params: Mapping[str, Param]
    run: Callable[[RunInput], AlgorithmRun] | str
    estimate: Callable[[EstimateInput], Workload] | str = data_only
    data_kind: str = "uniform"
    nonnegative: bool = False
    allow_missing: bool = False
    min_parties: int = 2
    attack: Callable[[Mapping[str, Any], int], dict[str, Any]] | str | None = None
    other_roles: Callable[[Mapping[str, Any]], tuple[str, ...]] | str = no_other_roles

    def __post_init__(self) -> None:
        for name in CODE_FIELDS:
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Code(value))

    def participants(self, params: Mapping[str, Any], n_parties: int) -> int:
        """The most participants any simulation of a run has: the data holders and
        :attr:`other_roles` (``params``: the checked ``[algorithm]`` keys)."""
        return n_parties + len(self.other_roles(params))

    def validate(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Check the ``[algorithm]`` table's keys; fill in defaults."""
        extra = sorted(set(given) - set(self.params) - {"name"})
        if extra:
            raise ScenarioError(
                f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} in "
                f"[algorithm] for {self.name!r}; allowed: "
                f"{', '.join(sorted(self.params)) or '(none)'}"
            )
        out = {}
        for key, param in self.params.items():
            value = given.get(key, param.default)
            out[key] = param.check(f"algorithm.{key}", value)
        return out


# -- reusable checks ---------------------------------------------------------------------------

MAX_RANK = 10_000
"""Largest rank, number of topics or components any entry accepts (k)."""
MAX_ITERATIONS = 100_000
"""Largest iteration, sweep or step count any entry accepts."""
MAX_TRIALS = 100_000
"""Largest number of independent trials any entry accepts."""
MAX_WEIGHT = 1e6
"""Largest penalty weight, bound or step size any entry accepts."""


def choice(*options: str) -> Choice:
    """A check that the value is one of ``options``."""
    return Choice(tuple(options))


def integer(low: int | None = None, high: int | None = None) -> Integer:
    """A check that the value is an integer in [low, high]."""
    return Integer(low, high)


def number(low: float | None = None, high: float | None = None, *, strict_low: bool = False,
           strict_high: bool = False) -> Number:
    """A check that the value is a finite number in [low, high] (strict: bound excluded)."""
    return Number(low, high, strict_low, strict_high)


def described(check: Callable[[str, Any], Any], allowed: str) -> Described:
    """``check`` with its allowed values written out (for checks of more than one range)."""
    return Described(check, allowed)


def optional(check: Integer | Number, absent: str) -> Described:
    """``check``, or the key left out (``None``); ``absent`` says what leaving it out means."""

    def run(name: str, value: Any) -> Any:
        return None if value is None else check(name, value)

    return Described(run, f"{check.describe()}; left out: {absent}")


def auto_or(check: Integer | Number, meaning: str) -> Described:
    """``"auto"`` (``meaning`` says what it picks) or a value that passes ``check``."""

    def run(name: str, value: Any) -> Any:
        if isinstance(value, str) and value == "auto":
            return value
        if isinstance(value, str):
            raise ScenarioError(f'{name} = {value!r} must be "auto" or a number')
        return check(name, value)

    return Described(run, f'"auto" ({meaning}) | {check.describe()}')


def boolean() -> Boolean:
    """A check that the value is true or false (TOML booleans only)."""
    return Boolean()
