"""Catalogue entry for a user's own party program: ``[algorithm] program = "pkg.module:function"``.

A researcher's protocol runs from a scenario file like a built-in entry — under SimPy or
``--driver mpi``, with ``[[audit]]``, ``[[fault]]`` and the cost tables — without being added
to the catalogue:

```toml
[algorithm]
program = "weighted.average:program"   # a module importable from the scenario's directory
protocol = "weighted.average:DECLARATION"   # optional: the Declaration its audits judge by
```

Every data holder m runs ``function(ctx, X)`` on its own rows ``X`` of the scenario's data
(the same row blocks a built-in entry gets), and what it returns is its output (``outputs.npz``
holds ``party_<m>``). A program that takes named inputs instead gets them from an
``[algorithm.inputs]`` table, one value per party for each name — party m is called
``function(ctx, w=w[m], v=v[m])`` for

```toml
[algorithm.inputs]
w = [0.5, 1.0, 0.25]          # numbers, or lists (arrays) of one shape per name
v = [[2.0, 1.0], [4.0, 0.0], [9.0, 3.0]]
```

and the audits replay it with the same names. Such a scenario needs no ``[data]`` table (one
that is given is read, and not handed to the program). The module is imported from the
scenario file's directory first, then from the environment. The run also prints each call's
cost fitted in d — the number of columns — and M — the number of data holders — by dry runs
(:mod:`sim.cost_fit`) beside the ledger. ``protocol`` names the protocol under audit (a
:class:`~protocols.registry.Declaration`, or a registered name); without it each call is judged
by the declaration registered under its own name, and a call of an unknown name is "not
applicable" — never "private".
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from parties.party import site_parties
from protocols.errors import MpcsimError, ScenarioError
from protocols.registry import Declaration
from sim.console import table
from sim.cost_fit import cost_table_dm, fit_costs_dm
from sim.entry import Algorithm, AlgorithmRun, Param, RunInput
from sim.network import Network
from sim.privacy import AuditTarget
from sim.simulation import Simulation

PROGRAM_KEYS = ("program", "protocol", "name", "inputs")


def check_inputs(key: str, value: Any) -> dict[str, list[Any]] | None:
    """``[algorithm.inputs]``: a table of names, each a list of one value per party (a number
    or a list); lists become float arrays.

    Raises
    ------
    ScenarioError
        Naming the key whose value is not a list of numbers or number lists.
    """

    if value is None:
        return None
    if not isinstance(value, Mapping) or not value:
        raise ScenarioError(f"{key} must be a table [algorithm.inputs] of names, each a list "
                            "with one value per party, e.g. w = [0.5, 1.0, 0.25]")
    out: dict[str, list[Any]] = {}
    for name, values in value.items():
        if not name.isidentifier():
            raise ScenarioError(f"{key}.{name} is not a Python identifier, so the program "
                                "cannot take it as a keyword input")
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"{key}.{name} = {values!r} must be a list with one value per "
                                "party")
        column = []
        for m, v in enumerate(values):
            try:
                array = np.asarray(v, dtype=float)
            except (TypeError, ValueError) as exc:
                raise ScenarioError(f"{key}.{name}[{m}] = {v!r} (party {m}) must be a number "
                                    "or a list of numbers") from exc
            if not np.all(np.isfinite(array)):
                raise ScenarioError(f"{key}.{name}[{m}] = {v!r} (party {m}) is not finite")
            column.append(float(array) if array.ndim == 0 else array)
        out[name] = column
    return out


def _named_inputs(inputs: dict[str, list[Any]], n_parties: int) -> list[dict[str, Any]]:
    """Party m's keyword inputs: ``{name: values[m]}``; every list must have M values."""
    for name, values in inputs.items():
        if len(values) != n_parties:
            raise ScenarioError(f"algorithm.inputs.{name} has {len(values)} values but the "
                                f"network has {n_parties} parties; give one value per party")
    return [{name: values[m] for name, values in inputs.items()} for m in range(n_parties)]


def load_object(reference: Any, key: str, base_dir: Path | None) -> Any:
    """The object ``"package.module:attribute"`` names, imported from ``base_dir`` first.

    ``base_dir`` is put in front of ``sys.path`` for the import only, and taken out again.

    Raises
    ------
    ScenarioError
        Naming the key, the reference and why it does not load.
    """
    if not isinstance(reference, str) or reference.count(":") != 1:
        raise ScenarioError(f"algorithm.{key} = {reference!r} must be 'package.module:name'")
    module_name, attribute = reference.split(":")
    if not module_name or not all(p.isidentifier() for p in module_name.split(".")) or (
            not attribute.isidentifier()):
        raise ScenarioError(f"algorithm.{key} = {reference!r} must be 'package.module:name' "
                            "(dotted identifiers)")
    added = base_dir is not None and str(base_dir) not in sys.path
    if added:
        sys.path.insert(0, str(base_dir))
    if base_dir is not None:
        forget_imported_elsewhere(module_name, base_dir)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module: any failure to import is theirs to see
        where = f" (looked in {base_dir} and the environment)" if base_dir else ""
        raise ScenarioError(f"algorithm.{key} = {reference!r}: module {module_name!r} does not "
                            f"import{where}: {type(exc).__name__}: {exc}") from exc
    finally:
        if added:
            sys.path.remove(str(base_dir))
    if not hasattr(module, attribute):
        raise ScenarioError(f"algorithm.{key} = {reference!r}: module {module_name!r} has no "
                            f"{attribute!r}")
    return getattr(module, attribute)


