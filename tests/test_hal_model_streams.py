"""Models with several streams on the virtual device, through its own interface
(``backends/hal/README.md``, "Model execute", "Streams of a model"): a captured fork and join
(two head streams, the side stream joined to the capture by its event wait,
context_aclgraph.cc:154-193, capture_model_utils.cc:139-165), a wait-active stream that only a
stream-active task of a head stream starts (the runtime's own stream-active program,
stars_cond_isa_helper.cc:1016-1123), ``aclrtSwitchStream`` (the STREAM_SWITCH_EX program,
:1179-1226), ``aclrtSwitchLabelByIndex`` (the LABEL_SWITCH_BY_INDEX program, :748-1008) and
model abort (MMT_MODEL_ABORT through the control SQ, ctrl_sq.cc:262-273).

No assertion on durations: a run still in progress is shown by state (no CQE, a head that
has not moved, memory not yet written) while the test holds one of its streams.
"""

from __future__ import annotations

import ctypes
import shutil
import struct
import time

import pytest

from mdlri_conformance.backends.hal import cond_isa, cond_streams, sqe
from mdlri_conformance.backends.hal.device import (
    DRV_ERROR_WAIT_TIMEOUT, PROP_SQ_HEAD, PROP_SQ_STATUS, PROP_SQ_TAIL, HalDevice, Queue)
from tests.hal_helpers import device, dev, i32, address, wait_head, only  # noqa: F401 (device, dev: fixtures)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

CTRL_STREAM, EXEC_STREAM, OUTSIDE_STREAM = 100, 1, 50
MAIN, SIDE, MERGE = 10, 11, 12
QUIET_MS = 200  # long enough for a run that should not have ended to show that it has
#: the abort status the execute reports: errorType bit 5 (SW status) and the sw status result
#: TS_STARS_MODEL_EXE_ABORT 3 in bits 31:28 (stars.hpp:59-63, runtime_tsch_defines.h:197)
ERR_SW_STATUS, MODEL_EXE_ABORT = 0x20, 3 << 28


def wait_count(model: "StreamModel", stream: int, count: int) -> int:
    """Poll a stream's execution counter until it reaches ``count`` (generous deadline)."""
    for _ in range(2000):
        if model.count(stream) == count:
            break
        time.sleep(0.005)
    return model.count(stream)


def wait_status(dev: HalDevice, sq: int, status: int) -> int:
    """Poll the SQ's status until it is ``status`` (generous deadline): a program deactivates
    its own SQ after the activation that lets the run end, so the execute's report can come
    first on a loaded host."""
    for _ in range(2000):
        if dev.query(sq, PROP_SQ_STATUS) == status:
            break
        time.sleep(0.005)
    return dev.query(sq, PROP_SQ_STATUS)


