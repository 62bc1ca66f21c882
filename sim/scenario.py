"""Scenarios: the TOML files (or equivalent dicts) that describe a run, validated on entry.

Layout (README "Scenario format" has the full reference)::

    name = "quickstart"          # default: the file's stem
    seed = 7                     # default: fresh entropy, recorded in the report
    record_views = true          # false: views keep no received messages; no views/ written
    write_views = false          # true: --out gets views/ (one file per party, sim.view_store)
    [network]  parties (required), topology, latency_ms, bandwidth_mbps, sealing, [[links]]
    [field]    prime, frac_bits
    [data]     source = "synthetic" (rows, cols, kind, ...) | "file" (path) | "ratings" (path)
               | "digits", partition
    [algorithm] name (required) and the algorithm's own keys
    [attack]   the algorithm's attack model, if it has one (checked by its catalogue entry)
    [[audit]]  coalition, method, trials, ...
    [[attack]] name, coalition: attacks on coalitions' views (:mod:`parties.attacks`)
    [[fault]]  kind, party | link, at_s | call/step/when, duration_s, extra_ms (:mod:`sim.faults`)

Paths are relative to the scenario file. This module is the validation layer of the scenario
boundary: every table rejects unknown keys and every value is checked here, against the range
documented in :data:`RANGES` (and in the README), before anything runs; a mistake raises
:class:`~protocols.errors.ScenarioError` with one line naming the key, the value (abbreviated
when long) and what is allowed. The algorithm's own keys are validated by its catalogue entry
(:mod:`sim.entry`, :mod:`sim.catalog`); the data's contents when they are loaded
(:mod:`sim.runner`); whether the run fits in memory by :mod:`sim.estimate`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocols.errors import InputError, ScenarioError
from protocols.field import FRAC_BITS, FixedPoint, parse_prime, prime_field
from sim.checks import (
    MAX_PARTIES,
    check_choice,
    check_int,
    check_keys,
    check_number,
    check_ranged,
    read_scenario_file,
    shown,
)
from sim.faults import FaultPlan, parse_faults
from sim.network import BANDWIDTH_MBPS_RANGE, LATENCY_MS_RANGE, TOPOLOGIES, Network
from sim.scenario_data import DATA_OPEN_BELOW, DATA_RANGES, validate_data

__all__ = [
    "RANGES",
    "AuditSpec",
    "Scenario",
    "check_choice",
    "check_int",
    "check_number",
    "load_scenario",
]

TOP_KEYS = {
    "name", "seed", "description", "network", "field", "data", "algorithm", "attack", "audit",
    "fault", "record_views", "write_views",
}
NETWORK_KEYS = {"parties", "topology", "latency_ms", "bandwidth_mbps", "sealing", "links"}
LINK_KEYS = {"a", "b", "latency_ms", "bandwidth_mbps"}
FIELD_KEYS = {"prime", "frac_bits"}
AUDIT_KEYS = {"coalition", "method", "trials", "alpha", "prime", "max_runs", "calls", "pairs",
              "coalitions", "sizes", "probes", "run"}
AUDIT_METHODS = ("simulation", "statistical", "exact", "linear")
ATTACK_KEYS = {"name", "coalition"}
"""``ratings``: a ``user,item,rating`` CSV or MovieLens ``ratings.dat`` at ``path``."""

MAX_SEED = 2**63 - 1
MAX_PRIME_BITS = 128
MAX_PRIME_DIGITS = 39  # 2^128 has 39 digits
MAX_AUDIT_TRIALS = 1_000_000
MAX_AUDIT_RUNS = 1_000_000_000

RANGES: dict[str, tuple[float | None, float | None]] = {
    "seed": (0, MAX_SEED),
    "network.parties": (1, MAX_PARTIES),  # each algorithm's minimum: Algorithm.min_parties
    "network.latency_ms": LATENCY_MS_RANGE,
    "network.bandwidth_mbps": BANDWIDTH_MBPS_RANGE,
    **DATA_RANGES,
}
"""The documented range of every numeric scenario key outside [[audit]] (bounds included
unless noted). ``field.prime``: a prime 2 < p < 2^128; ``field.frac_bits``: 0 ≤ f ≤ bits(p) − 2
(and small enough for the data, checked at encoding). Whether a run of that size fits in memory
is :mod:`sim.estimate`'s question."""


