"""Run a scenario end to end: the Python API that ``mpcsim run`` mirrors.

>>> from sim.runner import run_scenario                          # doctest: +SKIP
>>> run = run_scenario("scenarios/quickstart.toml", seed=7)      # doctest: +SKIP
>>> run.report["communication"]["total_elements"]                # doctest: +SKIP
>>> run.write("out/quickstart")                                  # doctest: +SKIP

Everything is computed in memory first — data, simulation, metrics, audits, report, plots —
and only :meth:`ScenarioRun.write` touches the disk, atomically, so a failed run leaves no
partial files.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from algorithms import data as data_io
from parties.attacks import get_attack
from parties.audit import AuditResult, Progress
from parties.audit.coalitions import CoalitionStudy
from protocols.errors import InputError, ProtocolAbort, ScenarioError
from sim import catalog, report
from sim.coalitions import heat_map, run_study, study_table
from sim.entry import Algorithm, AlgorithmRun, RunInput
from sim.network import Network
from sim.privacy import run_audit
from sim.scenario import AttackSpec, Scenario, load_scenario
from sim.simulation import Result, Simulation

DATA_SEED_KEY = 1_000_000


@dataclass
class ScenarioRun:
    """The outcome of a scenario: the report and the files ``--out`` writes."""

    scenario: Scenario
    report: dict[str, Any]
    outputs: dict[str, np.ndarray]
    ledger_csv: str
    run: AlgorithmRun
    audits: list[AuditResult] = field(default_factory=list)
    studies: dict[int, CoalitionStudy] = field(default_factory=dict)  # by [[audit]] index
    reporting: bool = True  # False on MPI ranks other than 0: they neither print nor write

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write report.json, outputs.npz, ledger.csv and the PNG plots, atomically."""
        files: dict[str, bytes] = {
            "report.json": report.to_json(self.report).encode(),
            "outputs.npz": report.npz_bytes(self.outputs),
            "ledger.csv": self.ledger_csv.encode(),
        }
        for name, build in self.run.plots.items():
            files[f"{name}.png"] = report.png_bytes(build())
        for i, study in self.studies.items():
            files[f"coalitions_{i}.png"] = report.png_bytes(
                heat_map(study, f"{self.scenario.name} [[audit]] {i}"))
        return report.write_files(Path(out_dir), files)

    def format(self) -> str:
        """The console tables."""
        return report.format_report(self.report, [*self.run.tables, *(
            study_table(i, study) for i, study in self.studies.items())])


