"""The ``nmf_baselines`` entry (seed 004, §5.2, Figs. 2–5): DSANLS against distributed MU, HALS
and ANLS/BPP on one network from one start.

Fast tests run a small problem: the curves' lengths, the communication per node and iteration
against the closed forms (All-Gather: (N − 1)(|J_r| + |I_r|)k; DSANLS's two plain All-Reduces:
(N − 1)(kd + kd')), replays, the table and the plot, and bad keys. The slow tests run
``scenarios/nmf_baselines.toml`` (M 1000 × 2000, k = 20, N = 10) and assert the paper's
orderings.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from protocols.errors import ScenarioError
from sim.catalog.dsanls import BASELINE_METHODS as METHODS
from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def scenario(parties: int = 3, rows: int = 60, cols: int = 24, **algorithm):
    return {
        "seed": 8,
        "network": {"parties": parties, "sealing": False, "latency_ms": 0.05},
        "data": {"source": "synthetic", "kind": "ratings", "rows": rows, "cols": cols, "k": 3,
                 "density": 1.0},
        "algorithm": {"name": "nmf_baselines", "k": 3, "iterations": 4,
                      "sketched_iterations": 6, "sketch_size": 0.25, **algorithm},
    }


@pytest.fixture(scope="module")
def small():
    return run_scenario(scenario())


def test_every_method_runs_from_the_same_start(small) -> None:
    m = small.report["metrics"]
    assert set(m["relative_error"]) == set(METHODS)
    assert m["iterations"] == {label: 6 if label.startswith("DSANLS") else 4
                               for label in METHODS}
    assert m["common_iterations"] == 4
    for label in METHODS:  # every method lowers the common start's error
        assert m["relative_error"][label] < m["initial_relative_error"]
    assert sorted(m["ranking_by_time"]) == sorted(METHODS)
    assert sorted(m["ranking_by_iteration"]) == sorted(METHODS)
    assert m["time_window_s"] == pytest.approx(min(m["simulated_time"].values()))


def test_communication_per_node_matches_the_closed_forms(small) -> None:
    """60 samples and 24 features over 3 nodes: |J_r| = 20, |I_r| = 8, k = 3; d = 60/4 = 15,
    d' = 24/4 = 6."""
    N, k, samples, features, d, d_prime = 3, 3, 20, 8, 15, 6
    sent = small.report["metrics"]["elements_sent_per_party_per_iteration"]
    for label in METHODS:
        expected = ((N - 1) * (k * d + k * d_prime) if label.startswith("DSANLS")
                    else (N - 1) * (samples + features) * k)
        assert sent[label] == expected, label


def test_the_ring_all_reduce_sends_what_mpis_ring_sends_on_a_switch() -> None:
    """``allreduce = "ring"`` on a star: each of DSANLS's two All-Reduces sends every chunk of
    the k×d (k×d') array but two, with the chunks cut as numpy.array_split cuts them; the
    gathered baselines are untouched; the sum (so the errors) equals the plain run's within
    rounding."""
    N, k, d, d_prime = 3, 3, 15, 6
    methods = ["DSANLS/S", "HALS"]
    ring = run_scenario({**scenario(methods=methods, allreduce="ring"),
                         "network": {"parties": N, "sealing": False, "latency_ms": 0.05,
                                     "topology": "star"}})
    plain = run_scenario(scenario(methods=methods))

    def sent_by_node_0(length: int) -> int:
        sizes = [c.size for c in np.array_split(np.zeros(length), N)]
        return 2 * length - sizes[1] - sizes[2]

    m = ring.report["metrics"]
    assert m["elements_sent_per_party_per_iteration"]["DSANLS/S"] == (
        sent_by_node_0(k * d) + sent_by_node_0(k * d_prime))
    assert m["elements_sent_per_party_per_iteration"]["HALS"] == (N - 1) * (20 + 8) * k
    np.testing.assert_allclose(ring.outputs["error_dsanls_s"][2],
                               plain.outputs["error_dsanls_s"][2], rtol=1e-9)


