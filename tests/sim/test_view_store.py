"""Views on disk (:mod:`sim.view_store`): the file format, the lazy store, and a scenario's
``write_views`` / ``record_views`` keys under SimPy.

The files are read back here by a parser written from the format's description (magic,
header length, JSON header, 64-byte-aligned arrays) with numpy alone, so a writer and a reader
that agreed on a wrong encoding would still fail; the expected values are the in-memory views
of the same run.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from parties.party import site_parties
from parties.view import View, frozen
from protocols.effects import Call
from protocols.errors import ScenarioError
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.runner import run_scenario
from sim.simulation import Simulation
from sim.view_store import ViewSink, ViewStore, read_view, write_view


def parse(path: Path) -> tuple[dict, list[np.ndarray]]:
    """The header and the arrays of a view file, by the format's description alone."""
    blob = path.read_bytes()
    assert blob[:8] == b"MPCVIEW1"
    length = int.from_bytes(blob[8:16], "little")
    header = json.loads(blob[16:16 + length])
    start = 16 + length
    start += -start % 64
    return header, [np.frombuffer(blob, np.uint8, nbytes, start + offset)
                    for offset, nbytes in header["arrays"]]


def payload(ref: dict, arrays: list[np.ndarray]) -> np.ndarray:
    index, dtype, shape = ref["a"]
    return arrays[index].view(np.dtype(dtype)).reshape(shape)


def received_on_disk(path: Path) -> list[tuple[int, str, int, str, int, np.ndarray]]:
    header, arrays = parse(path)
    return [(s, p, c, st, r, payload(ref, arrays)) for s, p, c, st, r, _, ref in
            header["received"]]


def secure_sum_run(view_sink=None, m: int = 3) -> tuple[list[dict], object]:
    rng = np.random.default_rng(2)
    inputs = [{"x": rng.uniform(-5, 5, 6)} for _ in range(m)]
    sim = Simulation(Network.build(m), seed=9, record_draws=True, view_sink=view_sink)
    return inputs, sim.run(site_parties(secure_sum, inputs))


def test_every_received_payload_is_on_disk_as_received(tmp_path) -> None:
    _, memory = secure_sum_run()
    _, stored = secure_sum_run(ViewSink(tmp_path))
    assert isinstance(stored.views, ViewStore)
    files = sorted(p.name for p in (tmp_path / "run-0").iterdir())
    assert files == ["index.json", "party-0.view", "party-1.view", "party-2.view"]
    for pid, view in memory.views.items():
        on_disk = received_on_disk(tmp_path / "run-0" / f"party-{pid}.view")
        assert len(on_disk) == len(view.received) > 0
        for (s, p, c, st, r, arr), msg in zip(on_disk, view.received, strict=True):
            assert (s, p, c, st, r) == (msg.sender, msg.protocol, msg.call, msg.step, msg.round)
            assert arr.dtype == msg.payload.dtype
            np.testing.assert_array_equal(arr, msg.payload)


def test_the_store_gives_back_the_views_the_run_held(tmp_path) -> None:
    _, memory = secure_sum_run()
    _, stored = secure_sum_run(ViewSink(tmp_path))
    for pid, view in memory.views.items():
        back = stored.views[pid]
        assert (back.party, back.role, back.clock, back.seeds, back.aborts) == (
            view.party, view.role, view.clock, view.seeds, view.aborts)
        np.testing.assert_array_equal(back.inputs["x"], view.inputs["x"])
        for (c1, l1, v1), (c2, l2, v2) in zip(back.outputs, view.outputs, strict=True):
            assert (c1, l1) == (c2, l2) and isinstance(c1, Call)
            np.testing.assert_array_equal(v1, v2)
        assert [k for k, _ in back.draws] == [k for k, _ in view.draws]
        for (_, a), (_, b) in zip(back.draws, view.draws, strict=True):
            np.testing.assert_array_equal(a, b)
        assert [m.arrived_s for m in back.received] == [m.arrived_s for m in view.received]
        for m in back.received:  # mapped from the file, and read-only
            assert not m.payload.flags.writeable
            with pytest.raises(ValueError):
                m.payload[...] = 0


