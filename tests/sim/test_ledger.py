"""Tests of :mod:`sim.ledger`: every figure is a query over hand-built rows.

Expected totals are summed by hand in the test (the rows are few and written out), so they do
not depend on the ledger's own arithmetic.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from sim.ledger import COLUMNS, Ledger, Row


def row(sender: int, receiver: int, protocol: str, call: int, step: str, phase: str,
        rnd: int, elements: int, n_bytes: int, sent: float = 0.0, hops: int = 1) -> Row:
    return Row(sender, receiver, protocol, call, step, phase, rnd, elements, n_bytes, hops,
               sent, sent + 0.5)


# Two parties and an aggregator (2): key agreement, two SecureSum calls (one in phase init,
# one in iter/1), and an aggregator message in phase iter/2.
ROWS = [
    row(0, 1, "key_agreement", 0, "public_key", "", 1, 0, 44),
    row(1, 0, "key_agreement", 0, "public_key", "", 1, 0, 44),
    row(0, 1, "secure_sum", 1, "share", "init", 2, 3, 64, sent=1.0),
    row(1, 0, "secure_sum", 1, "share", "init", 2, 3, 64, sent=1.0),
    row(0, 1, "secure_sum", 1, "column_sum", "init", 3, 3, 64, sent=2.0),
    row(1, 0, "secure_sum", 1, "column_sum", "init", 3, 3, 64, sent=2.0),
    row(0, 1, "secure_sum", 2, "column_sum", "iter/1", 4, 5, 80, sent=3.0),
    row(1, 0, "secure_sum", 2, "column_sum", "iter/1", 4, 5, 80, sent=3.0),
    row(0, 2, "gather", 3, "x", "iter/2", 5, 7, 100, sent=4.0, hops=2),
    row(1, 2, "gather", 3, "x", "iter/2", 5, 7, 100, sent=4.0, hops=2),
    row(2, 0, "gather", 3, "y", "iter/2", 6, 1, 40, sent=5.0, hops=2),
]
ROLES = {0: "site", 1: "site", 2: "aggregator"}


def test_rows_are_kept_in_order_and_immutable() -> None:
    ledger = Ledger(iter(ROWS))
    assert len(ledger) == 11
    assert list(ledger) == ROWS
    assert ledger[2] == ROWS[2]
    with pytest.raises(AttributeError):
        ledger[0].bytes = 1  # type: ignore[misc]
    assert COLUMNS == ("sender", "receiver", "protocol", "call", "step", "phase", "round",
                       "elements", "bytes", "hops", "sent_s", "delivered_s")


def test_totals() -> None:
    totals = Ledger(ROWS).totals()
    assert totals == {
        "messages": 11,
        "elements": 0 + 0 + 3 + 3 + 3 + 3 + 5 + 5 + 7 + 7 + 1,
        "bytes": 44 + 44 + 64 * 4 + 80 * 2 + 100 * 2 + 40,
        "rounds": 6,
    }
    assert Ledger([]).totals() == {"messages": 0, "elements": 0, "bytes": 0, "rounds": 0}


def test_per_party_sent_and_received() -> None:
    per = Ledger(ROWS).per_party(ROLES)
    assert per == [
        {"party": 0, "role": "site",
         "messages_sent": 5, "elements_sent": 0 + 3 + 3 + 5 + 7,
         "bytes_sent": 44 + 64 + 64 + 80 + 100,
         "messages_received": 5, "elements_received": 0 + 3 + 3 + 5 + 1,
         "bytes_received": 44 + 64 + 64 + 80 + 40},
        {"party": 1, "role": "site",
         "messages_sent": 5, "elements_sent": 18, "bytes_sent": 352,
         "messages_received": 4, "elements_received": 11, "bytes_received": 252},
        {"party": 2, "role": "aggregator",
         "messages_sent": 1, "elements_sent": 1, "bytes_sent": 40,
         "messages_received": 2, "elements_received": 14, "bytes_received": 200},
    ]
    # a participant who never communicated still gets a row of zeros
    extra = Ledger(ROWS).per_party({**ROLES, 3: "dealer"})[3]
    assert extra == {"party": 3, "role": "dealer", "messages_sent": 0, "elements_sent": 0,
                     "bytes_sent": 0, "messages_received": 0, "elements_received": 0,
                     "bytes_received": 0}


def test_summary_by_protocol_counts_calls_and_rounds_per_call() -> None:
    summary = Ledger(ROWS).summary("protocol")
    assert summary == {
        "key_agreement": {"calls": 1, "messages": 2, "elements": 0, "bytes": 88, "rounds": 1},
        # call 1 spans rounds 2..3 (2 rounds), call 2 round 4 (1 round)
        "secure_sum": {"calls": 2, "messages": 6, "elements": 22, "bytes": 416, "rounds": 3},
        # call 3 spans rounds 5..6
        "gather": {"calls": 1, "messages": 3, "elements": 15, "bytes": 240, "rounds": 2},
    }
    assert list(summary) == ["key_agreement", "secure_sum", "gather"]  # first-seen order


def test_summary_by_phase() -> None:
    summary = Ledger(ROWS).summary("phase")
    assert summary == {
        "": {"calls": 1, "messages": 2, "elements": 0, "bytes": 88, "rounds": 1},
        "init": {"calls": 1, "messages": 4, "elements": 12, "bytes": 256, "rounds": 2},
        "iter/1": {"calls": 1, "messages": 2, "elements": 10, "bytes": 160, "rounds": 1},
        "iter/2": {"calls": 1, "messages": 3, "elements": 15, "bytes": 240, "rounds": 2},
    }
    with pytest.raises(ValueError):
        Ledger(ROWS).summary("sender")


def test_select_by_protocol_phase_sender_receiver() -> None:
    ledger = Ledger(ROWS)
    assert list(ledger.select(protocol="gather")) == ROWS[8:]
    # a phase matches itself and its sub-phases, not a mere prefix
    assert list(ledger.select(phase="iter")) == ROWS[6:]
    assert list(ledger.select(phase="iter/1")) == ROWS[6:8]
    assert list(ledger.select(phase="it")) == []
    assert list(ledger.select(sender=2)) == [ROWS[10]]
    assert list(ledger.select(receiver=2)) == ROWS[8:10]
    assert list(ledger.select(protocol="secure_sum", sender=0, phase="init")) == [
        ROWS[2], ROWS[4]]
    assert ledger.select(protocol="none").totals()["messages"] == 0


def test_rounds_is_the_highest_round() -> None:
    assert Ledger(ROWS).rounds() == 6
    assert Ledger(ROWS[:4]).rounds() == 2
    assert Ledger([]).rounds() == 0


def test_columns_as_arrays() -> None:
    ledger = Ledger(ROWS)
    assert ledger.column("bytes").tolist() == [r.bytes for r in ROWS]
    assert ledger.column("bytes").dtype == np.int64
    assert ledger.column("protocol").dtype == object
    assert ledger.column("sent_s").dtype == np.float64
    assert ledger.column("delivered_s").tolist() == [r.sent_s + 0.5 for r in ROWS]
    with pytest.raises(ValueError):
        ledger.column("nope")


def test_csv_has_a_header_and_one_line_per_row_with_exact_floats() -> None:
    rows = [row(0, 1, "secure_sum", 1, "share", "a,b", 2, 3, 64, sent=0.1 + 0.2)]
    text = Ledger(rows).to_csv()
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == list(COLUMNS)
    assert parsed[1][:10] == ["0", "1", "secure_sum", "1", "share", "a,b", "2", "3", "64", "1"]
    assert float(parsed[1][10]) == 0.1 + 0.2  # repr round-trips the float exactly
    assert parsed[1][10] == repr(0.1 + 0.2)
    assert text.endswith("\n") and "\r" not in text
    assert Ledger([]).to_csv() == ",".join(COLUMNS) + "\n"


def test_per_party_and_totals_equal_numpy_sums_over_many_rows(tmp_path) -> None:
    """On 5,000 random rows among 40 parties (roles for 30 of them: the others' rows are
    not counted for them), each party's figures are numpy sums of masked columns."""
    rng = np.random.default_rng(8)
    n, parties = 5000, 40
    senders = rng.integers(0, parties, n)
    receivers = (senders + rng.integers(1, parties, n)) % parties
    elements, n_bytes = rng.integers(0, 50, n), rng.integers(0, 1000, n)
    rounds = rng.integers(1, 9, n)
    rows = [row(int(s), int(r), "secure_sum", int(k) % 7, "share", "", int(rd), int(e), int(b))
            for k, (s, r, rd, e, b) in enumerate(zip(senders, receivers, rounds, elements,
                                                     n_bytes, strict=True))]
    ledger = Ledger(rows)
    roles = {p: "site" for p in range(0, parties, 4)} | {p: "x" for p in range(1, 30, 4)}
    for entry in ledger.per_party(roles):
        p = entry["party"]
        out, inc = senders == p, receivers == p
        assert entry == {"party": p, "role": roles[p],
                         "messages_sent": int(out.sum()),
                         "elements_sent": int(elements[out].sum()),
                         "bytes_sent": int(n_bytes[out].sum()),
                         "messages_received": int(inc.sum()),
                         "elements_received": int(elements[inc].sum()),
                         "bytes_received": int(n_bytes[inc].sum())}
    assert [e["party"] for e in ledger.per_party(roles)] == sorted(roles)
    assert ledger.totals() == {"messages": n, "elements": int(elements.sum()),
                               "bytes": int(n_bytes.sum()), "rounds": int(rounds.max())}
    (tmp_path / "ledger.csv").touch()
    ledger.write_csv(tmp_path / "ledger.csv")
    assert (tmp_path / "ledger.csv").read_text() == ledger.to_csv()


