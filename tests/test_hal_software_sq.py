"""The software SQ on the virtual device, through its own interface (``backends/hal/README.md``,
"The software SQ"; ``src/hal_swsq.c``).

With TS feature 45 the runtime keeps a captured model's SQEs in a host buffer and, at the first
execute after a capture or an update (capture_model_adapt_v100.cc:22-41): copies them into SQ
memory it allocated in device memory with ``halStreamTaskFill`` (model.cc:758-785), binds each
stream to an SQ of its pool (allocated with TSDRV_FLAG_NO_SQ_MEM) and to that memory with
``halSqSwitchStreamBatch`` (capture_model.cc:1165-1216), binds the streams to the model
(MMT_STREAM_ADD) and sets each SQ's tail with ``halSqCqConfig`` SQ_TAIL (model.cc:787-803).
An ``aclmdlRIUpdate`` unbinds, rebuilds the host buffer (a disabled task's SQEs left out, an
updated one re-made, stream.cc:3620-3700) and the next execute fills again.
"""

from __future__ import annotations

import ctypes
import shutil
import struct
from typing import Iterator

import pytest

from mdlri_conformance.backends.hal import cond_isa, sqe
from mdlri_conformance.backends.hal.device import (
    DRV_ERROR_INVALID_VALUE, DRV_ERROR_NONE, DRV_ERROR_WAIT_TIMEOUT, DRV_NORMAL_TYPE,
    PROP_SQ_HEAD, PROP_SQ_TAIL, UMAX, HalDevice, Queue, SqCqInput, SqCqOutput)
from tests.hal_helpers import address, device, dev, i32, only  # noqa: F401 (device, dev: fixtures)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

FLAG_NO_SQ_MEM = 1 << 16  # ascend_hal_define.h:1109
SQ_MEM = 32 * 1024  # SQ_ADDR_ITEM_SIZE_32K, the smallest SQ memory order (sq_addr_memory_pool.cc)
DEPTH = SQ_MEM // sqe.SQE_SIZE
CTRL_STREAM, EXEC_STREAM = 100, 1
QUIET_MS = 200  # long enough for an SQE that should not run to show that it has not


class SwitchInfo(ctypes.Structure):
    """``struct sq_switch_stream_info`` (ascend_hal_define.h:1137-1143)."""

    _fields_ = [("sq_id", ctypes.c_uint32), ("stream_id", ctypes.c_uint32),
                ("sq_depth", ctypes.c_uint32), ("rsv", ctypes.c_uint32),
                ("stream_mem", ctypes.c_void_p)]


@pytest.fixture
def sw(dev: HalDevice) -> Iterator["SoftwareSq"]:  # noqa: F811 (dev is the fixture)
    s = SoftwareSq(dev)
    yield s
    s.free_all()


class SoftwareSq:
    """The driver calls of the software SQ, as the runtime makes them."""

    def __init__(self, dev: HalDevice) -> None:  # noqa: F811
        self.dev = dev
        lib = dev.lib
        lib.halStreamTaskFill.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_uint32]
        lib.halSqSwitchStreamBatch.argtypes = [ctypes.c_uint32, ctypes.POINTER(SwitchInfo),
                                               ctypes.c_uint32]

    def memory(self, size: int = SQ_MEM) -> int:
        """Device memory (halMemAlloc), as Stream::AllocSoftwareSqAddr gets it."""
        return self.dev.malloc(size)

    def free_all(self) -> None:
        self.dev.reset()  # the SQs stop reading the memory before it goes

    def pool_sq(self) -> Queue:
        """An SQ of the runtime's pool: no SQ memory, stream id UINT32_MAX
        (DeviceSqCqPool::AllocSqCqFromDrv, device_sq_cq_pool.cc:70-104)."""
        inp = SqCqInput(type=DRV_NORMAL_TYPE, sqeSize=sqe.SQE_SIZE, cqeSize=12, sqeDepth=1024,
                        cqeDepth=1024, flag=FLAG_NO_SQ_MEM)
        inp.info[0] = UMAX
        out = SqCqOutput()
        assert self.dev.lib.halSqCqAllocate(0, inp, out) == DRV_ERROR_NONE
        return Queue(out.sqId, out.cqId)

    def fill(self, stream: int, mem: int, sqes: list[bytes], count: int | None = None) -> int:
        """halStreamTaskFill of ``sqes`` (``count`` of them, by default all); the drvError."""
        blob = ctypes.create_string_buffer(b"".join(sqes), max(1, len(sqes)) * sqe.SQE_SIZE)
        n = len(sqes) if count is None else count
        return int(self.dev.lib.halStreamTaskFill(0, stream, mem, blob, n))

    def switch(self, *entries: tuple[int, int, int, int]) -> int:
        """halSqSwitchStreamBatch of (sq, stream, depth, memory) entries; the drvError."""
        arr = (SwitchInfo * len(entries))(*(SwitchInfo(sq, st, d, 0, m)
                                            for sq, st, d, m in entries))
        return int(self.dev.lib.halSqSwitchStreamBatch(0, arr, len(entries)))

    def tail(self, sq: int, tail: int) -> int:
        """halSqCqConfig SQ_TAIL (NpuDriver::SetSqTail, npu_driver_standard_soc.cc:467-488)."""
        return self.dev.config(sq, PROP_SQ_TAIL, tail)


