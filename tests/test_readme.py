"""The README's and the reference pages' claims hold: every code block runs (or is checked
against what it describes), every table names what exists, and the scenarios say what they do.

Each fenced code block of README.md and of every ``docs/*.md`` page must be claimed by exactly
one check below (matched by its first line, wherever the block lives), so a block added or
moved later cannot go unchecked; ``docs/tutorial.md`` is claimed whole by ``tests/test_docs.py``,
which runs it in order. Figures the README quotes (message
counts, bytes, verdicts) are compared with a real run; expected values written here come from
the README's own text or from numpy, never from the code under test.
"""

from __future__ import annotations

import fnmatch
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from sim import catalog
from sim.cli import _parser, main
from sim.runner import plan_scenario, run_scenario
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# the pages whose blocks this module checks one by one, by path relative to the repository
PAGES = {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
         for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]}
# pages a whole-page test runs in order instead (their blocks build on each other)
RUN_WHOLE = {"docs/tutorial.md": "tests/test_docs.py::test_the_tutorial_runs_as_written"}
SCENARIOS = sorted((ROOT / "scenarios").glob("*.toml"))


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int

    @property
    def first(self) -> str:
        return self.text.splitlines()[0] if self.text else ""


def code_blocks(text: str = README) -> list[Block]:
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[i])
        if match:
            start, body = i + 1, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append(Block(match.group(1), "\n".join(body), start))
        i += 1
    return blocks


def page_blocks() -> list[tuple[str, Block]]:
    """Every code block of the pages checked one by one, with the page it is on."""
    return [(page, b) for page, text in PAGES.items() if page not in RUN_WHOLE
            for b in code_blocks(text)]


def block(first_line_prefix: str) -> Block:
    found = [b for _, b in page_blocks() if b.first.startswith(first_line_prefix)]
    assert len(found) == 1, f"the pages have {len(found)} blocks starting {first_line_prefix!r}"
    return found[0]


def page_with(heading: str) -> str:
    """The text of the one page that has ``heading`` (a line of it)."""
    found = [text for text in PAGES.values() if heading in text.splitlines()
             or any(line.startswith(heading) for line in text.splitlines())]
    assert len(found) == 1, f"{len(found)} pages have the heading {heading!r}"
    return found[0]


def section(heading: str) -> str:
    """From ``heading`` to the next heading of level two (on whichever page has it)."""
    return page_with(heading).split(heading, 1)[1].split("\n## ", 1)[0]


