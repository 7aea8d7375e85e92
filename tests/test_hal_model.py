"""Model execute on the virtual device, through its own interface (``backends/hal/README.md``,
"Model execute"): the model's streams bound by the control SQ's maintenance messages
(PLACE_HOLDER task_type 12), its SQEs loaded into their SQs, the end graph a notify record of
the model's end-graph notify (context.cc:2110-2139), and the model-execute COND SQE running the
runtime's own program (``cond_isa.model_execute_block``, stars_cond_isa_helper.cc:197-626)
through the cond ISA interpreter.

No assertion on durations: a model still running is shown by state (no CQE, the SQE after the
execute has not run) while the test holds one of its streams on an event.
"""

from __future__ import annotations

import ctypes
import shutil
import struct
import time

import pytest

from mdlri_conformance.backends.hal import cond_isa, sqe
from mdlri_conformance.backends.hal.device import (
    DRV_ERROR_WAIT_TIMEOUT, PROP_SQ_HEAD, PROP_SQ_STATUS, PROP_SQ_TAIL, HalDevice, Queue)
from tests.hal_helpers import device, dev, i32, address, only  # noqa: F401 (device, dev: fixtures)

#: errorType SW status (stars.hpp:34-39)
ERR_SW_STATUS = 0x20

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

CTRL_STREAM, EXEC_STREAM, OUTSIDE_STREAM = 100, 1, 50
QUIET_MS = 200  # long enough for a model that should not have ended to show that it has


