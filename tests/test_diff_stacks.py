"""``mdlri-conformance diff --stacks``: the stack comparison over two small synthetic runs.

Run A is a stub-like stack (no data moves, nothing blocks; kernel execution shown so that a
data-plane clause can be confirmed in both runs), run B a device-like stack (data moves,
kernels run, the blocking probe hung). Every number of the comparison is asserted.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.conformance.cli import main
from mdlri_conformance.conformance.cli.commands import DATA_PLANE
from mdlri_conformance.reports.runs import load_run
from mdlri_conformance.reports.stacks import (UNINFORMATIVE, compare_stacks, format_stacks,
                                              label, stack_facts)

VERDICTS = {"PASS", "FAIL", "CHANGED", "XFAIL", "XPASS"}
NEEDS_UNRECORDED = object()


def _row(spec: str, outcome: str, clauses: list[str], needs: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"nodeid": f"specs/test_x.py::{spec}", "outcome": outcome,
                           "clauses": clauses, "backend": "acl", "level": "documented"}
    if isinstance(needs, tuple):  # (declared needs, missing while it ran)
        row["needs"], row["missing"] = needs
    elif needs is not NEEDS_UNRECORDED:
        row["needs"] = needs
    return row


# spec: (clauses, A outcome, A needs, B outcome, B needs); None = no row in that run
SPECS: dict[str, tuple[list[str], Any, Any, Any, Any]] = {
    # UNSUPPORTED on A, PASS on B: moves; confirms DP-1 in B
    "s1": (["DP-1"], "UNSUPPORTED", ["data_movement"], "PASS", ["data_movement"]),
    # A shows no blocking: its PASS is PASS*; B FAIL: moves from PASS*
    "s2": (["DP-2"], "PASS", ["blocking_wait", "capture"], "FAIL",
           ["blocking_wait", "capture"]),
    # control plane only: PASS -> PASS, no data-plane clause
    "s3": (["CP-1"], "PASS", [], "PASS", []),
    "s4": (["DP-3"], "UNSUPPORTED", ["kernel_exec"], "UNSUPPORTED", ["kernel_exec"]),
    # PASS* on A (data does not move there), PASS on B: moves from PASS*, confirms DP-4
    "s5": (["DP-4"], "PASS", ["data_movement"], "PASS", ["data_movement"]),
    # a real verdict lost
    "s6": (["CP-2"], "CHANGED", ["capture"], "TIMEOUT", NEEDS_UNRECORDED),
    # B's blocking probe hung: PASS* on B, so no move and no confirmation
    "s7": (["DP-5"], "UNSUPPORTED", ["blocking_wait"], "PASS", ["blocking_wait"]),
    "s8": (["CP-3"], "PASS", [], None, None),
    # needs recorded by neither run (an older harness): counted, never PASS*
    "s9": (["DP-6"], "PASS", NEEDS_UNRECORDED, "PASS", NEEDS_UNRECORDED),
    # the needs come from A's UNSUPPORTED row only: B's PASS confirms DP-7
    "s10": (["DP-7"], "UNSUPPORTED", ["data_movement"], "PASS", NEEDS_UNRECORDED),
    # kernel execution shown on both: DP-8 confirmed in both, so not new
    "s11": (["DP-8"], "PASS", ["kernel_exec"], "PASS", ["kernel_exec"]),
    "s12": (["CP-4"], None, None, "PASS", []),
    # data plane only through A's missing (a readback without data movement): confirms DP-9
    "s13": (["DP-9"], "UNSUPPORTED", (["kernels"], ["data_movement"]), "PASS", ["kernels"]),
}


def _probe(verdicts: dict[str, str], second: dict[str, str] | None = None) -> dict[str, Any]:
    procs = {"gw0": verdicts, **({"gw1": second} if second else {})}
    return {"findings": {p: [{"cap": c, "verdict": v} for c, v in vs.items()]
                         for p, vs in procs.items()}}


def _write_run(path: Path, side: int, probe: dict[str, Any] | None, device: str) -> Path:
    path.mkdir()
    rows = []
    for spec, entry in SPECS.items():
        clauses, outcome, needs = entry[0], entry[1 + 2 * side], entry[2 + 2 * side]
        if outcome is not None:
            rows.append(_row(spec, outcome, clauses, needs))
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "collected.json").write_text(json.dumps([r["nodeid"] for r in rows]))
    (path / "run.json").write_text(json.dumps({"backend": "acl", "ended": "complete"}))
    (path / "summary.json").write_text(json.dumps({
        "backend": "acl", "stack": {"runtime": "libacl_rt.so", "version": "ACL 1.17.0",
                                    "device": device}}))
    if probe is not None:
        (path / "probe.json").write_text(json.dumps(probe))
    return path


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    a = _write_run(tmp_path / "a", 0, _probe({"data_movement": "absent",
                                              "kernel_exec": "present",
                                              "blocking_wait": "absent"}), "UT stub")
    b = _write_run(tmp_path / "b", 1, _probe(
        {"data_movement": "present", "kernel_exec": "present", "blocking_wait": "hung"},
        {"data_movement": "present", "kernel_exec": "present", "blocking_wait": "present"}),
        "virtual device")
    return a, b


def _spec(name: str) -> str:
    return f"specs/test_x.py::{name}"


def test_the_data_plane_is_the_three_probed_capabilities_a_replay_needs() -> None:
    assert DATA_PLANE == ("data_movement", "kernel_exec", "blocking_wait")


def test_a_run_shows_a_capability_only_when_every_probing_process_found_it(
        runs: tuple[Path, Path]) -> None:
    a, b = (stack_facts(load_run(p)) for p in runs)
    assert a.shown == frozenset({"kernel_exec"}) and a.probed
    # gw0 hung on blocking_wait, gw1 found it: not shown
    assert b.shown == frozenset({"data_movement", "kernel_exec"}) and b.probed
    assert a.stack == "acl: libacl_rt.so, ACL 1.17.0, device: UT stub"


def test_probe_records_fall_back_to_the_summary_and_else_show_nothing(tmp_path: Path) -> None:
    run = _write_run(tmp_path / "r", 0, None, "d")
    facts = stack_facts(load_run(run))
    assert facts.shown == frozenset() and not facts.probed
    summary = json.loads((run / "summary.json").read_text())
    summary["probe"] = _probe({"data_movement": "present"})
    (run / "summary.json").write_text(json.dumps(summary))
    facts = stack_facts(load_run(run))
    assert facts.shown == frozenset({"data_movement"}) and facts.probed


def test_an_uninformative_pass_needs_a_data_plane_capability_its_run_did_not_show() -> None:
    plane = DATA_PLANE
    shown = frozenset({"data_movement"})
    row = {"outcome": "PASS"}
    assert label(row, frozenset({"data_movement", "capture"}), shown, plane) == "PASS"
    assert label(row, frozenset({"kernel_exec"}), shown, plane) == UNINFORMATIVE
    assert label(row, frozenset({"capture"}), frozenset(), plane) == "PASS"
    assert label(row, None, frozenset(), plane) == "PASS"
    assert label({"outcome": "FAIL"}, frozenset({"kernel_exec"}), shown, plane) == "FAIL"


def test_the_comparison_counts_every_transition_move_and_clause(runs: tuple[Path, Path]) -> None:
    a, b = (load_run(p) for p in runs)
    cmp = compare_stacks(a, b, DATA_PLANE, VERDICTS)
    assert cmp.transitions == Counter({
        ("UNSUPPORTED", "PASS"): 3,          # s1, s10, s13
        (UNINFORMATIVE, "FAIL"): 1,          # s2
        ("PASS", "PASS"): 3,                 # s3, s9, s11
        ("UNSUPPORTED", "UNSUPPORTED"): 1,   # s4
        (UNINFORMATIVE, "PASS"): 1,          # s5
        ("CHANGED", "TIMEOUT"): 1,           # s6
        ("UNSUPPORTED", UNINFORMATIVE): 1,   # s7
    })
    assert sum(cmp.transitions.values()) == 11
    assert cmp.from_unsupported == [_spec("s1"), _spec("s10"), _spec("s13")]
    assert cmp.from_uninformative == [_spec("s2"), _spec("s5")]
    assert cmp.moved_to == Counter({"PASS": 4, "FAIL": 1})
    assert cmp.lost_verdict == [_spec("s6")]
    assert cmp.confirmed_a == {"DP-8"}
    assert cmp.confirmed_b == {"DP-1", "DP-4", "DP-7", "DP-8", "DP-9"}
    assert cmp.newly_confirmed == ["DP-1", "DP-4", "DP-7", "DP-9"]
    assert cmp.needs_unknown == [_spec("s9")]
    assert (cmp.only_a, cmp.only_b) == (1, 1)


def test_the_text_shows_the_matrix_and_the_counts(runs: tuple[Path, Path]) -> None:
    a, b = (load_run(p) for p in runs)
    lines = format_stacks(compare_stacks(a, b, DATA_PLANE, VERDICTS))
    assert lines[1] == ("  stack A: acl: libacl_rt.so, ACL 1.17.0, device: UT stub; "
                        "data_movement not shown, kernel_exec shown, blocking_wait not shown")
    matrix = lines[lines.index(next(x for x in lines if "A \\ B" in x)):][:6]
    assert [x.split() for x in matrix] == [
        ["A", "\\", "B", "PASS", "PASS*", "FAIL", "UNSUPPORTED", "TIMEOUT", "total"],
        ["PASS", "3", "0", "0", "0", "0", "3"],
        ["PASS*", "1", "0", "1", "0", "0", "2"],
        ["CHANGED", "0", "0", "0", "0", "1", "1"],
        ["UNSUPPORTED", "3", "1", "0", "1", "0", "5"],
        ["total", "7", "1", "1", "1", "1", "11"],
    ]
    assert "  moved to a real verdict: 5 (3 from UNSUPPORTED, 2 from PASS*): PASS 4, FAIL 1" \
        in lines
    assert "  lost a real verdict: 1" in lines
    assert ("  data-plane clauses confirmed: A 1, B 5; in B and not in A: 4: DP-1, DP-4, DP-7, "
            "DP-9" in lines)
    assert lines[-2].startswith("  needs recorded by neither run: 1 spec(s)")
    assert lines[-1] == "  not compared: 1 spec(s) only in A, 1 only in B"


def test_the_cli_adds_the_section_only_with_stacks_and_keeps_the_exit_code(
        runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (str(p) for p in runs)
    plain_rc = main(["diff", a, b])
    plain = capsys.readouterr().out
    stacks_rc = main(["diff", "--stacks", a, b])
    with_stacks = capsys.readouterr().out
    # s2 PASS -> FAIL is a new failure in B: exit 1 either way
    assert plain_rc == stacks_rc == 1
    assert "stack comparison" not in plain
    assert with_stacks.startswith(plain)
    tail = with_stacks[len(plain):].splitlines()
    assert tail[0] == "stack comparison (A: baseline, B: compared)"
    assert "  moved to a real verdict: 5 (3 from UNSUPPORTED, 2 from PASS*): PASS 4, FAIL 1" \
        in tail


READBACK_SPECS = '''
import pytest
from mdlri_conformance.backends.contract import Cap
from mdlri_conformance.conformance.framework import outcomes

@pytest.mark.clause("CAP-01")
@pytest.mark.requires(Cap.CAPTURE)
def test_readback_without_data_movement():
    raise outcomes.Unsupported("reading device memory needs data movement: absent",
                               caps=(Cap.DATA_MOVEMENT.value,))

@pytest.mark.clause("CAP-02")
@pytest.mark.requires(Cap.KERNELS)
def test_missing_declared_and_met():
    raise outcomes.Unsupported("never reached")

@pytest.mark.clause("CAP-03")
def test_207000():
    raise outcomes.Unsupported("aclmdlRIGetStreams returned 207000")
'''


def test_a_row_records_the_capabilities_its_unsupported_named(
        pytester: pytest.Pytester) -> None:
    """The comparison reads a spec's data-plane use from its row's ``needs`` and ``missing``:
    a readback without data movement (``Dev.readable``) records ``missing: [data_movement]``."""
    pytester.makepyfile(test_specs=READBACK_SPECS)
    pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin",
                       "-p", "no:randomly", "--backend", "tests.fakes:create_no_kernels",
                       "--report-dir", str(pytester.path / "out"))
    rows = {r["nodeid"].split("::")[1]: r for r in
            (json.loads(x) for x in (pytester.path / "out" / "results.jsonl").read_text()
             .splitlines())}
    readback = rows["test_readback_without_data_movement"]
    assert (readback["outcome"], readback["needs"], readback["missing"]) == (
        "UNSUPPORTED", ["capture"], ["data_movement"])
    declared = rows["test_missing_declared_and_met"]
    assert (declared["outcome"], declared["needs"], declared["missing"]) == (
        "UNSUPPORTED", ["kernels"], ["kernels"])
    plain = rows["test_207000"]
    assert (plain["outcome"], plain["needs"], "missing" in plain) == ("UNSUPPORTED", [], False)


def test_a_readback_unsupported_names_the_capability_it_lacks() -> None:
    """``Dev.readable`` raises Unsupported with ``caps`` naming data movement, or kernel
    execution after a kernel launch."""
    from mdlri_conformance.backends.contract import ALL_CAPS, Cap
    from mdlri_conformance.conformance.framework import outcomes
    from mdlri_conformance.conformance.harness import Dev
    from tests.fakes import NullBackend

    dev = Dev(NullBackend(ALL_CAPS - {Cap.DATA_MOVEMENT}))
    with pytest.raises(outcomes.Unsupported) as info:
        dev.readable()
    assert info.value.caps == ("data_movement",)
    dev = Dev(NullBackend(ALL_CAPS - {Cap.KERNEL_EXEC}))
    dev.readable()  # no kernel launched: the readback judges data movement only
    dev.kernels_used = True
    with pytest.raises(outcomes.Unsupported) as info:
        dev.readable()
    assert info.value.caps == ("kernel_exec",)
