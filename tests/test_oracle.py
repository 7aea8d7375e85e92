"""The oracle on hand-computed cases (observation lists, state machine, undefined cases)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mdlri_conformance.backends.contract import Err, TaskType
from mdlri_conformance.conformance.engine.graphs import (Case, GraphError, Launch, Memset, Record,
                                                         ValueWait, ValueWrite, Wait)
from mdlri_conformance.conformance.engine.observe import Observation
from mdlri_conformance.conformance.engine.oracle import expected
from mdlri_conformance.conformance.engine.oracle_listing import (
    SEQ_IDS_OK, SHORT_STREAMS, SHORT_TASKS,
)
from mdlri_conformance.conformance.engine.oracle_memory import OracleMemory
from mdlri_conformance.conformance.engine.oracle_program import Program
from mdlri_conformance.conformance.engine.oracle_state import ModelState, State, UndefinedCase
from mdlri_conformance.conformance.engine.steps import (Disable, Execute, SetBadType, SetKernel,
                                                        SetValue, Sync, Update)

X = [1, 2, 3, 4, 5, 6, 7, 8]
S = [-1] * 8
FAULTED = Err.RT_MODEL_UPDATE_FAILED
NOT_READY = Err.RT_MODEL_EXECUTE


def obs_of(case: Case) -> dict[tuple[str, int, str], object]:
    """Expected observations keyed by (phase, index, what)."""
    out = {}
    for o in expected(case):
        assert o.key not in out, f"duplicate key {o.key}"
        out[o.key] = o.value
    return out


def seed_pair(plan: list) -> Case:
    """main(in -> mid), postprocess(mid -> out) on one stream (scenarios.md S6)."""
    return Case(streams=1, buffers=[list(X), list(S), list(S)], words=[], events=0,
                ops=[Launch(0, "fallback_main", {"input": 0, "output": 1}),
                     Launch(0, "fallback_postprocess", {"input": 1, "output": 2})],
                plan=plan, name="seed")


# ---------------------------------------------------------------------------------------------
# whole observation lists


def capture_extras(order: list[int]) -> list[Observation]:
    """The listing extras after the capture: the GetStreams order as stream classes (LIST-02)
    and the short listings (LIST-05)."""
    return [Observation("listing", -1, "stream order", order),
            Observation("listing", -1, "short streams", SHORT_STREAMS),
            Observation("listing", -1, "short tasks", SHORT_TASKS)]


def test_seed_pair_exact_list() -> None:
    case = seed_pair([Execute(), Sync()])
    assert expected(case) == [
        Observation("capture", -1, "rc", 0),
        Observation("listing", -1, "stream 0 ops", [0, 1]),
        Observation("listing", -1, "seq ids", SEQ_IDS_OK),
        *capture_extras([0]),
        Observation("step", 0, "rc", [0]),
        Observation("step", 1, "rc", 0),
        Observation("sync", 1, "buffer 0", X),
        Observation("sync", 1, "buffer 1", [x + 10 for x in X]),
        Observation("sync", 1, "buffer 2", [(x + 10) * 2 for x in X]),
    ]


def test_fork_join_two_streams() -> None:
    """Origin runs main, forks to stream 1 for postprocess, joins back (XS-01/02)."""
    case = Case(streams=2, buffers=[list(X), list(S), list(S)], words=[], events=2,
                ops=[Launch(0, "fallback_main", {"input": 0, "output": 1}),  # 0
                     Record(0, 0),                                            # 1
                     Wait(1, 0),                                              # 2
                     Launch(1, "fallback_postprocess", {"input": 1, "output": 2}),  # 3
                     Record(1, 1),                                            # 4
                     Wait(0, 1)],                                             # 5
                plan=[Execute(), Sync()])
    assert expected(case) == [
        Observation("capture", -1, "rc", 0),
        Observation("listing", -1, "stream 0 ops", [0, 1, 5]),
        Observation("listing", -1, "stream 1 ops", [2, 3, 4]),
        Observation("listing", -1, "seq ids", SEQ_IDS_OK),
        *capture_extras([1, 0]),  # the side stream attached last is listed first (LIST-02)
        Observation("step", 0, "rc", [0]),
        Observation("step", 1, "rc", 0),
        Observation("sync", 1, "buffer 0", X),
        Observation("sync", 1, "buffer 1", [x + 10 for x in X]),
        Observation("sync", 1, "buffer 2", [(x + 10) * 2 for x in X]),
    ]


def test_set_kernel_deferred_until_update() -> None:
    """SETP-01/UPD-05: the new args run only after Update; execute in between is 507011."""
    plan = [SetKernel(1, {"input": 0, "output": 2}),  # 0: postprocess reads the input now
            Execute(), Sync(),                          # 1, 2: refused (SETP-02)
            Update(),                                   # 3
            Execute(), Sync()]                          # 4, 5
    got = obs_of(seed_pair(plan))
    assert got[("step", 0, "rc")] == 0
    assert got[("step", 1, "rc")] == [NOT_READY]
    assert got[("sync", 2, "buffer 2")] == S          # nothing ran
    assert got[("step", 3, "rc")] == 0
    assert got[("listing", 3, "stream 0 ops")] == [0, 1]
    assert got[("step", 4, "rc")] == [0]
    assert got[("sync", 5, "buffer 2")] == [x * 2 for x in X]


def test_set_kernel_swaps_kernel() -> None:
    plan = [Execute(), Sync(), SetKernel(0, {"input": 0, "output": 1}, "fallback_postprocess"),
            Update(), Execute(), Sync()]
    got = obs_of(seed_pair(plan))
    assert got[("sync", 1, "buffer 1")] == [x + 10 for x in X]
    assert got[("sync", 5, "buffer 1")] == [x * 2 for x in X]
    assert got[("sync", 5, "buffer 2")] == [x * 4 for x in X]


def test_disable_leaves_sentinel_and_listing() -> None:
    """DIS-02/DIS-01/DIS-05: the disabled task still runs before Update, then disappears."""
    case = Case(streams=1, buffers=[list(X), list(S), list(S)], words=[], events=0,
                ops=[Launch(0, "affine", {"x": 0, "y": 1, "n": 8, "a": 2, "b": 1}),
                     Launch(0, "affine", {"x": 0, "y": 2, "n": 8, "a": 3, "b": 0})],
                plan=[Disable(1), Update(), Execute(), Sync()])
    assert expected(case)[6:] == [
        Observation("step", 0, "rc", 0),
        Observation("step", 1, "rc", 0),
        Observation("listing", 1, "stream 0 ops", [0]),
        Observation("listing", 1, "seq ids", SEQ_IDS_OK),
        Observation("step", 2, "rc", [0]),
        Observation("step", 3, "rc", 0),
        Observation("sync", 3, "buffer 0", X),
        Observation("sync", 3, "buffer 1", [2 * x + 1 for x in X]),
        Observation("sync", 3, "buffer 2", S),
    ]


def test_disable_keeps_last_value() -> None:
    """DIS-01: memory a disabled task wrote earlier keeps its last value."""
    got = obs_of(seed_pair([Execute(), Sync(), Disable(1), Update(), Execute(), Sync()]))
    assert got[("sync", 5, "buffer 2")] == [(x + 10) * 2 for x in X]
    assert got[("listing", 3, "stream 0 ops")] == [0]


def test_set_params_after_disable_reenables_and_disable_after_set_wins() -> None:
    """DIS-04: the last of SetParams/Disable on a task before Update wins."""
    reenabled = obs_of(seed_pair([Disable(1), SetKernel(1, {"input": 0, "output": 2}), Update(),
                                  Execute(), Sync()]))
    assert reenabled[("listing", 2, "stream 0 ops")] == [0, 1]
    assert reenabled[("sync", 4, "buffer 2")] == [x * 2 for x in X]
    disabled = obs_of(seed_pair([SetKernel(1, {"input": 0, "output": 2}), Disable(1), Update(),
                                 Execute(), Sync()]))
    assert disabled[("listing", 2, "stream 0 ops")] == [0]
    assert disabled[("sync", 4, "buffer 2")] == S


def test_fault_sequence() -> None:
    """SETP-03/SETP-10/UPD-04/EXE-07: a bad type faults the model for good."""
    plan = [SetBadType(0, TaskType.EVENT_RECORD), Execute(2), Sync(), Update(),
            SetKernel(1, {"input": 0, "output": 2}), Disable(0), Execute()]
    got = expected(seed_pair(plan))
    rcs = [o.value for o in got if o.phase == "step" and o.what == "rc"]
    assert rcs == [Err.RT_PARAM_INVALID, [NOT_READY, NOT_READY], 0, FAULTED, FAULTED, FAULTED,
                   [NOT_READY]]
    assert not [o for o in got if o.phase == "listing" and o.index >= 0]
    assert [o.value for o in got if o.key == ("sync", 2, "buffer 2")] == [S]


def test_disable_memset_faults() -> None:
    """DIS-06: disabling a DEFAULT (memset) task gives 107000 and FAULT."""
    case = Case(streams=1, buffers=[list(S)], words=[], events=0,
                ops=[Memset(0, 0, 0)], plan=[Disable(0), Update(), Execute(), Sync()])
    got = obs_of(case)
    assert got[("listing", -1, "stream 0 ops")] == []
    assert [got[("step", i, "rc")] for i in range(4)] == [Err.RT_PARAM_INVALID, FAULTED,
                                                          [NOT_READY], 0]
    assert got[("sync", 3, "buffer 0")] == S


def test_accumulate_repeated_executions() -> None:
    """EXE-02: every execution re-runs the accumulate kernel."""
    case = Case(streams=1, buffers=[[0] * 4, [1, 2, 3, 4]], words=[], events=0,
                ops=[Launch(0, "accumulate", {"acc": 0, "x": 1, "n": 4})],
                plan=[Execute(3), Sync(), Execute(), Execute(), Sync(-1)])
    got = obs_of(case)
    assert got[("step", 0, "rc")] == [0, 0, 0]
    assert got[("sync", 1, "buffer 0")] == [3, 6, 9, 12]
    assert got[("sync", 4, "buffer 0")] == [5, 10, 15, 20]


def test_memset_byte_replicated() -> None:
    case = Case(streams=1, buffers=[list(S), [0] * 8], words=[], events=0,
                ops=[Memset(0, 0, 1), Launch(0, "copy", {"src": 0, "dst": 1, "n": 8}),
                     Memset(0, 0, 0xAB)],
                plan=[Execute(), Sync()])
    got = obs_of(case)
    assert got[("listing", -1, "stream 0 ops")] == [1]
    assert got[("sync", 1, "buffer 1")] == [0x01010101] * 8
    assert got[("sync", 1, "buffer 0")] == [int.from_bytes(b"\xab" * 4, "little", signed=True)] * 8


def test_value_write_and_wait() -> None:
    """Value write on stream 0 released to a value wait on stream 1; SetValue (UPD-05)."""
    case = Case(streams=2, buffers=[list(S)], words=[0], events=2,
                ops=[ValueWrite(0, 0, 7),                      # 0
                     Record(0, 0), Wait(1, 0),                  # 1, 2
                     ValueWait(1, 0, 7),                        # 3
                     Launch(1, "fill", {"out": 0, "n": 8, "value": 5}),  # 4
                     Record(1, 1), Wait(0, 1)],                 # 5, 6
                plan=[Execute(), Sync()])
    got = obs_of(case)
    assert got[("listing", -1, "stream 1 ops")] == [2, 3, 4, 5]
    assert got[("sync", 1, "word 0")] == 7
    assert got[("sync", 1, "buffer 0")] == [5] * 8
    case.plan += [SetValue(0, 2 ** 64 - 1), Update(), Execute(), Sync()]
    with pytest.raises(UndefinedCase, match="would block"):
        expected(case)


def test_value_write_new_value_without_wait() -> None:
    case = Case(streams=1, buffers=[[0]], words=[3], events=0, ops=[ValueWrite(0, 0, 9)],
                plan=[Sync(), Execute(), Sync(), SetValue(0, 2 ** 64 - 1), Update(), Sync(),
                      Execute(), Sync()])
    got = obs_of(case)
    assert got[("sync", 0, "word 0")] == 3
    assert got[("sync", 2, "word 0")] == 9
    assert got[("sync", 5, "word 0")] == 9   # SETP-01: still deferred until executed
    assert got[("sync", 7, "word 0")] == 2 ** 64 - 1


def test_sync_timeout_below_minus_one() -> None:
    """TMO-02: < -1 is 107000; buffers are still reported."""
    got = obs_of(seed_pair([Execute(), Sync(-2), Sync(-1), Sync(1)]))
    assert [got[("step", i, "rc")] for i in range(1, 4)] == [Err.RT_PARAM_INVALID, 0, 0]
    assert got[("sync", 1, "buffer 2")] == [(x + 10) * 2 for x in X]


def test_sync_timeout_zero_is_not_modelled() -> None:
    """TMO-07 (documented immediate check) and TMO-08 (the code's 107000) disagree."""
    with pytest.raises(UndefinedCase, match="TMO-07"):
        expected(seed_pair([Execute(), Sync(0)]))


def test_update_on_ready_is_noop_with_listing() -> None:
    got = expected(seed_pair([Update(), Update()]))
    assert [o.key for o in got[6:]] == [
        ("step", 0, "rc"), ("listing", 0, "stream 0 ops"), ("listing", 0, "seq ids"),
        ("step", 1, "rc"), ("listing", 1, "stream 0 ops"), ("listing", 1, "seq ids")]


def test_expected_does_not_mutate_case() -> None:
    case = seed_pair([Execute(2), Sync()])
    before = case.to_json()
    assert expected(case) == expected(case)
    assert case.to_json() == before


# ---------------------------------------------------------------------------------------------
# undefined and invalid cases


def test_graph_error_for_unchecked_case() -> None:
    case = Case(streams=1, buffers=[list(X)], words=[], events=1, ops=[Wait(0, 0)], plan=[])
    with pytest.raises(GraphError):
        expected(case)


def test_disabled_record_with_live_wait_is_undefined() -> None:
    case = Case(streams=2, buffers=[list(S)], words=[], events=2,
                ops=[Record(0, 0), Wait(1, 0), Launch(1, "fill", {"out": 0, "n": 8, "value": 1}),
                     Record(1, 1), Wait(0, 1)],
                plan=[Disable(3), Update(), Execute(), Sync()])
    with pytest.raises(UndefinedCase, match="DIS-08"):
        expected(case)


def test_race_created_by_set_kernel_is_undefined() -> None:
    case = Case(streams=2, buffers=[list(X), list(S), list(S)], words=[], events=2,
                ops=[Record(0, 0), Wait(1, 0),
                     Launch(1, "copy", {"src": 0, "dst": 1, "n": 8}),
                     Record(1, 1),
                     Launch(0, "copy", {"src": 0, "dst": 2, "n": 8}),
                     Wait(0, 1)],
                plan=[SetKernel(4, {"src": 0, "dst": 1, "n": 8}), Update(), Execute(), Sync()])
    with pytest.raises(UndefinedCase, match="race"):
        expected(case)


def test_dangling_task_after_update_is_undefined() -> None:
    with pytest.raises(UndefinedCase, match="DIS-05"):
        expected(seed_pair([Disable(1), Update(), Disable(1)]))


# ---------------------------------------------------------------------------------------------
# the state model on its own


def test_model_state_transitions() -> None:
    m = ModelState()
    assert m.begin_capture() == 0 and m.state is State.CAPTURE_ACTIVE
    assert m.set_params(TaskType.KERNEL) == FAULTED          # SETP-13
    assert m.execute() == Err.RT_MODEL_CAPTURED              # EXE-04
    assert m.destroy() == Err.RT_MODEL_CAPTURED              # LIFE-02
    assert m.end_capture() == 0 and m.state is State.READY
    assert m.update() == 0 and m.state is State.READY        # UPD-01
    assert m.disable() == 0 and m.state is State.UPDATING    # DIS-02
    assert m.execute() == NOT_READY
    assert m.set_params(TaskType.VALUE_WRITE, TaskType.KERNEL) == 0   # SETP-07
    assert m.update() == 0 and m.state is State.READY
    assert m.set_params(TaskType.KERNEL, TaskType.VALUE_WRITE) == Err.RT_PARAM_INVALID  # SETP-04
    assert m.state is State.FAULT
    assert (m.update(), m.disable(), m.execute()) == (FAULTED, FAULTED, NOT_READY)
    assert m.destroy() == 0 and m.state is State.NONE


@pytest.mark.parametrize("timeout, rc", [(-2, Err.RT_PARAM_INVALID), (-1000, Err.RT_PARAM_INVALID),
                                         (-1, 0), (1, 0), (5000, 0)])
def test_model_state_sync(timeout: int, rc: int) -> None:
    assert ModelState.sync(timeout) == rc


def test_memory_addresses_and_program_sharing() -> None:
    mem = OracleMemory([[1, 2], [3]], [2 ** 64 - 1])
    assert mem.read(mem.buffer_addr(0) + 4, 4).view("<i4").tolist() == [2]
    assert mem.word(0) == 2 ** 64 - 1
    with pytest.raises(UndefinedCase):
        mem.read(mem.buffer_addr(1), 8)
    case = Case(streams=1, buffers=[[0], [1]], words=[0], events=0,
                ops=[Launch(0, "accumulate", {"acc": 0, "x": 1, "n": 1})], plan=[])
    p1, p2 = Program(case, mem), Program(case, mem)
    p1.run()
    p2.run()
    assert mem.buffer(0) == [1 + 3 + 3, 2]


def _imports(path: Path) -> set[str]:
    """The modules a source file imports (relative imports resolved inside the engine)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = "mdlri_conformance.conformance.engine" + (f".{base}" if base else "")
            # a name imported from a package may be a module: keep both spellings
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return out


ENGINE = Path(__file__).resolve().parent.parent / "conformance" / "engine"


def test_the_oracle_imports_only_the_case_model_the_contract_and_the_kernels() -> None:
    """The oracle shares no code with the simulator, the acl backend or the runner: a
    difference from a backend then means something."""
    engine = "mdlri_conformance.conformance.engine."
    case_model = ("graphs", "steps", "ordering", "validation")
    allowed = ("mdlri_conformance.backends.contract", "mdlri_conformance.kernel",
               engine + "observe", engine + "oracle", engine + "case_facts",
               *(engine + m for m in case_model))
    names = sorted(p.name for p in ENGINE.glob("oracle*.py"))
    assert len(names) > 1, names
    for name in names + ["case_facts.py"] + [m + ".py" for m in case_model]:
        ours = {m for m in _imports(ENGINE / name) if m.startswith("mdlri_conformance")}
        assert all(m.startswith(allowed) or m == "mdlri_conformance.conformance.engine"
                   for m in ours), (name, sorted(ours))


def test_the_engine_never_imports_specs_harness_or_scenarios() -> None:
    banned = ("mdlri_conformance.conformance.specs", "mdlri_conformance.conformance.harness",
              "mdlri_conformance.conformance.scenarios")
    for path in sorted(ENGINE.glob("*.py")):
        bad = {m for m in _imports(path) if m.startswith(banned)}
        assert not bad, f"{path.name} imports {sorted(bad)}"
