"""The plan side of a replay (:mod:`conformance.engine.runner`): the host steps after
CaptureEnd, each observed (SETP-01, DIS-01, UPD-05, EXE-02, TG-10, BLD-03, COND-04, LIFE-01,
LIFE-03), the syncs that read back every buffer, word and pinned host buffer, and the host
deadline every sync, query and Destroy of a case that may block runs under
(:mod:`conformance.engine.deadline`): one that does not return is observed as such, and an
expired sync says whether it waited :data:`WAITED_SHARE` of its timeout (TMO-01, TMO-03).
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (Cap, Err, EventRecordTaskParams,
                                                 EventResetTaskParams, EventWaitTaskParams,
                                                 MemcpyKind, TaskParams, TaskType,
                                                 ValueWriteTaskParams)
from mdlri_conformance.backends.task_params import kernel_task_params

from . import deadline, graphs
from .case_facts import may_block
from .graphs import Launch, Op, ValueWrite
from .observe import Observation
from .steps import (Destroy, Disable, Execute, ExecuteBuilt, GroupUpdate, HostFill, HostWrite,
                    Query, SetBadType, SetCond, SetKernel, SetValue, Step, Sync, Update)

#: timed sync used by cleanup (ms): bounded, so a hanging model cannot hang the suite
CLEANUP_SYNC_MS = 2000
#: how long past its own timeout a bounded sync (or a query) may take before it counts as
#: not returning: generous, so a loaded machine never turns a slow answer into a divergence
DEADLINE_SLACK_S = 3.0
#: the slack once the backend has already left a call hanging in this process: its
#: divergence is established, and Hypothesis's shrinking should not cost seconds per replay
HUNG_SLACK_S = 0.3
#: an expired sync must have waited at least this share of its timeout (TMO-01)
WAITED_SHARE = 0.9
#: how long Destroy of a running model polls before 107037 (LIFE-03: 10000 checks 1 ms apart)
DESTROY_POLL_S = 10.0
#: backends that left a bounded call hanging (held weakly)
_hung: "weakref.WeakSet[Any]" = weakref.WeakSet()


class PlanSteps:
    """The plan steps of a replay: a mixin of :class:`conformance.engine.runner._Replay`, whose
    state it reads and changes."""

    #: whether the case's calls run under a host deadline (None until the first is asked)
    blocks: bool | None = None

    # -- the plan --------------------------------------------------------------------------
    def bounded(self, fn: Callable[[], Any], deadline_s: float) -> deadline.Outcome:
        """``fn`` under a host deadline when the case can block and the backend takes calls
        from several threads; else called directly (it cannot hang on defined work)."""
        if self.blocks is None:  # a fact of the case and the backend: asked once
            self.blocks = may_block(self.case) and Cap.THREADS in self.b.capabilities
        if self.blocks:
            if self.b in _hung:
                deadline_s += HUNG_SLACK_S - DEADLINE_SLACK_S
            out = deadline.call_within(self.b, fn, deadline_s)
            if not out.returned:
                self.stuck = True
                _hung.add(self.b)
            return out
        t0 = time.monotonic()
        value = fn()
        return deadline.Outcome(True, value, (time.monotonic() - t0) * 1000.0)

    def step(self, i: int, step: Step) -> list[Observation]:
        """Run one plan step; its observations (observe.py item 3)."""
        if isinstance(step, Execute):
            model = self.models[step.model]
            rcs = [int(self.note(self.b.execute_async(model, self.streams[0]),
                                 "aclmdlRIExecuteAsync")) for _ in range(step.times)]
            return [Observation("step", i, "rc", rcs)]
        if isinstance(step, HostFill):
            self.host_view(step.host)[:] = np.int64(step.value).astype(np.int32)
            return []
        if isinstance(step, Sync):
            return self.sync(i, step.timeout_ms)
        if isinstance(step, HostWrite):
            rc = self.note(self.store_word(self.word_addr[step.word], step.value),
                           "aclrtMemcpy H2D")
            return [Observation("step", i, "rc", rc)]
        if isinstance(step, Query):
            out = self.bounded(lambda: self.b.stream_query(self.streams[0]), DEADLINE_SLACK_S)
            if not out.returned:
                return [Observation("step", i, "rc", deadline.DID_NOT_RETURN)]
            rc, status = out.value
            self.note(rc, "aclrtStreamQuery")
            return [Observation("step", i, "rc", [int(rc), int(status) if rc == Err.SUCCESS
                                                  else "unread"])]
        if isinstance(step, Destroy):
            return self.destroy(i, step)
        if isinstance(step, Update):
            return self.update(i, step.model)
        if isinstance(step, GroupUpdate):
            return self.group_update(i, step)
        if isinstance(step, SetCond):
            rc = self.note(self.store_word(self.cond_ptr[step.op], step.value),
                           "aclrtMemcpy H2D (condition value)")
            return [Observation("step", i, "rc", rc)]
        if isinstance(step, ExecuteBuilt):
            rcs = [int(self.note(self.b.execute_async(self.built[step.build], self.streams[0]),
                                 "aclmdlRIExecuteAsync (built model)"))
                   for _ in range(step.times)]
            return [Observation("step", i, "rc", rcs)]
        task = self.task_of(step.op) if hasattr(step, "op") else None
        if isinstance(step, Disable):
            rc = int(self.note(self.b.task_disable(task), "aclmdlRITaskDisable"))
            if rc == Err.SUCCESS:
                self.pending.pop(step.op, None)
                self.disabling.add(step.op)
            return [Observation("step", i, "rc", rc)]
        params, new = self.params_for(step)
        rc = int(self.note(self.b.task_set_params(task, params), "aclmdlRITaskSetParams"))
        if rc == Err.SUCCESS and new is not None:
            self.pending[step.op] = new
            self.disabling.discard(step.op)  # DIS-04: the last of SetParams/Disable wins
        return [Observation("step", i, "rc", rc)]

    def destroy(self, i: int, step: Destroy) -> list[Observation]:
        """aclmdlRIDestroy of model 0 (LIFE-01, LIFE-03). With a release store, a host thread
        of its own (device made current first) stores the value ``after_ms`` after Destroy was
        called; the observation says whether Destroy returned only after that store began, as
        it must when it waits for the execution the store releases."""
        store: dict[str, Any] = {}
        releaser = None
        if step.release_word is not None:
            device = deadline.current_device(self.b)
            addr, value = self.word_addr[step.release_word], step.release_value

            def release() -> None:
                try:
                    if device is not None:
                        self.b.set_device(device)
                    time.sleep(step.after_ms / 1000.0)
                    store["began"] = time.monotonic()
                    self.write_word(addr, value)
                except Exception:  # a failed store leaves the execution blocked: Destroy shows it
                    pass

            releaser = threading.Thread(target=release, name="mdlri-release", daemon=True)
            releaser.start()
        out = self.bounded(lambda: self.b.destroy(self.models[0]),
                           DESTROY_POLL_S + DEADLINE_SLACK_S)
        returned = time.monotonic()
        if releaser is not None:
            releaser.join(step.after_ms / 1000.0 + DEADLINE_SLACK_S)
        if not out.returned:
            return [Observation("step", i, "rc", deadline.DID_NOT_RETURN)]
        rc = int(self.note(out.value, "aclmdlRIDestroy"))
        if rc == Err.SUCCESS:
            self.models[0] = None
        obs = [Observation("step", i, "rc", rc)]
        if releaser is not None:
            obs.append(Observation("step", i, "returned after the release store began",
                                   "began" in store and returned >= store["began"]))
        return obs

    def update(self, i: int, m: int) -> list[Observation]:
        """aclmdlRIUpdate of model ``m``: the rc; after a success the model's pending changes
        are committed and its listing, and with emptied streams the GetStreams order and
        those streams, observed (UPD-02, DIS-05, DIS-07, DIS-11)."""
        rc = int(self.note(self.b.update(self.models[m]), "aclmdlRIUpdate"))
        obs = [Observation("step", i, "rc", rc)]
        if rc == Err.SUCCESS:
            mine = {k for k, om in enumerate(self.op_model) if om == m}
            self.current.update({k: v for k, v in self.pending.items() if k in mine})
            for k in mine & set(self.pending):
                del self.pending[k]
            self.removed |= self.disabling & mine
            self.disabling -= mine
            obs += self.maps[m].observe(self.models[m], i, self.current)
            obs += self.maps[m].emptied(self.models[m], i, self.removed)
        return obs

    def group_update(self, i: int, step: GroupUpdate) -> list[Observation]:
        """A task-group update (TG-10): UpdateBegin(updater, handle), one launch per grouped
        task on the update stream, UpdateEnd, and a sync of the update stream (the update
        runs in its stream order); one observation, the rc list [begin, launches..., end,
        sync]. When all succeed the grouped ops are the new launches (for later listings)."""
        members = graphs.groups(self.case)[step.group]
        u = self.updater
        rcs = [int(self.note(self.b.capture_task_update_begin(u, self.groups[step.group]),
                             "aclmdlRICaptureTaskUpdateBegin"))]
        new: dict[int, Launch] = {}
        for k, kernel, args in zip(members, step.kernels, step.args):
            captured = self.case.ops[k]
            op = Launch(captured.stream, kernel, dict(args), getattr(captured, "num_blocks", 1))
            rcs.append(int(self.note(self.launch(op, u),
                                     "aclrtLaunchKernelWithHostArgs (update)")))
            new[k] = op
        rcs.append(int(self.note(self.b.capture_task_update_end(u),
                                 "aclmdlRICaptureTaskUpdateEnd")))
        rcs.append(int(self.note(self.b.synchronize_stream_with_timeout(u, CLEANUP_SYNC_MS),
                                 "aclrtSynchronizeStreamWithTimeout (update stream)")))
        if all(rc == Err.SUCCESS for rc in rcs):
            self.current.update(new)
        return [Observation("step", i, "rc", rcs)]

    def sync(self, i: int, timeout_ms: int) -> list[Observation]:
        """aclrtSynchronizeStreamWithTimeout(origin): the rc, then every buffer and word; an
        expired sync (507046) instead says whether it waited ``WAITED_SHARE`` of its
        timeout, and one that did not return says so (TMO-01, TMO-03)."""
        limit = (max(timeout_ms, 0) / 1000.0 if timeout_ms != -1 else 7.0) + DEADLINE_SLACK_S
        out = self.bounded(lambda: self.b.synchronize_stream_with_timeout(
            self.streams[0], timeout_ms), limit)
        if not out.returned:
            return [Observation("step", i, "rc", deadline.DID_NOT_RETURN)]
        rc = int(self.note(out.value, "aclrtSynchronizeStreamWithTimeout"))
        if rc == Err.RT_STREAM_SYNC_TIMEOUT:
            waited = out.elapsed_ms >= WAITED_SHARE * timeout_ms
            return [Observation("step", i, "rc", rc),
                    Observation("step", i, "waited the timeout", waited)]
        return [Observation("step", i, "rc", rc), *self.read_back(i)]

    def params_for(self, step: Step) -> tuple[TaskParams, Op | None]:
        """The aclmdlRITaskParams a SetKernel/SetValue/SetBadType step passes."""
        if isinstance(step, SetKernel):
            captured = self.case.ops[step.op]
            kernel = step.kernel or getattr(captured, "kernel", "")
            new = Launch(captured.stream, kernel, dict(step.args),
                         getattr(captured, "num_blocks", 1))
            data = self.packed(new)
            return kernel_task_params(self.funcs.get(kernel), data,
                                      num_blocks=new.num_blocks), new
        if isinstance(step, SetValue):
            captured = self.case.ops[step.op]
            word = step.word if step.word is not None else getattr(captured, "word", 0)
            new_vw = ValueWrite(captured.stream, word, step.value)
            return TaskParams(type=TaskType.VALUE_WRITE, value_write=ValueWriteTaskParams(
                dev_addr=self.word_addr[word] if word < len(self.word_addr) else None,
                value=step.value)), new_vw
        if isinstance(step, SetBadType):
            p = TaskParams(type=step.type)
            member = {TaskType.EVENT_RECORD: ("event_record", EventRecordTaskParams),
                      TaskType.EVENT_WAIT: ("event_wait", EventWaitTaskParams),
                      TaskType.EVENT_RESET: ("event_reset", EventResetTaskParams)}.get(step.type)
            if member is not None:
                setattr(p, member[0], member[1]())
            return p, None
        raise TypeError(f"unknown step {step!r}")

    def read_back(self, i: int) -> list[Observation]:
        """Every buffer (int32 list), every word (uint64), then every pinned host buffer
        (int32 list, read from host memory) after a Sync (observe.py 3)."""
        obs = []
        for b, addr in enumerate(self.buf_addr):
            out = np.zeros(len(self.case.buffers[b]), dtype=np.int32)
            rc = self.note(self.b.memcpy(out, out.nbytes, addr, out.nbytes,
                                         MemcpyKind.DEVICE_TO_HOST), "aclrtMemcpy D2H")
            obs.append(Observation("sync", i, f"buffer {b}",
                                   out.tolist() if rc == Err.SUCCESS else f"rc {rc}"))
        for w, addr in enumerate(self.word_addr):
            out64 = np.zeros(1, dtype=np.uint64)
            rc = self.note(self.b.memcpy(out64, 8, addr, 8, MemcpyKind.DEVICE_TO_HOST),
                           "aclrtMemcpy D2H")
            obs.append(Observation("sync", i, f"word {w}",
                                   int(out64[0]) if rc == Err.SUCCESS else f"rc {rc}"))
        obs += [Observation("sync", i, f"host {h}", self.host_view(h).tolist())
                for h in range(len(self.hosts))]
        return obs
