"""The claims table (:mod:`sim.claims`, ``mpcsim claims``): it covers every checkable claim of
the five seeds (``shared/spec/seeds_digest.md`` §8; seed 003's from ``shared/spec/cape.md``
§7), each row names tests that exist, the expensive rows' recorded outcomes are the README's,
the command line prints text and JSON and refuses an unknown id, and the README's reproduction
section is the table's output (a slow test that runs the whole table)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from sim.claims import CLAIMS, RECORDED, STATUSES, claims, markdown
from sim.cli import main

ROOT = Path(__file__).resolve().parent.parent

# digest §8: C1–C13 are seed 001's (the thesis; Fig. 3.8 reported on its own by §3.3), C14–C16
# seed 000's, C17–C18 seed 002's, C19–C24 seed 004's (its scalability Figs. 8–9 from §5.6);
# seed 003's claims are cape.md §7's (PCA-1–4, OTD-1–4) and §2.2's averaging claim
DIGEST_IDS = {**{f"C{i}": "001" for i in range(1, 14)}, "Fig. 3.8": "001",
              **{f"C{i}": "000" for i in (14, 15, 16)},
              "C17": "002", "C18": "002",
              "CAPE-mean": "003", **{f"PCA-{i}": "003" for i in range(1, 5)},
              **{f"OTD-{i}": "003" for i in range(1, 5)},
              **{f"C{i}": "004" for i in range(19, 25)}, "Figs. 8–9": "004"}
PARTS = {"C18": ("a", "b", "c")}  # Tables 1–2 of seed 002 state three orderings
ID = r"C\d+[a-c]?|Fig\. 3\.8|Figs\. 8–9|CAPE-mean|PCA-\d|OTD-\d"
VOLATILE = {"C8"}  # measures wall time: its figure changes from run to run, not its status


def test_every_digest_claim_of_the_five_seeds_has_exactly_one_row():
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids))
    expected = {}
    for cid, seed in DIGEST_IDS.items():
        for part in PARTS.get(cid, ("",)):
            expected[cid + part] = seed
    assert {c.id: c.seed for c in CLAIMS} == expected
    assert {c.seed for c in CLAIMS} == {"000", "001", "002", "003", "004"}


def test_every_named_test_exists():
    for claim in CLAIMS:
        for node in claim.tests:
            path, _, name = node.partition("::")
            assert (ROOT / path).is_file(), (claim.id, path)
            if name:
                tree = ast.parse((ROOT / path).read_text())
                names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
                assert name in names, (claim.id, node)


def test_expensive_claims_carry_a_recorded_outcome_and_cheap_ones_none():
    assert set(RECORDED) == {c.id for c in CLAIMS if c.expensive}
    assert all(outcome.status in STATUSES for outcome in RECORDED.values())


def test_markdown_table_has_one_row_per_claim_and_counts_statuses():
    rows = [{"id": "C1", "seed": "001", "source": "§2.2", "paper": "p", "status": "reproduced",
             "measured": "m", "note": ""},
            {"id": "C13", "seed": "001", "source": "§1.5", "paper": "q",
             "status": "missing", "measured": "—", "note": "no code"}]
    text = markdown(rows)
    assert text.count("\n| C") == 2
    assert "| C13 | seed 001 §1.5 | q | missing | —. no code |" in text
    assert text.endswith("1 reproduced, 0 partly, 0 not reproduced, 1 missing of 2 claims.")


def _readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Reproduction of the papers' claims", 1)[1].split("\n## ", 1)[0]
    return section.split("-->\n", 1)[1].split("\n<!-- end of generated table -->", 1)[0]


def _readme_rows() -> dict[str, tuple[str, str]]:
    """Claim id → (status, measured and note) of the README's generated table."""
    return {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(
        rf"^\| ({ID}) \| [^|]+ \| [^|]+ \| (reproduced|partly|not reproduced|missing) \| "
        r"(.*) \|$", _readme_section(), re.MULTILINE)}


def test_readme_lists_every_claim_with_a_status():
    assert set(_readme_rows()) == {c.id for c in CLAIMS}


def test_recorded_outcomes_are_the_readmes():
    readme = _readme_rows()
    for cid, outcome in RECORDED.items():
        status, measured = readme[cid]
        assert status == outcome.status, cid
        assert measured == outcome.measured + (f". {outcome.note}" if outcome.note else ""), cid


