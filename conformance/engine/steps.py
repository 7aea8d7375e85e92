"""The host plan of a task-graph case: the steps run after CaptureEnd, in order.

Each step is plain frozen data, JSON round-trippable through :mod:`conformance.engine.graphs`
(its ``kind`` tag): SetParams of a kernel or value task (SETP-01, SETP-07), a SetParams of a
type it rejects, TaskDisable (DIS-01), aclmdlRIUpdate (UPD-05), ExecuteAsync of a model on
stream 0 (EXE-01, EXE-02), a timed Sync, a StreamQuery, host stores into a word (TMO-01) or a
pinned host buffer, Destroy (LIFE-01, LIFE-03), a task-group update (TG-10), ExecuteAsync of
a built model (BLD-03) and a condition write (COND-04, COND-11). Op references are indices
into the case's ``ops``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class SetKernel:
    """TaskSetParams(KERNEL) on a Launch op: new host args (and optionally another kernel
    with the same argument layout)."""

    op: int
    args: dict[str, int]
    kernel: str | None = None


@dataclass(frozen=True)
class SetValue:
    """TaskSetParams(VALUE_WRITE) on a ValueWrite op: same word, new value. With ``word``
    set, on a Launch op instead: the kernel task becomes a value write of ``value`` into
    ``words[word]`` (SETP-07), the same task with the same seq id and handle (SEQ-05), and
    its kernel no longer runs after Update."""

    op: int
    value: int
    word: int | None = None


@dataclass(frozen=True)
class SetBadType:
    """TaskSetParams with a type SetParams rejects (EVENT_*, DEFAULT): 107000 + FAULT."""

    op: int
    type: int


@dataclass(frozen=True)
class Disable:
    """TaskDisable on an op's task (a Memset op gives a DEFAULT task: 107000 + FAULT)."""

    op: int


@dataclass(frozen=True)
class Update:
    """aclmdlRIUpdate of model ``model``."""

    model: int = 0


@dataclass(frozen=True)
class Execute:
    """aclmdlRIExecuteAsync of model ``model`` on stream 0 (model 0's origin), ``times``
    times in a row: every execution of every model queues behind the earlier ones
    (EXE-01)."""

    times: int = 1
    model: int = 0


@dataclass(frozen=True)
class Sync:
    """aclrtSynchronizeStreamWithTimeout(origin, timeout_ms); then every buffer is read."""

    timeout_ms: int = 5000


@dataclass(frozen=True)
class HostWrite:
    """Synchronous aclrtMemcpy(HOST_TO_DEVICE) of ``value`` into ``words[word]``: the host
    side of a value-wait handshake (it releases a blocked execution, TMO-03)."""

    word: int
    value: int


@dataclass(frozen=True)
class Query:
    """aclrtStreamQuery(origin): NOT_READY while an execution is blocked, else COMPLETE
    (TMO-06)."""


@dataclass(frozen=True)
class HostFill:
    """A plain host store of ``value`` into every element of the pinned ``hosts[host]``
    while no execution is in flight (no API call, nothing observed): a captured copy from
    it moves the new contents at the next execution (CAP-19)."""

    host: int
    value: int


@dataclass(frozen=True)
class Destroy:
    """aclmdlRIDestroy of model 0. With ``release_word`` set, a host thread stores
    ``release_value`` into that host word ``after_ms`` after the call began: Destroy of a
    model whose execution is blocked waits for it (it polls for about 10 s, LIFE-03), so the
    store releases the execution and Destroy returns 0 only after it. Only Sync may follow;
    a case of one model only."""

    release_word: int | None = None
    release_value: int = 0
    after_ms: int = 100


@dataclass(frozen=True)
class GroupUpdate:
    """aclmdlRICaptureTaskUpdateBegin(u, handle of group ``group``) on the replay's update
    stream ``u`` (a non-capturing stream that is no model's, TG-11), one kernel launch per
    task of the group, in order, each replacing the next task (``kernels[k]`` with
    ``args[k]``, the task's block count; the operator may differ, TG-10), then
    aclmdlRICaptureTaskUpdateEnd(u) and a sync of ``u``: the update runs in ``u``'s stream
    order, so the executions after it run the new kernels (TG-10). As many launches as the
    group holds (TG-13 makes another count fail): none for an empty group, whose
    UpdateEnd then answers 0 (TG-14)."""

    group: int
    kernels: list[str]
    args: list[dict[str, int]]


@dataclass(frozen=True)
class ExecuteBuilt:
    """aclmdlRIExecuteAsync of built model ``build`` (:attr:`Case.builds`) on stream 0,
    ``times`` times: it queues with the captured models' executions (EXE-01) and runs the
    tasks stored at build time (BLD-03)."""

    build: int = 0
    times: int = 1


@dataclass(frozen=True)
class SetCond:
    """A synchronous aclrtMemcpy of ``value`` into the 8-byte condition value of the
    :class:`Cond` op ``op`` (the device pointer aclmdlRICondHandleGetCondPtr gives, COND-04)
    while no execution is in flight: the next executions take the branch it selects
    (COND-11). A "switch" value at or past its branch count runs no branch (COND-13)."""

    op: int
    value: int


Step = Union[SetKernel, SetValue, SetBadType, Disable, Update, Execute, Sync, HostWrite, Query,
             HostFill, Destroy, GroupUpdate, ExecuteBuilt, SetCond]
