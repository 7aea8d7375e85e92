"""Conditional tasks and sub-models (COND).

* :class:`CondHandle`: an ``aclmdlRICondHandle`` with an 8-byte device value owned by its model
  (in the model's internal allocations, freed with it; COND-04), 0 at creation (COND-02).
* :class:`SubModel`: a model created by AddCondTask; captured once with CaptureToModelRIBegin,
  refused by most APIs (207000, COND-10) and destroyed with its parent.
* :class:`CondOp`: the device side of a conditional task (COND-11, Q-19). It reads the 64-bit
  value when it reaches the head of its queue and runs the chosen sub-model like an execution
  (one transient queue per sub-model stream):

  - IF: value != 0 -> model[0]; value == 0 -> model[1] if size 2, else nothing;
  - WHILE: model[0] while value != 0, the value re-read after each iteration; more than
    :data:`WHILE_LIMIT` iterations is a device error (the execution fails, 507011);
  - SWITCH: model[value]; a value >= size runs nothing and the next task runs (COND-13,
    ``core/src/task/stars_cond_isa_helper.cc:2453-2467``).
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import CondTaskType

from .device import DeviceFault, Op, Queue
from .handles import Handle
from .model import SimModel

#: iterations after which a WHILE task is a device error (Q-19)
WHILE_LIMIT = 100_000


class CondHandle(Handle):
    """An ``aclmdlRICondHandle``."""

    kind = "cond-handle"

    def __init__(self, model: Any, addr: int, default: int, flag: int) -> None:
        super().__init__()
        self.model = model
        self.addr = addr
        self.default = default
        self.flag = flag
        self.used = False  # AddCondTask takes a handle once (COND-05)


class SubModel(SimModel):
    """A sub-model (branch body) created by AddCondTask."""

    def __init__(self, parent: Any, index: int) -> None:
        super().__init__()
        self.parent = parent
        self.index = index
        self.captured = False  # CaptureToModelRIBegin was called (COND-07: 107026 after)
        from .model import ModelStatus
        self.status = ModelStatus.READY


class CondOp(Op):
    """A conditional task while one execution runs it."""

    label = "cond"

    def __init__(self, handle: CondHandle, ctype: int, models: list[SubModel],
                 overflow_runs_last: bool = False) -> None:
        super().__init__()
        self.handle, self.ctype, self.models = handle, int(ctype), list(models)
        self.overflow_runs_last = overflow_runs_last  # fault switch-out-of-range-runs-last
        self.queues: list[Queue] | None = None
        self.iterations = 0
        self.failed = False

    def _choose(self, value: int) -> SubModel | None:
        if self.ctype == CondTaskType.IF:
            if value != 0:
                return self.models[0]
            return self.models[1] if len(self.models) > 1 else None
        if self.ctype == CondTaskType.WHILE:
            return self.models[0] if value != 0 else None
        if value >= len(self.models):
            return self.models[-1] if self.overflow_runs_last else None  # COND-13
        return self.models[value]

    def step(self, engine: Any, queue: Queue) -> bool:
        while True:
            if self.failed:
                raise DeviceFault("a sub-model of a conditional task failed")
            if self.queues is not None:
                if any(q.ops for q in self.queues):
                    return False
                self.queues = None
                if self.ctype != CondTaskType.WHILE:
                    return True
            model = self._choose(engine.mem.read_u64(self.handle.addr))
            if model is None:
                return True
            self.iterations += 1
            if self.ctype == CondTaskType.WHILE and self.iterations > WHILE_LIMIT:
                raise DeviceFault(f"WHILE task ran more than {WHILE_LIMIT} iterations")
            self.queues = []
            for i, ops in enumerate(model.execution_plan()):
                q = Queue(f"{queue.name}/cond-q{i}", transient=True, group=self)
                q.ops.extend(ops)
                self.queues.append(q)
                if q.ops:
                    engine.attach(q)

    def _drop(self) -> None:
        for q in self.queues or ():
            while q.ops:
                op = q.ops.popleft()
                op.finish()
                op.done = True

    def abandon(self, engine: Any) -> None:
        """A device error in a branch: drop the branch, fail at the next step."""
        self.failed = True
        self._drop()

    def finish(self) -> None:
        """Completed, or dropped with its execution (abort, device error): no branch survives."""
        self._drop()
