"""Received messages spilled to disk as they are recorded (:mod:`sim.view_spill`).

The expected bytes are those :func:`sim.view_store.write_view` writes for the same view held
in memory; the expected messages are the ones appended, compared with numpy.
"""

from __future__ import annotations

import numpy as np

from parties.party import site_parties
from parties.view import View, frozen, received_message
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import Simulation
from sim.view_spill import SpilledReceived, SpillFile
from sim.view_store import ViewSink, read_view, write_view


def payloads() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    mixed = np.empty(3, dtype=object)
    mixed[:] = [1, "two", rng.integers(0, 9, 4)]
    structured = np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")])
    structured["b"] = [1.5, -2.0]
    return [rng.integers(-2**40, 2**40, 1000), rng.normal(size=(7, 3)), np.array(3.25),
            np.zeros(0, np.uint64), mixed, rng.integers(0, 2, 5).astype(bool), structured,
            np.frombuffer(b"\x01\x02\x03", np.uint8)]


def view_with(received: object) -> View:
    view = View(party=4, role="site", inputs={"x": frozen(np.arange(5.0))})
    view.seeds = {"rng": "ab"}
    view.received = received  # type: ignore[assignment]
    for i, p in enumerate(payloads()):
        view.received.append(received_message(i, "secure_sum", i, "share", i, frozen(p),
                                              0.125 * i))
    view.outputs = [frozen(np.ones(3))]
    return view


def test_a_spilled_view_file_is_the_in_memory_view_s_byte_for_byte(tmp_path) -> None:
    held = write_view(tmp_path / "held.view", view_with([])).read_bytes()
    spill = SpilledReceived(SpillFile(tmp_path, "party-4"))
    assert spill.path.exists() and spill.path.name.startswith(".party-4.")
    spilled = write_view(tmp_path / "spilled.view", view_with(spill)).read_bytes()
    assert spilled == held
    # the bytes of every payload went to the spill file, 64-byte aligned
    sizes = [int(np.ascontiguousarray(p).nbytes) for p in payloads() if p.dtype != object]
    assert spill.nbytes() >= sum(sizes)
    spill.discard()
    assert not spill.path.exists()
    assert len(spill) == len(payloads())  # still readable until the object goes


def test_spilled_messages_read_back_as_appended(tmp_path) -> None:
    spill = SpilledReceived(SpillFile(tmp_path, "party-1"))
    view_with(spill)
    for i, (message, expected) in enumerate(zip(spill, payloads(), strict=True)):
        assert (message.sender, message.call, message.round, message.arrived_s) == (
            i, i, i, 0.125 * i)
        assert message.payload.dtype == expected.dtype
        assert message.payload.shape == expected.shape
        assert not message.payload.flags.writeable
        if expected.dtype != object:
            assert message.payload.tobytes() == expected.tobytes()
        else:
            assert message.payload[:2].tolist() == [1, "two"]
            assert np.array_equal(message.payload[2], expected[2])
    assert np.array_equal(spill[0].payload, payloads()[0])
    assert [m.sender for m in spill[2:4]] == [2, 3]


def test_a_run_with_a_sink_spills_and_writes_the_views_it_would_hold(tmp_path) -> None:
    rng = np.random.default_rng(2)
    inputs = [{"x": rng.uniform(-5, 5, 6)} for _ in range(4)]

    def run(sink: ViewSink | None) -> object:
        sim = Simulation(Network.build(4), seed=9, record_draws=True, view_sink=sink)
        return sim.run(site_parties(secure_sum, inputs))

    held = run(None).views
    sink = ViewSink(tmp_path / "views")
    stored = run(sink).views
    for pid, view in held.items():
        expected = write_view(tmp_path / f"held-{pid}.view", view).read_bytes()
        assert stored.path(pid).read_bytes() == expected
        # M − 1 key messages and M − 1 shares
        assert len(read_view(stored.path(pid)).received) == len(view.received) == 2 * 3
    # no spill file stays behind
    assert sorted(p.name for p in (tmp_path / "views" / "run-0").iterdir()) == sorted(
        ["index.json", *(f"party-{p}.view" for p in held)])


def test_a_rank_s_views_share_one_spill_file_and_each_writes_its_own_bytes(tmp_path) -> None:
    """Three views over one :class:`SpillFile` (a rank's): one file in the directory, and each
    view file is byte for byte the one its view held in memory gives; discarding through
    any of them unlinks the one file."""
    spill = SpillFile(tmp_path, "rank-0")
    views = [view_with(SpilledReceived(spill)) for _ in range(3)]
    held = write_view(tmp_path / "held.view", view_with([])).read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".received"] == [spill.path.name]
    for i, view in enumerate(views):
        assert write_view(tmp_path / f"spilled-{i}.view", view).read_bytes() == held
    assert spill.at == sum(v.received.nbytes() for v in views)
    views[1].received.discard()
    assert not spill.path.exists()
    assert np.array_equal(views[2].received[0].payload, payloads()[0])  # still readable
