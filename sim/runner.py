"""Run a scenario end to end: the Python API that ``mpcsim run`` mirrors.

>>> from sim.runner import plan_scenario, run_scenario               # doctest: +SKIP
>>> run = run_scenario("scenarios/quickstart.toml", seed=7)          # doctest: +SKIP
>>> run.report["communication"]["total_elements"]                    # doctest: +SKIP
>>> run.write("out/quickstart")                                      # doctest: +SKIP
>>> plan_scenario("scenarios/quickstart.toml").estimate.describe()   # doctest: +SKIP

A run goes through the input boundaries in order, and a user's mistake at any of them raises an
:class:`~protocols.errors.InputError` (the CLI prints it as one line ``error: ...``) before
anything expensive happens:

1. the scenario (:func:`sim.scenario.load_scenario`) and the algorithm's keys
   (:meth:`sim.entry.Algorithm.validate`);
2. the output directory, when one is given (:func:`sim.report.check_out_dir`);
3. the scale: the entry's declared workload turned into memory and time
   (:mod:`sim.estimate`); a run that cannot fit in memory is refused with the estimate;
4. the data, when it is loaded or generated and split: NaN or infinities, negative values
   where the algorithm needs non-negative ones, a party with no observed entry — each named
   by its source, row, party and column.

Everything is then computed in memory — simulation, metrics, audits, report, plots — and only
:meth:`ScenarioRun.write` touches the disk, atomically.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protocols.errors import InputError, ProtocolAbort, ScenarioError
from sim import catalog, report
from sim.entry import Algorithm, AlgorithmRun, RunInput
from sim.estimate import Estimate, check_fits, estimate_run
from sim.scenario import Scenario, check_role_ids, load_scenario

if TYPE_CHECKING:
    import numpy as np

    from parties.audit import AuditResult, Progress
    from parties.audit.coalitions import CoalitionStudy
    from sim.ledger import Ledger
    from sim.scenario import AttackSpec
    from sim.simulation import Result
    from sim.view_store import ViewScratch



@dataclass
class ScenarioRun:
    """The outcome of a scenario: the report and the files ``--out`` writes."""

    scenario: Scenario
    report: dict[str, Any]
    outputs: dict[str, np.ndarray]
    ledger: Ledger | None  # None: no run result (or an MPI rank other than 0)
    run: AlgorithmRun
    audits: list[AuditResult] = field(default_factory=list)
    estimate: Estimate | None = None
    studies: dict[int, CoalitionStudy] = field(default_factory=dict)  # by [[audit]] index
    reporting: bool = True  # False on MPI ranks other than 0: they neither print nor write,
    # nor read views after the run (their store's staging directory goes when rank 0 is done)
    scratch: ViewScratch | None = None  # where an MPI run's views are on disk (sim.view_store)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write report.json, outputs.npz, ledger.csv and the PNG plots, atomically.

        Raises
        ------
        InputError
            If ``out_dir`` cannot be written (see :func:`sim.report.check_out_dir`); nothing is
            written then.
        """
        report.check_out_dir(out_dir, "out_dir")
        files: dict[str, bytes] = {
            "report.json": report.to_json(self.report).encode(),
            "outputs.npz": report.npz_bytes(self.outputs),
            "ledger.csv": (self.ledger.write_csv if self.ledger is not None
                           else report.empty_ledger_csv().encode()),
        }
        for name, build in self.run.plots.items():
            files[f"{name}.png"] = report.png_bytes(build())
        files.update(self._view_files())
        if self.studies:
            from sim.coalitions import heat_map

            for i, study in self.studies.items():
                files[f"coalitions_{i}.png"] = report.png_bytes(
                    heat_map(study, f"{self.scenario.name} [[audit]] {i}"))
        return report.write_files(Path(out_dir), files)

    @property
    def ledger_csv(self) -> str:
        """``ledger.csv``'s text, made when asked: a ledger an MPI run wrote to disk is never
        held whole in memory to be written (:meth:`write` copies its file); ``""`` on an MPI
        rank other than 0."""
        if self.ledger is None:
            return report.empty_ledger_csv() if self.reporting else ""
        return self.ledger.to_csv()

    def _view_files(self) -> dict[str, Any]:
        """``views/``: with ``write_views = true``, one file per party and the index
        (:mod:`sim.view_store`) — linked from an MPI run's store, written from a SimPy run's
        memory; nothing for a run a fault aborted."""
        import functools

        from sim.view_store import (
            ViewStore,
            index_bytes,
            index_entry,
            link_view,
            view_file_name,
            write_view,
        )

        result = self.run.result
        if not self.scenario.write_views or result is None or "outcome" in self.report:
            return {}
        views = result.views
        files: dict[str, Any]
        if isinstance(views, ViewStore):
            entries = views.index()
            files = {f"views/{e['file']}": functools.partial(link_view, views.path(e["party"]))
                     for e in entries}
        else:
            entries = [index_entry(v) for v in views.values()]
            files = {f"views/{view_file_name(pid)}": functools.partial(write_view, view=v)
                     for pid, v in views.items()}
        files["views/index.json"] = index_bytes(entries)
        return files

    def keep_views_in(self, out_dir: Path) -> None:
        """After :meth:`write`: with ``write_views`` the run's views are read from
        ``out_dir/views`` (the same files) and the staging directory goes; so it does for a
        run a fault aborted (no view to read). Otherwise the views stay in the staging
        directory while this run is held."""
        from sim.view_store import ViewStore

        if self.scratch is None:
            return
        views = self.run.result.views if self.run.result is not None else None
        if "outcome" in self.report:
            self.scratch.remove()
        elif self.scenario.write_views and isinstance(views, ViewStore):
            views.directory = Path(out_dir) / report.VIEWS_DIR
            self.scratch.remove()
        elif not isinstance(views, ViewStore):  # no view there; the ledger stays readable
            self.scratch.remove()

    def format(self) -> str:
        """The console tables."""
        studies: list[Any] = []
        if self.studies:  # the audit machinery (scipy.stats) only when a study ran
            from sim.coalitions import study_table

            studies = [study_table(i, study) for i, study in self.studies.items()]
        return report.format_report(self.report, [*self.run.tables, *studies])