def test_task_fill_copies_whole_sqes_into_the_sq_memory(sw: SoftwareSq) -> None:
    """The fill is a copy of n 64-byte SQEs to the stream's SQ memory, byte for byte; memory that
    is not the device's, or too small for n SQEs, is refused."""
    mem = sw.memory()
    sqes = [sqe.nop(10, 1), sqe.write_value(10, 2, 0x1000, b"\x05\0\0\0"), sqe.nop(10, 3)]
    assert sw.fill(10, mem, sqes) == DRV_ERROR_NONE
    assert ctypes.string_at(mem, 3 * sqe.SQE_SIZE) == b"".join(sqes)
    assert ctypes.string_at(mem + 3 * sqe.SQE_SIZE, sqe.SQE_SIZE) == bytes(sqe.SQE_SIZE)
    host = ctypes.create_string_buffer(SQ_MEM)
    assert sw.fill(10, address(host), sqes) == DRV_ERROR_INVALID_VALUE, "host memory"
    assert sw.fill(10, mem + SQ_MEM - sqe.SQE_SIZE, sqes) == DRV_ERROR_INVALID_VALUE, "past the end"
    assert sw.fill(10, mem, sqes, count=0) == DRV_ERROR_INVALID_VALUE


def test_a_pool_sq_runs_the_filled_sqes_up_to_the_tail_it_is_given(sw: SoftwareSq) -> None:
    """A pool SQ bound to stream 10 and its SQ memory runs nothing until its tail is set, then
    each SQE up to the tail, reporting with the SQE's stream and task ids."""
    dev = sw.dev
    q, mem = sw.pool_sq(), sw.memory()
    marks = i32([0, 0, 0])
    sqes = [sqe.write_value(10, 7 + i, address(marks) + 4 * i, struct.pack("<i", 11 * (i + 1)))
            for i in range(3)]
    assert sw.fill(10, mem, sqes) == DRV_ERROR_NONE
    assert sw.switch((q.sq, 10, DEPTH, mem)) == DRV_ERROR_NONE
    assert dev.recv(q.cq, timeout_ms=QUIET_MS) == (DRV_ERROR_WAIT_TIMEOUT, [])
    assert list(marks) == [0, 0, 0] and dev.query(q.sq, PROP_SQ_HEAD) == 0
    assert sw.tail(q.sq, 2) == DRV_ERROR_NONE
    got = dev.collect(q.cq, 2)
    assert [(c.stream_id, c.task_id, c.error_type) for c in got] == [(10, 7, 0), (10, 8, 0)]
    assert list(marks) == [11, 22, 0], "only the SQEs before the tail ran"
    assert sw.tail(q.sq, 3) == DRV_ERROR_NONE
    assert only(dev.collect(q.cq, 1)).task_id == 9 and marks[2] == 33
    assert dev.query(q.sq, PROP_SQ_HEAD) == dev.query(q.sq, PROP_SQ_TAIL) == 3
    assert sw.tail(q.sq, DEPTH) == DRV_ERROR_INVALID_VALUE, "a tail past the depth"


def test_a_switch_is_refused_whole_for_a_bad_entry(sw: SoftwareSq) -> None:
    """No SQ, or memory too small for the depth: the batch changes nothing; an SQ with a ring
    of its own takes no SQ memory; an unbound pool SQ takes no SQEs."""
    dev = sw.dev
    q, mem = sw.pool_sq(), sw.memory()
    own = dev.alloc(stream_id=12)
    assert sw.switch((q.sq, 10, DEPTH, mem), (250, 11, DEPTH, mem)) == DRV_ERROR_INVALID_VALUE
    assert sw.switch((q.sq, 10, DEPTH + 1, mem)) == DRV_ERROR_INVALID_VALUE
    assert sw.switch((own.sq, 12, DEPTH, mem)) == DRV_ERROR_INVALID_VALUE
    assert sw.tail(q.sq, 1) == DRV_ERROR_INVALID_VALUE, "still unbound: no memory to run"
    assert dev.send(q.sq, [sqe.nop(10, 1)])[0] == DRV_ERROR_INVALID_VALUE


