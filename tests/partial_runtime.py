"""A partial runtime for the capability probes: the simulator with things taken away.

It behaves like the real CANN runtime code built for the host with its unit-test driver stub
(shared/ref/real-runtime/findings.md): the control plane (return codes, listing, states)
works, but

* ``data``: no data moves: aclrtMemcpy / aclrtMemcpyAsync / aclrtMemset(Async) return their
  usual codes and change nothing (a device-to-host copy leaves the host buffer as it was);
* ``kernels``: kernels run nothing (launch and execution succeed, no output is written);
* ``blocking``: nothing blocks: event and value waits complete at once, so no sync times out;
* ``update``: the update family answers 207000 (the driver lacks software SQ, abi.md):
  aclmdlRITaskGetParams, aclmdlRITaskSetParams, aclmdlRITaskDisable, aclmdlRIUpdate;
* ``update_op``: only aclmdlRITaskSetParams answers 207019 (the firmware cannot update the op,
  ``aix_stars.cc:191-196``), a gate the probes meet as well, but that a run without probing
  (``--no-probe``) meets inside the specs;
* ``never_timeout``: a kernel launched with TIMEOUT 0 reports the maximum (1090 s), as the
  real runtime does without the TS firmware feature (``davinci_kernel_task.cc:175-179``);
* ``pageable``: pageable memory cannot be detected: aclrtPointerGetAttributes reports
  DEVICE for every pointer (the stub's ``drvMemGetAttribute``), so a pageable async copy is
  taken for a device one and never refused (``api_error.cc:2256-2259``, ``:2610-2624``);
* ``slow_first_exec``: each model's first aclmdlRIExecuteAsync takes :data:`FIRST_EXEC_S`
  seconds per stream of the model (the real runtime polls an SQ tail the stub never
  advances, ``feature/model/model.cc:1011-1022``, 5 s each: MAX_WAIT_TIME at ``:46``); later
  executions are fast.

A partial runtime promises (``promised_capabilities``) every capability its gaps leave alone:
a probe that takes one of those away fails the gate, as on the simulator.

``factory`` builds the stub-like runtime (everything but ``never_timeout``, ``update_op`` and
``slow_first_exec`` taken away), the ``create_no_*`` factories a runtime lacking one thing
each. Use them as ``--backend tests.partial_runtime:factory``.
"""

from __future__ import annotations

import time
from typing import Any, Iterable

import numpy as np

from mdlri_conformance.backends.contract import (UNWRITTEN, Cap, Err, LaunchAttrId,
                                                 MemLocationType, PtrAttributes)
from mdlri_conformance.backends.sim import SimBackend
from mdlri_conformance.backends.sim.device import (DeviceFault, Engine, KernelOp, MemcpyOp, MemsetOp, Op, Queue,
                                 ValueWaitOp, WaitOp)
from mdlri_conformance.backends.sim.model import LiveKernelOp

#: everything the stub-like runtime lacks (``factory``)
STUB_GAPS = frozenset({"data", "kernels", "blocking", "update", "pageable"})
#: every gap this module can open
ALL_GAPS = STUB_GAPS | {"never_timeout", "update_op", "slow_first_exec"}
#: the capabilities each gap may take away (the rest stay promised)
GAP_CAPS: dict[str, frozenset[Cap]] = {
    "data": frozenset({Cap.DATA_MOVEMENT, Cap.KERNEL_EXEC, Cap.BLOCKING_WAIT}),
    "kernels": frozenset({Cap.KERNEL_EXEC}),
    "blocking": frozenset({Cap.BLOCKING_WAIT}),
    "update": frozenset({Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE}),
    "update_op": frozenset({Cap.SET_PARAMS}),
    "never_timeout": frozenset({Cap.NEVER_TIMEOUT}),
    "pageable": frozenset({Cap.PAGEABLE_DETECTION}),
    "slow_first_exec": frozenset(),
}
#: seconds a model's first execution takes per stream with ``slow_first_exec`` (the real
#: runtime over its stub: 5 s; the tests use less)
FIRST_EXEC_S = 5.0
#: what the real runtime reports for "never" without TS support (kernel_utils.cc:286-298)
MAX_TIMEOUT_S = 1090
NOT_SUPPORTED = int(Err.RT_FEATURE_NOT_SUPPORT)