def test_the_averages_are_geometric_means_of_the_curves(small) -> None:
    m = small.report["metrics"]
    for label in METHODS:
        _, times, errors = small.outputs[f"error_{label.lower().replace('/', '_')}"
                                         .replace("-", "_")]
        common = m["common_iterations"]
        assert m["iteration_averaged_error"][label] == pytest.approx(
            math.exp(np.mean(np.log(errors[:common]))))
        assert m["error_at_iteration"][label] == errors[common - 1]
        assert np.all(np.diff(times) > 0)


def test_replays_and_writes_table_and_plot(small, tmp_path: Path) -> None:
    again = run_scenario(scenario())
    for key, value in small.outputs.items():
        np.testing.assert_array_equal(value, again.outputs[key])
    written = small.write(tmp_path / "out")
    assert (tmp_path / "out" / "relative_error.png") in written
    assert (tmp_path / "out" / "report.json") in written


def test_a_subset_of_methods() -> None:
    run = run_scenario(scenario(methods=["DSANLS/S", "HALS"]))
    assert set(run.report["metrics"]["relative_error"]) == {"DSANLS/S", "HALS"}


@pytest.mark.parametrize("key,value,fragment", [
    ("methods", ["DSANLS/S", "NMF"], "must be a non-empty list of"),
    ("methods", ["MU", "MU"], "names a method twice"),
    ("iterations", 0, "iterations = 0"),
    ("k", 30, "must be ≤ min(m, n)"),
])
def test_bad_keys_are_refused(key, value, fragment) -> None:
    with pytest.raises(ScenarioError) as info:
        run_scenario(scenario(**{key: value}))
    assert fragment in str(info.value)


def test_more_nodes_than_features_is_refused() -> None:
    with pytest.raises(ScenarioError, match=r"needs m ≥ network\.parties"):
        run_scenario(scenario(parties=4, cols=3, k=2, methods=["MU"]))


# -- the paper's orderings at the scenario's scale (M 1000 × 2000, k = 20, N = 10) -------------


@pytest.fixture(scope="module")
def full():
    return run_scenario(SCENARIOS / "nmf_baselines.toml")


def curve(run, label: str) -> np.ndarray:
    """The errors after iterations 1..T of ``label``'s run."""
    return run.outputs[f"error_{label.lower().replace('/', '_').replace('-', '_')}"][2]


def geometric_mean(errors: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(errors))))


@pytest.mark.slow
def test_rcd_converges_faster_per_iteration_than_pgd(full) -> None:
    """Seed 004 §5.2 (Fig. 5, digest C22): RCD beats PGD per iteration for both sketches —
    over all 150 iterations and at the last one (measured geometric means 0.1455 vs 0.1704
    (subsampling) and 0.1456 vs 0.1706 (Gaussian); 0.1394 vs 0.1534 and 0.1399 vs 0.1538 at
    the end)."""
    for sketch in ("S", "G"):
        rcd, pgd = curve(full, f"DSANLS/{sketch}"), curve(full, f"DSANLS/{sketch}-PGD")
        assert geometric_mean(rcd) < geometric_mean(pgd)
        assert rcd[-1] < 0.95 * pgd[-1]


@pytest.mark.slow
def test_subsampling_is_faster_in_time_than_gaussian(full) -> None:
    """Seed 004 §5.2 (Figs. 2–3, C22): DSANLS/S is faster in (simulated) time than DSANLS/G.

    A Gaussian S^t costs every node the draw of n·d normals and |I_r|·n·d flops to form
    M_{I_r:}S^t, against |I_r|·d for a column subsample: 0.130 s against 0.0071 s per
    iteration at 1 GFLOP/s on the switch, so DSANLS/S's curve lies far lower against time."""
    m = full.report["metrics"]
    assert m["seconds_per_iteration"]["DSANLS/S"] < m["seconds_per_iteration"]["DSANLS/G"] / 10
    assert m["time_averaged_error"]["DSANLS/S"] < m["time_averaged_error"]["DSANLS/G"]