@dataclass(frozen=True)
class AuditSpec:
    """One ``[[audit]]``: who colludes, how the audit runs (README, scenario format)."""

    coalition: tuple[int, ...]
    method: str = "simulation"
    trials: int = 200
    alpha: float = 1e-3
    prime: int = 5
    max_runs: int = 100_000
    calls: tuple[int, ...] | None = None  # call numbers to compare; None = all
    pairs: int = 6  # A/B input pairs of the statistical method
    probes: int = 3  # random probes confirming affinity (linear method)
    coalitions: tuple[tuple[int, ...], ...] | str | None = None  # a study: "all" or a list
    sizes: tuple[int, ...] | None = None  # a study of every coalition of these sizes
    run: str | None = None  # one run of a multi-run experiment (sim.audited_runs); None = all

    @property
    def study(self) -> bool:
        """Whether this audit covers many coalitions (``coalitions`` or ``sizes``)."""
        return self.coalitions is not None or self.sizes is not None


@dataclass(frozen=True)
class AttackSpec:
    """One ``[[attack]]``: an attack of :mod:`parties.attacks` run on a coalition's views."""

    name: str
    coalition: tuple[int, ...]


@dataclass(frozen=True)
class Scenario:
    """A validated scenario."""

    name: str
    seed: int | None
    n_parties: int
    topology: str
    latency_ms: float
    bandwidth_mbps: float
    sealing: bool
    links: tuple[dict[str, Any], ...] | None
    prime: int
    frac_bits: int
    data: dict[str, Any]
    algorithm: dict[str, Any]
    audits: tuple[AuditSpec, ...]
    base_dir: Path
    description: str = ""
    source: dict[str, Any] = field(default_factory=dict)
    attack: dict[str, Any] = field(default_factory=dict)
    attacks: tuple[AttackSpec, ...] = ()
    faults: FaultPlan = field(default_factory=FaultPlan)
    record_views: bool = True
    write_views: bool = False

    @property
    def algorithm_name(self) -> str:
        return str(self.algorithm.get("name", self.algorithm.get("program")))

    def with_seed(self, seed: int | None) -> Scenario:
        if seed is None:
            return self
        _ranged("seed", seed)
        return Scenario(**{**self.__dict__, "seed": seed})


def load_scenario(source: str | Path | Mapping[str, Any], base_dir: Path | None = None) -> Scenario:
    """Read and validate a scenario from a TOML file path or a dict.

    Raises
    ------
    ScenarioError
        One line naming the key, the value and what is allowed; also when ``source`` is neither
        a path nor a mapping.
    """
    if isinstance(source, Mapping):
        raw = dict(source)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        default_name = "scenario"
    elif isinstance(source, str | Path):
        path = Path(source)
        raw = read_scenario_file(path)
        base = path.resolve().parent
        default_name = path.stem
    else:
        raise ScenarioError(
            f"a scenario is a TOML file path or a dict of the same shape, got "
            f"{type(source).__name__} {shown(source)}"
        )
    return _validate(raw, base, default_name)


def _table(raw: Mapping[str, Any], key: str, required: bool = False) -> dict[str, Any]:
    value = raw.get(key)
    if value is None:
        if required:
            raise ScenarioError(f"the scenario has no [{key}] table; it is required")
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(f"'{key}' must be a table ([{key}]), got {type(value).__name__}")
    return value


def _ranged(name: str, value: Any) -> Any:
    """Check ``value`` against ``RANGES[name]`` (integers for integral bounds)."""
    return check_ranged(name, value, RANGES, DATA_OPEN_BELOW)