@dataclass
class ScenarioPlan:
    """A validated scenario with its data loaded and split and its cost estimated.

    :func:`plan_scenario` makes one; :meth:`run` runs it. The command line prints
    ``estimate`` before the run and reports progress against it.
    """

    scenario: Scenario
    entry: Algorithm
    params: dict[str, Any]
    seed: int
    data: Any
    shards: list[Any]
    extras: dict[str, Any]
    estimate: Estimate
    attack: dict[str, Any] | None = None

    def describe(self) -> str:
        """One line: what will run, and its estimated cost."""
        return (f"{self.scenario.name}: {self.entry.name} with {self.scenario.n_parties} "
                f"parties, estimated {self.estimate.describe()}")

    def run(self, progress: Progress | None = None, driver: str = "simpy",
            views_beside: Path | None = None) -> ScenarioRun:
        """Simulate, audit, run the ``[[attack]]`` entries and report.

        ``driver`` is ``"simpy"`` or ``"mpi"`` (as ``--driver``); under MPI every rank runs
        this and only rank 0's result has ``reporting`` set. A run that an injected
        ``[[fault]]`` aborted returns a report with ``outcome`` and ``faults``.

        Under MPI (with ``record_views``) each rank keeps only its own parties' views and
        writes them to disk after every simulation (:class:`sim.view_store.ViewSink`); the
        run's metrics, audits and attacks then read views from the on-disk store. Its
        directory is a staging directory beside ``views_beside`` (the output directory, whose
        lock the caller holds) or a temporary one, made by rank 0 (:class:`ViewScratch`, the
        result's ``scratch``). Each rank writes its parties' ledger rows there too and rank 0
        merges them (:mod:`sim.ledger_store`), with or without ``record_views``.

        Raises
        ------
        InputError
            A party refused its input (e.g. a value too large for the field): ``party m: ...``.
        """
        from sim.threads import pinned_threads
        from sim.view_store import ViewScratch

        scratch = ViewScratch.make(views_beside) if driver == "mpi" else None
        try:
            with pinned_threads() as numerics:  # the same bytes whatever OMP_NUM_THREADS says
                run = self._run(progress, driver, scratch)
        except BaseException:
            if scratch is not None:
                scratch.remove()
            raise
        run.scratch = scratch
        if run.reporting:
            run.report["numerics"] = numerics
        return run

    def _run(self, progress: Progress | None, driver: str,
             scratch: ViewScratch | None) -> ScenarioRun:
        from sim.network import Network
        from sim.simulation import Simulation

        scenario = self.scenario
        network = Network.build(scenario.n_parties, scenario.topology, scenario.latency_ms,
                                scenario.bandwidth_mbps, scenario.links)
        keep = scratch is not None and scenario.record_views  # views on disk, by rank
        simulation = Simulation(network, prime=scenario.prime, frac_bits=scenario.frac_bits,
                                seed=self.seed, sealing=scenario.sealing, driver=driver,
                                faults=scenario.faults, record_views=scenario.record_views,
                                views="rank" if keep else "gathered",
                                view_sink=scratch.sink() if keep else None,
                                ledger_sink=scratch.ledger_sink() if scratch else None)
        inp = RunInput(scenario, self.params, self.data, self.shards, simulation, self.seed,
                       progress, self.extras, self.attack)
        started = time.perf_counter()
        try:
            algorithm_run = self.entry.run(inp)  # a party's bad input raises PartyInputError
        except ProtocolAbort as abort:
            cause = abort.__cause__
            if isinstance(cause, InputError) and not isinstance(abort, InputError):
                where = f" in call {abort.call}" if abort.call else ""
                raise InputError(f"party {abort.party}{where}: {cause}") from abort
            partial = getattr(abort, "result", None)
            if partial is None:
                raise
            return self._aborted(abort, partial, network, simulation,
                                 time.perf_counter() - started)
        driver_info = simulation.driver_info()  # under MPI a collective call: every rank
        if driver == "mpi":
            from sim.drivers.mpi import is_root

            if not is_root():  # rank 0 reports; the run's results are its as well
                return ScenarioRun(scenario, {}, algorithm_run.outputs, None, algorithm_run, [],
                                   self.estimate, reporting=False)
        audits = []
        studies: dict[int, CoalitionStudy] = {}
        if scenario.audits:
            from sim.privacy import run_audit

            if algorithm_run.audit_target is None and not algorithm_run.audit_runs:
                raise InputError(
                    f"algorithm {self.entry.name!r} has no protocol to audit; remove [[audit]]"
                )
            from sim.audited_runs import ReferenceRun, RevealingRun, audited_runs, labelled
            from sim.coalitions import run_study

            for i, spec in enumerate(scenario.audits):
                options = {"prime": scenario.prime, "frac_bits": scenario.frac_bits,
                           "seed": self.seed, "network": network, "progress": progress,
                           "index": i}
                for name, target in audited_runs(algorithm_run.audit_runs,
                                                 algorithm_run.audit_target, spec, f"audit[{i}]"):
                    if isinstance(target, RevealingRun | ReferenceRun):
                        audits.append(labelled(target.result(spec.coalition, spec.method), name))
                    elif spec.study:
                        studies[i] = run_study(spec, target, **options)
                        audits.extend(labelled(r, name) for r in studies[i].results)
                    else:
                        audits.append(labelled(run_audit(spec, target, **options), name))
        attacks = [run_attack(spec, algorithm_run.result, self.data, self.entry.name)
                   for spec in scenario.attacks]
        wall = time.perf_counter() - started
        rep = report.build_report(scenario, self.entry, self.params, self.seed, algorithm_run,
                                  audits, wall, network, attacks)
        if studies:
            rep["coalition_studies"] = [{"audit": i, **st.summary()}
                                        for i, st in studies.items()]
        rep["driver"] = driver_info
        ledger = algorithm_run.result.ledger if algorithm_run.result else None
        return ScenarioRun(scenario, rep, algorithm_run.outputs, ledger, algorithm_run,
                           audits, self.estimate, studies)

    def _aborted(self, abort: ProtocolAbort, partial: Any, network: Any, simulation: Any,
                 wall: float) -> ScenarioRun:
        """The report of a run a ``[[fault]]`` aborted: what was injected, what completed."""
        seen = [f"  party {p}: {what}" for p, what in partial.faults["parties"].items()]
        algorithm_run = AlgorithmRun(result=partial, outputs={}, metrics={}, tables=[
            "\n".join([f"run aborted: {abort}", *seen])])
        rep = report.build_report(self.scenario, self.entry, self.params, self.seed,
                                  algorithm_run, [], wall, network, [])
        rep["outcome"] = {"completed": False, "abort": {
            "party": abort.party, "call": abort.call, "round": abort.round,
            "reason": abort.reason}}
        rep["driver"] = simulation.driver_info()
        return ScenarioRun(self.scenario, rep, {}, partial.ledger, algorithm_run, [],
                           self.estimate)