@pytest.mark.slow
def test_gaussian_per_iteration_advantage_does_not_reproduce_on_dense_data(full) -> None:
    """Seed 004 §5.2 (Fig. 4, C22) reports DSANLS/G converging faster per iteration than
    DSANLS/S. NOT reproduced here: on dense low-rank data the two are tied to 0.5 % over the
    150 iterations (measured geometric means 0.14545 (S) and 0.14561 (G), 0.1579 and 0.1584 after
    10 iterations). A dense random
    low-rank matrix is incoherent — every column carries about as much of the row space — so a
    uniform subsample of d = n/10 columns sketches it as well as Gaussian mixing does; the
    paper's advantage needs data whose information sits in few columns (its sparse sets).
    The test holds the tie, so that a change to either sketch is seen."""
    s, g = geometric_mean(curve(full, "DSANLS/S")), geometric_mean(curve(full, "DSANLS/G"))
    assert abs(s - g) / s < 0.005


@pytest.mark.slow
def test_dsanls_s_against_time_is_second_only_to_anls_bpp(full) -> None:
    """Seed 004 §5.2 (Figs. 2–3, C22): DSANLS/S reaches low error first in time. PARTLY
    reproduced, on a switch (star) with MPI's ring All-Reduce: over the window every run covers
    (DSANLS/S's 150 iterations, 0.71 simulated seconds) DSANLS/S beats MU, HALS and the other
    DSANLS variants, but ANLS/BPP lies lower (measured time-averaged error 0.1400 against
    0.1491; HALS 0.1567, MU 0.1858). The ring cuts a DSANLS node's traffic to a fifth of the
    All-Gather's (10,800 against 54,000 numbers per iteration) and DSANLS/S takes 7.1 ms per
    iteration against ANLS/BPP's 24.4 ms, but each exact ANLS step gains far more than three
    sketched steps on data this close to rank k. (With the plain All-Reduce on a complete
    graph the ranking was the same: 0.1424 against 0.1461.)"""
    m = full.report["metrics"]
    assert m["ranking_by_time"][:2] == ["ANLS/BPP", "DSANLS/S"]
    sent = m["elements_sent_per_party_per_iteration"]
    assert sent["DSANLS/S"] == 2 * 9 * 20 * (200 + 100) / 10  # the ring: 2(N − 1)k(d + d')/N
    assert sent["ANLS/BPP"] == 9 * 20 * (200 + 100)  # All-Gather: (N − 1)k(n + m)/N


@pytest.fixture(scope="module")
def full_k100():
    """The scenario at the paper's default k = 100 (data of rank 100, the same 1000 × 2000)."""
    import tomllib

    spec = tomllib.loads((SCENARIOS / "nmf_baselines.toml").read_text())
    spec["data"]["k"] = spec["algorithm"]["k"] = 100
    return run_scenario(spec)


@pytest.mark.slow
def test_at_k_100_the_orderings_of_k_20_hold_and_hals_passes_dsanls(full_k100) -> None:
    """Seed 004 §5.2 at its default k = 100 (Figs. 2–5; the scenario's k = 20 above), same
    data shape, nodes and network. Holds as at k = 20: RCD below PGD per iteration for both
    sketches (geometric means 0.1221 vs 0.1296 subsampling, 0.1230 vs 0.1296 Gaussian),
    DSANLS/S below DSANLS/G in time (0.1224 against 0.1302), and the Gaussian sketch not
    ahead per iteration (0.1230 against 0.1221). DSANLS/S against time falls to third: ANLS/BPP
    0.1153 < HALS 0.1187 < DSANLS/S 0.1224 — at k = 100 its ring sends 54,000 numbers per node
    and iteration (2(N − 1)k(d + d')/N), a fifth of the All-Gather's 270,000, but its iteration
    (30.6 ms) is no longer cheap beside HALS's (171 ms) for what an exact HALS sweep gains."""
    m = full_k100.report["metrics"]
    g = {lab: geometric_mean(curve(full_k100, lab)) for lab in (
        "DSANLS/S", "DSANLS/G", "DSANLS/S-PGD", "DSANLS/G-PGD")}
    assert g["DSANLS/S"] < g["DSANLS/S-PGD"] and g["DSANLS/G"] < g["DSANLS/G-PGD"]
    assert m["time_averaged_error"]["DSANLS/S"] < m["time_averaged_error"]["DSANLS/G"]
    assert g["DSANLS/G"] >= g["DSANLS/S"]
    assert m["ranking_by_time"][:3] == ["ANLS/BPP", "HALS", "DSANLS/S"]
    sent = m["elements_sent_per_party_per_iteration"]
    assert sent["DSANLS/S"] == 2 * 9 * 100 * (200 + 100) / 10
    assert sent["HALS"] == 9 * 100 * (2000 + 1000) / 10


