"""Reports: the JSON report, console tables, and the files a run writes.

The JSON report's schema is documented in the README ("Report schema"). Every communication
figure in it is a query over the ledger (:mod:`sim.ledger`). Files are written atomically:
everything is staged in a temporary directory next to the destination, and only once all of it
is written are the files moved into place, so a failed run leaves nothing half-written.
``outputs.npz`` is written with fixed zip timestamps so that a seeded run replays byte for byte.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from protocols.field import describe_prime
from sim.console import table
from sim.ledger import COLUMNS
from sim.network import Network

if TYPE_CHECKING:
    from parties.audit import AuditResult
    from sim.entry import Algorithm, AlgorithmRun
    from sim.scenario import Scenario

SCHEMA_VERSION = 1
FileContent = bytes | Callable[[Path], object]
"""What :func:`write_files` writes under a name: bytes, or a function making the file."""


def build_report(
    scenario: Scenario,
    entry: Algorithm,
    params: Mapping[str, Any],
    seed: int,
    run: AlgorithmRun,
    audits: Sequence[AuditResult],
    wall_s: float,
    network: Network,
    attacks: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The JSON-ready report of one scenario run."""
    result = run.result
    roles = result.roles if result is not None else {m: "site" for m in range(scenario.n_parties)}
    if result is not None:
        ledger = result.ledger
        totals = ledger.totals()
        communication: dict[str, Any] = {
            "total_elements": totals["elements"],
            "total_bytes": totals["bytes"],
            "total_messages": totals["messages"],
            "rounds": totals["rounds"],
            "per_party": ledger.per_party(roles),
            "per_protocol": ledger.summary("protocol"),
        }
        if run.communication_by_phase:
            communication["per_phase"] = ledger.summary("phase")
        simulated = result.simulated_s
    else:
        communication = {"total_elements": 0, "total_bytes": 0, "total_messages": 0,
                         "rounds": 0, "per_party": [], "per_protocol": {}}
        simulated = 0.0
    return {
        "schema": SCHEMA_VERSION,
        "scenario": scenario.name,
        "algorithm": entry.name,
        "reference": entry.reference,
        "parameters": _jsonable(dict(params)),
        "parties": scenario.n_parties,
        "roles": {str(k): v for k, v in sorted(roles.items())},
        "seed": seed,
        "network": {**network.describe(), "sealing": scenario.sealing},
        "field": {"prime": describe_prime(scenario.prime), "frac_bits": scenario.frac_bits},
        "outputs": {k: {"shape": list(np.shape(v)), "dtype": str(np.asarray(v).dtype)}
                    for k, v in sorted(run.outputs.items())},
        "metrics": _jsonable(run.metrics),
        "communication": communication,
        "time": {"simulated_s": simulated, "wall_s": wall_s},
        "privacy": [a.to_dict() for a in audits],
        "attacks": [dict(a) for a in attacks],
        **({"faults": _jsonable(result.faults)} if result is not None and result.faults else {}),
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        v = float(value)
        return v if np.isfinite(v) else str(v)
    if isinstance(value, Path):
        return str(value)
    return value


def to_json(rep: Mapping[str, Any]) -> str:
    return json.dumps(_jsonable(rep), indent=2, sort_keys=False) + "\n"


# -- console ---------------------------------------------------------------------------------


def _clock(rep: dict[str, Any]) -> str:
    """The time line: simulated time under SimPy; under MPI the runs' own wall time."""
    time_, driver = rep["time"], rep.get("driver") or {}
    if driver.get("name") == "mpi":
        return (f"MPI on {driver['ranks']} ranks, {driver['hosts']} host(s): runs "
                f"{time_['simulated_s']:.4g} s, wall {time_['wall_s']:.3g} s")
    return f"simulated {time_['simulated_s']:.4g} s, wall {time_['wall_s']:.3g} s"


def format_report(rep: Mapping[str, Any], extra_tables: Sequence[str] = ()) -> str:
    """Console rendering of a report: communication per party and protocol, time, privacy."""
    comm = rep["communication"]
    out = [
        f"scenario {rep['scenario']}: {rep['algorithm']} with {rep['parties']} parties "
        f"(seed {rep['seed']}; {rep['field']['prime']} with {rep['field']['frac_bits']} "
        f"fractional bits; {rep['network']['topology']} network, "
        f"sealing {'on' if rep['network']['sealing'] else 'off'})",
        "",
    ]
    pp = comm["per_party"]
    if pp:
        out.append(table(
            ["party", "role", "msgs sent", "elements sent", "bytes sent", "msgs recv",
             "elements recv", "bytes recv"],
            [[p["party"], p["role"], p["messages_sent"], p["elements_sent"], p["bytes_sent"],
              p["messages_received"], p["elements_received"], p["bytes_received"]] for p in pp],
            "communication per party",
        ))
        out.append("")
    for key, title in (("per_protocol", "protocol"), ("per_phase", "phase")):
        groups = comm.get(key)
        if groups:
            out.append(table(
                [title, "calls", "messages", "elements", "bytes", "rounds"],
                [[name or "(none)", g["calls"], g["messages"], g["elements"], g["bytes"],
                  g["rounds"]] for name, g in groups.items()],
                f"communication per {title}",
            ))
            out.append("")
    out.append(
        f"total: {comm['total_messages']:,} messages, {comm['total_elements']:,} elements, "
        f"{comm['total_bytes']:,} bytes, {comm['rounds']} rounds; {_clock(rep)}"
    )
    metrics = rep.get("metrics") or {}
    scalars = [(k, v) for k, v in metrics.items() if isinstance(v, int | float | str)]
    if scalars:
        out.append("")
        out.append(table(["metric", "value"], scalars, "metrics"))
    if rep.get("privacy"):
        out.append("")
        rows = []
        for a in rep["privacy"]:
            p = a.get("p_value")
            run = (a.get("details") or {}).get("run")
            rows.append([",".join(map(str, a["coalition"])), a["method"], a["verdict"],
                         "—" if p is None else f"{p:.3g}", _audit_where(a),
                         (f"run {run}: " if run else "") + _audit_note(a)])
        out.append(table(["coalition", "method", "verdict", "p-value", "first failure",
                          "details"], rows, "t-privacy audits"))
    if rep.get("attacks"):
        out.append("")
        out.append(table(
            ["attack", "coalition", "relative error", "details"],
            [[a["name"], ",".join(map(str, a["coalition"])), float(a["relative_error"]),
              ", ".join(f"{k} {v}" for k, v in a.get("details", {}).items())]
             for a in rep["attacks"]],
            "attacks on the coalitions' views",
        ))
    for extra in extra_tables:
        out.append("")
        out.append(extra)
    return "\n".join(out) + "\n"


def _audit_where(audit: Mapping[str, Any]) -> str:
    """The first failing call and message of a leak (or '—')."""
    if audit.get("message"):
        return str(audit["message"])
    return "—" if audit.get("call") is None else f"call {audit['call']}"


def _audit_note(audit: Mapping[str, Any]) -> str:
    """One line of figures: the power of a private verdict, or why there is no verdict."""
    d = audit.get("details") or {}
    power = audit.get("power") or {}
    if audit["verdict"] in ("inconclusive", "not applicable") or "reason" in d:
        needed = d.get("trials_needed")
        return str(d.get("reason", "")) + (f"; use trials ≥ {needed}" if needed else "")
    if audit["method"] == "exact":
        tapes = power.get("coalition_tapes_checked", d.get("assignments_checked"))
        scope = ("every value of the coalition's randomness" if power.get("exact")
                 else f"{tapes} of {power.get('of')} values of the coalition's randomness (a "
                      f"leak on ≥ {power.get('leak_fraction_of_coalition_tapes', 0):.0%} of "
                      "them caught)")
        return (f"GF({d.get('field')}): {d.get('honest_inputs_with_same_output')} other honest "
                f"inputs, {scope}")
    trials = d.get("trials")
    if audit["verdict"] == "leak":
        return f"{trials} trials; {d.get('family', '')} test, {d.get('rejections', 0)} rejected"
    sup = power.get("sup_cdf_distance")
    lin = power.get("linear") or {}
    cells = power.get("cells_l1") or {}
    parts = [f"{trials} trials, {d.get('tests')} tests"]
    if sup is not None:
        parts.append(f"catches sup-CDF distance ≥ {sup:.2g}")
    if cells:
        parts.append("residues " + ", ".join(f"{k}: L1 ≥ {v:.2g}" for k, v in cells.items()))
    parts.append(f"{lin.get('groups', 0)} linear groups")
    return "; ".join(parts)


# -- files -------------------------------------------------------------------------------------


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """An ``.npz`` archive with fixed timestamps (byte-identical for identical arrays)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name in sorted(arrays):
            arr = np.asarray(arrays[name])
            if arr.dtype == object:
                arr = arr.astype(str)
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def png_bytes(figure: Any) -> bytes:
    """Render a matplotlib figure to PNG bytes (and close it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    figure.savefig(buf, format="png", dpi=120, bbox_inches="tight",
                   metadata={"Software": None})
    plt.close(figure)
    return buf.getvalue()


def empty_ledger_csv() -> str:
    return ",".join(COLUMNS) + "\n"


OUTPUT_FILES = ("report.json", "outputs.npz", "ledger.csv")
"""The files every run writes; plots add ``<name>.png``, ``write_views`` a ``views/`` folder."""
VIEWS_DIR = "views"


def _ours(name: str) -> bool:
    return name in OUTPUT_FILES or name == VIEWS_DIR or name.endswith(".png")


def check_out_dir(out: Any, option: str = "--out") -> Path:
    """Check, before a run, that its output directory can be written; return it as a Path.

    The directory may not exist yet (it is created, with its parents) or may be an earlier
    run's output (it is replaced as a whole). Anything else is refused, so that no run is lost
    at the end and no unrelated file is overwritten.

    Parameters
    ----------
    out : str or Path
        The destination.
    option : str
        How the destination was given, for the message (``--out``, ``out=``).

    Raises
    ------
    InputError
        An empty path, a destination that is a file or a directory holding other files, or a
        place where nothing can be created (naming the directory that refused).
    """
    from protocols.errors import InputError

    if not isinstance(out, str | Path):
        raise InputError(f"{option} {out!r} must be a directory path (a string or a Path)")
    if not str(out).strip():
        raise InputError(
            f"{option} {str(out)!r} is empty; give the directory to write report.json, "
            "outputs.npz, ledger.csv and plots into, or leave it out"
        )
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise InputError(f"{option} {str(out)!r} exists and is not a directory; choose another")
    if path.is_dir():
        try:
            others = sorted(p.name for p in path.iterdir() if not _ours(p.name))
        except OSError as exc:
            raise InputError(f"{option} {str(out)!r} cannot be read ({exc.strerror})") from None
        if others:
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise InputError(
                f"{option} {str(out)!r} holds other files ({shown}); a run replaces its output "
                "directory as a whole, so choose a new or empty directory"
            )
    ancestor = path.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputError(f"{option} {str(out)!r}: {str(ancestor)!r} is not a directory")
    try:
        probe = _fresh_dir(ancestor, ".mpcsim-probe")
        probe.rmdir()
    except OSError as exc:
        raise InputError(
            f"{option} {str(out)!r} cannot be written: nothing can be created in "
            f"{str(ancestor)!r} ({exc.strerror or exc}); choose a writable place"
        ) from None
    return path


def _fresh_dir(parent: Path, stem: str, suffix: str = ".tmp") -> Path:
    """Create and return a new directory ``STEM.<12 hex>SUFFIX`` in ``parent`` (mode as mkdir
    gives); :func:`sim.ownership.staging_names` recognises the staging directories."""
    from protocols.seeds import fresh_bytes

    for _ in range(100):
        candidate = parent / f"{stem}.{fresh_bytes(6).hex()}{suffix}"
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise FileExistsError(f"no fresh directory name in {parent}")  # pragma: no cover


fresh_dir = _fresh_dir
"""A staging directory's fresh name, for another writer beside ``--out`` (the MPI view store,
:class:`sim.view_store.ViewScratch`)."""


def write_files(out_dir: Path, files: Mapping[str, FileContent]) -> list[Path]:
    """Write ``files`` into ``out_dir`` all or nothing.

    A file's content is its bytes, or ``write(path)``, which makes the file at ``path`` (a
    view linked from an MPI run's store: :mod:`sim.view_store`); a name may hold a
    subdirectory (``views/party-0.view``).

    Everything is first written into a fresh temporary directory beside ``out_dir``, which is
    then renamed to ``out_dir`` (one atomic rename). An earlier run's output in ``out_dir`` is
    first renamed aside and removed after the new one is in place. If writing fails, the
    temporary directory is removed and ``out_dir`` is untouched; a process killed at any
    moment leaves a complete ``out_dir`` or none (and perhaps a hidden ``.NAME.*.tmp`` beside
    it, which the next run into ``out_dir`` removes). The whole write holds ``out_dir``'s lock
    (:func:`sim.ownership.own_out_dir`); SIGINT and SIGTERM wait for the renames
    (:func:`sim.interrupt.deferred`). The temporary directory is made with ``mkdir``, so
    ``out_dir`` gets the permissions the umask gives.

    Raises
    ------
    InputError
        As :func:`check_out_dir` (the destination is checked again), or another run holds
        ``out_dir``'s lock.
    """
    from sim.ownership import own_out_dir

    out_dir = check_out_dir(out_dir)
    with own_out_dir(out_dir):
        return _write_owned(out_dir, files)


def _write_owned(out_dir: Path, files: Mapping[str, FileContent]) -> list[Path]:
    """:func:`write_files` under the directory's lock."""
    from sim.interrupt import deferred

    parent = out_dir.absolute().parent
    staging = _fresh_dir(parent, f".{out_dir.name}")
    old: Path | None = None
    try:
        for name, content in files.items():
            target = staging / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                content(target)
        with deferred():  # a signal here would leave the earlier output set aside
            if out_dir.is_dir():
                old = _fresh_dir(parent, f".{out_dir.name}", ".old.tmp")
                old.rmdir()
                os.rename(out_dir, old)
            try:
                os.rename(staging, out_dir)
            except OSError:
                if old is not None:  # put the earlier output back
                    os.rename(old, out_dir)
                    old = None
                raise
    except OSError as exc:
        from protocols.errors import InputError

        raise InputError(
            f"cannot write {str(out_dir)!r} ({exc.strerror or exc}); nothing was written"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    return [out_dir / name for name in files]