def test_rows_kept_by_column_come_back_equal_and_in_send_order() -> None:
    """RowColumns (an MPI rank's rows) returns the rows appended, equal field by field —
    large integers, names that need quoting, repeated send times — and in send order as
    Python's stable ``sorted`` orders them; delivery times set by number land on those rows."""
    from sim.ledger import RowColumns

    rng = np.random.default_rng(5)
    rows = [Row(int(rng.integers(0, 9)), int(rng.integers(0, 9)),
                str(rng.choice(["secure_sum", "a,b", "é"])), i, f"s{i % 3}",
                str(rng.choice(["", "iter/1"])), int(rng.integers(1, 6)),
                int(rng.integers(0, 2**62)), int(rng.integers(0, 2**40)), 1,
                float(rng.choice([0.5, 0.25, rng.random()])), float(rng.random()))
            for i in range(2000)]
    columns = RowColumns()
    for r in rows:
        columns.append(*r)
    assert len(columns) == len(rows) and list(columns) == rows
    assert columns.row(1234) == rows[1234]
    assert list(columns.in_send_order()) == sorted(rows, key=lambda r: r.sent_s)
    numbers = np.array([7, 1999, 0])
    columns.deliver(numbers, np.array([9.5, 8.25, 1e-9]))
    expected = list(rows)
    for i, t in zip(numbers, (9.5, 8.25, 1e-9), strict=True):
        expected[i] = expected[i]._replace(delivered_s=t)
    assert list(columns) == expected
    columns.append(*rows[0])  # it grows again after delivery times were set
    columns.clear()
    assert len(columns) == 0 and list(columns) == []


def test_elements_by_sender_and_matching_follow_select() -> None:
    """One pass of ``elements_by_sender`` equals summing ``select``'s rows by hand, for a
    protocol, several protocols, a phase and its sub-phases."""
    ledger = Ledger(ROWS)
    assert ledger.elements_by_sender() == {0: 18, 1: 18, 2: 1}
    assert ledger.elements_by_sender(protocol="secure_sum") == {0: 11, 1: 11}
    assert ledger.elements_by_sender(protocol=("gather", "key_agreement")) == {0: 7, 1: 7,
                                                                              2: 1}
    assert ledger.elements_by_sender(phase="iter") == {0: 12, 1: 12, 2: 1}
    assert ledger.elements_by_sender(protocol="secure_sum", phase="iter") == {0: 5, 1: 5}
    assert list(ledger.matching(phase="iter/2")) == ROWS[8:]
    assert list(ledger.select(protocol="gather", sender=2)) == [ROWS[10]]
