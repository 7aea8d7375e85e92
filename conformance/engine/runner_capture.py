"""The capture side of a replay (:mod:`conformance.engine.runner`): each model's CaptureBegin
on its origin stream in RELAXED mode right before its first op and CaptureEnd right after its
last (CAP-01, CAP-04, CAP-07), every op issued on its stream in host issue order (side streams
join through the case's record/wait ops, XS-01, XS-02), cond tasks with their sub-models
(COND-05..COND-08), and the capture observations: a CaptureEnd on a side stream with the
statuses after it (CAP-11), a pageable copy's rc (MODE-14), an outside or stray wait's rc
(XS-05, XS-14), a failed final CaptureEnd with the model it left (CAP-13).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdlri_conformance.backends.contract import (NOT_SUPPORTED_CODES, UNWRITTEN, CaptureMode,
                                                 CaptureStatus, CondHandleFlag, CondTaskParams,
                                                 CondTaskType, Err, MemcpyKind)

from .graphs import (Cond, Copy, EndOnSide, GroupBegin, GroupEnd, Launch, Memset, Op, OutsideWait,
                     PageableCopy, Record, StrayWait, ValueWait, ValueWrite, Wait)
from .observe import Observation


class Abort(Exception):
    """A setup or capture call failed with this rc (the replay observes it and stops)."""

    def __init__(self, rc: int) -> None:
        super().__init__(rc)
        self.rc = rc


class CaptureCalls:
    """The capture calls of a replay: a mixin of :class:`conformance.engine.runner._Replay`,
    whose state it reads and fills."""

    # -- capture ---------------------------------------------------------------------------
    def capture(self) -> list[Observation]:
        """Every model's CaptureBegin(origin, RELAXED) right before its first op and
        CaptureEnd right after its last (CAP-01/04/07), the ops in issue order; the capture
        observations (observe.py item 1). An EndOnSide op is observed with the capture
        statuses after it (CAP-11), a PageableCopy (MODE-14), an OutsideWait (XS-05) and a
        StrayWait (XS-14) with their rc; a failed final CaptureEnd with the model it left and
        the statuses (CAP-13)."""
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, m in enumerate(self.op_model):
            first.setdefault(m, i)
            last[m] = i
        obs: list[Observation] = []
        for m in range(self.case.models):
            if m not in first:  # an empty capture (CAP-16): begun and ended at the start
                self.begin(m)
                end = self.end(m)
                if end:
                    return obs + end
        for i, op in enumerate(self.case.ops):
            m = self.op_model[i]
            if first.get(m) == i:
                self.begin(m)
            if isinstance(op, EndOnSide):
                rc, side_model = self.b.capture_end(self.streams[op.stream])
                statuses = self.statuses()
                obs.append(Observation("capture", -1, f"ops[{i}] end on side", int(rc)))
                obs.append(Observation("capture", -1, f"ops[{i}] statuses", statuses))
                if rc == Err.SUCCESS or statuses[0] != CaptureStatus.ACTIVE:
                    # the capture ended on the wrong stream: issuing the rest would run it
                    self.capturing.discard(m)
                    if side_model:
                        self.models[m] = side_model
                    return obs
            elif isinstance(op, PageableCopy):
                rc = self.issue(op)
                self.note(rc, "aclrtMemcpyAsync (pageable)")
                obs.append(Observation("capture", -1, f"ops[{i}] rc", int(rc)))
            elif isinstance(op, Cond):
                self.add_cond(i, op)
            elif isinstance(op, GroupBegin):
                self.ok(self.b.capture_task_grp_begin(self.streams[op.stream]),
                        "aclmdlRICaptureTaskGrpBegin")
            elif isinstance(op, GroupEnd):
                rc, handle = self.b.capture_task_grp_end(self.streams[op.stream])
                self.ok(rc, "aclmdlRICaptureTaskGrpEnd")
                self.groups.append(handle)
            elif isinstance(op, (OutsideWait, StrayWait)):
                event = self.outside if isinstance(op, OutsideWait) else self.events[op.event]
                rc = self.b.stream_wait_event(self.streams[op.stream], event)
                self.note(rc, "aclrtStreamWaitEvent (event not recorded in the capture)")
                obs.append(Observation("capture", -1, f"ops[{i}] rc", int(rc)))
            else:
                self.ok(self.issue(op))
            if last.get(m) == i:
                end = self.end(m)
                if end:
                    return obs + end
        return obs + [Observation("capture", -1, "rc", 0)]

    def add_cond(self, i: int, op: Cond) -> None:
        """A conditional task (COND-01..COND-08): CondHandleCreate on the capturing model
        (default 0, flag 0), GetCondPtr, AddCondTask on the op's stream, and every
        sub-model captured on a fresh stream (CaptureToModelRIBegin RELAXED, its launches,
        CaptureEnd with a NULL model); each call must succeed."""
        s = self.streams[op.stream]
        rc, _, model = self.b.capture_get_info(s)
        self.ok(rc, "aclmdlRICaptureGetInfo")
        rc, handle = self.b.cond_handle_create(model, 0, CondHandleFlag.NONE)
        self.ok(rc, "aclmdlRICondHandleCreate")
        rc, ptr = self.b.cond_handle_get_cond_ptr(handle)
        self.ok(rc, "aclmdlRICondHandleGetCondPtr")
        self.cond_ptr[i] = int(ptr)
        ctype = CondTaskType.IF if op.type == "if" else CondTaskType.SWITCH
        size = len(op.branches)
        rc, slots = self.b.add_cond_task(CondTaskParams(handle, ctype, size, size), s, 0)
        self.ok(rc, "aclmdlRIAddCondTask")
        for sub, launches in zip(list(slots or [])[:size], op.branches):
            rc, u = self.b.create_stream()
            self.ok(rc)
            self.sub_streams.append(u)
            self.ok(self.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
                    "aclmdlRICaptureToModelRIBegin")
            for launch in launches:
                self.ok(self.launch(launch, u), "aclrtLaunchKernelWithHostArgs (sub-model)")
            rc, _ = self.b.capture_end(u, null_model=True)
            self.ok(rc, "aclmdlRICaptureEnd (sub-model)")

    def begin(self, m: int) -> None:
        """CaptureBegin of model ``m`` on its origin stream (RELAXED)."""
        self.ok(self.b.capture_begin(self.streams[self.case.origins[m]], CaptureMode.RELAXED))
        self.capturing.add(m)

    def end(self, m: int) -> list[Observation]:
        """CaptureEnd of model ``m``: [] on success (the model kept), else the failed-end
        observations (CAP-13); an unsupported or setup-like failure aborts."""
        rc, model = self.b.capture_end(self.streams[self.case.origins[m]])
        self.capturing.discard(m)
        if rc == Err.SUCCESS and model:
            self.models[m] = model
        if rc != Err.SUCCESS and rc not in NOT_SUPPORTED_CODES:
            shown = "NULL" if model is None else "unwritten" if model is UNWRITTEN else "a model"
            return [Observation("capture", -1, "rc", int(rc)),
                    Observation("capture", -1, "model", shown),
                    Observation("capture", -1, "statuses", self.statuses())]
        self.ok(rc)
        if not model:
            raise Abort(int(Err.RT_INTERNAL_ERROR))
        return []

    def statuses(self) -> list[int | str]:
        """aclmdlRICaptureGetInfo's status of every user stream (the rc when it fails)."""
        out: list[int | str] = []
        for s in self.streams:
            rc, status, _ = self.b.capture_get_info(s)
            self.note(rc, "aclmdlRICaptureGetInfo")
            out.append(int(status) if rc == Err.SUCCESS else f"rc {rc}")
        return out

    def issue(self, op: Op) -> int:
        s = self.streams[op.stream]
        if isinstance(op, Launch):
            return self.launch(op, s)
        if isinstance(op, Record):
            return self.b.record_event(self.events[op.event], s)
        if isinstance(op, Wait):
            return self.b.stream_wait_event(s, self.events[op.event])
        if isinstance(op, ValueWrite):
            return self.b.value_write(self.word_addr[op.word], op.value, 0, s)
        if isinstance(op, ValueWait):
            return self.b.value_wait(self.word_addr[op.word], op.value, op.flag, s)
        if isinstance(op, Copy):
            return self.issue_copy(op, s)
        if isinstance(op, PageableCopy):
            n = 4 * len(self.case.buffers[op.buffer])
            host = np.zeros(len(self.case.buffers[op.buffer]), dtype=np.int32)
            self.pageable.append(host)  # ordinary numpy memory: pageable (MODE-14)
            if op.direction == "h2d":
                return self.b.memcpy_async(self.buf_addr[op.buffer], n, host, n,
                                           MemcpyKind.HOST_TO_DEVICE, s)
            return self.b.memcpy_async(host, n, self.buf_addr[op.buffer], n,
                                       MemcpyKind.DEVICE_TO_HOST, s)
        if isinstance(op, Memset):
            offset, count = op.span(4 * len(self.case.buffers[op.buffer]))
            return self.b.memset_async(self.buf_addr[op.buffer] + offset, count, op.value,
                                       count, s)
        raise TypeError(f"unknown op {op!r}")

    def issue_copy(self, op: Copy, s: Any) -> int:
        """aclrtMemcpyAsync of a whole buffer: DEVICE_TO_DEVICE, HOST_TO_DEVICE from a pinned
        host buffer or DEVICE_TO_HOST into one."""
        if op.direction == "h2d":
            n = 4 * len(self.case.hosts[op.src])
            return self.b.memcpy_async(self.buf_addr[op.dst], n, self.hosts[op.src], n,
                                       MemcpyKind.HOST_TO_DEVICE, s)
        n = 4 * len(self.case.buffers[op.src])
        if op.direction == "d2h":
            return self.b.memcpy_async(self.hosts[op.dst], n, self.buf_addr[op.src], n,
                                       MemcpyKind.DEVICE_TO_HOST, s)
        return self.b.memcpy_async(self.buf_addr[op.dst], n, self.buf_addr[op.src], n,
                                   MemcpyKind.DEVICE_TO_DEVICE, s)