def check_prime(name: str, value: Any) -> int:
    """A field prime 2 < p < 2^128 given as an integer or ``"2^a-b"``, or a ScenarioError.

    Long values are refused before any conversion, so that a prime with thousands of digits
    ends in this message rather than in Python's integer-conversion limit.
    """
    allowed = (f"allowed: a prime 2 < p < 2^{MAX_PRIME_BITS} (at most {MAX_PRIME_DIGITS} "
               "digits), as an integer or \"2^a-b\"; 2^61-1 is the fast path")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ScenarioError(f"{name} = {shown(value)} must be an integer or a string; {allowed}")
    if isinstance(value, str):
        text = value.replace(" ", "").replace("**", "^")
        power = re.fullmatch(r"2\^(\d+)([+-]\d+)?", text)
        if (power and (len(power.group(1)) > 4 or int(power.group(1)) > MAX_PRIME_BITS
                       or len(power.group(2) or "") > MAX_PRIME_DIGITS + 1)) or (
                not power and len(text) > MAX_PRIME_DIGITS):
            raise ScenarioError(f"{name} = {shown(value)} is out of range; {allowed}")
    elif value.bit_length() > MAX_PRIME_BITS:
        raise ScenarioError(f"{name} = {shown(value)} is out of range; {allowed}")
    try:
        prime = parse_prime(value)
    except InputError as exc:
        raise ScenarioError(f"{name}: {exc}; {allowed}") from exc
    if not 2 < prime < (1 << MAX_PRIME_BITS):
        raise ScenarioError(f"{name} = {shown(value)} is out of range; {allowed}")
    return prime


def _validate(raw: dict[str, Any], base: Path, default_name: str) -> Scenario:
    check_keys("", raw, TOP_KEYS)
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise ScenarioError(f"name = {shown(name)} must be a non-empty string")
    seed = raw.get("seed")
    if seed is not None:
        _ranged("seed", seed)
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise ScenarioError(f"description = {shown(description)} must be a string")

    net = _validate_network(_table(raw, "network", required=True))
    n_parties = net["parties"]
    prime, frac_bits = _validate_field(_table(raw, "field"))
    alg = _table(raw, "algorithm", required=True)
    if "name" not in alg and "program" not in alg:
        raise ScenarioError("[algorithm] needs 'name' (`mpcsim list` shows the algorithms) or "
                            "'program' (\"package.module:function\", your own program)")
    data = _data_table(raw, alg, base, n_parties)

    audits_raw = raw.get("audit", [])
    if isinstance(audits_raw, dict):
        audits_raw = [audits_raw]
    if not isinstance(audits_raw, list):
        raise ScenarioError("'audit' must be an array of tables [[audit]]")
    audits = tuple(_validate_audit(i, a, n_parties) for i, a in enumerate(audits_raw))
    # [attack] (one table) is the algorithm's attack model; [[attack]] (an array of tables)
    # lists attacks on coalitions' views
    attack: dict[str, Any] = {}
    attacks: tuple[AttackSpec, ...] = ()
    if isinstance(raw.get("attack"), list):
        attacks = _validate_attacks(raw["attack"], n_parties)
    else:
        attack = _table(raw, "attack")
        if "coalition" in attack or "name" in attack:
            raise ScenarioError(
                "[attack] is the algorithm's attack model (e.g. model = \"profile_injection\"); "
                "an attack on a coalition's views is written [[attack]] (double brackets) with "
                "name and coalition"
            )

    faults = parse_faults(raw.get("fault"))
    record_views, write_views = _view_keys(raw, attacks)
    return Scenario(
        name=name, seed=seed, n_parties=n_parties, topology=net["topology"],
        latency_ms=net["latency_ms"], bandwidth_mbps=net["bandwidth_mbps"],
        sealing=net["sealing"], links=net["links"], prime=prime, frac_bits=frac_bits, data=data,
        algorithm=dict(alg), audits=audits, base_dir=base, description=description, source=raw,
        attack=dict(attack), attacks=attacks, faults=faults, record_views=record_views,
        write_views=write_views,
    )