class Aligned:
    """Device memory for a cond ISA program, 256-byte aligned as the runtime allocates it."""

    def __init__(self, data: bytes) -> None:
        self._mem = ctypes.create_string_buffer(len(data) + cond_isa.FUNC_CALL_ALIGN)
        align = cond_isa.FUNC_CALL_ALIGN
        self.addr = -(-address(self._mem) // align) * align
        ctypes.memmove(self.addr, data, len(data))


class StreamModel:
    """A model as the runtime sets it up on STARS: each stream's SQ bound through the control
    SQ (MMT_STREAM_ADD with its stream type, ``RT_MODEL_HEAD_STREAM`` 0 or
    ``RT_MODEL_WAIT_ACTIVE_STREAM`` 1, model.cc:425-431) and its u16 execution counter; the
    device's SQ register address array; the model-execute program over the head streams only
    (``headStreams_``, model.cc:505-507); the end-graph notify named by MMT_MODEL_PRE_PROC."""

    def __init__(self, dev: HalDevice, *, model_id: int, head: list[int], wait_active: list[int],
                 end_notify: int) -> None:
        self.dev, self.model_id, self.end_notify = dev, model_id, end_notify
        self.ctrl = dev.alloc(stream_id=CTRL_STREAM)
        self.exe = dev.alloc(stream_id=EXEC_STREAM)
        streams = head + wait_active
        self.sqs: dict[int, Queue] = {s: dev.alloc(stream_id=s, depth=64) for s in streams}
        self.counters = {s: (ctypes.c_uint64 * 1)(0) for s in streams}
        self._task = 0
        for s in streams:
            self.control(sqe.MMT_STREAM_ADD, op_stream_id=s,
                         stream_type=(sqe.MODEL_HEAD_STREAM if s in head
                                      else sqe.MODEL_WAIT_ACTIVE_STREAM),
                         exec_times_addr=address(self.counters[s]))
        self.sq_regs = (ctypes.c_uint64 * 256)()
        for q in self.sqs.values():
            self.sq_regs[q.sq] = dev.reg_base(q.sq)[0]
        self.dfx = (ctypes.c_uint32 * 4)()
        size = 4 * cond_isa.model_execute_words() + 16 * len(head)
        self._exec_mem = Aligned(bytes(size))
        ctypes.memmove(self._exec_mem.addr, cond_isa.model_execute_block(
            func_call_addr=self._exec_mem.addr, head_sq_ids=[self.sqs[s].sq for s in head],
            exec_times_addrs=[address(self.counters[s]) for s in head],
            sq_virtual_addr=address(self.sq_regs), dfx_addr=address(self.dfx)), size)
        self._programs: list[Aligned] = []
        self.active_dfx = (ctypes.c_uint64 * 4)()

    def control(self, operation: int, **fields: int) -> sqe.Cqe:
        """One model maintenance message through the control SQ; its CQE."""
        self._task += 1
        self.dev.submit(self.ctrl.sq, sqe.model_maintenance(
            CTRL_STREAM, self._task, model_id=self.model_id, operation=operation, **fields))
        return only(self.dev.collect(self.ctrl.cq, 1))

    def load_complete(self) -> None:
        """MMT_MODEL_PRE_PROC: the load is complete; the end graph is ``end_notify``."""
        c = self.control(sqe.MMT_MODEL_PRE_PROC, end_graph_notify_id=self.end_notify)
        assert c.error_type == 0, f"pre-proc refused: {c}"

    def stream_active(self, stream: int, task_id: int, target: int) -> bytes:
        """The stream-active SQE a task of ``stream`` submits to start ``target``
        (cond_stars.cc:106-150), its program in memory of its own."""
        q = self.sqs[target]
        prog = Aligned(cond_streams.stream_active_program(
            sq_id=q.sq, exec_times_addr=address(self.counters[target]),
            sq_reg_addr=self.dev.reg_base(q.sq)[0], dfx_addr=address(self.active_dfx)))
        self._programs.append(prog)
        return cond_streams.stream_active_sqe(stream, task_id, func_call_addr=prog.addr)

    def switch(self, stream: int, task_id: int, target: int, *, var: int, val: int,
               condition: int) -> bytes:
        """The stream-switch SQE of ``aclrtSwitchStream(var, condition, val, INT32, target)``
        on ``stream`` (CONDS_SUB_TYPE_STREAM_SWITCH_EX), its program in memory of its own."""
        q = self.sqs[target]
        prog = Aligned(cond_streams.stream_switch_ex_program(
            var_addr=var, val_addr=val, condition=condition, data_type=cond_streams.RT_SWITCH_INT32,
            true_sq_id=q.sq, current_sq_id=self.sqs[stream].sq,
            exec_times_addr=address(self.counters[target]),
            true_sq_reg_addr=self.dev.reg_base(q.sq)[0], dfx_addr=address(self.active_dfx)))
        self._programs.append(prog)
        return cond_streams.stream_switch_ex_sqe(stream, task_id, func_call_addr=prog.addr)

    def execute(self, task_id: int) -> bytes:
        return cond_isa.model_execute_sqe(EXEC_STREAM, task_id, model_id=self.model_id,
                                          func_call_addr=self._exec_mem.addr)

    def count(self, stream: int) -> int:
        return int(self.counters[stream][0] & 0xFFFF)


def test_the_stream_active_program_has_the_runtime_layout() -> None:
    """``cond_streams.stream_active_program`` lays out ``RtStarsStreamActiveFc`` word for word
    (stars_cond_isa_define.hpp:69-121): 94 words; the FSM select register stored (SH) and
    loaded (LOAD_IMM LD) between CSRRC and CSRRS of AXI_USER; GOTO_I head 0, the counter, then
    ACTIVE_I of the SQ; the error word and the final NOP."""
    c = cond_isa
    words = struct.unpack("<94I", cond_streams.stream_active_program(
        sq_id=7, exec_times_addr=0x2000, sq_reg_addr=0x4000, dfx_addr=0x5000))
    assert cond_streams.stream_active_words() == 94
    assert words[9] == c.encode(c.SYSTEM, 0, c.CSRRC, c.R3) | c.CSR_AXI_USER << 20
    assert words[10] == c.encode(c.STORE, 0, c.SH, c.R1, c.R2), "SH of the sq id"
    assert words[12] == c.encode(c.LOAD_IMM, c.R1, c.LD) | (c.FSM_SEL_PA_910B >> 32) << 15
    assert words[14] == c.encode(c.SYSTEM, 0, c.CSRRS, c.R3) | c.CSR_AXI_USER << 20
    assert words[15] == c.encode(c.SYSTEM, 0, c.CSRRW, c.R1) | c.CSR_CSQ_STATUS << 20
    assert words[77:79] == (c.encode(c.STREAM, 0, c.GOTO_I), 7), "GOTO_I sq 7 head 0"
    assert words[86] == c.encode(c.STREAM, 0, c.ACTIVE_I) | 7 << 20, "ACTIVE_I sq 7"
    assert (words[92], words[93]) == (0, c.encode(c.OP_IMM)), "the error word, the end NOP"


def test_a_captured_fork_and_join_runs_again_on_each_execute(dev: HalDevice) -> None:
    """The capture shape on 910B with hardware events: the main stream copies src to mid and
    records the fork event; the side stream (a head stream: the capture binds a stream joined by
    an event wait with RT_HEAD_STREAM, context_aclgraph.cc:190-193) waits for it, waits at a
    gate the test records from outside, copies mid to side_out and records the join event; the
    main stream waits for the join, copies side_out to dst, then the resets and the end graph
    the capture end appends (ResetCaptureEventsProc, capture_adapt_v100.cc:64-75;
    context_aclgraph.cc:600-614). The execute completes only after the join, with dst written,
    on each of two executes."""
    model = StreamModel(dev, model_id=4, head=[MAIN, SIDE], wait_active=[], end_notify=42)
    outside = dev.alloc(stream_id=OUTSIDE_STREAM)
    fork, join, gate = 30, 31, 32
    src, mid, side_out, dst, marker = (i32([0] * 4) for _ in range(5))
    dev.submit(model.sqs[MAIN].sq,
               sqe.memcpy(MAIN, 1, address(src), address(mid), 16),
               sqe.event_record(MAIN, 2, fork),
               sqe.event_wait(MAIN, 3, join),
               sqe.memcpy(MAIN, 4, address(side_out), address(dst), 16),
               sqe.event_reset(MAIN, 5, fork), sqe.event_reset(MAIN, 6, join),
               sqe.event_reset(MAIN, 7, gate),
               sqe.notify_record(MAIN, 8, model.end_notify))
    dev.submit(model.sqs[SIDE].sq,
               sqe.event_wait(SIDE, 1, fork), sqe.event_wait(SIDE, 2, gate),
               sqe.memcpy(SIDE, 3, address(mid), address(side_out), 16),
               sqe.event_record(SIDE, 4, join))
    model.load_complete()
    for run, values in ((1, [1, 2, 3, 4]), (2, [-5, 6, -7, 8])):
        src[:] = values
        marker[0] = 0
        dev.submit(model.exe.sq, model.execute(10 * run),
                   sqe.write_value(EXEC_STREAM, 10 * run + 1, address(marker),
                                   struct.pack("<i", run)))
        assert [c.task_id for c in dev.collect(model.sqs[MAIN].cq, 2)] == [1, 2], (
            f"run {run}: the main stream forked")
        assert dev.recv(model.exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, []), (
            f"run {run}: the execute completed before the side stream joined")
        assert list(mid) == values and list(dst) != values and marker[0] == 0
        assert dev.query(model.sqs[MAIN].sq, PROP_SQ_HEAD) == 2, "main waits for the join"
        dev.submit(outside.sq, sqe.event_record(OUTSIDE_STREAM, run, gate))
        got = dev.collect(model.exe.cq, 2)
        assert [(c.task_id, c.sqe_type, c.error_type) for c in got] == [
            (10 * run, sqe.COND, 0), (10 * run + 1, sqe.WRITE_VALUE, 0)], f"run {run}"
        assert (list(side_out), list(dst), marker[0]) == (values, values, run)
        assert (model.count(MAIN), model.count(SIDE)) == (run, run)
        dev.collect(model.sqs[MAIN].cq, 6)
        dev.collect(model.sqs[SIDE].cq, 4)
        dev.collect(outside.cq, 1)


def test_a_wait_active_stream_runs_when_a_head_stream_activates_it(dev: HalDevice) -> None:
    """A wait-active stream is bound (MMT_STREAM_ADD, stream type 1) but is not in the
    model-execute program's head array: it runs only when the head stream's stream-active task
    (COND, CONDS_SUB_TYPE_STREAM_ACTIVE) runs the runtime's program: FSM idle, then disabled ->
    head 0, or enabled with head == tail -> disable, head 0; count; ACTIVE_I. The capture
    continues on such a stream when its SQ is full (stream_capture.cc:84-104). Two executes,
    each copying through the side stream."""
    model = StreamModel(dev, model_id=5, head=[MAIN], wait_active=[SIDE], end_notify=43)
    main, side = model.sqs[MAIN], model.sqs[SIDE]
    join = 33
    src, mid, dst = i32([0] * 3), i32([0] * 3), i32([0] * 3)
    dev.submit(main.sq, sqe.memcpy(MAIN, 1, address(src), address(mid), 12),
               model.stream_active(MAIN, 2, SIDE),
               sqe.event_wait(MAIN, 3, join), sqe.event_reset(MAIN, 4, join),
               sqe.notify_record(MAIN, 5, model.end_notify))
    dev.submit(side.sq, sqe.memcpy(SIDE, 1, address(mid), address(dst), 12),
               sqe.event_record(SIDE, 2, join))
    model.load_complete()
    assert dev.query(side.sq, PROP_SQ_STATUS) == 0 and model.count(SIDE) == 0
    for run, values in ((1, [7, 8, 9]), (2, [-1, 0, 1])):
        src[:] = values
        dev.submit(model.exe.sq, model.execute(run))
        c = only(dev.collect(model.exe.cq, 1))
        assert (c.task_id, c.error_type) == (run, 0), f"run {run}: {c}"
        assert list(dst) == values, f"run {run}: the side stream copied"
        assert (model.count(MAIN), model.count(SIDE)) == (run, run), (
            "the model program counts the head stream, the stream-active program the side")
        assert [c.task_id for c in dev.collect(main.cq, 5)] == [1, 2, 3, 4, 5]
        assert [c.task_id for c in dev.collect(side.cq, 2)] == [1, 2]
        assert model.active_dfx[1] == (0 if run == 1 else 1), (
            "the program saw the side SQ disabled before its first run, enabled after it")
        assert dev.query(side.sq, PROP_SQ_HEAD) == dev.query(side.sq, PROP_SQ_TAIL) == 2


def test_stream_active_waits_while_the_sq_it_activates_is_busy(dev: HalDevice) -> None:
    """The program loops on the FSM select register until the SQ it activates is idle: an SQ
    held at an event wait keeps the stream-active task from completing; once the wait passes
    and the SQ reaches its tail, the program checks head == tail (to its dfx words), disables
    it, sends its head to 0 and activates it: the SQ runs its SQEs again."""
    model = StreamModel(dev, model_id=6, head=[MAIN], wait_active=[SIDE], end_notify=44)
    side = model.sqs[SIDE]
    outside = dev.alloc(stream_id=OUTSIDE_STREAM)
    gate = 34
    written = i32([0])
    assert dev.config(side.sq, PROP_SQ_STATUS, 1) == 0  # enabled, as after an earlier run
    dev.submit(side.sq, sqe.nop(SIDE, 1), sqe.event_wait(SIDE, 2, gate),
               sqe.write_value(SIDE, 3, address(written), struct.pack("<i", 1)))
    assert wait_head(dev, side.sq, 1) == 1, "past the NOP: the SQ runs its wait"
    dev.submit(outside.sq, model.stream_active(OUTSIDE_STREAM, 1, SIDE))
    rc, early = dev.recv(outside.cq, timeout_ms=QUIET_MS)
    assert (rc, early) == (DRV_ERROR_WAIT_TIMEOUT, []), (
        f"the stream-active task completed while its SQ was busy: {early}, dfx "
        f"{list(model.active_dfx)}")
    assert model.count(SIDE) == 0 and dev.query(outside.sq, PROP_SQ_HEAD) == 0
    dev.submit(model.exe.sq, sqe.event_record(EXEC_STREAM, 1, gate))
    c = only(dev.collect(outside.cq, 1))
    assert (c.sqe_type, c.error_type) == (sqe.COND, 0)
    assert model.count(SIDE) == 1 and written[0] == 1
    assert model.active_dfx[1] == 1 and model.active_dfx[2] == model.active_dfx[3] == 3 << 48, (
        "enabled, head == tail == 3 (<< 48) in the dfx words")
    assert [c.task_id for c in dev.collect(side.cq, 4)] == [2, 3, 2, 3], "the SQ ran again"


@pytest.mark.parametrize(("condition", "taken"), [
    (cond_streams.RT_EQUAL, (True, False, True)), (cond_streams.RT_NOT_EQUAL, (False, True, False)),
    (cond_streams.RT_GREATER, (False, False, False)), (cond_streams.RT_LESS, (False, True, False)),
    (cond_streams.RT_GREATER_OR_EQUAL, (True, False, True)),
    (cond_streams.RT_LESS_OR_EQUAL, (True, True, True)),
], ids=["eq", "ne", "gt", "lt", "ge", "le"])
def test_a_stream_switch_moves_the_run_to_the_true_stream(
        dev: HalDevice, condition: int, taken: tuple[bool, bool, bool]) -> None:
    """``aclrtSwitchStream`` in a model (the STREAM_SWITCH_EX program,
    stars_cond_isa_helper.cc:1179-1226): when ``*var (condition) *val`` holds, the true stream
    (wait-active) is activated and the switching stream is deactivated after the task, so its
    next task does not run; otherwise the switching stream goes on. Both branches record the
    event a merge stream waits for before the end graph. Three executes with var = val, var <
    val, var = val again (INT32, signed)."""
    model = StreamModel(dev, model_id=9, head=[MAIN, MERGE], wait_active=[SIDE], end_notify=47)
    merge_event = 36
    var, val = i32([0]), i32([5])
    main_marker, side_marker = i32([0]), i32([0])
    dev.submit(model.sqs[MAIN].sq,
               model.switch(MAIN, 1, SIDE, var=address(var), val=address(val),
                            condition=condition),
               sqe.write_value(MAIN, 2, address(main_marker), struct.pack("<i", 1)),
               sqe.event_record(MAIN, 3, merge_event))
    dev.submit(model.sqs[SIDE].sq,
               sqe.write_value(SIDE, 1, address(side_marker), struct.pack("<i", 1)),
               sqe.event_record(SIDE, 2, merge_event))
    dev.submit(model.sqs[MERGE].sq, sqe.event_wait(MERGE, 1, merge_event),
               sqe.event_reset(MERGE, 2, merge_event),
               sqe.notify_record(MERGE, 3, model.end_notify))
    model.load_complete()
    for run, (value, switched) in enumerate(zip((5, -7, 5), taken), start=1):
        var[0] = value
        main_marker[0] = side_marker[0] = 0
        dev.submit(model.exe.sq, model.execute(run))
        c = only(dev.collect(model.exe.cq, 1))
        assert (c.task_id, c.error_type) == (run, 0), f"run {run}: {c}"
        assert (side_marker[0], main_marker[0]) == ((1, 0) if switched else (0, 1)), (
            f"run {run}: var {value} vs 5, switched {switched}")
        want = 0 if switched else 1
        assert wait_status(dev, model.sqs[MAIN].sq, want) == want
        main_ran = [c.task_id for c in dev.collect(model.sqs[MAIN].cq, 1 if switched else 3)]
        assert main_ran == ([1] if switched else [1, 2, 3]), f"run {run}"
        if switched:
            assert [c.task_id for c in dev.collect(model.sqs[SIDE].cq, 2)] == [1, 2]
        dev.collect(model.sqs[MERGE].cq, 3)
        assert dev.recv(model.sqs[MAIN].cq, timeout_ms=0)[1] == [], f"run {run}: main stopped"
    assert model.count(MAIN) == 3 and model.count(SIDE) == sum(taken)


def test_a_label_switch_by_index_moves_the_run_to_the_label(dev: HalDevice) -> None:
    """``aclrtSwitchLabelByIndex`` in a model (the LABEL_SWITCH_BY_INDEX program,
    stars_cond_isa_helper.cc:748-1008; label records as LABEL_SET leaves them,
    cond_op_label_task.cc:45-76): label 0 is on the switching stream itself (its head moves
    to the label when the task ends), labels 1 and 2 on a wait-active stream (disabled or run
    to its tail, its head is sent to the label, it is activated, the switching stream
    deactivated); an index at or past the maximum takes the last label. Five executes."""
    model = StreamModel(dev, model_id=10, head=[MAIN, MERGE], wait_active=[SIDE], end_notify=48)
    main, branch = model.sqs[MAIN], model.sqs[SIDE]
    merge_event = 37
    index, count = (ctypes.c_uint32 * 1)(0), (ctypes.c_uint32 * 1)(3)
    labels = ctypes.create_string_buffer(
        cond_streams.label_info(main.sq, 2, address(model.counters[MAIN]))
        + cond_streams.label_info(branch.sq, 0, address(model.counters[SIDE]))
        + cond_streams.label_info(branch.sq, 2, address(model.counters[SIDE])), 48)
    dfx = (ctypes.c_uint64 * 6)()
    prog = Aligned(cond_streams.label_switch_by_index_program(
        index_addr=address(index), max_value=3, label_count_addr=address(count),
        label_info_addr=address(labels), sq_virtual_addr=address(model.sq_regs),
        dfx_addr=address(dfx), current_sq_id=main.sq))
    skipped, main_marker, a, b = (i32([0]) for _ in range(4))
    dev.submit(main.sq, cond_streams.label_switch_by_index_sqe(MAIN, 1, func_call_addr=prog.addr),
               sqe.write_value(MAIN, 2, address(skipped), struct.pack("<i", 1)),
               cond_streams.label_set_sqe(MAIN, 3),
               sqe.write_value(MAIN, 4, address(main_marker), struct.pack("<i", 1)),
               sqe.event_record(MAIN, 5, merge_event))
    dev.submit(branch.sq, cond_streams.label_set_sqe(SIDE, 1),
               sqe.write_value(SIDE, 2, address(a), struct.pack("<i", 1)),
               cond_streams.label_set_sqe(SIDE, 3),
               sqe.write_value(SIDE, 4, address(b), struct.pack("<i", 1)),
               sqe.event_record(SIDE, 5, merge_event))
    dev.submit(model.sqs[MERGE].sq, sqe.event_wait(MERGE, 1, merge_event),
               sqe.event_reset(MERGE, 2, merge_event),
               sqe.notify_record(MERGE, 3, model.end_notify))
    model.load_complete()
    expected = {1: (0, 1, 1), 2: (0, 0, 1), 0: (1, 0, 0), 7: (0, 0, 1)}  # main, a, b
    for run, idx in enumerate((1, 2, 0, 1, 7), start=1):
        index[0] = idx
        main_marker[0] = a[0] = b[0] = 0
        dev.submit(model.exe.sq, model.execute(run))
        c = only(dev.collect(model.exe.cq, 1))
        assert (c.task_id, c.error_type) == (run, 0), (
            f"run {run}, index {idx}: {c}, dfx {[hex(v) for v in dfx]}, "
            f"{dev.recv(main.cq, timeout_ms=0)}")
        assert (main_marker[0], a[0], b[0]) == expected[idx], f"run {run}, index {idx}"
        assert skipped[0] == 0, "the task after the switch never runs"
        assert dfx[4] == min(idx, 2), "the (clamped) index in the dfx word at 0x20"
        want = 1 if idx == 0 else 0
        assert wait_status(dev, main.sq, want) == want, (
            f"run {run}: the switching SQ stays enabled only for a label of its own")
    assert model.count(SIDE) == 4, "each switch to the other stream counts it"
    assert model.count(MAIN) == 5, (
        "each execute; the switch to its own label does not count (its branch jumps past "
        "addExecTimes_2 to goto_r2, stars_cond_isa_helper.cc:909-913,973-975)")


def test_a_label_switch_past_the_label_count_is_an_sqe_error(dev: HalDevice) -> None:
    """An index below the maximum but not below the model's label count goes to the error
    word: an SQE error, the switching SQ stopped, no label taken."""
    q = dev.alloc(stream_id=MAIN)
    index, count = (ctypes.c_uint32 * 1)(2), (ctypes.c_uint32 * 1)(1)
    labels = ctypes.create_string_buffer(cond_streams.label_info(q.sq, 0, 0), 16)
    dfx = (ctypes.c_uint64 * 6)()
    prog = Aligned(cond_streams.label_switch_by_index_program(
        index_addr=address(index), max_value=4, label_count_addr=address(count),
        label_info_addr=address(labels), sq_virtual_addr=0, dfx_addr=address(dfx),
        current_sq_id=q.sq))
    dev.submit(q.sq, cond_streams.label_switch_by_index_sqe(MAIN, 1, func_call_addr=prog.addr))
    c = only(dev.collect(q.cq, 1))
    assert (c.sqe_type, c.error_type) == (sqe.COND, sqe.ERR_SQE_ERROR)
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0 and dfx[4] == 0


def test_an_abort_ends_a_run_that_cannot_finish(dev: HalDevice) -> None:
    """A model whose head stream waits for a side stream nothing activates never reaches its end
    graph. MMT_MODEL_ABORT through the control SQ completes and ends the run: the execute
    completes without error (the end-graph wait behind it carries the abort status) and the
    executing SQ runs on; it cuts the wait short and leaves the model's SQs disabled at their tails; the model then
    executes again."""
    model = StreamModel(dev, model_id=7, head=[MAIN], wait_active=[SIDE], end_notify=45)
    main, side = model.sqs[MAIN], model.sqs[SIDE]
    join = 35
    marker, after = i32([0]), i32([0])
    dev.submit(main.sq, sqe.event_wait(MAIN, 1, join),
               sqe.write_value(MAIN, 2, address(marker), struct.pack("<i", 1)),
               sqe.notify_record(MAIN, 3, model.end_notify))
    dev.submit(side.sq, sqe.event_record(SIDE, 1, join))
    model.load_complete()
    dev.submit(model.exe.sq, model.execute(1),
               sqe.write_value(EXEC_STREAM, 2, address(after), struct.pack("<i", 2)))
    assert dev.recv(model.exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, [])
    assert model.control(sqe.MMT_MODEL_ABORT, op_stream_id=CTRL_STREAM).error_type == 0
    got = dev.collect(model.exe.cq, 2)
    assert [(c.task_id, c.error_type, c.error_code) for c in got] == [
        (1, 0, 0), (2, 0, 0)], "the execute completes, then the next task"
    assert after[0] == 2 and dev.query(model.exe.sq, PROP_SQ_STATUS) == 1
    assert marker[0] == 0 and model.count(SIDE) == 0
    assert dev.recv(main.cq, timeout_ms=0)[1] == [], "the cut wait reports nothing"
    for q in (main, side):
        assert dev.query(q.sq, PROP_SQ_STATUS) == 0
        assert dev.query(q.sq, PROP_SQ_HEAD) == dev.query(q.sq, PROP_SQ_TAIL)
    dev.submit(model.exe.sq, model.execute(3))
    assert wait_count(model, MAIN, 2) == 2, (
        "the next execute finds the head SQ idle (its wait was cut) and activates it")
    assert dev.recv(model.exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, []), (
        "the next execute runs the model from its start: it waits again")
    dev.submit(dev.alloc(stream_id=OUTSIDE_STREAM).sq, sqe.event_record(OUTSIDE_STREAM, 1, join))
    c = only(dev.collect(model.exe.cq, 1))
    assert (c.task_id, c.error_type, marker[0]) == (3, 0, 1)


def test_an_abort_releases_the_end_graph_wait_behind_the_execute(dev: HalDevice) -> None:
    """On STARS the runtime follows each model execute with a NOTIFY_WAIT of the end-graph
    notify on the executing stream (model.cc:1311-1322). An abort of the running model
    completes the execute without error and that wait with the abort status, which the runtime
    takes on a NOTIFY_WAIT CQE as no exception (stars_engine.cc:1541-1547) but resumes like any
    CQE with an error type: the SQ stops with its head on the wait, the runtime moves it past
    and re-enables the SQ (StarsResumeRtsq, :1404-1519). The next execute's wait is not
    released early: it ends only when the next run does."""
    model = StreamModel(dev, model_id=6, head=[MAIN], wait_active=[SIDE], end_notify=44)
    main, side = model.sqs[MAIN], model.sqs[SIDE]
    join = 36
    after = i32([0])
    dev.submit(main.sq, sqe.event_wait(MAIN, 1, join),
               sqe.notify_record(MAIN, 2, model.end_notify))
    dev.submit(side.sq, sqe.event_record(SIDE, 1, join))
    model.load_complete()
    dev.submit(model.exe.sq, model.execute(1),
               sqe.notify_wait(EXEC_STREAM, 2, model.end_notify),
               sqe.write_value(EXEC_STREAM, 3, address(after), struct.pack("<i", 3)))
    assert dev.recv(model.exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, [])
    assert model.control(sqe.MMT_MODEL_ABORT, op_stream_id=CTRL_STREAM).error_type == 0
    got = dev.collect(model.exe.cq, 2)
    assert [(c.task_id, c.error_type, c.error_code) for c in got] == [
        (1, 0, 0), (2, ERR_SW_STATUS, MODEL_EXE_ABORT)], (
        "the execute completes, its end-graph wait reports the abort")
    assert dev.query(model.exe.sq, PROP_SQ_STATUS) == 0 and after[0] == 0, "stopped on the wait"
    assert dev.query(model.exe.sq, PROP_SQ_HEAD) == got[1].sq_head == 1
    assert dev.config(model.exe.sq, PROP_SQ_HEAD, got[1].sq_head + 1) == 0
    assert dev.config(model.exe.sq, PROP_SQ_STATUS, 1) == 0
    assert only(dev.collect(model.exe.cq, 1)).task_id == 3 and after[0] == 3
    dev.submit(model.exe.sq, model.execute(4), sqe.notify_wait(EXEC_STREAM, 5, model.end_notify))
    assert dev.recv(model.exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, []), (
        "the next run waits again: the abort left no end-graph record behind")
    dev.submit(dev.alloc(stream_id=OUTSIDE_STREAM).sq, sqe.event_record(OUTSIDE_STREAM, 1, join))
    got = dev.collect(model.exe.cq, 2)
    assert [(c.task_id, c.error_type) for c in got] == [(4, 0), (5, 0)]


def test_an_abort_cuts_a_program_polling_a_busy_sq(dev: HalDevice) -> None:
    """A head stream's stream-active task polls the FSM register while the SQ it activates is
    held at a wait that never passes: the run can never finish. MMT_MODEL_ABORT cuts both the
    polling program and the wait (neither reports), completes the execute and
    leaves both SQs disabled at their tails: nothing hangs."""
    model = StreamModel(dev, model_id=11, head=[MAIN], wait_active=[SIDE], end_notify=49)
    main, side = model.sqs[MAIN], model.sqs[SIDE]
    never = 38
    assert dev.config(side.sq, PROP_SQ_STATUS, 1) == 0
    dev.submit(side.sq, sqe.nop(SIDE, 1), sqe.event_wait(SIDE, 2, never))
    assert wait_head(dev, side.sq, 1) == 1
    dev.submit(main.sq, model.stream_active(MAIN, 1, SIDE),
               sqe.notify_record(MAIN, 2, model.end_notify))
    model.load_complete()
    dev.submit(model.exe.sq, model.execute(1))
    assert wait_count(model, MAIN, 1) == 1, "the model program activated the head stream"
    assert dev.recv(model.exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, [])
    assert model.count(SIDE) == 0 and dev.query(main.sq, PROP_SQ_HEAD) == 0
    assert model.control(sqe.MMT_MODEL_ABORT, op_stream_id=CTRL_STREAM).error_type == 0
    c = only(dev.collect(model.exe.cq, 1))
    assert (c.task_id, c.error_type, c.error_code) == (1, 0, 0)
    for q in (main, side):
        assert dev.query(q.sq, PROP_SQ_STATUS) == 0
        assert dev.query(q.sq, PROP_SQ_HEAD) == dev.query(q.sq, PROP_SQ_TAIL)
        assert dev.recv(q.cq, timeout_ms=QUIET_MS)[1] == [], "a cut SQE reports nothing"
    assert model.count(SIDE) == 0


def test_an_abort_of_an_idle_model_completes(dev: HalDevice) -> None:
    """MMT_MODEL_ABORT of a model not running completes at once and leaves it executable."""
    model = StreamModel(dev, model_id=8, head=[MAIN], wait_active=[], end_notify=46)
    marker = i32([0])
    dev.submit(model.sqs[MAIN].sq,
               sqe.write_value(MAIN, 1, address(marker), struct.pack("<i", 5)),
               sqe.notify_record(MAIN, 2, model.end_notify))
    model.load_complete()
    assert model.control(sqe.MMT_MODEL_ABORT, op_stream_id=CTRL_STREAM).error_type == 0
    assert marker[0] == 0
    dev.submit(model.exe.sq, model.execute(1))
    assert only(dev.collect(model.exe.cq, 1)).error_type == 0 and marker[0] == 5