#: device operations each gap completes without effect
_DROPPED: dict[str, tuple[type[Op], ...]] = {
    "data": (MemcpyOp, MemsetOp),
    "kernels": (KernelOp, LiveKernelOp),
    "blocking": (WaitOp, ValueWaitOp),
}


class _PartialEngine(Engine):
    """The simulator's progress engine, completing the dropped operations at once.

    Without data movement a kernel may run on argument bytes nobody wrote (garbage sizes):
    whatever such a kernel raises is a device fault of its queue, as on a device."""

    dropped: tuple[type[Op], ...] = ()

    def _step_head(self, queue: Queue) -> bool:
        op = queue.ops[0]
        if isinstance(op, self.dropped):
            queue.ops.popleft()
            op.finish()
            op.done = True
            return True
        try:
            return super()._step_head(queue)
        except (ValueError, OverflowError, MemoryError, IndexError) as exc:
            self._fault(queue, op, DeviceFault(f"{op.label}: {exc}"))
            return True


class PartialSim(SimBackend):
    """The simulator lacking ``gaps`` (names of :data:`ALL_GAPS`)."""

    name = "partial"

    def __init__(self, gaps: Iterable[str] = STUB_GAPS, first_exec_s: float = FIRST_EXEC_S,
                 **options: Any) -> None:
        super().__init__(**options)
        self.gaps = frozenset(gaps)
        unknown = self.gaps - ALL_GAPS
        if unknown:
            raise ValueError(f"unknown gaps {sorted(unknown)}")
        self.first_exec_s = float(first_exec_s)
        self._executed: set[int] = set()
        self.promised_capabilities = self.capabilities.difference(
            *(GAP_CAPS[g] for g in self.gaps))
        self.name = "partial(" + ",".join(sorted(self.gaps)) + ")"
        self.engine.__class__ = _PartialEngine
        self.engine.dropped = tuple(t for g in sorted(self.gaps) for t in _DROPPED.get(g, ()))

    def version(self) -> str:
        return f"{super().version()} lacking {', '.join(sorted(self.gaps)) or 'nothing'}"

    # -- data movement: synchronous copies and fills change nothing ------------------------
    _holding = False

    def _kick(self) -> None:
        if not self._holding:  # no device progress while a copy is being undone
            super()._kick()

    def _moves_nothing(self, dst: Any, count: Any, call: Any) -> int:
        """Run ``call(dst)`` for its return code, then undo what it wrote at ``dst`` before
        the device sees it."""
        with self._cond:
            if isinstance(dst, np.ndarray):
                return call(np.array(dst, copy=True))
            keep = None
            if isinstance(count, int) and count > 0 and self.mem.valid_range(dst, count):
                keep = self.mem.read(dst, count)
            self._holding = True
            try:
                rc = call(dst)
            finally:
                self._holding = False
                if keep is not None:
                    self.mem.write(dst, keep)
            self._kick()
            return rc

    def memcpy(self, dst: Any, dest_max: int, src: Any, count: int, kind: int) -> int:
        if "data" not in self.gaps:
            return super().memcpy(dst, dest_max, src, count, kind)
        return self._moves_nothing(dst, count,
                               lambda d: super(PartialSim, self).memcpy(d, dest_max, src,
                                                                        count, kind))

    def memset(self, dev_ptr: Any, max_count: int, value: int, count: int) -> int:
        if "data" not in self.gaps:
            return super().memset(dev_ptr, max_count, value, count)
        return self._moves_nothing(dev_ptr, count,
                               lambda d: super(PartialSim, self).memset(d, max_count, value,
                                                                        count))

    # -- pageable memory: every pointer is device memory to the driver ---------------------
    def pointer_get_attributes(self, ptr: Any, *, null_out: bool = False) -> tuple[int, Any]:
        rc, attrs = super().pointer_get_attributes(ptr, null_out=null_out)
        if "pageable" not in self.gaps or rc != Err.SUCCESS:
            return rc, attrs
        return rc, PtrAttributes(0, int(MemLocationType.DEVICE), attrs.page_size)

    def _check_copy(self, dst: Any, dest_max: int, src: Any, count: int,
                    kind: int) -> tuple[int, Any, Any, bool]:
        rc, d, s, pageable = super()._check_copy(dst, dest_max, src, count, kind)
        return rc, d, s, pageable and "pageable" not in self.gaps

    # -- a slow first execution ------------------------------------------------------------
    def execute_async(self, model: Any, stream: Any) -> int:
        if "slow_first_exec" in self.gaps and model is not None and id(model) not in \
                self._executed:
            rc, _, n = self.get_streams(model, None)
            if rc == Err.SUCCESS and isinstance(n, int) and n > 0:
                self._executed.add(id(model))
                time.sleep(self.first_exec_s * n)
        return super().execute_async(model, stream)

    # -- the update family: 207000 ----------------------------------------------------------
    def task_get_params(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        if "update" in self.gaps:
            return NOT_SUPPORTED, UNWRITTEN
        return super().task_get_params(task, null_out=null_out)

    def task_set_params(self, task: Any, params: Any) -> int:
        if "update" in self.gaps:
            return NOT_SUPPORTED
        if "update_op" in self.gaps:
            return int(Err.RT_FEATURE_NOT_SUPPORT_UPDATE_OP)
        return super().task_set_params(task, params)

    def task_disable(self, task: Any) -> int:
        if "update" in self.gaps:
            return NOT_SUPPORTED
        return super().task_disable(task)

    def update(self, model: Any) -> int:
        if "update" in self.gaps:
            return NOT_SUPPORTED
        return super().update(model)

    # -- never-timeout without firmware support --------------------------------------------
    def kernel_task_get_attribute(self, task: Any, attr_id: int, *,
                                  null_out: bool = False) -> tuple[int, Any]:
        rc, value = super().kernel_task_get_attribute(task, attr_id, null_out=null_out)
        if "never_timeout" not in self.gaps or rc != Err.SUCCESS:
            return rc, value
        if attr_id == LaunchAttrId.TIMEOUT and value == 0:
            return rc, MAX_TIMEOUT_S
        if attr_id == LaunchAttrId.TIMEOUT_US and tuple(value) == (0, 0):
            us = MAX_TIMEOUT_S * 1_000_000
            return rc, (us & 0xFFFF_FFFF, us >> 32)
        return rc, value


def create(gaps: Iterable[str] = STUB_GAPS, **options: Any) -> PartialSim:
    """A partial runtime lacking ``gaps``."""
    return PartialSim(gaps, **options)


def factory(**options: Any) -> PartialSim:
    """The stub-like runtime: no data movement, no kernel execution, no blocking, no update."""
    return PartialSim(STUB_GAPS, **options)


def create_no_data(**options: Any) -> PartialSim:
    return PartialSim({"data"}, **options)


def create_no_kernels(**options: Any) -> PartialSim:
    return PartialSim({"kernels"}, **options)


def create_no_blocking(**options: Any) -> PartialSim:
    return PartialSim({"blocking"}, **options)


def create_no_update(**options: Any) -> PartialSim:
    return PartialSim({"update"}, **options)


def create_no_never_timeout(**options: Any) -> PartialSim:
    return PartialSim({"never_timeout"}, **options)


def create_no_update_op(**options: Any) -> PartialSim:
    return PartialSim({"update_op"}, **options)


def create_no_pageable(**options: Any) -> PartialSim:
    return PartialSim({"pageable"}, **options)


def create_slow_first_exec(**options: Any) -> PartialSim:
    """Everything shown, but each model's first execution takes 1 s per stream."""
    return PartialSim({"slow_first_exec"}, first_exec_s=1.0, **options)


def create_stub_slow(**options: Any) -> PartialSim:
    """The stub-like runtime with the real stub's slow first execution (5 s per stream)."""
    return PartialSim(STUB_GAPS | {"slow_first_exec"}, **options)


def create_no_update_op_running_disabled_tasks(**options: Any) -> PartialSim:
    """SetParams answers 207019 and, besides, a real bug: a disabled task still runs after
    Update (DIS-01). The bug must still FAIL beside the unsupported steps."""
    return PartialSim({"update_op"}, faults=["disabled-task-runs"], **options)
