"""The listing match's shortcuts (conformance/engine/listing.py) give what the slow ways give:
the bit-parallel LCS length scores a pair of streams as the LCS table of ``_align`` does, and
an op's expected signature is packed once and stays what ``signature.of_op`` says."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mdlri_conformance.conformance.engine import signature
from mdlri_conformance.conformance.engine.graphs import Case, Launch, Record, ValueWrite, Wait
from mdlri_conformance.conformance.engine.listing import TaskMap, _align, _lcs_length

#: a few signatures, equal ones often (what listings of several streams hold)
SIGS = st.sampled_from([("record",), ("wait",), ("kernel", "add", b"\x01"),
                        ("kernel", "add", b"\x02"), ("value_write", 64, 3)])


@settings(max_examples=400, deadline=None)
@given(st.lists(SIGS, max_size=14), st.lists(SIGS, max_size=14))
def test_the_lcs_length_is_the_tables(a: list[Any], b: list[Any]) -> None:
    table = _align([(None, x) for x in a], [(0, y) for y in b])
    assert _lcs_length(a, b) == table[0] == len(table[1])


def test_the_lcs_length_of_long_lists_past_a_machine_word() -> None:
    a = [("record",), ("wait",)] * 50
    b = [("wait",)] * 70 + [("record",)] * 3
    assert _lcs_length(a, b) == _align([(None, x) for x in a], [(0, y) for y in b])[0] == 50


def test_an_ops_expected_signature_is_what_of_op_says_every_time() -> None:
    ops = [Launch(0, "add", {"a": 0, "b": 1, "out": 0, "n": 2}), Record(0, 0), Wait(0, 0),
           ValueWrite(0, 0, 7)]
    case = Case(buffers=[[1, 2], [3, 4]], words=[0], streams=1, events=1, ops=ops, plan=[])
    bufs, words = [0x1000, 0x2000], [0x3000]
    tm = TaskMap(None, case, bufs, words, {}, lambda rc, call: rc)  # type: ignore[arg-type]
    for _ in range(2):
        for op in ops:
            assert tm.expected_sig(op) == signature.of_op(op, bufs.__getitem__,
                                                          words.__getitem__)
    twin = Launch(0, "add", {"a": 1, "b": 0, "out": 1, "n": 2})  # another op: its own entry
    assert tm.expected_sig(twin) == signature.of_op(twin, bufs.__getitem__, words.__getitem__)
    assert tm.expected_sig(twin) != tm.expected_sig(ops[0])