def plan_scenario(
    source: str | Path | dict[str, Any] | Scenario,
    *,
    seed: int | None = None,
    memory_limit: float | None = None,
) -> ScenarioPlan:
    """Validate a scenario, estimate its cost, load and check its data: everything but the run.

    Parameters
    ----------
    source : path, dict or Scenario
        A scenario TOML file, a dict of the same shape, or a loaded scenario.
    seed : int, optional
        Overrides the scenario's seed (as ``--seed``).
    memory_limit : float, optional
        Bytes a run may take; by default 80 % of the memory available now.

    Raises
    ------
    InputError
        A mistake in the scenario, a run too large for the memory (with the estimate), or a
        defect in the data (naming the source, the row, the party and the column).
    """
    import numpy as np

    from protocols import seeds

    scenario = source if isinstance(source, Scenario) else load_scenario(source)  # type: ignore[arg-type]
    scenario = scenario.with_seed(seed)
    entry = catalog.entry_for(scenario.algorithm, scenario.base_dir)
    params = entry.validate(scenario.algorithm)
    if scenario.n_parties < entry.min_parties:
        why = " (a secure computation needs M ≥ 2)" if entry.min_parties == 2 else ""
        raise ScenarioError(
            f"network.parties = {scenario.n_parties}: {entry.name} needs at least "
            f"{entry.min_parties} data-holding parties{why}"
        )
    check_role_ids(scenario.audits, scenario.n_parties, entry.other_roles(params))
    attack = None
    if scenario.attack:
        if entry.attack is None:
            raise ScenarioError(f"algorithm {entry.name!r} has no attack model; remove [attack]")
        attack = entry.attack(scenario.attack, scenario.n_parties)
    run_seed = scenario.seed if scenario.seed is not None else seeds.fresh_seed()
    spec = scenario.data
    what = f"scenario {scenario.name!r} ({entry.name}, M = {scenario.n_parties})"
    if spec["source"] == "synthetic":  # the shape is known before the data exists
        kind = spec.get("kind", entry.data_kind)
        estimate = estimate_run(scenario, entry, params, spec["rows"], spec["cols"],
                                missing=kind == "ratings"
                                and _synthetic_options(spec, entry).get("density", 0.0) < 1)
        check_fits(estimate, what, memory_limit)
        matrix, extras, source_name = _load_data(scenario, entry, run_seed)
    else:
        matrix, extras, source_name = _load_data(scenario, entry, run_seed)
        missing = not _is_sparse(matrix) and bool(np.isnan(matrix).any())
        estimate = estimate_run(scenario, entry, params, matrix.shape[0], matrix.shape[1],
                                missing=missing,
                                stored=int(matrix.nnz) if _is_sparse(matrix) else None)
        check_fits(estimate, what, memory_limit)
    shards = _split_and_check(matrix, scenario, entry, source_name)
    return ScenarioPlan(scenario, entry, params, run_seed, matrix, shards, extras, estimate,
                        attack)