def run_scenario(
    source: str | Path | dict[str, Any] | Scenario,
    *,
    seed: int | None = None,
    progress: Progress | None = None,
    driver: str = "simpy",
) -> ScenarioRun:
    """Validate, load data, simulate, audit and report one scenario.

    Parameters
    ----------
    source : path, dict or Scenario
        A scenario TOML file, a dict of the same shape, or a loaded scenario.
    seed : int, optional
        Overrides the scenario's seed (as ``--seed``).
    progress : callable, optional
        ``progress(stage, done, total)`` for long runs.
    driver : {"simpy", "mpi"}
        As ``--driver``: ``"mpi"`` runs the parties on the MPI ranks of this job
        (:mod:`sim.drivers.mpi`); every rank calls this function and rank 0's run has
        ``reporting`` set.
    """
    scenario = source if isinstance(source, Scenario) else load_scenario(source)
    scenario = scenario.with_seed(seed)
    entry = catalog.get(scenario.algorithm.get("name"))
    params = entry.validate(scenario.algorithm)
    if scenario.n_parties < entry.min_parties:
        why = " (a secure computation needs M ≥ 2)" if entry.min_parties == 2 else ""
        raise ScenarioError(
            f"network.parties = {scenario.n_parties}: {entry.name} needs at least "
            f"{entry.min_parties} data-holding parties{why}"
        )
    attack = None
    if scenario.attack:
        if entry.attack is None:
            raise ScenarioError(f"algorithm {entry.name!r} has no attack model; remove [attack]")
        attack = entry.attack(scenario.attack, scenario.n_parties)
    run_seed = scenario.seed if scenario.seed is not None else int(
        np.random.SeedSequence().entropy % (1 << 63)
    )
    matrix, extras = _load_data(scenario, entry, run_seed)
    ranges = data_io.partition_rows(matrix.shape[0], scenario.n_parties, scenario.data["partition"])
    shards = data_io.split_rows(matrix, ranges)
    network = Network.build(scenario.n_parties, scenario.topology, scenario.latency_ms,
                            scenario.bandwidth_mbps, scenario.links)
    simulation = Simulation(network, prime=scenario.prime, frac_bits=scenario.frac_bits,
                            seed=run_seed, sealing=scenario.sealing, driver=driver,
                            faults=scenario.faults)
    inp = RunInput(scenario, params, matrix, shards, simulation, run_seed, progress, extras,
                   attack)
    started = time.perf_counter()
    try:
        algorithm_run = entry.run(inp)
    except ProtocolAbort as abort:
        cause = abort.__cause__
        if isinstance(cause, InputError):
            where = f" in call {abort.call}" if abort.call else ""
            raise InputError(f"party {abort.party}{where}: {cause}") from abort
        partial = getattr(abort, "result", None)
        if partial is None:
            raise
        # a fault the protocol cannot tolerate: report what was injected and what completed
        seen = [f"  party {p}: {what}" for p, what in partial.faults["parties"].items()]
        algorithm_run = AlgorithmRun(result=partial, outputs={}, metrics={}, tables=[
            "\n".join([f"run aborted: {abort}", *seen])])
        rep = report.build_report(scenario, entry, params, run_seed, algorithm_run, [],
                                  time.perf_counter() - started, network, [])
        rep["outcome"] = {"completed": False, "abort": {
            "party": abort.party, "call": abort.call, "round": abort.round,
            "reason": abort.reason}}
        rep["driver"] = simulation.driver_info()
        return ScenarioRun(scenario, rep, {}, partial.ledger.to_csv(), algorithm_run, [])
    driver_info = simulation.driver_info()  # under MPI a collective call: every rank makes it
    reporting = True
    if driver == "mpi":
        from sim.drivers.mpi import is_root

        reporting = is_root()
    if not reporting:  # another rank reports; the run's results are rank 0's as well
        return ScenarioRun(scenario, {}, algorithm_run.outputs, "", algorithm_run, [],
                           reporting=False)
    audits = []
    studies: dict[int, CoalitionStudy] = {}
    for i, spec in enumerate(scenario.audits):
        if algorithm_run.audit_target is None:
            raise InputError(f"algorithm {entry.name!r} has no protocol to audit; remove [[audit]]")
        options = {"prime": scenario.prime, "frac_bits": scenario.frac_bits, "seed": run_seed,
                   "network": network, "progress": progress, "index": i}
        if spec.study:
            studies[i] = run_study(spec, algorithm_run.audit_target, **options)
            audits.extend(studies[i].results)
        else:
            audits.append(run_audit(spec, algorithm_run.audit_target, **options))
    attacks = [run_attack(spec, algorithm_run.result, matrix, entry.name)
               for spec in scenario.attacks]
    wall = time.perf_counter() - started
    rep = report.build_report(scenario, entry, params, run_seed, algorithm_run, audits, wall,
                              network, attacks)
    if studies:
        rep["coalition_studies"] = [{"audit": i, **st.summary()} for i, st in studies.items()]
    rep["driver"] = driver_info
    ledger_csv = algorithm_run.result.ledger.to_csv() if algorithm_run.result else (
        report.empty_ledger_csv()
    )
    return ScenarioRun(scenario, rep, algorithm_run.outputs, ledger_csv, algorithm_run, audits,
                       studies)


def run_attack(spec: AttackSpec, result: Result | None, data: Any,
               algorithm: str = "") -> dict[str, Any]:
    """One ``[[attack]]``: the attack on the coalition's views, scored against the data.

    Returns the report's entry: ``name``, ``coalition``, ``relative_error`` of the recovered
    target, and the attack's ``details``.
    """
    if result is None:
        raise InputError(f"algorithm {algorithm!r} keeps no views to attack; remove [[attack]]")
    recovery, error = get_attack(spec.name).score(result.coalition(spec.coalition), data)
    return {"name": spec.name, "coalition": list(spec.coalition), "relative_error": error,
            "details": recovery.details}


def _load_data(scenario: Scenario, entry: Algorithm, seed: int) -> tuple[Any, dict]:
    spec = scenario.data
    if spec["source"] == "file":
        dataset = data_io.load_dataset(spec["path"], file_format=spec.get("format"),
                                       vocab_path=spec.get("vocab"))
    elif spec["source"] == "ratings":
        dataset = data_io.load_ratings(spec["path"])
    elif spec["source"] == "digits":
        dataset = data_io.bundled_dataset("digits")
    else:
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(DATA_SEED_KEY,)))
        kind = spec.get("kind", entry.data_kind)
        options = {k: spec[k] for k in ("k", "density", "noise", "doc_length", "alpha", "beta")
                   if k in spec}
        dataset = data_io.synthetic_dataset(spec["rows"], spec["cols"], rng, kind, **options)
    matrix = dataset.X
    extras = {"dataset": dataset, **dict(dataset.truth)}
    if not entry.allow_missing:
        data_io.check_finite(matrix, "data")
    if entry.nonnegative:
        data_io.check_nonnegative(matrix, "data")
    if matrix.shape[0] < scenario.n_parties:
        raise InputError(
            f"the data has {matrix.shape[0]} rows, fewer than network.parties = "
            f"{scenario.n_parties}; every party needs at least one row"
        )
    return matrix, extras