def table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first Markdown table after ``heading`` (on whichever page)."""
    section = page_with(heading).split(heading, 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            rows.append(cells)
        elif rows:
            break
    return [r for r in rows[1:] if not set("".join(r)) <= set("- ")]


@pytest.fixture(scope="module")
def ratings_run():
    """One run of the fastest PD-NMF scenario, shared by the checks that read a report."""
    return run_scenario(ROOT / "scenarios" / "pd_nmf_ratings.toml")


@pytest.fixture(scope="module")
def quickstart_output() -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", str(ROOT / "scenarios" / "quickstart.toml"), "--quiet"]) == 0
    return out.getvalue()


# -- every block is claimed by one check -----------------------------------------------------


CHECKED = {
    "make run": "test_make_targets_do_what_the_readme_says",
    "communication per party": "test_make_run_prints_what_the_readme_shows",
    "mpcsim run SCENARIO": "test_command_synopsis_matches_the_parser",
    "from parties.party import site_parties": "test_python_example_sums_at_every_party",
    "from protocols.field import prime_field": "test_audit_example_gives_what_it_comments",
    "from protocols.effects import Call, Send": "test_pattern_example_finds_the_extra_message",
    "from sim.runner import plan_scenario": "test_runner_example_writes_what_it_says",
    'name = "quickstart"': "test_scenario_format_block_is_a_valid_scenario",
    "# scenario essentials": "test_scenario_essentials_are_the_quickstart_file",
    "mpiexec -n 3": "test_mpi_commands_run_on_three_ranks",
    "cat > hosts.txt": "test_host_file_example_uses_real_options",
    "schema            1": "test_report_schema_lists_the_report_keys",
    "# key flow": "test_key_flow_example_names_the_seed",
    "# audit inputs": "test_audit_inputs_example_is_a_leak",
    "# program rerun": "test_program_rerun_example_is_private",
    "# your own protocol": "test_own_protocol_example_is_private_and_its_bug_a_leak",
    "# secagg audit": "test_secagg_audit_example_is_private",
}


def test_every_code_block_is_checked() -> None:
    unclaimed = [f"{page} line {b.line}: {b.first!r}" for page, b in page_blocks()
                 if not any(b.first.startswith(prefix) for prefix in CHECKED)]
    assert unclaimed == [], "code blocks without a check:\n" + "\n".join(unclaimed)
    for prefix, test in CHECKED.items():
        block(prefix)  # each check's block exists exactly once
        assert callable(globals()[test])
    for page, test in RUN_WHOLE.items():
        path, name = test.split("::")
        assert page in PAGES and f"def {name}(" in (ROOT / path).read_text(encoding="utf-8")
        assert f'"{page}"' in (ROOT / path).read_text(encoding="utf-8")  # and reads that page


# -- the blocks ------------------------------------------------------------------------------


def test_make_targets_do_what_the_readme_says() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")

    def recipe(target: str) -> str:
        match = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", makefile, re.M)
        assert match, f"no `make {target}`"
        return match.group(1)

    for line in block("make run").text.splitlines():
        target = line.split()[1]
        assert recipe(target)
    assert "mpcsim run scenarios/quickstart.toml" in recipe("run")
    assert 'pytest -q -m "not slow"' in recipe("test")
    assert "pytest -q" in recipe("test-all") and "not slow" not in recipe("test-all")
    assert "benchmarks/*.py" in recipe("bench")
    assert "ruff check" in recipe("lint")
    assert "$(STAMP)" in recipe("run") or "pip install" in makefile  # sets itself up


def test_make_run_prints_what_the_readme_shows(quickstart_output: str) -> None:
    shown = block("communication per party").text.splitlines()
    got = [line.rstrip() for line in quickstart_output.splitlines()]
    for line in shown:
        if line.strip() == "...":
            continue
        if line.endswith("..."):
            prefix = line[:-3].rstrip()
            assert any(g.startswith(prefix) for g in got), f"no output line starts {prefix!r}"
        else:
            assert line.rstrip() in got, f"README shows {line!r}, not in the output"


def test_command_synopsis_matches_the_parser(capsys) -> None:
    lines = block("mpcsim run SCENARIO").text.splitlines()
    run_usage = _parser()._subparsers._group_actions[0].choices["run"].format_usage()  # type: ignore[union-attr]
    for option in re.findall(r"--\w+", lines[0]):
        assert option in run_usage, option
    assert set(re.findall(r"--\w+", run_usage)) - {"--help"} == set(re.findall(r"--\w+", lines[0]))
    for line in lines[1:]:
        argv = line.split("#")[0].split()[1:]
        assert main(argv) == 0, line
    out = capsys.readouterr().out
    assert "quickstart.toml" in out and "integer, 1 ≤ x ≤ 10000" in out


def test_python_example_sums_at_every_party() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("from parties.party import site_parties").text, "README", "exec"),
         namespace)
    result = namespace["result"]
    expected = np.sum([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], axis=0)  # the README's inputs
    for m in result.sites:  # type: ignore[attr-defined]
        assert np.allclose(result.outputs[m], expected, atol=1e-6)  # type: ignore[attr-defined]
    assert np.allclose(expected, [9.0, 12.0])  # the value the README comments
    assert result.coalition([0, 1]).members == (0, 1)  # type: ignore[attr-defined]


def test_audit_example_gives_what_it_comments() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("from protocols.field import prime_field").text, "README", "exec"),
         namespace)
    r = namespace["r"]
    assert r.verdict == "private"  # type: ignore[attr-defined]
    # the README rounds the detectable distance to two places
    assert round(r.power["sup_cdf_distance"], 2) == 0.31  # type: ignore[attr-defined]


def test_pattern_example_finds_the_extra_message() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("from protocols.effects import Call, Send").text, "README", "exec"),
         namespace)  # the block asserts its own verdict
    result = namespace["result"]
    assert result.message.startswith("status#0.ping from ")  # type: ignore[attr-defined]


def test_key_flow_example_names_the_seed() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("# key flow").text, "README", "exec"), namespace)  # asserts inside
    result = namespace["result"]
    assert result.message == "secure_sum#1.column_sum from 1 to 0"  # type: ignore[attr-defined]


def test_secagg_audit_example_is_private() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("# secagg audit").text, "README", "exec"), namespace)  # asserts inside
    # the page: sim.privacy.audit programs SecAgg's oracle by default (variant_of(config, "affine"))
    assert namespace["result"].details["protocols"] == [  # type: ignore[attr-defined]
        "secagg (t=2,oracle=affine)"]


def test_audit_inputs_example_is_a_leak() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("# audit inputs").text, "README", "exec"), namespace)  # asserts inside
    assert namespace["r"].message == "secure_sum#1.sum output at 0"  # type: ignore[attr-defined]


def test_program_rerun_example_is_private() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("# program rerun").text, "README", "exec"), namespace)  # asserts inside
    assert namespace["result"].details["simulated_runs"] == 40 * 8  # type: ignore[attr-defined]


def test_own_protocol_example_is_private_and_its_bug_a_leak() -> None:
    namespace: dict[str, object] = {}
    exec(compile(block("# your own protocol").text, "README", "exec"), namespace)  # asserts
    assert namespace["bug"].message.startswith("my_sum#1.column_sum from ")  # type: ignore


def test_runner_example_writes_what_it_says(tmp_path, monkeypatch) -> None:
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(block("from sim.runner import plan_scenario").text, "README", "exec"),
         namespace)
    written = sorted(p.name for p in (tmp_path / "out" / "pd_nmf_ratings").iterdir())
    assert written == ["ledger.csv", "objective.png", "outputs.npz", "report.json"]
    run = namespace["run"]
    assert run.report["metrics"]["max_abs_diff_vs_centralized"] < 1e-6  # type: ignore[attr-defined]
    assert "messages" in namespace["plan"].estimate.describe()  # type: ignore[attr-defined]


def test_scenario_format_block_is_a_valid_scenario(tmp_path) -> None:
    text = block('name = "quickstart"').text
    scenario = load_scenario(tomllib.loads(text), base_dir=tmp_path)
    assert scenario.n_parties == 4 and scenario.prime == 2**61 - 1
    assert plan_scenario(scenario).shards[0].shape == (100, 20)  # 400 rows among 4 parties
    # every range the comments give is the one the scenario layer enforces
    from sim.scenario import RANGES

    assert RANGES["network.parties"] == (1, 10_000) and "1 ≤ M ≤ 10000" in text
    assert RANGES["network.latency_ms"] == (0.0, 60_000.0) and "0 ≤ latency_ms ≤ 60000" in text
    assert RANGES["network.bandwidth_mbps"] == (0.001, 10_000_000.0)
    assert "0.001 ≤ bandwidth_mbps ≤ 10000000" in text
    assert RANGES["data.density"] == (0.0, 1.0) and "0 < density ≤ 1" in text


def test_scenario_essentials_are_the_quickstart_file() -> None:
    """The README's short scenario is ``scenarios/quickstart.toml`` without its comments:
    both parse to the same tables."""
    text = block("# scenario essentials").text
    assert "scenarios/quickstart.toml" in text.splitlines()[0]
    assert tomllib.loads(text) == tomllib.loads(
        (ROOT / "scenarios" / "quickstart.toml").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_scenario_format_block_runs(tmp_path) -> None:
    scenario = load_scenario(tomllib.loads(block('name = "quickstart"').text), base_dir=tmp_path)
    run = run_scenario(scenario)
    assert run.report["privacy"][0]["verdict"] == "private"


def mpi_commands(text: str, tmp_path: Path) -> list[str]:
    """The block's commands, run from ``tmp_path`` (which links the repository's scenarios and
    virtual environment) with the installed MPICH's ``mpiexec`` first on the PATH."""
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    venv = ROOT / ".venv" if (ROOT / ".venv").exists() else Path(sys.executable).parents[1]
    (tmp_path / ".venv").symlink_to(venv)
    return [line.split("#")[0].strip() for line in text.splitlines() if line.strip()]