def test_records_of_every_kind_come_back_with_their_types(tmp_path) -> None:
    dense = np.arange(12, dtype=np.int32).reshape(3, 4)
    pairs = np.zeros(3, dtype=[("lo", "<u8"), ("hi", "<u8")])  # a 127-bit field's elements
    pairs["lo"], pairs["hi"] = [1, 2, 3], [4, 5, 2**63]
    csr = sp.csr_matrix(np.array([[0.0, 1.5], [2.0, 0.0]]))
    view = View(party=3, role="aggregator", inputs={
        "dense": frozen(dense), "pairs": frozen(pairs), "csr": frozen(csr),
        "scalar": np.float32(1.25),
        "nested": frozen({"a": (1, 2.5, "s", None, True), "b": [b"\x00\xff", 3 + 4j]}),
        "set": frozenset({"y", "x"}), "r": range(2, 9, 3), "nan": float("nan"),
        "big": 2**100, "empty": frozen(np.zeros((0, 3))), "obj": frozen(np.array([1, "a"],
                                                                                 dtype=object)),
    }, observed=[("recv_within", None, (1, 2), 0.5)], aborts=[(1, "secure_sum#2")])
    path = write_view(tmp_path / "v.view", view)
    back = read_view(path)
    header, _ = parse(path)
    assert header["party"] == 3 and header["role"] == "aggregator"
    np.testing.assert_array_equal(back.inputs["dense"], dense)
    assert back.inputs["dense"].dtype == np.int32
    assert back.inputs["pairs"].dtype == pairs.dtype  # field names kept
    np.testing.assert_array_equal(back.inputs["pairs"]["hi"], [4, 5, 2**63])
    assert sp.isspmatrix_csr(back.inputs["csr"])
    np.testing.assert_array_equal(back.inputs["csr"].toarray(), csr.toarray())
    assert type(back.inputs["scalar"]) is np.float32 and back.inputs["scalar"] == 1.25
    nested = back.inputs["nested"]
    assert nested["a"] == (1, 2.5, "s", None, True) and type(nested["a"]) is tuple
    assert nested["b"] == (b"\x00\xff", 3 + 4j)  # frozen made the list a tuple
    assert back.inputs["set"] == frozenset({"x", "y"}) and back.inputs["r"] == range(2, 9, 3)
    assert np.isnan(back.inputs["nan"]) and back.inputs["big"] == 2**100
    assert back.inputs["empty"].shape == (0, 3)
    assert back.inputs["obj"].tolist() == [1, "a"]
    assert back.observed == [("recv_within", None, (1, 2), 0.5)]
    assert back.aborts == [(1, "secure_sum#2")]


def test_a_view_that_cannot_be_written_leaves_no_file(tmp_path) -> None:
    view = View(party=0, role="site", inputs={"x": frozen(np.ones(3)),
                                              "bad": (lambda: None)})  # not picklable
    with pytest.raises(Exception, match=r"pickle|lambda|attribute"):
        write_view(tmp_path / "party-0.view", view)
    assert list(tmp_path.iterdir()) == []


SCENARIO = """
    seed = 5
    {keys}
    [network]
    parties = 4
    [data]
    source = "synthetic"
    rows = 40
    cols = 6
    [algorithm]
    name = "secure_sum"
"""


def scenario(tmp_path: Path, keys: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent(SCENARIO.format(keys=keys)))
    return path


def test_write_views_puts_every_party_s_view_in_out(tmp_path) -> None:
    out = tmp_path / "out"
    run = run_scenario(scenario(tmp_path, "write_views = true"), out=out)
    assert sorted(p.name for p in (out / "views").iterdir()) == [
        "index.json", "party-0.view", "party-1.view", "party-2.view", "party-3.view"]
    index = json.loads((out / "views" / "index.json").read_text())
    assert [(e["party"], e["rank"], e["file"]) for e in index["parties"]] == [
        (p, 0, f"party-{p}.view") for p in range(4)]
    for pid, view in run.run.result.views.items():
        on_disk = received_on_disk(out / "views" / f"party-{pid}.view")
        assert [x[:5] for x in on_disk] == [(m.sender, m.protocol, m.call, m.step, m.round)
                                            for m in view.received]
        for x, m in zip(on_disk, view.received, strict=True):
            np.testing.assert_array_equal(x[5], m.payload)
    store = ViewStore.open(out / "views")
    assert sorted(store) == [0, 1, 2, 3]


def test_no_view_files_unless_asked_and_none_when_views_are_not_recorded(tmp_path) -> None:
    run_scenario(scenario(tmp_path, ""), out=tmp_path / "plain")
    assert not (tmp_path / "plain" / "views").exists()
    run = run_scenario(scenario(tmp_path, "record_views = false"), out=tmp_path / "off")
    assert not (tmp_path / "off" / "views").exists()
    assert all(len(v.received) == 0 for v in run.run.result.views.values())
    assert len(run.run.result.ledger) > 0


@pytest.mark.parametrize(("keys", "message"), [
    ("record_views = false\nwrite_views = true", "write_views = true needs the views recorded"),
    ("record_views = 0", "record_views = 0 must be true or false"),
    ("write_views = \"yes\"", "write_views = 'yes' must be true or false"),
])
def test_view_keys_are_checked(tmp_path, keys, message) -> None:
    with pytest.raises(ScenarioError, match=message):
        run_scenario(scenario(tmp_path, keys))


def test_an_attack_needs_recorded_views(tmp_path) -> None:
    path = scenario(tmp_path, "record_views = false")
    path.write_text(path.read_text() + '\n[[attack]]\nname = "dsanls_recovery"\ncoalition = [0]\n')
    with pytest.raises(ScenarioError, match=r"\[\[attack\]\] reads the coalition's received"):
        run_scenario(path)