@pytest.mark.slow
def test_time_per_iteration_against_the_number_of_nodes() -> None:
    """Seed 004 Figs. 8–9: near-linear speed-up in N = 2 … 16. For the baselines it holds in
    shape: their time per iteration falls at every doubling (measured 87.7 / 48.0 / 28.1 /
    18.1 ms for MU, a 4.9× speed-up of 8×; their O(mnk/N) local work shrinks while the
    All-Gather's (N − 1)k(n + m)/N stays). NOT for DSANLS/S on this 1000 × 2000 problem:
    measured 10.9 / 7.4 / 6.8 / 8.9 ms, a 1.2× speed-up — its local work is small and each
    iteration waits on two ring All-Reduces of 2(N − 1) latency-bound steps. DSANLS/G, whose
    iteration is the same messages plus O(mnd/N) local work to form M_{I_r:}S^t, does speed
    up near-linearly: 621 / 313 / 160 / 86 ms, 7.2× of 8× — the paper's Figs. 8–9 shape where
    the local work dominates. The test holds all three, so that a change in any is seen."""
    import tomllib

    base = tomllib.loads((SCENARIOS / "nmf_baselines.toml").read_text())
    t = {}
    for n in (2, 4, 8, 16):
        spec = {**base, "network": {**base["network"], "parties": n},
                "algorithm": {**base["algorithm"], "iterations": 3, "sketched_iterations": 3,
                              "methods": ["DSANLS/S", "DSANLS/G", "MU", "HALS", "ANLS/BPP"]}}
        t[n] = run_scenario(spec).report["metrics"]["seconds_per_iteration"]
    for label in ("MU", "HALS", "ANLS/BPP", "DSANLS/G"):
        assert t[2][label] > t[4][label] > t[8][label] > t[16][label], label
        assert t[2][label] / t[16][label] > 3, label
    assert t[2]["DSANLS/G"] / t[16]["DSANLS/G"] > 6  # near-linear: 8× is ideal
    assert t[2]["DSANLS/S"] / t[16]["DSANLS/S"] < 2
    assert all(t[n]["DSANLS/S"] < t[n]["MU"] for n in t)  # still the fastest iteration


def test_dsanls_with_the_ring_all_reduce_is_audited_by_its_declaration() -> None:
    """``allreduce = "ring"`` in a DSANLS run: a lone node learns its predecessor's chunks
    (leak), three of four nodes learn nothing beyond the sums (private: the one honest input
    is determined), and the A/B method, with no declaration, flags two honest nodes too."""
    import tomllib

    spec = tomllib.loads((SCENARIOS / "dsanls.toml").read_text())
    spec["algorithm"].update(allreduce="ring", iterations=2)
    spec["network"]["parties"] = 4
    spec["data"]["rows"], spec["data"]["cols"] = 60, 20
    spec["audit"] = [{"coalition": [0], "method": "simulation"},
                     {"coalition": [0, 1, 2], "method": "simulation"},
                     {"coalition": [1, 3], "method": "statistical"}]
    verdicts = [(a["verdict"], a.get("message") or "")
                for a in run_scenario(spec).report["privacy"]]
    assert verdicts[0][0] == "leak" and verdicts[0][1].startswith("ring_all_reduce#")
    assert verdicts[0][1].endswith(" from 3 to 0")  # node 0's predecessor on the ring
    assert verdicts[1][0] == "private"
    assert verdicts[2][0] == "leak"