class Model:
    """A model as the runtime sets it up on STARS: its streams' SQs bound to it through the
    control SQ (MMT_STREAM_ADD, each with its u16 execution counter), the SQ that executes it,
    the device's array of SQ register addresses, the model-execute program at a 256-byte
    aligned address with its head-SQ and counter arrays, and the end-graph notify named by
    MMT_MODEL_PRE_PROC."""

    def __init__(self, dev: HalDevice, *, model_id: int, streams: list[int],
                 end_notify: int) -> None:
        self.dev, self.model_id, self.end_notify = dev, model_id, end_notify
        self.ctrl = dev.alloc(stream_id=CTRL_STREAM)
        # the executing SQ before the model's: no head SQ id equals its index in the array
        self.exe = dev.alloc(stream_id=EXEC_STREAM)
        self.sqs: dict[int, Queue] = {s: dev.alloc(stream_id=s, depth=64) for s in streams}
        self.counters = {s: (ctypes.c_uint64 * 1)(0) for s in streams}
        self._task = 0
        for s in streams:
            self._ctrl(sqe.model_maintenance(
                CTRL_STREAM, self._next(), model_id=model_id, operation=sqe.MMT_STREAM_ADD,
                op_stream_id=s, stream_type=sqe.MODEL_HEAD_STREAM,
                exec_times_addr=address(self.counters[s])))
        self.sq_regs = (ctypes.c_uint64 * 256)()
        for q in self.sqs.values():
            self.sq_regs[q.sq] = dev.reg_base(q.sq)[0]
        self.dfx = (ctypes.c_uint32 * 4)(0, 0, 0, 0)
        size = 4 * cond_isa.model_execute_words() + 16 * len(streams)
        self._mem = ctypes.create_string_buffer(size + cond_isa.FUNC_CALL_ALIGN)
        align = cond_isa.FUNC_CALL_ALIGN
        self.addr = -(-address(self._mem) // align) * align
        self.block = cond_isa.model_execute_block(
            func_call_addr=self.addr, head_sq_ids=[q.sq for q in self.sqs.values()],
            exec_times_addrs=[address(c) for c in self.counters.values()],
            sq_virtual_addr=address(self.sq_regs), dfx_addr=address(self.dfx))
        assert len(self.block) == size
        ctypes.memmove(self.addr, self.block, size)

    def _next(self) -> int:
        self._task += 1
        return self._task

    def _ctrl(self, message: bytes) -> None:
        self.dev.submit(self.ctrl.sq, message)
        c = only(self.dev.collect(self.ctrl.cq, 1))
        assert c.error_type == 0, f"model maintenance refused: {c}"

    def load_complete(self) -> None:
        """MMT_MODEL_PRE_PROC: the load is complete; the end graph is ``end_notify``."""
        self._ctrl(sqe.model_maintenance(
            CTRL_STREAM, self._next(), model_id=self.model_id, operation=sqe.MMT_MODEL_PRE_PROC,
            end_graph_notify_id=self.end_notify))

    def execute(self, stream_id: int, task_id: int) -> bytes:
        return cond_isa.model_execute_sqe(stream_id, task_id, model_id=self.model_id,
                                          func_call_addr=self.addr)

    def count(self, stream: int) -> int:
        return int(self.counters[stream][0] & 0xFFFF)


def test_the_model_execute_program_has_the_runtime_layout() -> None:
    """``cond_isa.model_execute_block`` lays out ``RtStarsModelExeFuncCall`` word for word
    (stars_model_execute_cond_isa_define.hpp:30-194): ScanSq 15 words, CheckSqFsm 36,
    CheckSqDisable 19, CheckSqHeadTail 12, DeactiveSq 2, ActiveHeadSq 16, two error parts of 5
    ending in the error word 0, the bare error word, the final NOP; then the head-SQ ids and
    the counter addresses (model_execute_task_func_call.cc:226-229)."""
    c = cond_isa
    block = c.model_execute_block(func_call_addr=0x10000, head_sq_ids=[3, 4],
                                  exec_times_addrs=[0x2000, 0x3000], sq_virtual_addr=0x4000,
                                  dfx_addr=0x5000)
    n = c.model_execute_words()
    assert n == 15 + 36 + 19 + 12 + 2 + 16 + 5 + 5 + 1 + 1 == 112
    words = struct.unpack(f"<{n}I", block[:4 * n])
    assert struct.unpack("<4Q", block[4 * n:]) == (3, 4, 0x2000, 0x3000)
    assert (words[104], words[109], words[110]) == (0, 0, 0), "the error words"
    assert words[103] == c.encode(c.STORE, 0, c.SW, c.R5, c.R4), "SW r4 to the dfx word"
    assert words[108] == c.encode(c.STORE, 8, c.SW, c.R5, c.R1), "SW r1 to dfx + 8"
    assert words[-1] == c.encode(c.OP_IMM), "the end NOP"
    assert words[15] == c.encode(c.LWI, c.R4, c.LHWI), "CheckSqFsm starts at word 15"
    assert words[83] == c.encode(c.STREAM, c.R4, c.GOTO_R, c.R3), "DeactiveSq's GOTO_R"
    assert words[93] == c.encode(c.STORE, 0, c.SH, c.R4, c.R5), "SH of the counter"
    assert words[94] == c.encode(c.STREAM, c.R5, c.ACTIVE_R, c.R3), "ActiveHeadSq's ACTIVE_R"
    loops = [w for w in words if w & 0x7F == c.LOOP]
    assert loops == [c.encode(c.LOOP, 0, 0, r) | 15 << 7 | c.FSM_LOOP_CYCLES << 19
                     for r in (c.R1, c.R4)], "both LOOPs go back to word 15"


def test_model_maintenance_binds_a_stream_and_holds_its_sqes(dev: HalDevice) -> None:
    """MMT_STREAM_ADD disables the stream's SQ: the SQEs the runtime loads there do not run
    before the model is executed."""
    model = Model(dev, model_id=3, streams=[10], end_notify=40)
    q = model.sqs[10]
    marker = i32([0])
    dev.submit(q.sq, sqe.write_value(10, 1, address(marker), struct.pack("<i", 4)))
    model.load_complete()
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0
    assert dev.recv(q.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, [])
    assert marker[0] == 0 and dev.query(q.sq, PROP_SQ_HEAD) == 0


def test_a_one_stream_model_runs_again_on_each_execute(dev: HalDevice) -> None:
    """Each execute runs the model's SQEs from the start (the program's GOTO_R head 0 and
    ACTIVE_R), counts the stream's execution, and completes only after the end graph: the
    copy queued behind the execute reads what the model wrote."""
    model = Model(dev, model_id=3, streams=[10], end_notify=40)
    exe = model.exe
    q = model.sqs[10]
    src, dst, flag = i32([1, 2, 3, 4]), i32([0] * 4), i32([0])
    dev.submit(q.sq, sqe.memcpy(10, 1, address(src), address(dst), 16),
               sqe.write_value(10, 2, address(flag), struct.pack("<i", 7)),
               sqe.notify_record(10, 3, model.end_notify))
    model.load_complete()
    for run, values in ((1, [1, 2, 3, 4]), (2, [9, 8, 7, 6])):
        src[:] = values
        flag[0] = 0
        after = i32([0] * 4)
        dev.submit(exe.sq, model.execute(EXEC_STREAM, 10 * run),
                   sqe.memcpy(EXEC_STREAM, 10 * run + 1, address(dst), address(after), 16))
        got = dev.collect(exe.cq, 2)
        assert [(c.task_id, c.sqe_type, c.error_type) for c in got] == [
            (10 * run, sqe.COND, 0), (10 * run + 1, sqe.SDMA, 0)], f"run {run}"
        assert (list(dst), flag[0]) == (values, 7), f"run {run}: the model's tasks ran"
        assert list(after) == values, f"run {run}: the execute completed before the model ended"
        assert model.count(10) == run, "ActiveHeadSq counts each execution"
        assert dev.notify_state(model.end_notify) == 1, \
            "the end graph stays recorded for the runtime's NOTIFY_WAIT (model.cc:1311-1322)"
        dev.submit(exe.sq, sqe.notify_wait(EXEC_STREAM, 10 * run + 2, model.end_notify))
        assert only(dev.collect(exe.cq, 1)).task_id == 10 * run + 2
        assert dev.notify_state(model.end_notify) == 0, "the wait takes the record"
        assert [c.task_id for c in dev.collect(q.cq, 3)] == [1, 2, 3]
        assert dev.query(q.sq, PROP_SQ_HEAD) == dev.query(q.sq, PROP_SQ_TAIL) == 3


def test_two_executes_in_flight_each_run_the_model_and_pass_their_end_graph_waits(
        dev: HalDevice) -> None:
    """A second execute of a model that is running (another stream's, EXE-15 / Q-11) waits for
    that run to end and runs the model again: two runs, and each executing stream's end-graph
    NOTIFY_WAIT passes, even when both end-graph records come before either wait takes one."""
    model = Model(dev, model_id=5, streams=[10], end_notify=42)
    q = model.sqs[10]
    gate = 33
    dev.submit(q.sq, sqe.event_wait(10, 1, gate), sqe.notify_record(10, 2, model.end_notify))
    model.load_complete()
    other = dev.alloc(stream_id=EXEC_STREAM + 1)
    dev.submit(model.exe.sq, model.execute(EXEC_STREAM, 5))
    for _ in range(2000):  # the first run started (generous deadline)
        if model.count(10) == 1:
            break
        time.sleep(0.005)
    assert model.count(10) == 1, "the first run started"
    dev.submit(other.sq, model.execute(EXEC_STREAM + 1, 6))
    assert dev.recv(other.cq, timeout_ms=200) == (DRV_ERROR_WAIT_TIMEOUT, []), (
        "the second execute waits for the running run")
    dev.submit(dev.alloc(stream_id=60).sq, sqe.event_record(60, 1, gate))
    assert only(dev.collect(model.exe.cq, 1)).error_type == 0
    assert only(dev.collect(other.cq, 1)).error_type == 0
    assert model.count(10) == 2, "the model ran twice"
    for queue, stream, task in ((model.exe, EXEC_STREAM, 7), (other, EXEC_STREAM + 1, 8)):
        dev.submit(queue.sq, sqe.notify_wait(stream, task, model.end_notify))
        c = only(dev.collect(queue.cq, 1))
        assert (c.task_id, c.error_type) == (task, 0), "each end-graph wait passes"
    assert dev.notify_state(model.end_notify) == 0


def test_a_two_stream_model_ends_only_at_its_end_graph(dev: HalDevice) -> None:
    """Two head streams ordered by an event: A copies src to mid and records; B waits for that
    event and for a gate the test records from outside, copies mid to dst, resets both events
    and records the end graph. The executing stream's task completes only then, on each of two
    executes."""
    model = Model(dev, model_id=5, streams=[10, 11], end_notify=41)
    exe, outside = model.exe, dev.alloc(stream_id=OUTSIDE_STREAM)
    a, b = model.sqs[10], model.sqs[11]
    event, gate = 20, 21
    src, mid, dst, marker = i32([0] * 3), i32([0] * 3), i32([0] * 3), i32([0])
    dev.submit(a.sq, sqe.memcpy(10, 1, address(src), address(mid), 12),
               sqe.event_record(10, 2, event))
    dev.submit(b.sq, sqe.event_wait(11, 1, event), sqe.event_wait(11, 2, gate),
               sqe.memcpy(11, 3, address(mid), address(dst), 12),
               sqe.event_reset(11, 4, event), sqe.event_reset(11, 5, gate),
               sqe.notify_record(11, 6, model.end_notify))
    model.load_complete()
    for run, values in ((1, [5, 6, 7]), (2, [-1, -2, -3])):
        src[:] = values
        marker[0] = 0
        dev.submit(exe.sq, model.execute(EXEC_STREAM, 10 * run),
                   sqe.write_value(EXEC_STREAM, 10 * run + 1, address(marker),
                                   struct.pack("<i", run)))
        assert [c.task_id for c in dev.collect(a.cq, 2)] == [1, 2], f"run {run}: A ran"
        assert list(mid) == values
        assert dev.recv(exe.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, []), (
            f"run {run}: the execute completed while B waits at the gate")
        assert marker[0] == 0 and dev.query(exe.sq, PROP_SQ_HEAD) == 2 * (run - 1)
        assert list(dst) != values
        dev.submit(outside.sq, sqe.event_record(OUTSIDE_STREAM, run, gate))
        got = dev.collect(exe.cq, 2)
        assert [(c.task_id, c.sqe_type, c.error_type) for c in got] == [
            (10 * run, sqe.COND, 0), (10 * run + 1, sqe.WRITE_VALUE, 0)], f"run {run}"
        assert (list(dst), marker[0]) == (values, run)
        assert (model.count(10), model.count(11)) == (run, run)
        dev.collect(b.cq, 6)
        dev.collect(outside.cq, 1)


def test_a_head_sq_without_a_register_address_goes_to_the_error_instruction(
        dev: HalDevice) -> None:
    """A head SQ whose entry in the SQ register address array is 0 sends the program to its
    error part (stars_cond_isa_helper.cc:379-389, 584-596): it stores that address (0) to the
    dfx word and ends in the error instruction, an SQE error; the SQ is never activated."""
    model = Model(dev, model_id=6, streams=[10], end_notify=43)
    exe = model.exe
    q = model.sqs[10]
    marker = i32([0])
    dev.submit(q.sq, sqe.write_value(10, 1, address(marker), struct.pack("<i", 1)),
               sqe.notify_record(10, 2, model.end_notify))
    model.load_complete()
    model.sq_regs[q.sq] = 0
    model.dfx[0] = 0xFFFF_FFFF
    dev.submit(exe.sq, model.execute(EXEC_STREAM, 1))
    c = only(dev.collect(exe.cq, 1))
    assert (c.sqe_type, c.error_type, c.ts_error()) == (sqe.COND, sqe.ERR_SQE_ERROR,
                                                         sqe.TS_ERROR_TASK_SQE_ERROR)
    assert model.dfx[0] == 0, "the error part stored the SQ's (zero) register address"
    assert model.count(10) == 0 and marker[0] == 0
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0


def test_a_wait_that_times_out_in_a_model_fails_the_execute(dev: HalDevice) -> None:
    """A notify wait in a model stream that times out reports the task timeout on its own SQ
    (as any wait) and ends the run. The execute completes; the end-graph NOTIFY_WAIT the runtime
    queues behind it reports the failure: errorType SW status, errorCode {task_id, stream_id:12,
    result:4} with result 1 (TS_STARS_MODEL_STREAM_EXE_FAILED, the failed task 1 of stream 10),
    which the runtime reads as 507011 (model_execute_task.cc:227-295), and that SQ stops there
    for the runtime to resume."""
    model = Model(dev, model_id=7, streams=[10], end_notify=44)
    exe = model.exe
    q = model.sqs[10]
    dev.submit(q.sq, sqe.notify_wait(10, 1, notify_id=9, timeout_s=1),
               sqe.notify_record(10, 2, model.end_notify))
    model.load_complete()
    dev.submit(exe.sq, model.execute(EXEC_STREAM, 3),
               sqe.notify_wait(EXEC_STREAM, 4, model.end_notify))
    got = dev.collect(exe.cq, 2)
    assert [(c.task_id, c.sqe_type, c.error_type) for c in got] == [
        (3, sqe.COND, 0), (4, sqe.NOTIFY_WAIT, ERR_SW_STATUS)]
    assert got[1].error_code == (1 << 28) | (10 << 16) | 1
    w = only(dev.collect(q.cq, 1))
    assert (w.task_id, w.sqe_type, w.error_type) == (1, sqe.NOTIFY_WAIT, sqe.ERR_TASK_TIMEOUT)
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0 and dev.query(exe.sq, PROP_SQ_STATUS) == 0
    assert dev.query(exe.sq, PROP_SQ_HEAD) == got[1].sq_head == 1, "stopped on the wait"


ACTIVE_R_WORD = cond_isa.encode(cond_isa.STREAM, cond_isa.R5, cond_isa.ACTIVE_R, cond_isa.R3)


@pytest.mark.parametrize("word", [
    cond_isa.encode(cond_isa.STREAM, cond_isa.R5, 3),  # no STREAM func3 3
    cond_isa.encode(cond_isa.STREAM, cond_isa.R5, cond_isa.ACTIVE_I) | 0xFFF << 20,
    cond_isa.encode(cond_isa.GQM, cond_isa.R5, 0, cond_isa.R3),
], ids=["stream_func3_3", "active_i_of_no_sq", "gqm"])
def test_an_instruction_not_interpreted_is_an_sqe_error(dev: HalDevice, word: int) -> None:
    """The model program with its ACTIVE_R replaced by an instruction the device does not
    interpret (or an ACTIVE_I of an SQ that does not exist): an SQE error, never as if it had run (the head SQ stays disabled and its SQEs
    unrun; the execute does not wait for an end graph)."""
    model = Model(dev, model_id=8, streams=[10], end_notify=45)
    exe = model.exe
    q = model.sqs[10]
    marker = i32([0])
    dev.submit(q.sq, sqe.write_value(10, 1, address(marker), struct.pack("<i", 1)),
               sqe.notify_record(10, 2, model.end_notify))
    model.load_complete()
    words = list(struct.unpack(f"<{len(model.block) // 4}I", model.block))
    assert words.count(ACTIVE_R_WORD) == 1
    words[words.index(ACTIVE_R_WORD)] = word
    ctypes.memmove(model.addr, struct.pack(f"<{len(words)}I", *words), 4 * len(words))
    dev.submit(exe.sq, model.execute(EXEC_STREAM, 4))
    c = only(dev.collect(exe.cq, 1))
    assert (c.task_id, c.error_type, c.ts_error()) == (4, sqe.ERR_SQE_ERROR,
                                                       sqe.TS_ERROR_TASK_SQE_ERROR)
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0 and marker[0] == 0
