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
import uuid
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from protocols.field import describe_prime
from sim.ledger import COLUMNS
from sim.network import Network

if TYPE_CHECKING:
    from parties.audit import AuditResult
    from sim.entry import Algorithm, AlgorithmRun
    from sim.scenario import Scenario

SCHEMA_VERSION = 1


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


# -- console tables ----------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> str:
    """A plain-text table with right-aligned numbers."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    lines = [title] if title else []
    lines.append("  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True)))
    lines.append("  ".join("-" * w for w in widths))
    for row in cells:
        lines.append("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    return "\n".join(lines)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


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
            rows.append([",".join(map(str, a["coalition"])), a["method"], a["verdict"],
                         "—" if p is None else f"{p:.3g}", _audit_where(a), _audit_note(a)])
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


def write_files(out_dir: Path, files: Mapping[str, bytes]) -> list[Path]:
    """Write ``files`` into ``out_dir`` all or nothing.

    Everything is first written into a temporary directory beside ``out_dir``. When
    ``out_dir`` does not exist yet (or is an empty directory), the temporary directory is then
    renamed to it in one atomic step, so a process killed at any moment — even by SIGKILL —
    leaves either no ``out_dir`` or a complete one (a killed run may leave its hidden
    temporary directory behind). Into an existing non-empty directory each file is moved with
    an atomic rename of its own. If writing fails, the temporary directory is removed and
    ``out_dir`` is untouched.
    """
    out_dir = Path(out_dir)
    parent = out_dir.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    if out_dir.exists() and not out_dir.is_dir():
        from protocols.errors import InputError

        raise InputError(f"--out {str(out_dir)!r} exists and is not a directory")
    # not mkdtemp: its 0700 mode would become out_dir's when renamed; mkdir honours the umask
    staging = parent / f".{out_dir.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"
    staging.mkdir()
    try:
        for name, content in files.items():
            (staging / name).write_bytes(content)
        if not out_dir.exists() or (out_dir.is_dir() and not any(out_dir.iterdir())):
            try:
                os.rename(staging, out_dir)  # atomic; replaces an empty directory
                return [out_dir / name for name in files]
            except OSError:  # created meanwhile, or a file system that cannot: file by file
                pass
        out_dir.mkdir(exist_ok=True)
        written = []
        for name in files:
            target = out_dir / name
            os.replace(staging / name, target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)