def _view_keys(raw: Mapping[str, Any], attacks: Sequence[AttackSpec]) -> tuple[bool, bool]:
    """``record_views`` and ``write_views`` (issue 32): whether the views keep the received
    messages, and whether ``--out`` gets them (:mod:`sim.view_store`)."""
    record, write = raw.get("record_views", True), raw.get("write_views", False)
    for key, value in (("record_views", record), ("write_views", write)):
        if not isinstance(value, bool):
            raise ScenarioError(f"{key} = {shown(value)} must be true or false")
    if not record and write:
        raise ScenarioError("write_views = true needs the views recorded; remove "
                            "record_views = false")
    if not record and attacks:
        raise ScenarioError("[[attack]] reads the coalition's received messages; remove "
                            "record_views = false")
    return record, write


def _validate_network(net: dict[str, Any]) -> dict[str, Any]:
    check_keys("network", net, NETWORK_KEYS)
    if "parties" not in net:
        raise ScenarioError("[network] needs 'parties', the number of data-holding parties")
    n_parties = _ranged("network.parties", net["parties"])
    topology = check_choice("network.topology", net.get("topology", "complete"), TOPOLOGIES)
    latency = _ranged("network.latency_ms", net.get("latency_ms", 10.0))
    bandwidth = _ranged("network.bandwidth_mbps", net.get("bandwidth_mbps", 100.0))
    sealing = net.get("sealing", True)
    if not isinstance(sealing, bool):
        raise ScenarioError(f"network.sealing = {shown(sealing)} must be true or false")
    links = net.get("links")
    if links is not None:
        if not isinstance(links, list) or not all(isinstance(x, dict) for x in links):
            raise ScenarioError("network.links must be an array of tables [[network.links]]")
        if "topology" in net:
            raise ScenarioError(
                "network.topology and [[network.links]] both describe the links; keep one"
            )
        for i, link in enumerate(links):
            check_keys(f"network.links[{i}]", link, LINK_KEYS)
            for end in ("a", "b"):
                if end not in link:
                    raise ScenarioError(f"network.links[{i}] needs '{end}', a party id")
                check_int(f"network.links[{i}].{end}", link[end], 0, n_parties - 1)
        try:
            Network.build(n_parties, topology, latency, bandwidth, links)
        except ScenarioError:
            raise
        except InputError as exc:
            raise ScenarioError(str(exc)) from exc
        links = tuple(dict(x) for x in links)
    return {"parties": n_parties, "topology": topology, "latency_ms": latency,
            "bandwidth_mbps": bandwidth, "sealing": sealing, "links": links}


def _validate_field(fld: dict[str, Any]) -> tuple[int, int]:
    check_keys("field", fld, FIELD_KEYS)
    prime = check_prime("field.prime", fld.get("prime", "2^61-1"))
    frac_bits = check_int("field.frac_bits", fld.get("frac_bits", FRAC_BITS), 0,
                          prime.bit_length() - 2)
    try:
        FixedPoint(prime_field(prime), frac_bits)
    except InputError as exc:
        raise ScenarioError(f"field.frac_bits: {exc}") from exc
    return prime, frac_bits


NO_DATA: dict[str, Any] = {"source": "none", "partition": "equal"}
"""The ``data`` of a scenario without ``[data]``: a user's program that takes only named
inputs (``[algorithm.inputs]``) reads no rows; each party gets an empty shard."""