def test_the_device_holds_the_runtimes_whole_sq_pool(sw: SoftwareSq) -> None:
    """The runtime's pool may hold RT_DEVICE_SQCQ_RES_MAX_NUM (1024) SQs, each with a CQ of its
    own (device_sq_cq_pool.hpp:23): every capture stream pre-allocates one (stream.cc:917,
    device_sq_cq_pool.cc:174-183) and they stay until the device is released. With the
    streams' own SQs beside them, the device takes all of them, and an unbound pool SQ costs
    no device thread until it is bound."""
    dev = sw.dev
    streams = [dev.alloc(stream_id=s) for s in range(1, 33)]
    pool = [sw.pool_sq() for _ in range(1024)]
    assert len({q.sq for q in pool + streams}) == 1024 + 32
    assert len({q.cq for q in pool + streams}) == 1024 + 32
    q, mem = pool[-1], sw.memory()
    marks = i32([0])
    assert sw.fill(40, mem, [sqe.write_value(40, 1, address(marks), struct.pack("<i", 9))]) == 0
    assert sw.switch((q.sq, 40, DEPTH, mem)) == DRV_ERROR_NONE
    assert sw.tail(q.sq, 1) == DRV_ERROR_NONE
    assert only(dev.collect(q.cq, 1)).task_id == 1 and marks[0] == 9, "the last pool SQ runs"


def test_a_pointer_mode_value_write_performs_the_descriptor_it_names(sw: SoftwareSq) -> None:
    """The external event record of a software-SQ capture is a WRITE_VALUE in pointer mode
    (common_task_v100.cc:64-84): the TS reads the 64-byte descriptor at the SQE's address and
    writes what it describes (here the runtime's 8-bit 1 to the event word,
    capture_model_adapt_v100.cc:69-83), leaving the descriptor as it is; a null descriptor is an
    SQE error."""
    dev = sw.dev
    q = dev.alloc(stream_id=7)
    event_word = (ctypes.c_uint8 * 8)(0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA)
    desc = sqe.write_value_descriptor(address(event_word), b"\x01")
    dbuf = ctypes.create_string_buffer(desc, 64)
    dev.submit(q.sq, sqe.write_value_ptr(7, 1, address(dbuf)))
    c = only(dev.collect(q.cq, 1))
    assert c.error_type == 0, f"pointer-mode write: expected no error, observed {c}"
    assert list(event_word) == [1] + [0xAA] * 7, f"one byte written: observed {list(event_word)}"
    assert dbuf.raw == desc, "the descriptor is read, not written"
    dev.submit(q.sq, sqe.write_value_ptr(7, 2, 0))
    assert only(dev.collect(q.cq, 1)).error_type == sqe.ERR_SQE_ERROR