def test_python_api_runs_the_named_claims():
    rows = claims(["C24", "C5"])
    assert [r["id"] for r in rows] == ["C5", "C24"]  # the table's order
    assert all(r["status"] == "reproduced" for r in rows)


def test_cli_prints_text_json_and_refuses_an_unknown_id(capsys):
    assert main(["claims", "--only", "C5,C24"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("C5 ") and "measured:" in out
    assert out.endswith("2 reproduced, 0 partly, 0 not reproduced, 0 missing of 2 claims.\n")
    assert err.splitlines() == [line for line in err.splitlines() if ": reproduced (" in line]
    assert len(err.splitlines()) == 2

    assert main(["claims", "--only", "C24", "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert row["id"] == "C24" and row["seed"] == "004" and row["status"] == "reproduced"

    assert main(["claims", "--only", "C5,C99"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("error: unknown claim id(s) C99;")


def test_quick_reports_an_expensive_claim_without_measuring_it(capsys):
    expensive = next(c for c in CLAIMS if c.expensive)
    (row,) = claims([expensive.id], quick=True)
    assert row["status"] == RECORDED[expensive.id].status
    assert "--quick" in row["note"]


@pytest.mark.slow
def test_readme_section_is_the_tables_output():
    import os

    rows = claims(jobs=os.cpu_count() or 1)  # the rows of one process, in less time
    readme = _readme_rows()
    assert {r["id"]: r["status"] for r in rows} == {k: v[0] for k, v in readme.items()}
    table = markdown(rows)
    for r in rows:
        if r["id"] not in VOLATILE:
            assert readme[r["id"]][1] == r["measured"] + (f". {r['note']}" if r["note"]
                                                          else ""), r["id"]
    assert _readme_section().rstrip().endswith(table.splitlines()[-1])


def test_plan_runs_timed_claims_first_and_costly_groups_first_keeping_groups_together():
    from sim.claims.jobs import plan

    ids = ["A", "B", "C", "D", "E", "F"]
    first, groups = plan(ids, groups=[("B", "E"), ("C", "X")], alone=["D"],
                         cost={"A": 1.0, "B": 2.0, "E": 2.0, "F": 5.0})
    assert first == ["D"]
    # B + E cost 4 (one group, in the table's order), F 5, A 1, C 0
    assert groups == [["F"], ["B", "E"], ["A"], ["C"]]
    assert sorted([*first, *(i for g in groups for i in g)]) == ids


def test_processes_give_the_rows_of_one_process_in_the_tables_order():
    ids = ["C1", "C2", "C3", "C4", "C5", "C6", "C24"]
    one = claims(ids, jobs=1)
    seen: list[dict] = []
    two = claims(ids, jobs=2, finished=seen.append)
    assert sorted(r["id"] for r in seen) == sorted(ids)  # each once, as it finished
    assert [r["id"] for r in two] == [r["id"] for r in one] == [c.id for c in CLAIMS
                                                               if c.id in ids]
    for a, b in zip(one, two, strict=True):
        assert {k for k in a if "seconds" in k} == {"seconds", "cpu_seconds"}
        assert {k: v for k, v in a.items() if "seconds" not in k} == {
            k: v for k, v in b.items() if "seconds" not in k}
        assert b["cpu_seconds"] >= 0 and b["seconds"] >= 0
    assert markdown(one) == markdown(two)


def test_jobs_below_one_is_refused(capsys):
    assert main(["claims", "--only", "C5", "--jobs", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: jobs must be a whole number ≥ 1, got 0")


def test_shared_groups_name_claims_of_the_table_once_each():
    from sim.claims.catalog import ALONE, SHARED

    named = [i for group in SHARED for i in group] + list(ALONE)
    assert len(named) == len(set(named))
    assert set(named) <= {c.id for c in CLAIMS}


def test_expensive_claims_never_measured_are_planned_first_and_quick_ones_as_free():
    import math

    from sim.claims.catalog import planning_cost
    from sim.claims.recorded import CPU_SECONDS

    assert set(CPU_SECONDS) <= {c.id for c in CLAIMS if c.expensive}
    full, quick = planning_cost(False), planning_cost(True)
    for c in CLAIMS:
        if not c.expensive:
            assert full[c.id] == quick[c.id] == 0.0
        else:
            assert quick[c.id] == 0.0
            assert full[c.id] == CPU_SECONDS.get(c.id, math.inf)