def _data_table(raw: Mapping[str, Any], alg: Mapping[str, Any], base: Path,
                n_parties: int) -> dict[str, Any]:
    """``[data]`` checked, or :data:`NO_DATA` for a user's program on named inputs only.

    ``[data]`` is required unless ``[algorithm]`` names a ``program`` together with its
    ``inputs`` table: a built-in entry, and a program called as ``function(ctx, X)``, read
    their rows from it.
    """
    if raw.get("data") is None and "program" in alg:
        if alg.get("inputs") is not None:
            return dict(NO_DATA)
        raise ScenarioError(
            "the scenario has no [data] table: algorithm.program is called as function(ctx, X) "
            "on each party's rows of [data]; add a [data] table, or give the program named "
            "inputs in an [algorithm.inputs] table (one value per party for each name)")
    return validate_data(_table(raw, "data", required=True), base, n_parties)


def _validate_audit(i: int, audit: Any, n_parties: int) -> AuditSpec:
    where = f"audit[{i}]"
    if not isinstance(audit, dict):
        raise ScenarioError(f"{where} must be a table [[audit]]")
    check_keys("audit", audit, AUDIT_KEYS)
    given = [k for k in ("coalition", "coalitions", "sizes") if k in audit]
    if len(given) != 1:
        raise ScenarioError(
            f"{where} must have exactly one of coalition = [ids], coalitions = \"all\" or "
            f"[[ids], ...], sizes = [t, ...] (it has {', '.join(given) or 'none'})")
    coalition: tuple[int, ...] = ()
    coalitions: tuple[tuple[int, ...], ...] | str | None = None
    sizes: tuple[int, ...] | None = None
    if "coalition" in audit:
        coalition = _coalition(f"{where}.coalition", audit["coalition"], n_parties, roles=True)
    elif "sizes" in audit:
        value = audit["sizes"]
        if (not isinstance(value, list) or not value or not all(
                isinstance(t, int) and not isinstance(t, bool) and t >= 1 for t in value)
                or len(set(value)) != len(value)):
            raise ScenarioError(f"{where}.sizes = {value!r} must be a list of distinct coalition "
                                "sizes ≥ 1 (at most the number of participants − 1)")
        sizes = tuple(sorted(value))
    elif audit["coalitions"] == "all":
        coalitions = "all"
    elif isinstance(audit["coalitions"], list) and audit["coalitions"]:
        coalitions = tuple(_coalition(f"{where}.coalitions[{j}]", c, n_parties, roles=True)
                           for j, c in enumerate(audit["coalitions"]))
    else:
        raise ScenarioError(f"{where}.coalitions = {audit['coalitions']!r} must be \"all\" or "
                            "a non-empty list of coalitions, e.g. [[0], [0, 1]]")
    method = check_choice(f"{where}.method", audit.get("method", "simulation"), AUDIT_METHODS)
    trials = check_int(f"{where}.trials", audit.get("trials", 200), 10, MAX_AUDIT_TRIALS)
    alpha = check_number(f"{where}.alpha", audit.get("alpha", 1e-3), 0.0, True, 1.0, True)
    prime = check_prime(f"{where}.prime", audit.get("prime", 5))
    max_runs = check_int(f"{where}.max_runs", audit.get("max_runs", 100_000), 2, MAX_AUDIT_RUNS)
    pairs = check_int(f"{where}.pairs", audit.get("pairs", 6), low=1, high=64)
    calls = _audit_calls(where, audit.get("calls", "all"))
    probes = check_int(f"{where}.probes", audit.get("probes", 3), low=1, high=100)
    run = audit.get("run")
    if run is not None and (not isinstance(run, str) or not run):
        raise ScenarioError(f"{where}.run = {run!r} must name one run of the experiment "
                            "(an arm, e.g. \"pd_nmf_init\")")
    return AuditSpec(coalition, method, trials, alpha, prime, max_runs, calls, pairs, probes,
                     coalitions, sizes, run)


