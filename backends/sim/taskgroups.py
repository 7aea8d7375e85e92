"""Task groups (TG): capture-side groups and the asynchronous group update.

* :class:`TaskGroup` is an ``aclrtTaskGrp``: the kernel tasks captured between
  CaptureTaskGrpBegin and CaptureTaskGrpEnd on one capturing stream (TG-01), in order.
* GrpBegin first appends :data:`PREFETCH_NOPS` NOP (DEFAULT) tasks, as the runtime does with
  ``taskPrefetchCount`` on A2/A3 (TG-03); they take sequence ids like any task.
* :class:`UpdateState` is a non-capturing stream in update mode (TG-10): each kernel launch on it
  replaces the next task of the group. The replacement is an :class:`ApplyOp` queued on that
  stream, so it takes effect asynchronously, in the stream's order (TG-10, Q-21).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .device import Op
from .handles import Handle

#: NOP tasks inserted by CaptureTaskGrpBegin (taskPrefetchCount of A2/A3, TG-03)
PREFETCH_NOPS = 8


class TaskGroup(Handle):
    """An ``aclrtTaskGrp``."""

    kind = "task-group"

    def __init__(self, session: Any, stream: Any) -> None:
        super().__init__()
        self.session = session           # the CaptureSession the group was opened in
        self.model = session.model
        self.stream = stream             # the user stream the group is open on
        self.tasks: list[Any] = []       # grouped Task objects, capture order
        self.error = 0                   # recorded error (TG-04, TG-05): GrpEnd returns it
        self.open = True
        self.updating: Any = None        # the stream updating the group (TG-12)


@dataclass(eq=False)
class UpdateState:
    """A stream between CaptureTaskUpdateBegin and CaptureTaskUpdateEnd."""

    group: TaskGroup
    index: int = 0                       # replacements issued so far


class ApplyOp(Op):
    """Replaces a grouped task's records when it reaches the head of the update stream."""

    label = "task_update"

    def __init__(self, task: Any, record: Any) -> None:
        super().__init__()
        self.task, self.record = task, record

    def step(self, engine: Any, queue: Any) -> bool:
        if self.task.alive and self.task.model.alive:
            self.task.host = self.record
            self.task.dev = self.record
        return True