def run_scenario(
    source: str | Path | dict[str, Any] | Scenario,
    *,
    seed: int | None = None,
    progress: Progress | None = None,
    out: str | Path | None = None,
    driver: str = "simpy",
) -> ScenarioRun:
    """Validate, load data, simulate, audit and report one scenario (as ``mpcsim run``).

    Parameters
    ----------
    source : path, dict or Scenario
        A scenario TOML file, a dict of the same shape, or a loaded scenario.
    seed : int, optional
        Overrides the scenario's seed (as ``--seed``).
    progress : callable, optional
        ``progress(stage, done, total)`` for long runs.
    out : str or Path, optional
        As ``--out``: checked and locked before the run (:mod:`sim.ownership`; another run
        holding it is refused), written atomically after it (by rank 0 alone under MPI).
    driver : {"simpy", "mpi"}
        As ``--driver``: ``"mpi"`` runs the parties on the MPI ranks of this job
        (:mod:`sim.drivers.mpi`); every rank calls this function and rank 0's run has
        ``reporting`` set.

    Raises
    ------
    InputError
        Every mistake in the input, with the message the command line prints.
    """
    import contextlib

    from sim.ownership import own_out_dir

    with contextlib.ExitStack() as owned:
        if out is not None:
            report.check_out_dir(out, "out")
            if driver != "mpi" or _is_root():  # held over the run: a second run fails at once
                owned.enter_context(own_out_dir(out, "out"))
        run = plan_scenario(source, seed=seed).run(
            progress, driver=driver, views_beside=Path(out) if out is not None else None)
        if out is not None and run.reporting:
            try:
                run.write(out)
            except BaseException:
                if run.scratch is not None:
                    run.scratch.remove()
                raise
            run.keep_views_in(Path(out))
    return run


def _is_root() -> bool:
    """Whether this process is MPI rank 0 (the one that writes)."""
    from sim.drivers.mpi import is_root

    return is_root()


