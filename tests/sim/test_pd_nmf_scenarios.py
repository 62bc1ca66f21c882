"""Scenario-level tests of the ``pd_nmf`` and ``rri_nmf`` catalogue entries (issue 3).

Through :func:`sim.runner.run_scenario` (dicts, absolute paths) and the ``mpcsim`` command line
(:func:`sim.cli.main`, TOML files in ``tmp_path``). Expected values come from data files the
tests write by hand, from the centralized RRI-NMF sweep (Theorem 2's reference) computed here
with the public functions of :mod:`algorithms.nmf.rri`, and from the communication formulas of
digest §1.3–§1.5 written out here.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from algorithms.data import synthetic_dataset
from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.row_blocks import as_row_block
from algorithms.nmf.rri import rri_sweep
from algorithms.nmf.rri_steps import RRIParams
from protocols import seeds
from sim.cli import main
from sim.runner import run_scenario

# ------------------------------------------------------------------------------------------
# data and references, independent of the code under test
# ------------------------------------------------------------------------------------------


def topic_corpus(n: int, d: int, k: int, seed: int, doc_length: int = 60) -> np.ndarray:
    """TF rows (each on the simplex) of an LDA-like corpus with k Dirichlet(0.1) topics."""
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(d, 0.1), size=k)
    weights = rng.dirichlet(np.full(k, 0.3), size=n)
    counts = np.array([rng.multinomial(doc_length, p) for p in weights @ topics], float)
    return counts / counts.sum(axis=1, keepdims=True)


def centralized(X, T0: np.ndarray, sweeps: int, params: RRIParams, loss: str = "auto"):
    """Centralized RRI-NMF on the pooled rows: rri_sweep repeated from T0 with W = 0."""
    block = as_row_block(X, loss)
    W = np.zeros((X.shape[0], T0.shape[0]))
    T = np.array(T0, dtype=np.float64, copy=True)
    for _ in range(sweeps):
        W, T = rri_sweep(block, W, T, params)
    return W, T


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def half_squared_error(X: np.ndarray, W: np.ndarray, T: np.ndarray) -> float:
    """½ Σ over observed entries (X_ij − (WT)_ij)², by numpy."""
    diff = X - W @ T
    return 0.5 * float(np.nansum(diff * diff))


N, D, K = 90, 24, 3
PARTITION = [20, 40, 30]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """X.npy (a topic corpus) and T0.npy (a Dirichlet(0.5) start) in a scratch directory."""
    base = tmp_path_factory.mktemp("pd_nmf_data")
    X = topic_corpus(N, D, K, seed=2)
    T0 = np.random.default_rng(5).dirichlet(np.full(D, 0.5), size=K)
    np.save(base / "X.npy", X)
    np.save(base / "T0.npy", T0)
    return {"base": base, "X": X, "T0": T0}


def scenario(data: dict, *, name: str = "pd_nmf", parties: int = 3, seed: int = 11,
             **algorithm) -> dict:
    return {"seed": seed, "network": {"parties": parties}, "data": data,
            "algorithm": {"name": name, **algorithm}}


def file_data(files, partition=PARTITION) -> dict:
    return {"source": "file", "path": str(files["base"] / "X.npy"), "partition": partition}


def party_models(run) -> list:
    result = run.run.result
    return [result.outputs[m] for m in result.sites]


# ------------------------------------------------------------------------------------------
# initialisations
# ------------------------------------------------------------------------------------------

INITS = ["random", "random_2x", "nndsvd", "pd_nmf_init", "path"]


@pytest.mark.parametrize("init", INITS)
def test_pd_nmf_initialisations(files, init, tmp_path):
    X, iterations = files["X"], 6
    given = {"path": str(files["base"] / "T0.npy")} if init == "path" else init
    run = run_scenario(scenario(file_data(files), k=K, iterations=iterations, init=given))
    metrics = run.report["metrics"]
    sweeps = 2 * iterations if init == "random_2x" else iterations
    assert metrics["sweeps"] == sweeps
    # outputs: the public T and every party's private W, also in outputs.npz
    assert set(run.outputs) == {"T", "W_0", "W_1", "W_2"}
    assert [run.outputs[f"W_{m}"].shape for m in range(3)] == [(n, K) for n in PARTITION]
    run.write(tmp_path / "out")
    with np.load(tmp_path / "out" / "outputs.npz") as npz:
        assert set(npz.files) == {"T", "W_0", "W_1", "W_2"}
        for key in npz.files:
            np.testing.assert_array_equal(npz[key], run.outputs[key])
    T = run.outputs["T"]
    W = np.vstack([run.outputs[f"W_{m}"] for m in range(3)])
    # the start every party used
    models = party_models(run)
    T_start = models[0].T_start
    for model in models:
        np.testing.assert_array_equal(model.T_start, T_start)
    if init == "path":
        np.testing.assert_array_equal(T_start, files["T0"])
    elif init == "nndsvd":
        np.testing.assert_array_equal(T_start, nndsvd(X, K)[1])
    elif init == "pd_nmf_init":
        np.testing.assert_allclose(T_start.sum(axis=1), 1.0, rtol=1e-12)
    else:  # U[0, 1] entries from the scenario seed, rows normalised, shared with random_2x
        assert T_start.shape == (K, D) and T_start.min() >= 0
        np.testing.assert_allclose(T_start.sum(axis=1), 1.0, rtol=1e-12)
        other = "random" if init == "random_2x" else "random_2x"
        twin = run_scenario(scenario(file_data(files), k=K, iterations=1, init=other))
        np.testing.assert_array_equal(party_models(twin)[0].T_start, T_start)
    # Theorem 2: the parties' T equals centralized RRI-NMF from the same start
    W_c, T_c = centralized(X, T_start, sweeps, RRIParams(form="topic"))
    assert rel(T, T_c) <= 1e-6
    assert rel(W, W_c) <= 1e-6
    assert metrics["max_abs_diff_vs_centralized"] < 1e-6 * np.max(np.abs(T))
    assert metrics["max_abs_diff_vs_centralized"] == pytest.approx(np.max(np.abs(T - T_c)),
                                                                   abs=1e-12)
    assert metrics["max_abs_diff_W_vs_centralized"] < 1e-6 * np.max(np.abs(W))
    assert metrics["same_T_at_every_party"] is True
    # the objective is ½‖X − WT‖² of the outputs (no regularisers here)
    assert metrics["objective"] == pytest.approx(half_squared_error(X, W, T), rel=1e-9)
    assert len(metrics["objective_history"]) == sweeps
    phases = run.report["communication"]["per_phase"]
    assert ("init" in phases) == (init == "pd_nmf_init")
    assert phases["iter"]["calls"] == sweeps * K


def test_random_2x_is_random_run_for_twice_the_sweeps(files):
    a = run_scenario(scenario(file_data(files), k=K, iterations=4, init="random_2x"))
    b = run_scenario(scenario(file_data(files), k=K, iterations=8, init="random"))
    # the decoded SecureSums are exact field sums: the same start gives the same bits
    for key in a.outputs:
        np.testing.assert_array_equal(a.outputs[key], b.outputs[key])


def test_rri_nmf_runs_the_centralized_reference(files):
    T0 = files["T0"]
    run = run_scenario(scenario(file_data(files), name="rri_nmf", k=K, iterations=7,
                                init={"path": str(files["base"] / "T0.npy")}))
    assert set(run.outputs) == {"T", "W"}
    W_c, T_c = centralized(files["X"], T0, 7, RRIParams(form="topic"))
    np.testing.assert_allclose(run.outputs["T"], T_c, rtol=0, atol=1e-12)
    np.testing.assert_allclose(run.outputs["W"], W_c, rtol=0, atol=1e-12)
    metrics = run.report["metrics"]
    assert metrics["objective"] == pytest.approx(half_squared_error(files["X"], W_c, T_c),
                                                 rel=1e-9)
    assert len(metrics["objective_history"]) == 7
    assert run.report["communication"]["total_elements"] == 0


def test_rri_nmf_and_pd_nmf_agree_from_the_same_t0(files):
    common = {"k": K, "iterations": 5, "init": {"path": str(files["base"] / "T0.npy")}}
    central = run_scenario(scenario(file_data(files), name="rri_nmf", **common))
    private = run_scenario(scenario(file_data(files), **common))
    assert rel(private.outputs["T"], central.outputs["T"]) <= 1e-6


def test_regularised_topic_form_scenario_matches_centralized(files):
    params = RRIParams(form="topic", l2_w=-0.02, l2_t=0.5, l1_t=1e-3)
    run = run_scenario(scenario(file_data(files), k=K, iterations=5, init="nndsvd",
                                l2_w=-0.02, l2_t=0.5, l1_t=1e-3))
    T_start = party_models(run)[0].T_start
    W_c, T_c = centralized(files["X"], T_start, 5, params)
    T = run.outputs["T"]
    W = np.vstack([run.outputs[f"W_{m}"] for m in range(3)])
    assert rel(T, T_c) <= 1e-6
    assert rel(W, W_c) <= 1e-6
    # objective: ½‖X − WT‖² + ℓ^T_1‖T‖_1 + ½ℓ^T_2‖T‖² + ½ℓ^W_2‖W‖² (Eq. 2.28–2.29)
    expected = (half_squared_error(files["X"], W, T) + 1e-3 * np.abs(T).sum()
                + 0.25 * np.sum(T * T) - 0.01 * np.sum(W * W))
    assert run.report["metrics"]["objective"] == pytest.approx(expected, rel=1e-9)


def matched_cosine(truth: np.ndarray, topics: np.ndarray) -> float:
    """Best mean cosine over all one-to-one matchings (brute force over permutations)."""
    a = truth / np.linalg.norm(truth, axis=1, keepdims=True)
    b = topics / np.linalg.norm(topics, axis=1, keepdims=True)
    cos = a @ b.T
    k = len(a)
    return max(np.mean([cos[i, p[i]] for i in range(k)]) for p in itertools.permutations(range(k)))


@pytest.mark.parametrize("name", ["pd_nmf", "rri_nmf"])
def test_topic_recovery_on_an_easy_synthetic_corpus(name):
    data = {"source": "synthetic", "kind": "topics", "rows": 150, "cols": 40, "k": 3,
            "doc_length": 200}
    init = "pd_nmf_init" if name == "pd_nmf" else "nndsvd"
    run = run_scenario(scenario(data, name=name, seed=4, k=3, iterations=10, init=init))
    cosine = run.report["metrics"]["topic_recovery_cosine"]
    assert cosine > 0.9
    # the same metric recomputed from the planted topics (the runner's data stream)
    rng = seeds.rng(4, "data")
    truth = synthetic_dataset(150, 40, rng, "topics", k=3, doc_length=200).truth["topics"]
    assert cosine == pytest.approx(matched_cosine(truth, run.outputs["T"]), abs=1e-12)


# ------------------------------------------------------------------------------------------
# communication in the report
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["prg", "explicit", "prg_two_share"])
def test_report_splits_init_and_iter_costs(variant):
    M, d, k, iterations, init_iterations = 3, 24, 3, 4, 3
    factor = 2 if variant == "explicit" else 1
    per_sweep = factor * k * (M - 1) * (d + 1)
    init_per_party = factor * (M - 1) * (k * d + init_iterations * k * (d + 1))
    figures = []
    for n in (60, 150):  # two row counts, same communication
        data = {"source": "synthetic", "kind": "topics", "rows": n, "cols": d, "k": k}
        run = run_scenario(scenario(data, parties=M, k=k, iterations=iterations,
                                    init_iterations=init_iterations, variant=variant))
        comm, metrics = run.report["communication"], run.report["metrics"]
        assert metrics["elements_sent_per_party_per_sweep"] == per_sweep
        assert metrics["declared_elements_sent_per_party_per_sweep"] == per_sweep
        phases = comm["per_phase"]
        assert phases["init"]["elements"] == M * init_per_party
        assert phases["iter"]["elements"] == M * iterations * per_sweep
        assert phases["init"]["calls"] == 1 + init_iterations * k
        assert phases["iter"]["calls"] == iterations * k
        assert phases["init"]["rounds"] == factor * (1 + init_iterations * k)
        assert phases["iter"]["rounds"] == factor * iterations * k
        for party in comm["per_party"]:
            assert party["elements_sent"] == init_per_party + iterations * per_sweep
            assert party["elements_received"] == init_per_party + iterations * per_sweep
        figures.append({p: v["elements"] for p, v in phases.items()})
    assert figures[0] == figures[1]


def test_every_secure_sum_variant_gives_the_same_model():
    # The masks cancel exactly in the field, so the variant changes the messages, not the sums.
    data = {"source": "synthetic", "kind": "topics", "rows": 60, "cols": 12, "k": 2}
    runs = {v: run_scenario(scenario(data, seed=3, k=2, iterations=3, variant=v))
            for v in ("prg", "prg_two_share", "explicit")}
    for v in ("prg_two_share", "explicit"):
        np.testing.assert_array_equal(runs[v].outputs["T"], runs["prg"].outputs["T"])


def test_plain_form_topic_scenario_within_1e6_of_centralized():
    # Before the plain update balanced ‖W_:t‖ = ‖T_t:‖, one topic here drifted to
    # ‖W_:t‖² = 0.03 and T ended 7.5e-5 (relative) from the centralized run.
    data = {"source": "synthetic", "kind": "topics", "rows": 120, "cols": 40, "k": 4}
    run = run_scenario(scenario(data, seed=1, k=4, iterations=10, form="plain",
                                init="random"))
    metrics = run.report["metrics"]
    assert metrics["max_abs_diff_vs_centralized"] < 1e-6 * np.max(np.abs(run.outputs["T"]))


def test_ratings_scenario_uses_the_observed_loss():
    M, d, k, iterations = 3, 30, 3, 5
    data = {"source": "synthetic", "kind": "ratings", "rows": 90, "cols": d, "k": k,
            "density": 0.3, "partition": [15, 45, 30]}
    run = run_scenario(scenario(data, parties=M, k=k, iterations=iterations, form="plain",
                                init="random"))
    metrics = run.report["metrics"]
    assert metrics["elements_sent_per_party_per_sweep"] == k * (M - 1) * (2 * d)
    assert metrics["max_abs_diff_vs_centralized"] < 1e-6 * np.max(np.abs(run.outputs["T"]))
    assert metrics["same_T_at_every_party"] is True


# ------------------------------------------------------------------------------------------
# bad input through the command line: one line `error: ...`, exit status 2
# ------------------------------------------------------------------------------------------

CSV_OK = "1,2,3,0\n4,5,6,1\n7,8,9,2\n1,1,1,3\n2,0,1,1\n3,1,0,2\n"
CSV_NEGATIVE = "1,2,3,0\n4,-5,6,1\n7,8,9,2\n1,1,1,3\n2,0,1,1\n3,1,0,2\n"  # 6 × 4


def write_case(tmp_path, algorithm: str, *, csv: str = CSV_OK, name: str = "pd_nmf") -> str:
    (tmp_path / "data.csv").write_text(csv)
    t0_shape = np.full((2, 5), 0.2)  # d is 4
    t0_negative = np.full((2, 4), 0.25)
    t0_negative[1, 2] = -0.25
    t0_nan = np.full((2, 4), 0.25)
    t0_nan[0, 0] = np.nan
    np.save(tmp_path / "T0_shape.npy", t0_shape)
    np.save(tmp_path / "T0_negative.npy", t0_negative)
    np.save(tmp_path / "T0_nan.npy", t0_nan)
    path = tmp_path / "case.toml"
    path.write_text(
        f'seed = 1\n[network]\nparties = 2\n[data]\nsource = "file"\npath = "data.csv"\n'
        f'[algorithm]\nname = "{name}"\niterations = 2\n{algorithm}\n'
    )
    return str(path)


BAD_INPUT = {
    "negative_data": ("k = 2", CSV_NEGATIVE, "pd_nmf", "negative"),
    "k_below_1": ("k = 0", CSV_OK, "pd_nmf", "algorithm.k"),
    "k_above_min_n_d": ("k = 5", CSV_OK, "pd_nmf", "min(n, d)"),
    "t0_wrong_shape": ('k = 2\ninit = { path = "T0_shape.npy" }', CSV_OK, "pd_nmf", "shape"),
    "t0_negative": ('k = 2\ninit = { path = "T0_negative.npy" }', CSV_OK, "pd_nmf",
                    "negative"),
    "t0_nan": ('k = 2\ninit = { path = "T0_nan.npy" }', CSV_OK, "pd_nmf", "T0"),
    "t0_missing": ('k = 2\ninit = { path = "nowhere.npy" }', CSV_OK, "pd_nmf",
                   "algorithm.init T0 file"),
    "unknown_init": ('k = 2\ninit = "svd"', CSV_OK, "pd_nmf", "unknown"),
    "pd_svd_normed_at_p61": ('k = 2\ninit = "pd_svd"\nsvd_variant = "normed"', CSV_OK,
                             "pd_nmf", "p61-demo"),
    "pd_svd_unknown_variant": ('k = 2\ninit = "pd_svd"\nsvd_variant = "qr"', CSV_OK,
                               "pd_nmf", "svd_variant"),
    "unknown_key": ("k = 2\nsweeps = 3", CSV_OK, "pd_nmf", "unknown key 'sweeps'"),
    "negative_l2_plain": ('k = 2\nform = "plain"\nl2_w = -0.1', CSV_OK, "pd_nmf", "l2_w"),
    "negative_l1": ("k = 2\nl1_t = -0.1", CSV_OK, "pd_nmf", "l1_t"),
    "unknown_form": ('k = 2\nform = "sparse"', CSV_OK, "pd_nmf", "form"),
    "unknown_variant": ('k = 2\nvariant = "shamir"', CSV_OK, "pd_nmf", "variant"),
    "rri_nmf_distributed_init": ('k = 2\ninit = "pd_nmf_init"', CSV_OK, "rri_nmf",
                                 "pd_nmf_init"),
    "rri_nmf_negative_data": ("k = 2", CSV_NEGATIVE, "rri_nmf", "negative"),
    "rri_nmf_pd_svd_init": ('k = 2\ninit = "pd_svd"', CSV_OK, "rri_nmf", "distributed"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_is_one_error_line_and_status_2(tmp_path, capsys, case):
    algorithm, csv, name, needle = BAD_INPUT[case]
    path = write_case(tmp_path, algorithm, csv=csv, name=name)
    status = main(["run", path, "--quiet", "--out", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert needle in lines[0], lines[0]
    assert not (tmp_path / "out").exists()  # a failed run writes nothing


def test_pd_svd_start_runs_from_the_command_line(tmp_path, capsys):
    path = write_case(tmp_path, 'k = 2\ninit = "pd_svd"\nsvd_iterations = 10')
    assert main(["run", path, "--quiet", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["parameters"]["init"] == "pd_svd"
    assert "init/sigma" in report["communication"]["per_phase"]


CSV_MISSING = "1,nan,3,1\n4,5,nan,1\nnan,8,9,2\n1,1,1,3\n2,nan,1,1\n3,1,nan,2\n"


@pytest.mark.parametrize(
    ("algorithm", "csv", "needle"),
    [
        # Theorem 1 weights need ℓ^T_2 ≥ 0 (Corollary 3); PD-NMF-Init refuses a negative one
        ('k = 2\nform = "topic"\nl2_t = -0.1\ninit = "pd_nmf_init"', CSV_OK, "-0.1"),
        # negative ℓ2 with missing ratings (observed loss): per-column curvatures
        ('k = 2\nform = "topic"\nl2_w = -0.1\ninit = "random"', CSV_MISSING, "observed"),
        # missing ratings under the full loss
        ('k = 2\nloss = "full"\ninit = "random"', CSV_MISSING, "NaN"),
    ],
    ids=["pd_nmf_init_negative_l2_t", "observed_loss_negative_l2", "missing_values_full_loss"],
)
def test_unsupported_combinations_fail_cleanly(tmp_path, capsys, algorithm, csv, needle):
    path = write_case(tmp_path, algorithm, csv=csv)
    assert main(["run", path, "--quiet"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert needle in lines[0], lines[0]
    # caught where input enters, naming the scenario key — not inside a party's program
    assert "algorithm." in lines[0] and "party" not in lines[0], lines[0]


def test_missing_values_in_a_csv_select_the_observed_loss(tmp_path):
    (tmp_path / "data.csv").write_text(CSV_MISSING)
    run = run_scenario(scenario({"source": "file", "path": str(tmp_path / "data.csv")},
                                parties=2, k=2, iterations=3, form="plain", init="random"))
    assert run.report["metrics"]["elements_sent_per_party_per_sweep"] == 2 * (2 - 1) * (2 * 4)


# ------------------------------------------------------------------------------------------
# loaders: UCI bag-of-words and MovieLens ratings.dat, written here in those formats
# ------------------------------------------------------------------------------------------

# 12 documents × 8 words from two obvious topics (words 1–4 and words 5–8), plus a little mix
UCI_COUNTS = np.array([
    [5, 3, 2, 4, 0, 0, 0, 1],
    [4, 4, 1, 3, 0, 1, 0, 0],
    [6, 2, 3, 2, 0, 0, 1, 0],
    [3, 5, 2, 5, 1, 0, 0, 0],
    [0, 0, 1, 0, 4, 6, 3, 2],
    [0, 1, 0, 0, 5, 3, 4, 4],
    [1, 0, 0, 0, 3, 5, 5, 3],
    [0, 0, 0, 1, 6, 4, 2, 5],
    [2, 2, 1, 2, 3, 2, 2, 2],
    [3, 1, 2, 1, 2, 3, 1, 2],
    [4, 3, 3, 2, 0, 0, 0, 0],
    [0, 0, 0, 0, 4, 4, 4, 4],
])


def write_uci(directory) -> None:
    entries = [(i + 1, j + 1, int(c)) for i, row in enumerate(UCI_COUNTS)
               for j, c in enumerate(row) if c]
    lines = [str(UCI_COUNTS.shape[0]), str(UCI_COUNTS.shape[1]), str(len(entries))]
    lines += [f"{i} {j} {c}" for i, j, c in entries]
    (directory / "docword.small.txt").write_text("\n".join(lines) + "\n")
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    (directory / "vocab.small.txt").write_text("\n".join(words) + "\n")


def test_pd_nmf_on_a_uci_bag_of_words_file(tmp_path, capsys):
    write_uci(tmp_path)
    T0 = np.random.default_rng(3).dirichlet(np.ones(8), size=2)
    np.save(tmp_path / "T0.npy", T0)
    (tmp_path / "uci.toml").write_text(
        'seed = 5\n[network]\nparties = 3\n'
        '[data]\nsource = "file"\npath = "docword.small.txt"\nvocab = "vocab.small.txt"\n'
        'partition = [3, 5, 4]\n'
        '[algorithm]\nname = "pd_nmf"\nk = 2\niterations = 8\nform = "topic"\n'
        'init = { path = "T0.npy" }\n'
    )
    out = tmp_path / "out"
    status = main(["run", str(tmp_path / "uci.toml"), "--quiet", "--json", "--out", str(out)])
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in out.iterdir()) == ["ledger.csv", "objective.png",
                                                      "outputs.npz", "report.json"]
    # the corpus as the thesis feeds it: TF rows (counts divided by document length)
    tf = UCI_COUNTS / UCI_COUNTS.sum(axis=1, keepdims=True)
    W_c, T_c = centralized(tf, T0, 8, RRIParams(form="topic"))
    with np.load(out / "outputs.npz") as npz:
        T = npz["T"]
        W = np.vstack([npz[f"W_{m}"] for m in range(3)])
    assert rel(T, T_c) <= 1e-6
    assert rel(W, W_c) <= 1e-6
    assert report["metrics"]["n"] == 12 and report["metrics"]["d"] == 8
    assert report["metrics"]["objective"] == pytest.approx(half_squared_error(tf, W, T),
                                                           rel=1e-9)
    # the two planted topics are found: words 1–4 and words 5–8
    tops = sorted(sorted(np.argsort(-row)[:4].tolist()) for row in T)
    assert tops == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_uci_vocab_of_the_wrong_length_is_an_error(tmp_path, capsys):
    write_uci(tmp_path)
    (tmp_path / "vocab.small.txt").write_text("alpha\nbeta\n")
    (tmp_path / "uci.toml").write_text(
        '[network]\nparties = 2\n[data]\nsource = "file"\npath = "docword.small.txt"\n'
        'vocab = "vocab.small.txt"\n[algorithm]\nname = "pd_nmf"\nk = 2\n'
    )
    assert main(["run", str(tmp_path / "uci.toml"), "--quiet"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")


# users 3, 7, 12, ... rate movies 10, 20, 30, 40, 55 (non-contiguous ids, unsorted lines)
MOVIELENS = [
    (3, 10, 5), (3, 20, 4), (3, 40, 1), (7, 10, 4), (7, 30, 2), (7, 55, 1),
    (12, 20, 5), (12, 30, 1), (12, 55, 2), (15, 10, 5), (15, 20, 5), (15, 40, 2),
    (21, 30, 1), (21, 40, 4), (21, 55, 5), (22, 10, 1), (22, 40, 5), (22, 55, 4),
    (30, 20, 2), (30, 30, 5), (30, 55, 4), (31, 10, 4), (31, 30, 1), (31, 40, 2),
    (40, 10, 2), (40, 20, 1), (40, 55, 5),
]


def test_pd_nmf_on_a_movielens_ratings_file(tmp_path):
    lines = [f"{u}::{m}::{r}::{978300000 + i}" for i, (u, m, r) in enumerate(MOVIELENS)]
    rng = np.random.default_rng(0)
    lines = [lines[i] for i in rng.permutation(len(lines))]
    (tmp_path / "ratings.dat").write_text("\n".join(lines) + "\n")
    users = sorted({u for u, _, _ in MOVIELENS})
    movies = sorted({m for _, m, _ in MOVIELENS})
    X = np.full((len(users), len(movies)), np.nan)
    for u, m, r in MOVIELENS:
        X[users.index(u), movies.index(m)] = r
    k = 2
    T0 = np.random.default_rng(1).uniform(0.0, 1.0, size=(k, len(movies)))
    np.save(tmp_path / "T0.npy", T0)
    run = run_scenario(
        scenario({"source": "file", "path": str(tmp_path / "ratings.dat"),
                  "partition": [3, 4, 2]},
                 k=k, iterations=10, form="plain", init={"path": str(tmp_path / "T0.npy")})
    )
    W_c, T_c = centralized(X, T0, 10, RRIParams(form="plain"))
    T = run.outputs["T"]
    W = np.vstack([run.outputs[f"W_{m}"] for m in range(3)])
    assert rel(T, T_c) <= 1e-6
    assert rel(W, W_c) <= 1e-6
    metrics = run.report["metrics"]
    assert (metrics["n"], metrics["d"]) == (len(users), len(movies))
    # the observed loss: 2d elements per topic, and the objective counts observed ratings only
    assert metrics["elements_sent_per_party_per_sweep"] == k * (3 - 1) * 2 * len(movies)
    assert metrics["objective"] == pytest.approx(half_squared_error(X, W, T), rel=1e-9)
