"""Scenarios: the TOML files (or equivalent dicts) that describe a run, validated on entry.

Layout (README "Scenario format" has the full reference)::

    name = "quickstart"          # default: the file's stem
    seed = 7                     # default: fresh entropy, recorded in the report
    [network]  parties (required), topology, latency_ms, bandwidth_mbps, sealing, [[links]]
    [field]    prime, frac_bits
    [data]     source = "synthetic" (rows, cols, kind, ...) | "file" (path) | "ratings" (path)
               | "digits", partition
    [algorithm] name (required) and the algorithm's own keys
    [attack]   the algorithm's attack model, if it has one (checked by its catalogue entry)
    [[audit]]  coalition, method, trials, ...
    [[attack]] name, coalition: attacks on coalitions' views (:mod:`parties.attacks`)
    [[fault]]  kind, party | link, at_s | call/step/when, duration_s, extra_ms (:mod:`sim.faults`)

Paths are relative to the scenario file. Every table rejects unknown keys and every value is
checked here, where input enters; a mistake raises :class:`~protocols.errors.ScenarioError`
with one line naming the key, the value and what is allowed. The algorithm's own keys are
validated by its catalogue entry (:mod:`sim.entry`, :mod:`sim.catalog`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocols.errors import InputError, ScenarioError
from protocols.field import FixedPoint, parse_prime, prime_field
from sim.faults import FaultPlan, parse_faults
from sim.network import TOPOLOGIES

TOP_KEYS = {
    "name", "seed", "description", "network", "field", "data", "algorithm", "attack", "audit",
    "fault",
}
NETWORK_KEYS = {"parties", "topology", "latency_ms", "bandwidth_mbps", "sealing", "links"}
FIELD_KEYS = {"prime", "frac_bits"}
DATA_KEYS = {
    "source", "path", "rows", "cols", "kind", "partition", "k", "density", "noise",
    "doc_length", "alpha", "beta", "format", "vocab",
}
AUDIT_KEYS = {"coalition", "method", "trials", "alpha", "prime", "max_runs", "calls", "pairs",
              "coalitions", "sizes", "probes"}
AUDIT_METHODS = ("simulation", "statistical", "exact", "linear")
ATTACK_KEYS = {"name", "coalition"}
DATA_SOURCES = ("synthetic", "file", "digits", "ratings")
"""``ratings``: a ``user,item,rating`` CSV or MovieLens ``ratings.dat`` at ``path``."""
SYNTHETIC_KINDS = ("uniform", "topics", "ratings", "movielens", "spiked", "mog", "stm")


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

    @property
    def algorithm_name(self) -> str:
        return str(self.algorithm["name"])

    def with_seed(self, seed: int | None) -> Scenario:
        if seed is None:
            return self
        check_int("seed", seed, low=0)
        return Scenario(**{**self.__dict__, "seed": seed})


def load_scenario(source: str | Path | Mapping[str, Any], base_dir: Path | None = None) -> Scenario:
    """Read and validate a scenario from a TOML file path or a dict."""
    if isinstance(source, Mapping):
        raw = dict(source)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        default_name = "scenario"
    else:
        path = Path(source)
        if not path.is_file():
            raise ScenarioError(f"scenario file {str(path)!r} does not exist")
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"scenario file {str(path)!r} is not valid TOML: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise ScenarioError(f"scenario file {str(path)!r} is not UTF-8 text") from exc
        base = path.resolve().parent
        default_name = path.stem
    return _validate(raw, base, default_name)


def _unknown(table: str, given: Mapping[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(given) - allowed)
    if extra:
        where = f"[{table}]" if table else "the top level"
        raise ScenarioError(
            f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} in "
            f"{where}; allowed: {', '.join(sorted(allowed))}"
        )


def _table(raw: Mapping[str, Any], key: str, required: bool = False) -> dict[str, Any]:
    value = raw.get(key)
    if value is None:
        if required:
            raise ScenarioError(f"the scenario has no [{key}] table; it is required")
        return {}
    if not isinstance(value, dict):
        raise ScenarioError(f"'{key}' must be a table ([{key}]), got {type(value).__name__}")
    return value


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an integer in [low, high], or a ScenarioError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{name} = {value!r} must be an integer")
    if low is not None and value < low:
        raise ScenarioError(f"{name} = {value} must be ≥ {low}")
    if high is not None and value > high:
        raise ScenarioError(f"{name} = {value} must be ≤ {high}")
    return value


def check_number(name: str, value: Any, low: float | None = None, strict: bool = False) -> float:
    """``value`` as a finite float ≥ low (> low when ``strict``), or a ScenarioError."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(f"{name} = {value!r} must be a number")
    v = float(value)
    if v != v or v in (float("inf"), float("-inf")):
        raise ScenarioError(f"{name} = {value!r} must be finite")
    if low is not None and (v <= low if strict else v < low):
        raise ScenarioError(f"{name} = {value} must be {'>' if strict else '≥'} {low}")
    return v


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, or a ScenarioError listing them."""
    if value not in choices:
        raise ScenarioError(f"{name} = {value!r} is unknown; use one of {', '.join(choices)}")
    return str(value)


def _validate(raw: dict[str, Any], base: Path, default_name: str) -> Scenario:
    _unknown("", raw, TOP_KEYS)
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"name = {name!r} must be a non-empty string")
    seed = raw.get("seed")
    if seed is not None:
        check_int("seed", seed, low=0)

    net = _table(raw, "network", required=True)
    _unknown("network", net, NETWORK_KEYS)
    if "parties" not in net:
        raise ScenarioError("[network] needs 'parties', the number of data-holding parties")
    n_parties = check_int("network.parties", net["parties"], low=1)  # each algorithm's own
    # minimum (M ≥ 2 for a secure computation) is checked by the runner: Algorithm.min_parties
    topology = check_choice("network.topology", net.get("topology", "complete"), TOPOLOGIES)
    latency = check_number("network.latency_ms", net.get("latency_ms", 10.0), low=0.0)
    bandwidth = check_number("network.bandwidth_mbps", net.get("bandwidth_mbps", 100.0), 0.0, True)
    sealing = net.get("sealing", True)
    if not isinstance(sealing, bool):
        raise ScenarioError(f"network.sealing = {sealing!r} must be true or false")
    links = net.get("links")
    if links is not None:
        if not isinstance(links, list) or not all(isinstance(x, dict) for x in links):
            raise ScenarioError("network.links must be an array of tables [[network.links]]")
        from sim.network import Network

        try:
            Network.build(n_parties, topology, latency, bandwidth, links)
        except InputError as exc:
            raise ScenarioError(str(exc)) from exc
        links = tuple(dict(x) for x in links)

    fld = _table(raw, "field")
    _unknown("field", fld, FIELD_KEYS)
    try:
        prime = parse_prime(fld.get("prime", "2^61-1"))
    except InputError as exc:
        raise ScenarioError(f"field.prime: {exc}") from exc
    frac_bits = check_int("field.frac_bits", fld.get("frac_bits", 24), low=0)
    try:
        FixedPoint(prime_field(prime), frac_bits)
    except InputError as exc:
        raise ScenarioError(f"field.frac_bits: {exc}") from exc

    data = _validate_data(_table(raw, "data", required=True), base, n_parties)

    alg = _table(raw, "algorithm", required=True)
    if "name" not in alg:
        raise ScenarioError("[algorithm] needs 'name'; `mpcsim list` shows the algorithms")

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
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise ScenarioError("description must be a string")
    return Scenario(
        name=name, seed=seed, n_parties=n_parties, topology=topology, latency_ms=latency,
        bandwidth_mbps=bandwidth, sealing=sealing, links=links, prime=prime,
        frac_bits=frac_bits, data=data, algorithm=dict(alg), audits=audits, base_dir=base,
        description=description, source=raw, attack=dict(attack), attacks=attacks,
        faults=faults,
    )


def _validate_data(data: dict[str, Any], base: Path, n_parties: int) -> dict[str, Any]:
    _unknown("data", data, DATA_KEYS)
    source = check_choice("data.source", data.get("source", "synthetic"), DATA_SOURCES)
    out = dict(data)
    out["source"] = source
    if source == "ratings":
        _validate_ratings_source(data, base, out)
    elif source == "synthetic":
        for key in ("rows", "cols"):
            if key not in data:
                raise ScenarioError(f"[data] source = 'synthetic' needs '{key}'")
            out[key] = check_int(f"data.{key}", data[key], low=1)
        if "kind" in data:  # otherwise the algorithm's own kind of synthetic data
            out["kind"] = check_choice("data.kind", data["kind"], SYNTHETIC_KINDS)
        if "path" in data:
            raise ScenarioError("data.path is only used with source = 'file'")
    elif source == "digits":  # scikit-learn's bundled digits: nothing to configure
        extra = sorted(set(data) - {"source", "partition"})
        if extra:
            raise ScenarioError(
                f"data.{extra[0]} is not used with source = 'digits' (a fixed 1,797 × 64 data "
                "set); only 'partition' may be given"
            )
    else:
        if "path" not in data:
            raise ScenarioError("[data] source = 'file' needs 'path'")
        synthetic_only = sorted(
            set(data) & {"rows", "cols", "kind", "k", "density", "noise", "doc_length", "alpha",
                         "beta"}
        )
        if synthetic_only:
            raise ScenarioError(
                f"data.{synthetic_only[0]} is only used with source = 'synthetic'; the file "
                "gives the data's shape"
            )
        path = data["path"]
        if not isinstance(path, str) or not path:
            raise ScenarioError(f"data.path = {path!r} must be a file path")
        resolved = (base / path).resolve()
        if not resolved.is_file():
            raise ScenarioError(f"data.path = {path!r}: no such file {str(resolved)!r}")
        out["path"] = resolved
        if "vocab" in data:
            out["vocab"] = (base / str(data["vocab"])).resolve()
    partition = data.get("partition", "equal")
    if partition != "equal":
        if not isinstance(partition, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) for c in partition
        ):
            raise ScenarioError(
                f"data.partition = {partition!r} must be 'equal' or a list of row counts"
            )
        if len(partition) != n_parties:
            raise ScenarioError(
                f"data.partition has {len(partition)} counts but network.parties = {n_parties}"
            )
        if any(c < 1 for c in partition):
            raise ScenarioError(f"data.partition = {partition}: every party needs ≥ 1 row")
        if source == "synthetic" and sum(partition) != out["rows"]:
            raise ScenarioError(
                f"data.partition sums to {sum(partition)} rows but data.rows = {out['rows']}"
            )
    out["partition"] = partition
    return out


def _validate_ratings_source(data: dict[str, Any], base: Path, out: dict[str, Any]) -> None:
    """``source = "ratings"``: a ``user,item,rating`` CSV or MovieLens ``ratings.dat``."""
    allowed = {"source", "partition", "path"}
    extra = sorted(set(data) - allowed)
    if extra:
        raise ScenarioError(
            f"data.{extra[0]} is not used with source = 'ratings'; its keys are "
            f"{', '.join(sorted(allowed))}"
        )
    path = data.get("path")
    if not isinstance(path, str) or not path:
        raise ScenarioError(
            "[data] source = 'ratings' needs 'path', a user,item,rating CSV or a MovieLens "
            f"ratings.dat file; got {path!r}"
        )
    resolved = (base / path).resolve()
    if not resolved.is_file():
        raise ScenarioError(f"data.path = {path!r}: no such file {str(resolved)!r}")
    out["path"] = resolved


def _validate_audit(i: int, audit: Any, n_parties: int) -> AuditSpec:
    where = f"audit[{i}]"
    if not isinstance(audit, dict):
        raise ScenarioError(f"{where} must be a table [[audit]]")
    _unknown("audit", audit, AUDIT_KEYS)
    given = [k for k in ("coalition", "coalitions", "sizes") if k in audit]
    if len(given) != 1:
        raise ScenarioError(
            f"{where} must have exactly one of coalition = [ids], coalitions = \"all\" or "
            f"[[ids], ...], sizes = [t, ...] (it has {', '.join(given) or 'none'})")
    coalition: tuple[int, ...] = ()
    coalitions: tuple[tuple[int, ...], ...] | str | None = None
    sizes: tuple[int, ...] | None = None
    if "coalition" in audit:
        coalition = _coalition(f"{where}.coalition", audit["coalition"], n_parties)
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
        coalitions = tuple(_coalition(f"{where}.coalitions[{j}]", c, n_parties)
                           for j, c in enumerate(audit["coalitions"]))
    else:
        raise ScenarioError(f"{where}.coalitions = {audit['coalitions']!r} must be \"all\" or "
                            "a non-empty list of coalitions, e.g. [[0], [0, 1]]")
    method = check_choice(f"{where}.method", audit.get("method", "simulation"), AUDIT_METHODS)
    trials = check_int(f"{where}.trials", audit.get("trials", 200), low=10)
    alpha = check_number(f"{where}.alpha", audit.get("alpha", 1e-3), 0.0, True)
    if alpha >= 1:
        raise ScenarioError(f"{where}.alpha = {alpha} must be < 1")
    try:
        prime = parse_prime(audit.get("prime", 5))
    except InputError as exc:
        raise ScenarioError(f"{where}.prime: {exc}") from exc
    max_runs = check_int(f"{where}.max_runs", audit.get("max_runs", 100_000), low=2)
    pairs = check_int(f"{where}.pairs", audit.get("pairs", 6), low=1, high=64)
    calls = _audit_calls(where, audit.get("calls", "all"))
    probes = check_int(f"{where}.probes", audit.get("probes", 3), low=1, high=100)
    return AuditSpec(coalition, method, trials, alpha, prime, max_runs, calls, pairs, probes,
                     coalitions, sizes)


def _coalition(where: str, coalition: Any, n_parties: int) -> tuple[int, ...]:
    """A list of distinct party ids 0..M−1, not all of them."""
    if not isinstance(coalition, list) or not coalition or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in coalition
    ):
        raise ScenarioError(f"{where} = {coalition!r} must be a list of party ids")
    missing = sorted({c for c in coalition if not 0 <= c < n_parties})
    if missing:
        raise ScenarioError(
            f"{where} names part{'ies' if len(missing) > 1 else 'y'} {missing}, "
            f"but the parties are 0..{n_parties - 1}"
        )
    if len(set(coalition)) != len(coalition):
        raise ScenarioError(f"{where} = {coalition} repeats a party")
    if len(coalition) >= n_parties:
        raise ScenarioError(
            f"{where} has all {n_parties} parties; t-privacy concerns coalitions of "
            f"at most M − 1 = {n_parties - 1}"
        )
    return tuple(sorted(coalition))


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
        _unknown("attack", attack, ATTACK_KEYS)
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