def run_attack(spec: AttackSpec, result: Result | None, data: Any,
               algorithm: str = "") -> dict[str, Any]:
    """One ``[[attack]]``: the attack on the coalition's views, scored against the data.

    Returns the report's entry: ``name``, ``coalition``, ``relative_error`` of the recovered
    target, and the attack's ``details``.
    """
    from parties.attacks import get_attack

    if result is None:
        raise InputError(f"algorithm {algorithm!r} keeps no views to attack; remove [[attack]]")
    recovery, error = get_attack(spec.name).score(result.coalition(spec.coalition), data)
    return {"name": spec.name, "coalition": list(spec.coalition), "relative_error": error,
            "details": recovery.details}


def _is_sparse(matrix: Any) -> bool:
    import scipy.sparse as sp

    return sp.issparse(matrix)


def _load_data(scenario: Scenario, entry: Algorithm, seed: int) -> tuple[Any, dict, str]:
    """The pooled matrix, the extras for ``run`` (dataset, planted truth), and its name."""
    from sim.threads import pinned_threads

    with pinned_threads():  # synthetic data is generated with the run's thread count
        return _read_or_generate(scenario, entry, seed)


def _read_or_generate(scenario: Scenario, entry: Algorithm, seed: int) -> tuple[Any, dict, str]:
    import numpy as np

    from algorithms import data as data_io
    from protocols import seeds

    spec = scenario.data
    if spec["source"] == "none":  # a program on named inputs only: one empty row per party
        return np.zeros((scenario.n_parties, 0)), {}, "no [data] (named inputs only)"
    if spec["source"] == "file":
        dataset = data_io.load_dataset(spec["path"], file_format=spec.get("format"),
                                       vocab_path=spec.get("vocab"))
        name = f"data file {str(spec['path'])!r}"
    elif spec["source"] == "ratings":
        dataset = data_io.load_ratings(spec["path"])
        name = f"ratings file {str(spec['path'])!r}"
    elif spec["source"] == "digits":
        dataset = data_io.bundled_dataset("digits")
        name = "the bundled digits data"
    else:
        rng = seeds.rng(seed, "data")
        kind = spec.get("kind", entry.data_kind)
        options = _synthetic_options(spec, entry)
        dataset = data_io.synthetic_dataset(spec["rows"], spec["cols"], rng, kind, **options)
        name = f"synthetic {kind} data"
    return dataset.X, {"dataset": dataset, **dict(dataset.truth)}, name


COMPLETE_DENSITY = 1.0
"""The ``[data] density`` of synthetic ratings for an entry that needs every entry observed."""


def _synthetic_options(spec: dict[str, Any], entry: Algorithm) -> dict[str, Any]:
    """The synthetic generator's keyword arguments from ``[data]``.

    Synthetic ``kind = "ratings"`` data leaves entries unobserved (NaN) at the generator's
    default density; an entry that factorises a complete matrix (``allow_missing`` off, e.g.
    DSANLS, which minimises ‖M − UVᵀ‖_F over every entry, Qian et al. seed 004 eq. (1)) gets
    dense ratings (:data:`COMPLETE_DENSITY`) unless the scenario sets ``density`` itself.
    """
    options = {k: spec[k] for k in ("k", "density", "noise", "doc_length", "alpha", "beta")
               if k in spec}
    if spec.get("kind", entry.data_kind) == "ratings" and not entry.allow_missing:
        options.setdefault("density", COMPLETE_DENSITY)
    return options


def _split_and_check(matrix: Any, scenario: Scenario, entry: Algorithm, name: str) -> list[Any]:
    """The parties' shards, after every data check the entry needs (party named on failure)."""
    from algorithms import data as data_io

    if matrix.shape[0] < scenario.n_parties:
        raise InputError(
            f"{name} has {matrix.shape[0]} row{'s' if matrix.shape[0] != 1 else ''}, fewer than "
            f"network.parties = "
            f"{scenario.n_parties}; every party needs at least one row"
        )
    try:
        ranges = data_io.partition_rows(matrix.shape[0], scenario.n_parties,
                                        scenario.data["partition"])
    except InputError as exc:  # report a defect in the data first, then the partition
        ranges, bad_partition = None, exc
    else:
        bad_partition = None
    data_io.check_finite(matrix, name, ranges=ranges, allow_nan=entry.allow_missing)
    if entry.nonnegative:
        data_io.check_nonnegative(matrix, name, ranges=ranges)
    if bad_partition is not None or ranges is None:
        raise bad_partition or InputError(f"{name} cannot be partitioned")
    if entry.allow_missing:
        data_io.check_shards_observed(matrix, name, ranges)
    return data_io.split_rows(matrix, ranges)