def _coalition(where: str, coalition: Any, n_parties: int,
               roles: bool = False) -> tuple[int, ...]:
    """A list of distinct party ids, not every data-holding party.

    Data holders are 0..M−1. With ``roles`` (an ``[[audit]]``), ids from M on name the run's
    other participants (an aggregator, a noise generator, a dealer: party M, M + 1, ...), which
    :func:`check_role_ids` checks once the algorithm's entry is known.
    """
    if not isinstance(coalition, list) or not coalition or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in coalition
    ):
        raise ScenarioError(f"{where} = {coalition!r} must be a list of party ids")
    missing = sorted({c for c in coalition if c < 0 or (not roles and c >= n_parties)})
    if missing:
        raise ScenarioError(
            f"{where} names part{'ies' if len(missing) > 1 else 'y'} {missing}, "
            f"but the parties are 0..{n_parties - 1}"
        )
    if len(set(coalition)) != len(coalition):
        raise ScenarioError(f"{where} = {coalition} repeats a party")
    if len({c for c in coalition if c < n_parties}) >= n_parties:
        raise ScenarioError(
            f"{where} has all {n_parties}{' data-holding' if roles else ''} parties; "
            f"t-privacy concerns coalitions of at most M − 1 = {n_parties - 1}"
        )
    return tuple(sorted(coalition))


def check_role_ids(audits: Sequence[AuditSpec], n_parties: int,
                   roles: Sequence[str]) -> None:
    """Every ``[[audit]]`` coalition's ids name a participant of the run.

    Parameters
    ----------
    audits : sequence of AuditSpec
    n_parties : int
        The data-holding parties 0..M−1.
    roles : sequence of str
        The run's other participants in id order from M (the entry's ``other_roles``).

    Raises
    ------
    ScenarioError
        Naming the audit, the id and who the participants are.
    """
    total = n_parties + len(roles)
    named = ", ".join(f"{role} {n_parties + i}" for i, role in enumerate(roles))
    who = f"0..{n_parties - 1} hold data" + (f"; {named}" if named else "")
    for i, spec in enumerate(audits):
        listed = [("coalition", spec.coalition)] if spec.coalition else []
        if isinstance(spec.coalitions, tuple):
            listed += [(f"coalitions[{j}]", c) for j, c in enumerate(spec.coalitions)]
        for key, coalition in listed:
            beyond = sorted(c for c in coalition if c >= total)
            if beyond:
                raise ScenarioError(
                    f"audit[{i}].{key} names part{'ies' if len(beyond) > 1 else 'y'} {beyond}, "
                    f"but the run's participants are 0..{total - 1} ({who})")


def _check_coalition(where: str, coalition: Any, n_parties: int) -> tuple[int, ...]:
    """1 to M − 1 distinct data holders, sorted; t-privacy and attacks concern the others."""
    return _coalition(f"{where}.coalition", coalition, n_parties)


def _validate_attacks(tables: list[Any], n_parties: int) -> tuple[AttackSpec, ...]:
    """The ``[[attack]]`` tables: a known attack and a coalition of 1..M − 1 existing parties."""
    from parties.attacks import ATTACKS

    specs = []
    for i, attack in enumerate(tables):
        where = f"attack[{i}]"
        if not isinstance(attack, dict):
            raise ScenarioError(f"{where} must be a table [[attack]]")
        check_keys("attack", attack, ATTACK_KEYS)
        name = check_choice(f"{where}.name", attack.get("name"), tuple(sorted(ATTACKS)))
        specs.append(AttackSpec(name, _check_coalition(where, attack.get("coalition"),
                                                       n_parties)))
    return tuple(specs)


def _audit_calls(where: str, value: Any) -> tuple[int, ...] | None:
    """``calls = "all"`` or a list of distinct call numbers ≥ 0."""
    if value == "all":
        return None
    if (not isinstance(value, list) or not value
            or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in value)):
        raise ScenarioError(
            f"{where}.calls = {value!r} must be \"all\" or a non-empty list of call numbers "
            "≥ 0 (the parties' call counter: 0 for the first protocol call of the run)"
        )
    if len(set(value)) != len(value):
        raise ScenarioError(f"{where}.calls = {value} repeats a call number")
    return tuple(sorted(value))