class SoftwareSqModel:
    """A model on software SQs, driven as the runtime drives it (capture_model.cc:1017-1105,
    capture_model_adapt_v100.cc:22-41): the device's SQ register array and the model-execute
    program are set up once; :meth:`load` is the fill, switch, MMT_STREAM_ADD and tail of an
    execute after a capture or an update, :meth:`unload` the MMT_STREAM_DEL and unbinding of
    an update (CaptureModel::Update, capture_model.cc:1381-1397)."""

    def __init__(self, sw: SoftwareSq, *, model_id: int, stream: int, end_notify: int) -> None:
        dev = sw.dev
        self.sw, self.dev, self.model_id, self.stream = sw, dev, model_id, stream
        self.end_notify = end_notify
        self.ctrl, self.exe = dev.alloc(stream_id=CTRL_STREAM), dev.alloc(stream_id=EXEC_STREAM)
        self.q = sw.pool_sq()
        self.counter = (ctypes.c_uint64 * 1)(0)
        self.sq_regs = (ctypes.c_uint64 * 256)()
        self.sq_regs[self.q.sq] = dev.reg_base(self.q.sq)[0]
        self.dfx = (ctypes.c_uint32 * 4)()
        size = 4 * cond_isa.model_execute_words() + 16
        self._mem = ctypes.create_string_buffer(size + cond_isa.FUNC_CALL_ALIGN)
        align = cond_isa.FUNC_CALL_ALIGN
        self.addr = -(-address(self._mem) // align) * align
        ctypes.memmove(self.addr, cond_isa.model_execute_block(
            func_call_addr=self.addr, head_sq_ids=[self.q.sq],
            exec_times_addrs=[address(self.counter)], sq_virtual_addr=address(self.sq_regs),
            dfx_addr=address(self.dfx)), size)
        self._task = 0

    def _ctrl(self, operation: int, **fields: int) -> None:
        self._task += 1
        self.dev.submit(self.ctrl.sq, sqe.model_maintenance(
            CTRL_STREAM, self._task, model_id=self.model_id, operation=operation, **fields))
        c = only(self.dev.collect(self.ctrl.cq, 1))
        assert c.error_type == 0, f"model maintenance refused: {c}"

    def load(self, sqes: list[bytes]) -> int:
        """Fill fresh SQ memory with ``sqes``, bind, add to the model, set the tail; the memory."""
        mem = self.sw.memory()
        assert self.sw.fill(self.stream, mem, sqes) == DRV_ERROR_NONE
        assert self.sw.switch((self.q.sq, self.stream, DEPTH, mem)) == DRV_ERROR_NONE
        self._ctrl(sqe.MMT_STREAM_ADD, op_stream_id=self.stream,
                   stream_type=sqe.MODEL_HEAD_STREAM, exec_times_addr=address(self.counter))
        assert self.sw.tail(self.q.sq, len(sqes)) == DRV_ERROR_NONE
        self._ctrl(sqe.MMT_MODEL_PRE_PROC, end_graph_notify_id=self.end_notify)
        return mem

    def unload(self) -> None:
        self._ctrl(sqe.MMT_STREAM_DEL, op_stream_id=self.stream)
        assert self.sw.switch((self.q.sq, UMAX, 0, 0)) == DRV_ERROR_NONE

    def execute(self, task_id: int) -> None:
        """Model execute on the executing SQ, then the runtime's NOTIFY_WAIT of the end graph
        (model.cc:1311-1322); both complete."""
        self.dev.submit(self.exe.sq, cond_isa.model_execute_sqe(
            EXEC_STREAM, task_id, model_id=self.model_id, func_call_addr=self.addr),
            sqe.notify_wait(EXEC_STREAM, task_id + 1, self.end_notify))
        got = self.dev.collect(self.exe.cq, 2)
        assert [(c.task_id, c.error_type) for c in got] == [(task_id, 0), (task_id + 1, 0)], got


def test_a_model_on_a_software_sq_runs_what_the_last_fill_wrote(sw: SoftwareSq) -> None:
    """The seed's fallback on the device: the model writes 11 and 22 and ends its graph; each
    execute runs the filled SQEs from the start. An SQE patched in place in the SQ memory (the
    runtime's copy task for aclmdlRITaskSetParams, aix_stars.cc:361-382) runs on the next
    execute. After an update that re-made one SQE and left a disabled one out, the fill has one
    SQE fewer: the model writes 31 and no longer touches the second word."""
    dev = sw.dev
    model = SoftwareSqModel(sw, model_id=4, stream=10, end_notify=42)
    out = i32([0, 0])

    def write(task: int, index: int, value: int) -> bytes:
        return sqe.write_value(10, task, address(out) + 4 * index, struct.pack("<i", value))

    end = sqe.notify_record(10, 3, model.end_notify)
    mem = model.load([write(1, 0, 11), write(2, 1, 22), end])
    for run in (1, 2):
        out[:] = [0, 0]
        model.execute(10 * run)
        assert list(out) == [11, 22], f"run {run}: expected [11, 22], observed {list(out)}"
        assert int(model.counter[0]) & 0xFFFF == run
        assert dev.query(model.q.sq, PROP_SQ_HEAD) == dev.query(model.q.sq, PROP_SQ_TAIL) == 3
    patched = write(1, 0, 12)
    ctypes.memmove(mem, patched, sqe.SQE_SIZE)
    out[:] = [0, 0]
    model.execute(30)
    assert list(out) == [12, 22], f"the patched SQE: expected [12, 22], observed {list(out)}"

    model.unload()
    assert dev.query(model.q.sq, PROP_SQ_TAIL) == 0, "an unbound SQ holds no SQEs"
    model.load([write(1, 0, 31), sqe.notify_record(10, 2, model.end_notify)])
    out[:] = [0, -1]
    model.execute(40)
    assert list(out) == [31, -1], f"after the update: expected [31, -1], observed {list(out)}"
    assert dev.query(model.q.sq, PROP_SQ_HEAD) == dev.query(model.q.sq, PROP_SQ_TAIL) == 2