def test_mpi_commands_run_on_three_ranks(tmp_path) -> None:
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    import json
    import os
    import subprocess
    import sysconfig

    env = {**os.environ, "PATH": sysconfig.get_path("scripts") + os.pathsep + os.environ["PATH"],
           "OMP_NUM_THREADS": "1"}
    for command in mpi_commands(block("mpiexec -n 3").text, tmp_path):
        done = subprocess.run(command + " --quiet", shell=True, cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        assert "communication per party" in done.stdout  # rank 0 prints the report once
        assert done.stdout.count("communication per party") == 1
    report = json.loads((tmp_path / "out" / "q" / "report.json").read_text())
    assert report["driver"]["name"] == "mpi" and report["driver"]["ranks"] == 3


def test_host_file_example_uses_real_options() -> None:
    """Across hosts cannot run here: the host file is MPICH's ``host:slots`` format, and the
    command line is what ``--ranks`` itself starts, with the CLI's own options."""
    lines = block("cat > hosts.txt").text.replace("\\\n", " ").splitlines()
    assert lines[0] == "cat > hosts.txt <<'EOT'" and "EOT" in lines
    hosts = lines[1:lines.index("EOT")]
    assert hosts and all(re.fullmatch(r"[\w.-]+:\d+", h) for h in hosts)
    command = lines[lines.index("EOT") + 1].split()
    assert command[:2] == ["mpiexec", "-disable-auto-cleanup"] and "-f" in command
    launch = (ROOT / "sim" / "drivers" / "launch.py").read_text(encoding="utf-8")
    assert '"-disable-auto-cleanup"' in launch  # what `--ranks` passes too
    run = command.index("run")
    assert command[run - 1].endswith("/.venv/bin/mpcsim")
    assert (ROOT / command[run + 1]).is_file()
    options = [w for w in command[run + 2:] if w.startswith("--")]
    usage = _parser()._subparsers._group_actions[0].choices["run"].format_usage()  # type: ignore[union-attr]
    assert options and all(option in usage for option in options)


def test_report_schema_lists_the_report_keys(ratings_run) -> None:
    text = block("schema            1").text
    listed = {line.split()[0] for line in text.splitlines() if line and not line[0].isspace()}
    inline = set(re.findall(r"(\w+):", text))  # "reference:" and "roles:" are given inline
    rep = ratings_run.report
    only_with = {"coalition_studies",  # present when a scenario runs a coalition study
                 "faults", "outcome"}  # with [[fault]] entries; when a fault aborted the run
    assert listed - only_with <= set(rep), listed - set(rep)
    assert set(rep) <= listed | inline, set(rep) - listed - inline
    comm_lines = text.split("\ncommunication", 1)[1].split("\ntime", 1)[0]
    comm_keys = {w.strip(",") for line in comm_lines.splitlines() if line.startswith("  ")
                 for w in line.split()[:4] if re.fullmatch(r"[a-z_]+,?", w)}
    assert set(rep["communication"]) <= comm_keys, set(rep["communication"]) - comm_keys
    phases = set(rep["communication"]["per_phase"])
    assert "" not in phases and {"setup", "iter"} <= phases  # key agreement is "setup"
    assert "setup" in comm_lines


# -- the tables ------------------------------------------------------------------------------


def test_algorithm_table_matches_the_catalogue() -> None:
    rows = table_rows("Algorithms and their keys")
    names = [re.sub(r"`", "", r[0]) for r in rows]
    entries = catalog.algorithms()
    assert len(names) == len(set(names)) and sorted(names) == sorted(entries)
    for name, row in zip(names, rows, strict=True):
        listed = re.split(r"; metrics? |; outputs? ", row[2])[0]
        inherited = re.match(r"as `(\w+)`,? ?(?:without ([^,]*(?:, `\w+`)*))?", listed)
        keys = set(re.findall(r"`(\w+)`", listed))
        if inherited:  # "as `base`, without `a`, `b`, plus `c`": base's keys − a, b + c
            base = entries[inherited.group(1)].params
            dropped = set(re.findall(r"`(\w+)`", inherited.group(2) or "")) & set(base)
            keys = (keys - {inherited.group(1)} - set(re.findall(
                r"`(\w+)`", inherited.group(2) or ""))) | (set(base) - dropped)
        assert keys == set(entries[name].params), name


def expand(name: str) -> list[str]:
    """``cape_{a,b}_{c,d}.toml`` → the four file names it stands for."""
    match = re.search(r"\{([^}]*)\}", name)
    if not match:
        return [name]
    return [n for option in match.group(1).split(",")
            for n in expand(name[: match.start()] + option + name[match.end():])]


def scenario_rows() -> dict[str, list[str]]:
    """Scenario file name → its row of the README's table (brace patterns expanded)."""
    return {name: row for row in table_rows("## The scenarios in scenarios/")
            for name in expand(row[0].strip("`"))}


def test_scenario_table_names_every_scenario_with_its_cpu_time() -> None:
    rows = scenario_rows()
    assert sorted(rows) == [p.name for p in SCENARIOS]
    for name, row in rows.items():
        assert len(row) == 4 and re.fullmatch(r"\d+(\.\d+)?(–\d+)? (s|min)", row[3]), (name, row)
    text = section("## The scenarios in scenarios/")
    assert "benchmarks/estimate_accuracy.py" in text  # where the CPU times come from
    assert not re.search(r"~\s*\d+\s*min", text)


# -- the scenarios say what they do ------------------------------------------------------------


def described_claims(description: str) -> dict[str, object]:
    claims: dict[str, object] = {}
    if m := re.search(r"M = (\d+)", description) or re.search(r"(\d+) parties", description):
        claims["parties"] = int(m.group(1))
    if primes := re.findall(r"GF\((\d+)\)", description):
        claims["exact_primes"] = sorted({int(p) for p in primes})
    if m := re.search(r"\((\d+(?:/\d+)+) rows\)", description):
        claims["partition"] = [int(x) for x in m.group(1).split("/")]
    if "explicit" in description:
        claims["variant"] = "explicit"
    if m := re.search(r"(\w+) network", description):
        claims["topology"] = m.group(1)
    return claims


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_each_scenario_description_matches_its_contents(path: Path) -> None:
    raw = tomllib.loads(path.read_text())
    scenario = load_scenario(path)
    claims = described_claims(raw.get("description", ""))
    actual = {
        "parties": scenario.n_parties,
        "exact_primes": sorted({a.prime for a in scenario.audits if a.method == "exact"}),
        "partition": scenario.data["partition"],
        "variant": scenario.algorithm.get("variant", "prg"),
        "topology": scenario.topology,
    }
    for key, value in claims.items():
        assert actual[key] == value, f"{path.name}: description says {key} = {value}"


def test_list_describes_scenarios_as_their_files_do(capsys) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for path in SCENARIOS:
        description = tomllib.loads(path.read_text()).get("description", "")
        assert any(path.name in line and description in line for line in out.splitlines())


FAST = ["pd_nmf_ratings"]  # the others run in `make test-all`


@pytest.mark.parametrize("path", [pytest.param(p, marks=() if p.stem in FAST else
                                               pytest.mark.slow) for p in SCENARIOS],
                         ids=[p.stem for p in SCENARIOS])
def test_every_scenario_runs_and_writes_what_the_table_says(path: Path, tmp_path,
                                                           request) -> None:
    pngs = re.findall(r"`([\w*]+\.png)`", scenario_rows()[path.name][2])
    if path.stem == "pd_nmf_ratings":
        run = request.getfixturevalue("ratings_run")
    else:
        run = run_scenario(path)
    run.write(tmp_path / "out")
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    plots = [w for w in written if w not in ("ledger.csv", "outputs.npz", "report.json")]
    assert len(written) - len(plots) == 3
    assert len(plots) == len(pngs) and all(
        any(fnmatch.fnmatch(p, pattern) for pattern in pngs) for p in plots), (plots, pngs)
    assert run.report["scenario"] == path.stem


def test_plan_estimates_every_scenario_without_running_it() -> None:
    for path in SCENARIOS:
        plan = plan_scenario(path)
        assert plan.estimate.messages >= 0 and plan.estimate.memory_bytes > 0


# -- the pages link to what exists -------------------------------------------------------------


def test_the_readme_maps_every_page_and_cites_the_papers() -> None:
    """A newcomer's README: short, linking every page of docs/, naming the catalogue's
    protocols beyond the first two, and the five source papers by title."""
    assert len(README.splitlines()) < 400
    for page in PAGES:
        if page != "README.md":
            assert f"]({page})" in README, f"README does not link {page}"
    opening = README.split("\n## ", 1)[0]
    assert "today" not in opening  # it once said "SecureSum and PD-NMF ... today"
    for name in ("SecureSum", "PD-NMF", "PD-SVD", "CAPE", "DSANLS", "SecAgg", "KSDP"):
        assert name in opening, name
    papers = section("## Source papers")
    for title in ("Privacy-preserving Non-negative Matrix Factorization with Outliers",
                  "Nonnegative Matrix Factorization under Adversarial Noise",
                  "Distributed Differentially-Private Algorithms for Matrix and Tensor "
                  "Factorization",
                  "Fast and Secure Distributed Nonnegative Matrix Factorization"):
        assert f'"{title}"' in papers, title
    assert "Tsikhanovich" in papers and "10.5121/csit.2019.91601" in papers
    for heading in ("## Two commands", "## Quickstart", "## A tour of the layout",
                    "## Dependencies of the channels and masks", "## Trust boundary"):
        assert heading in README.splitlines(), heading


def test_every_relative_link_resolves() -> None:
    for page, text in PAGES.items():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            assert ((ROOT / page).parent / target).exists(), f"{page} links to {target}"