def forget_imported_elsewhere(module_name: str, base_dir: Path) -> None:
    """Drop ``module_name`` (and its packages) from ``sys.modules`` where ``base_dir`` holds a
    module of that name but the one imported came from another directory.

    Two scenarios in one process whose programs share a name (``planted.leaks`` in two output
    directories) would otherwise both run the first one imported: the second scenario's own
    file would never load.
    """
    parts = module_name.split(".")
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        loaded = sys.modules.get(name)
        if loaded is None:
            continue
        here = base_dir.joinpath(*parts[:i])
        own = [f.resolve() for f in (here.with_suffix(".py"), here / "__init__.py") if f.exists()]
        origin = getattr(loaded, "__file__", None)
        if own and (origin is None or Path(origin).resolve() not in own):
            for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
                del sys.modules[key]
            importlib.invalidate_caches()
            return


def program_entry(table: Mapping[str, Any], base_dir: Path | None) -> Algorithm:
    """The catalogue entry of the scenario's ``[algorithm] program = ...`` (module docstring).

    Raises
    ------
    ScenarioError
        If the program does not load or is not callable, or ``protocol`` does not name a
        Declaration or a registered protocol.
    """

    reference = table["program"]
    program = load_object(reference, "program", base_dir)
    if not callable(program):
        raise ScenarioError(f"algorithm.program = {reference!r} is not a function "
                            "program(ctx, X)")
    protocol: Any = table.get("protocol")
    if isinstance(protocol, str) and ":" in protocol:
        protocol = load_object(protocol, "protocol", base_dir)
        if not isinstance(protocol, Declaration):
            raise ScenarioError(f"algorithm.protocol = {table['protocol']!r} must name a "
                                "protocols.registry.Declaration (declare_protocol)")
    elif protocol is not None and not isinstance(protocol, str):
        raise ScenarioError(f"algorithm.protocol = {protocol!r} must be a protocol name or "
                            "'package.module:DECLARATION'")
    name = str(table.get("name", reference))
    named = check_inputs("algorithm.inputs", table.get("inputs"))

    def run(inp: RunInput) -> AlgorithmRun:
        if named is None:
            parties = site_parties(lambda ctx, X: program(ctx, X),
                                   [{"X": shard} for shard in inp.shards])
        else:
            parties = site_parties(lambda ctx, **kw: program(ctx, **kw),
                                   _named_inputs(named, len(inp.shards)))
        result = inp.simulation.run(parties, seed=inp.seed)
        outputs = {f"party_{m}": np.asarray(result.outputs[m]) for m in result.sites
                   if result.outputs.get(m) is not None}
        first = next(iter(outputs.values()), None)
        agree = first is not None and all(
            v.shape == first.shape and np.array_equal(v, first) for v in outputs.values())
        return AlgorithmRun(
            result=result, outputs=outputs, metrics={"outputs_agree": bool(agree)},
            audit_target=AuditTarget(tuple(parties), protocol),  # type: ignore[arg-type]
            tables=[_fitted_cost_table(program, inp, result) if named is None else
                    "cost per call: not fitted in d and M (the program takes named inputs, not "
                    "the data's columns); the ledger's tables above are measured"],
        )

    return Algorithm(
        name=name,
        summary=f"the user's program {reference}",
        reference=f"{reference} (scenario [algorithm] program)",
        params={"program": Param(reference, lambda k, v: v, "package.module:function"),
                "protocol": Param(table.get("protocol"), lambda k, v: v,
                                  "the Declaration (package.module:NAME) or protocol name"),
                "name": Param(name, lambda k, v: v, "the name reports use"),
                "inputs": Param(table.get("inputs"), lambda k, v: v,
                                "named inputs: a table of names, one value per party each")},
        run=run,
    )


def _fitted_cost_table(program: Any, inp: RunInput, result: Any) -> str:
    """The program's cost per call, fitted in d (the data's columns) and M (the data holders)
    by dry runs (:func:`sim.cost_fit.fit_costs_dm`) on the grid d ∈ {d, d + 1} × M ∈ {M, M + 1},
    checked at (d + 2, M + 2), beside the run's ledger. A dry run's party m has party
    (m mod M)'s rows with zero columns appended, on a complete fault-free network."""

    d = int(np.shape(inp.shards[0])[1]) if np.ndim(inp.shards[0]) == 2 else 1
    m = len(inp.shards)
    sim = inp.simulation

    def run_at(cols: int, parties: int) -> Any:
        shards = [np.hstack([np.asarray(s), np.zeros((np.shape(s)[0], cols - d))])
                  for s in (inp.shards[p % m] for p in range(parties))]
        dry = Simulation(Network.build(parties), prime=sim.field.p,
                         frac_bits=sim.fixed.frac_bits, seed=inp.seed, sealing=sim.sealing)
        return dry.run(site_parties(lambda ctx, X: program(ctx, X), [{"X": s} for s in shards]))

    title = (f"cost per call, fitted in d = columns and M = data holders by dry runs at "
             f"d = {d}, {d + 1} × M = {m}, {m + 1}, checked at d = {d + 2}, M = {m + 2}; "
             "beside the ledger")
    try:
        lines = fit_costs_dm(run_at, (d, d + 1), (m, m + 1), (d + 2, m + 2))
    except (MpcsimError, ValueError) as exc:
        return f"{title}: not fitted ({type(exc).__name__}: {exc})"
    return table(["call", "party", "quantity", "fitted", f"at d = {d}, M = {m}", "measured"],
                 cost_table_dm(lines, result, d), title)
