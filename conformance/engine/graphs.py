"""Task-graph descriptions: a captured program and the host plan that follows it.

A :class:`Case` is plain data, JSON round-trippable, and independent of any backend:

* ``streams`` user streams (1-4 per model); stream 0 is the origin that begins and ends the
  capture. Every other stream joins the capture by waiting on an event recorded on a
  capturing stream (XS-01) and must end with a record that another stream waits on (XS-02).
* ``origins`` (default ``[0]``): one origin stream per captured *model* (1-3). Model ``m``'s
  capture begins on ``origins[m]`` right before the first op issued on one of its streams
  and ends right after its last one, so the models are captured one after the other or
  with their captures open together (CAP-07). A side stream belongs to the model of the
  event it first waits on; an event never crosses models (XS-07). Every model shares the
  case's buffers, words and host buffers, and all of them execute on stream 0, one after
  the other in plan order (EXE-01), so memory carries from one model to the next.
* ``buffers``: device int32 buffers with their initial contents (outputs start at the
  sentinel -1); ``words``: 64-bit device words for value write/wait, with initial values;
  ``hosts`` (default none): pinned host int32 buffers (aclrtMallocHost) that captured
  copies read and write (MODE-01, CAP-19).
* ``ops``: what is issued during the capture, in host issue order (kernel launches from
  the catalog, event record/wait, value write/wait, memset, copies of every capturable
  kind: device-to-device, pinned host-to-device and device-to-pinned host; ``pageable_copy``:
  an async copy with ordinary host memory, which a capturing stream rejects, MODE-14;
  ``end_on_side``: a CaptureEnd on a joined side stream, which must fail, CAP-11; and
  ``group_begin``/``group_end``: the launches between them on one stream form a task group,
  TG-01, numbered by their end, :func:`groups`; ``cond``: an IF or SWITCH task whose
  sub-models are captured on streams of their own, COND-05..COND-08).
* ``builds`` (default none): built models (aclmdlRIBuildBegin, one persistent stream bound,
  its launches, EndTask, BuildEnd), made before the capture over the same buffers; their
  launches are stored, not run, until an ``execute_built`` step (BLD-03).
* ``plan``: the host steps after CaptureEnd (SetParams, Disable, Update and Execute of a
  model, Sync, Query, HostWrite: a host store into a word, which releases a blocked value
  wait, and HostFill: a host store into a pinned host buffer between executions;
  GroupUpdate: a task-group update re-issuing a group's kernels from a non-capturing
  stream, TG-10; ExecuteBuilt: ExecuteAsync of a built model on stream 0; SetCond: a host
  write of a cond task's condition value, COND-04, COND-11).

A value wait on a *host word* (a word no captured op writes) may block an execution until a
plan step stores a satisfying value (TMO-01, TMO-03, TMO-06); a side stream whose last op is
not a record, or is a record no later wait takes (its fork or join event recorded again
after the origin's wait, XS-13, XS-15), is *unjoined*, and CaptureEnd fails with 107025
(XS-02, XS-03, CAP-13).

Op references in plan steps are indices into ``ops``. :func:`check` validates a case that
came from outside (a JSON file): it must stay inside defined behaviour (every event
recorded before its waits, a wait taking the event's latest record (XS-13), every side
stream forked and joined, no two unordered ops touching the same buffer or word with a
write). Violations raise :class:`GraphError` with a one-line message.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Union

from mdlri_conformance.kernel import catalog

SCHEMA = 1
SENTINEL = -1
#: user streams per model
MAX_STREAMS = 4
#: captured models per case
MAX_MODELS = 3
#: the copy directions (aclrtMemcpyKind) a capture takes (MODE-01, MODE-14: host memory
#: only when pinned)
COPY_KINDS = ("d2d", "h2d", "d2h")
#: the copy directions that involve host memory
HOST_COPY_KINDS = ("h2d", "d2h")
#: device words are 64-bit unsigned
WORD_MASK = (1 << 64) - 1


class GraphError(ValueError):
    """A malformed or out-of-contract case (one line, names the offending part)."""


# ---------------------------------------------------------------------------------------------
# captured ops


@dataclass(frozen=True)
class Launch:
    """aclrtLaunchKernelWithHostArgs of a catalog kernel; pointer args name buffer indices."""

    stream: int
    kernel: str
    args: dict[str, int]
    num_blocks: int = 1


@dataclass(frozen=True)
class Record:
    """aclrtRecordEvent(event, stream)."""

    stream: int
    event: int


@dataclass(frozen=True)
class Wait:
    """aclrtStreamWaitEvent(stream, event)."""

    stream: int
    event: int


@dataclass(frozen=True)
class ValueWrite:
    """aclrtValueWrite(words[word], value, 0, stream)."""

    stream: int
    word: int
    value: int


@dataclass(frozen=True)
class ValueWait:
    """aclrtValueWait(words[word], value, flag, stream); flag is a ValueWaitFlag."""

    stream: int
    word: int
    value: int
    flag: int = 1  # EQ


@dataclass(frozen=True)
class Memset:
    """aclrtMemsetAsync with a byte value (a DEFAULT-type task): of the whole buffer, or,
    with ``count`` set, of ``count`` bytes from byte ``offset`` (any parity and offset:
    exactly those bytes change, RT-45). The race analysis still counts it as a write of the
    whole buffer."""

    stream: int
    buffer: int
    value: int
    offset: int = 0
    count: int | None = None

    def span(self, nbytes: int) -> tuple[int, int]:
        """(offset, count) in bytes inside a buffer of ``nbytes`` bytes."""
        return (0, nbytes) if self.count is None else (self.offset, self.count)


@dataclass(frozen=True)
class EndOnSide:
    """aclmdlRICaptureEnd on a joined side stream while the capture is open: 107036, and the
    capture stays ACTIVE (CAP-11). Issues no task."""

    stream: int


@dataclass(frozen=True)
class Copy:
    """aclrtMemcpyAsync of a whole buffer into another of the same size, captured as a
    DEFAULT-type task that moves the bytes at every execution (CAP-01, TYPE-02, EXE-02).

    ``direction`` (the aclrtMemcpyKind; "kind" is the JSON tag): "d2d" DEVICE_TO_DEVICE from
    ``buffers[src]`` to ``buffers[dst]``; "h2d" HOST_TO_DEVICE from the pinned ``hosts[src]``
    to ``buffers[dst]``; "d2h" DEVICE_TO_HOST from ``buffers[src]`` to the pinned
    ``hosts[dst]``. Pinned host memory is read and
    written when the task runs, not at capture (CAP-19); a capture takes host memory only
    pinned (MODE-01, MODE-14: see :class:`PageableCopy`)."""

    stream: int
    src: int
    dst: int
    direction: str = "d2d"


@dataclass(frozen=True)
class PageableCopy:
    """aclrtMemcpyAsync between ``buffers[buffer]`` and ordinary (pageable, not
    aclrtMallocHost) host memory on a capturing stream, ``direction`` "h2d" or "d2h": rejected
    with 107000 in every capture mode; it issues no task, moves nothing and the capture goes
    on (MODE-14, MODE-12)."""

    stream: int
    buffer: int
    direction: str = "h2d"


@dataclass(frozen=True)
class OutsideWait:
    """aclrtStreamWaitEvent on a capturing stream for an event recorded before the capture
    began (the replay records one such event on the origin before CaptureBegin): 107024,
    and the capture goes on (XS-05). Issues no task."""

    stream: int


@dataclass(frozen=True)
class StrayWait:
    """aclrtStreamWaitEvent on a capturing stream (the origin, or a side stream that has
    joined) for ``event`` while it has never been recorded: 0, no task, nothing ordered, and
    the capture goes on (XS-14). The event may be recorded later in the capture (a record
    after the wait): that record is captured as usual."""

    stream: int
    event: int


@dataclass(frozen=True)
class GroupBegin:
    """aclmdlRICaptureTaskGrpBegin on a capturing stream: the launches issued on it until
    the matching :class:`GroupEnd` form a task group (TG-01). Only kernel launches on that
    stream may follow until the end (TG-04: anything else is 507009; TG-05: a task on
    another capturing stream is 107034). It adds internal NOP tasks (TG-03) and no user
    task."""

    stream: int


@dataclass(frozen=True)
class GroupEnd:
    """aclmdlRICaptureTaskGrpEnd on the stream of the open group: 0 and a non-NULL handle
    (TG-01). Groups are numbered by their GroupEnd, in issue order."""

    stream: int


@dataclass(frozen=True)
class Cond:
    """A conditional task (COND-01, COND-05, COND-06): aclmdlRICondHandleCreate on the
    capturing model (default value 0, flag 0: the runtime never writes the value, COND-03),
    aclmdlRIAddCondTask of ``type`` ("if": 1-2 branches, "switch": 1-3) on ``stream``, and
    each sub-model captured on a fresh stream with aclmdlRICaptureToModelRIBegin (COND-07),
    its ``branches[k]`` launches (stream fields ignored), then CaptureEnd (COND-08).
    At every execution it runs, per COND-11, for "if" branch 0 when the condition value is
    non-zero and branch 1 (if any) when it is 0, for "switch" branch ``value``; the value
    starts at 0 (COND-02) and changes only by :class:`SetCond` steps."""

    stream: int
    type: str
    branches: list[list[Launch]]


Op = Union[Launch, Record, Wait, ValueWrite, ValueWait, Memset, Copy, EndOnSide, PageableCopy,
           OutsideWait, StrayWait, GroupBegin, GroupEnd, Cond]
#: the ops that issue a task (the others are host calls made during the capture)
TASK_OPS = (Launch, Record, Wait, ValueWrite, ValueWait, Memset, Copy, Cond)
#: the branch counts a conditional task type takes (COND-05)
COND_SIZES = {"if": (1, 2), "switch": (1, 3)}
#: the task-group markers (TG-01): host calls that add no user task
GROUP_OPS = (GroupBegin, GroupEnd)
#: host calls made during the capture that issue no user task and take part in no ordering
NO_TASK_OPS = (EndOnSide, PageableCopy, OutsideWait, StrayWait, GroupBegin, GroupEnd)
#: the ops whose tasks are DEFAULT: listed, but neither identifiable nor disableable
DEFAULT_OPS = (Memset, Copy)

# ---------------------------------------------------------------------------------------------
# plan steps


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

# ---------------------------------------------------------------------------------------------
# the case


@dataclass
class Case:
    """A generated (or hand-written) task graph and host plan."""

    streams: int
    buffers: list[list[int]]
    words: list[int]
    events: int
    ops: list[Op]
    plan: list[Step]
    name: str = ""
    note: str = ""
    schema: int = SCHEMA
    origins: list[int] = field(default_factory=lambda: [0])
    hosts: list[list[int]] = field(default_factory=list)
    builds: list[list[Launch]] = field(default_factory=list)

    def task_count(self) -> int:
        """Captured user tasks (the size measure of a counterexample)."""
        return len(self.ops)

    @property
    def models(self) -> int:
        """How many models the case captures (one per origin stream)."""
        return len(self.origins)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; ``origins`` and ``hosts`` only when they differ from the
        defaults, so a one-model case without host buffers reads as before."""
        out: dict[str, Any] = {
            "schema": self.schema, "name": self.name, "note": self.note,
            "streams": self.streams, "buffers": self.buffers, "words": self.words,
            "events": self.events,
        }
        if self.origins != [0]:
            out["origins"] = self.origins
        if self.hosts:
            out["hosts"] = self.hosts
        if self.builds:
            out["builds"] = [[_tagged(o) for o in ops] for ops in self.builds]
        out["ops"] = [_tagged(o) for o in self.ops]
        out["plan"] = [_tagged(s) for s in self.plan]
        return out

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)


_OPS: dict[str, type] = {"launch": Launch, "record": Record, "wait": Wait,
                         "value_write": ValueWrite, "value_wait": ValueWait, "memset": Memset,
                         "copy": Copy, "pageable_copy": PageableCopy,
                         "end_on_side": EndOnSide, "outside_wait": OutsideWait,
                         "stray_wait": StrayWait,
                         "group_begin": GroupBegin, "group_end": GroupEnd, "cond": Cond}
_STEPS: dict[str, type] = {"set_kernel": SetKernel, "set_value": SetValue,
                           "set_bad_type": SetBadType, "disable": Disable, "update": Update,
                           "execute": Execute, "sync": Sync, "host_write": HostWrite,
                           "query": Query, "host_fill": HostFill, "destroy": Destroy,
                           "group_update": GroupUpdate, "execute_built": ExecuteBuilt,
                           "set_cond": SetCond}
_TAG = {cls: tag for tag, cls in {**_OPS, **_STEPS}.items()}


def _tagged(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Cond):
        return {"kind": "cond", "stream": obj.stream, "type": obj.type,
                "branches": [[_tagged(op) for op in ops] for ops in obj.branches]}
    out = {"kind": _TAG[type(obj)], **asdict(obj)}
    if isinstance(obj, Memset) and obj.count is None:  # a whole-buffer memset reads as before
        del out["offset"], out["count"]
    if isinstance(obj, SetValue) and obj.word is None:  # so does a plain set_value
        del out["word"]
    return out


def _build(table: dict[str, type], raw: Any, where: str) -> Any:
    if not isinstance(raw, dict) or raw.get("kind") not in table:
        raise GraphError(f"{where}: expected an object with kind in {sorted(table)}")
    cls = table[raw["kind"]]
    fields = {k: v for k, v in raw.items() if k != "kind"}
    if cls is Cond and isinstance(fields.get("branches"), list):
        fields["branches"] = [[_build({"launch": Launch}, o, f"{where} branch {b}[{k}]")
                               for k, o in enumerate(ops)] if isinstance(ops, list) else ops
                              for b, ops in enumerate(fields["branches"])]
    try:
        return cls(**fields)
    except TypeError as exc:
        raise GraphError(f"{where}: bad fields for {raw['kind']} ({exc})") from None


def from_dict(d: Any) -> Case:
    """Build a case from parsed JSON; structural problems raise GraphError."""
    if not isinstance(d, dict):
        raise GraphError("case: expected a JSON object")
    if d.get("schema", SCHEMA) != SCHEMA:
        raise GraphError(f"case: schema {d.get('schema')!r} is not {SCHEMA}")
    try:
        case = Case(
            streams=int(d["streams"]), buffers=[list(map(int, b)) for b in d["buffers"]],
            words=[int(w) for w in d.get("words", [])], events=int(d.get("events", 0)),
            ops=[_build(_OPS, o, f"ops[{i}]") for i, o in enumerate(d["ops"])],
            plan=[_build(_STEPS, s, f"plan[{i}]") for i, s in enumerate(d.get("plan", []))],
            name=str(d.get("name", "")), note=str(d.get("note", "")),
            origins=[int(o) for o in d.get("origins", [0])],
            hosts=[list(map(int, h)) for h in d.get("hosts", [])],
            builds=[[_build({"launch": Launch}, o, f"builds[{b}][{i}]")
                     for i, o in enumerate(ops)] for b, ops in enumerate(d.get("builds", []))])
    except KeyError as exc:
        raise GraphError(f"case: missing field {exc}") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, GraphError):
            raise
        raise GraphError(f"case: {exc}") from None
    return case


def from_json(text: str) -> Case:
    """Parse and structurally build a case (use :func:`check` for the semantic rules)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphError(f"not JSON: {exc}") from None
    return from_dict(raw)


# ---------------------------------------------------------------------------------------------
# footprints and ordering


#: (reads, writes) of an op: ("buf", i) / ("word", i) / ("host", i) references
Footprint = tuple[set[tuple[str, int]], set[tuple[str, int]]]


def op_footprint(op: Op) -> Footprint:
    """(reads, writes) of an op as sets of ("buf", i) / ("word", i) / ("host", i); KeyError
    names an unknown kernel."""
    reads: set[tuple[str, int]] = set()
    writes: set[tuple[str, int]] = set()
    if isinstance(op, Launch):
        for f in catalog.get(op.kernel).fields:
            if f.kind != "ptr":
                continue
            ref = ("buf", op.args[f.name])
            if f.role in ("in", "inout"):
                reads.add(ref)
            if f.role in ("out", "inout"):
                writes.add(ref)
    elif isinstance(op, ValueWrite):
        writes.add(("word", op.word))
    elif isinstance(op, ValueWait):
        reads.add(("word", op.word))
    elif isinstance(op, Memset):
        writes.add(("buf", op.buffer))
    elif isinstance(op, Copy):
        reads.add(("host" if op.direction == "h2d" else "buf", op.src))
        writes.add(("host" if op.direction == "d2h" else "buf", op.dst))
    elif isinstance(op, Cond):
        for launch in (x for ops in op.branches for x in ops):
            r, w = op_footprint(launch)
            reads |= r
            writes |= w
    return reads, writes


def clash(a: Footprint, b: Footprint) -> set[tuple[str, int]]:
    """The buffers/words two footprints both touch with at least one of them writing (a race
    when the two ops are unordered)."""
    (ra, wa), (rb, wb) = a, b
    return (wa & (rb | wb)) | (wb & ra)


def launch_values(op: Launch, buffer_addr: Callable[[int], int]) -> dict[str, int]:
    """A launch's argument values with buffer indices replaced by ``buffer_addr(index)``;
    KeyError names an unknown kernel."""
    spec = catalog.get(op.kernel)
    return {f.name: buffer_addr(op.args[f.name]) if f.kind == "ptr" else op.args[f.name]
            for f in spec.fields}


def pack_launch(op: Launch, buffer_addr: Callable[[int], int]) -> bytes:
    """The kernel's packed argument struct (what a kernel task carries, GETP-03)."""
    return catalog.get(op.kernel).pack(**launch_values(op, buffer_addr))


def happens_before_ops(ops: list[Op | None]) -> list[set[int]]:
    """For each op index, the op indices that happen before it (transitively); ``None``
    entries (ops a plan removed) take part in nothing.

    Edges: program order on a stream, and record(e) -> every later wait(e). The host calls
    of :data:`NO_TASK_OPS` issue no task and take part in nothing either. Ops of different
    models are never ordered here: what orders them is the execution order (EXE-01).
    """
    before: list[set[int]] = []
    last_on: dict[int, int] = {}
    record_of: dict[int, int] = {}
    for i, op in enumerate(ops):
        preds: set[int] = set()
        if op is not None and not isinstance(op, NO_TASK_OPS):
            if op.stream in last_on:
                j = last_on[op.stream]
                preds |= before[j] | {j}
            if isinstance(op, Wait) and op.event in record_of:
                j = record_of[op.event]
                preds |= before[j] | {j}
            if isinstance(op, Record):
                record_of[op.event] = i
            last_on[op.stream] = i
        before.append(preds)
    return before


def happens_before(case: Case) -> list[set[int]]:
    """:func:`happens_before_ops` of a case's ops."""
    return happens_before_ops(list(case.ops))


def stream_models(case: Case) -> list[int]:
    """The model of every user stream: ``m`` for ``origins[m]``; a side stream belongs to
    the model of the event it first waits on (XS-01); -1 for a stream that never joins
    (:func:`check` rejects it). Reads the ops as given, without checking them."""
    model = [-1] * case.streams
    for m, origin in enumerate(case.origins):
        if 0 <= origin < case.streams:
            model[origin] = m
    record_model: dict[int, int] = {}
    for op in case.ops:
        if not 0 <= getattr(op, "stream", -1) < case.streams:
            continue
        if isinstance(op, Wait) and model[op.stream] < 0 and op.event in record_model:
            model[op.stream] = record_model[op.event]
        if isinstance(op, Record) and model[op.stream] >= 0:
            record_model.setdefault(op.event, model[op.stream])
    return model


def model_streams(case: Case, model: int) -> list[int]:
    """The user streams of ``model``, in index order (its origin among them); every stream
    of a one-model case."""
    if case.models == 1:
        return list(range(case.streams)) if model == 0 else []
    return [s for s, m in enumerate(stream_models(case)) if m == model]


def op_models(case: Case) -> list[int]:
    """The model of every op (the model of its stream; 0 for every op of a one-model
    case)."""
    if case.models == 1:
        return [0] * len(case.ops)
    sm = stream_models(case)
    return [sm[op.stream] if 0 <= op.stream < case.streams else -1 for op in case.ops]


def model_events(case: Case, model: int) -> set[int]:
    """The events recorded on the streams of ``model``."""
    sm = stream_models(case)
    return {op.event for op in case.ops if isinstance(op, Record) and sm[op.stream] == model}


def check(case: Case) -> None:
    """Raise GraphError unless the case stays inside defined behaviour."""
    _check_models(case)
    for i, b in enumerate(case.buffers):
        if not b:
            raise GraphError(f"buffers[{i}]: empty")
    for i, h in enumerate(case.hosts):
        if not h:
            raise GraphError(f"hosts[{i}]: empty")
    model = list(case.origins)
    joined = {o: m for m, o in enumerate(model)}
    recorded: dict[int, int] = {}
    event_model: dict[int, int] = {}
    for i, op in enumerate(case.ops):
        where = f"ops[{i}]"
        if not 0 <= op.stream < case.streams:
            raise GraphError(f"{where}: stream {op.stream} out of range")
        if isinstance(op, (Record, Wait, StrayWait)) and not 0 <= op.event < case.events:
            raise GraphError(f"{where}: event {op.event} out of range")
        if op.stream not in joined:
            if isinstance(op, NO_TASK_OPS):
                raise GraphError(f"{where}: {_TAG[type(op)]} on stream {op.stream}, which has "
                                 "not joined the capture")
            if not (isinstance(op, Wait) and op.event in recorded):
                raise GraphError(f"{where}: stream {op.stream} must join the capture by waiting "
                                 "on a recorded event first")
            joined[op.stream] = event_model[op.event]
        if isinstance(op, (Record, Wait)) and op.event in event_model \
                and event_model[op.event] != joined[op.stream]:
            raise GraphError(f"{where}: event {op.event} belongs to model "
                             f"{event_model[op.event]}, stream {op.stream} to model "
                             f"{joined[op.stream]} (a cross-model event, XS-07)")
        if isinstance(op, Record):  # a second record rebinds the event (XS-13)
            recorded[op.event] = i
            event_model[op.event] = joined[op.stream]
        if isinstance(op, Wait) and op.event not in recorded:
            raise GraphError(f"{where}: wait on event {op.event} before its record")
        if isinstance(op, StrayWait) and op.event in recorded:
            raise GraphError(f"{where}: stray wait on event {op.event}, which was recorded "
                             f"at ops[{recorded[op.event]}] (a plain wait, XS-01)")
        _check_op(case, op, where)
    _check_joins(case)
    _check_races(case)
    _check_value_waits(case)
    _check_groups(case)
    _check_builds(case)
    for i, step in enumerate(case.plan):
        _check_step(case, step, f"plan[{i}]")
        if isinstance(step, Destroy):
            _check_destroy(case, i, step)
        if isinstance(step, GroupUpdate):
            _check_group_update(case, step, f"plan[{i}]")
        if isinstance(step, ExecuteBuilt) and not 0 <= step.build < len(case.builds):
            raise GraphError(f"plan[{i}]: built model {step.build} out of range")


def groups(case: Case) -> list[list[int]]:
    """The op indices of every task group, numbered by GroupEnd in issue order (TG-01): the
    launches issued on the group's stream between its GroupBegin and GroupEnd. Reads the
    ops as given (:func:`check` validates them)."""
    out: list[list[int]] = []
    open_on: dict[int, list[int]] = {}
    for i, op in enumerate(case.ops):
        if isinstance(op, GroupBegin):
            open_on[op.stream] = []
        elif isinstance(op, GroupEnd):
            out.append(open_on.pop(op.stream, []))
        elif isinstance(op, Launch) and op.stream in open_on:
            open_on[op.stream].append(i)
    return out


def group_ends(case: Case) -> list[int]:
    """The op index of every task group's GroupEnd, numbered as :func:`groups` numbers the
    groups (an empty group has no member to name its stream or model; its end does)."""
    return [i for i, op in enumerate(case.ops) if isinstance(op, GroupEnd)]


def grouped_ops(case: Case) -> dict[int, int]:
    """op index -> the group it belongs to (TG-01)."""
    return {i: g for g, members in enumerate(groups(case)) for i in members}


def _check_groups(case: Case) -> None:
    """Task groups stay inside defined behaviour: GroupBegin on a stream with no open group
    and GroupEnd only on the stream of the open one (TG-06), nothing but kernel launches on
    that stream until GroupEnd (TG-04, TG-05: no other op of any stream), and every group
    closed before its model's CaptureEnd (TG-07). A group may be empty (no launch between
    GroupBegin and GroupEnd): it is legal, and its update has no launch (TG-14)."""
    open_at: int | None = None
    for i, op in enumerate(case.ops):
        where = f"ops[{i}]"
        if isinstance(op, GroupBegin):
            if open_at is not None:
                raise GraphError(f"{where}: group_begin while the group of ops[{open_at}] is "
                                 "open (TG-05, TG-06)")
            open_at = i
        elif isinstance(op, GroupEnd):
            if open_at is None or case.ops[open_at].stream != op.stream:
                raise GraphError(f"{where}: group_end without an open group on stream "
                                 f"{op.stream} (TG-06)")
            open_at = None
        elif open_at is not None and not (isinstance(op, Launch)
                                          and op.stream == case.ops[open_at].stream):
            raise GraphError(f"{where}: {_TAG[type(op)]} on stream {op.stream} while the group "
                             f"of ops[{open_at}] is open (only its stream's launches, TG-04, "
                             "TG-05)")
    if open_at is not None:
        raise GraphError(f"ops[{open_at}]: a task group never ended (TG-07)")
    grouped = grouped_ops(case)
    updated = {s.group for s in case.plan if isinstance(s, GroupUpdate)}
    for i, step in enumerate(case.plan):
        op = getattr(step, "op", None)
        if op not in grouped:
            continue
        if isinstance(step, Disable):
            raise GraphError(f"plan[{i}]: disable of grouped ops[{op}] (not defined by the "
                             "catalog)")
        if grouped[op] in updated:
            raise GraphError(f"plan[{i}]: SetParams on ops[{op}] of group {grouped[op]}, "
                             "which a group_update also replaces (their order is not defined)")


def _check_group_update(case: Case, step: GroupUpdate, where: str) -> None:
    """A group update names a group and gives one valid launch per task of it (TG-10,
    TG-13)."""
    all_groups = groups(case)
    if not 0 <= step.group < len(all_groups):
        raise GraphError(f"{where}: group {step.group} out of range")
    members = all_groups[step.group]
    if not len(step.kernels) == len(step.args) == len(members):
        raise GraphError(f"{where}: {len(step.kernels)} kernels and {len(step.args)} argument "
                         f"sets for a group of {len(members)} tasks (TG-13)")
    for k, (i, kernel, args) in enumerate(zip(members, step.kernels, step.args)):
        target = case.ops[i]
        _check_launch(case, Launch(target.stream, kernel, dict(args), target.num_blocks),
                      f"{where} launch {k}")


def _check_builds(case: Case) -> None:
    """Every built model holds 1..8 valid kernel launches on its one bound stream (stream
    0 of the build, BLD-03)."""
    for b, ops in enumerate(case.builds):
        if not 1 <= len(ops) <= 8:
            raise GraphError(f"builds[{b}]: {len(ops)} launches is not in 1..8")
        for i, op in enumerate(ops):
            if op.stream != 0:
                raise GraphError(f"builds[{b}][{i}]: stream {op.stream} (a build binds one "
                                 "stream, 0)")
            _check_launch(case, op, f"builds[{b}][{i}]")


def _check_models(case: Case) -> None:
    """1..MAX_MODELS models with distinct origins, at most MAX_STREAMS streams each; several
    models only with every side stream joined and no end_on_side (those negatives leave the
    capture failed or ended early, which one model shows alone)."""
    if not 1 <= case.models <= MAX_MODELS:
        raise GraphError(f"origins: {case.models} models is not in 1..{MAX_MODELS}")
    if not 1 <= case.streams <= MAX_STREAMS * case.models:
        raise GraphError(f"streams: {case.streams} is not in 1..{MAX_STREAMS * case.models}")
    if len(set(case.origins)) != case.models or \
            not all(0 <= o < case.streams for o in case.origins):
        raise GraphError(f"origins: {case.origins} are not distinct streams of the case")
    if case.models == 1 and case.origins != [0]:
        raise GraphError("origins: a one-model case captures from stream 0")
    sm = stream_models(case)
    for m in range(case.models):
        if sm.count(m) > MAX_STREAMS:
            raise GraphError(f"model {m}: {sm.count(m)} streams, more than {MAX_STREAMS}")
    if case.models > 1:
        for m, o in enumerate(case.origins):
            if not any(isinstance(op, TASK_OPS) and op.stream == o for op in case.ops):
                raise GraphError(f"model {m}: its origin stream {o} issues nothing")
        if any(isinstance(op, EndOnSide) for op in case.ops):
            raise GraphError("ops: end_on_side in a case of several models")


def _check_op(case: Case, op: Op, where: str) -> None:
    """The references of one op are in range and its copy endpoints fit."""
    if isinstance(op, Launch):
        _check_launch(case, op, where)
    if isinstance(op, (ValueWrite, ValueWait)) and not 0 <= op.word < len(case.words):
        raise GraphError(f"{where}: word {op.word} out of range")
    if isinstance(op, Memset):
        if not 0 <= op.buffer < len(case.buffers):
            raise GraphError(f"{where}: buffer {op.buffer} out of range")
        nbytes = 4 * len(case.buffers[op.buffer])
        if op.count is not None and not (op.count >= 1 and 0 <= op.offset
                                         and op.offset + op.count <= nbytes):
            raise GraphError(f"{where}: memset of {op.count} bytes at offset {op.offset} "
                             f"does not fit buffer {op.buffer} ({nbytes} bytes)")
        if op.count is None and op.offset:
            raise GraphError(f"{where}: a whole-buffer memset takes no offset")
    if isinstance(op, Copy):
        _check_copy(case, op, where)
    if isinstance(op, PageableCopy):
        if op.direction not in HOST_COPY_KINDS:
            raise GraphError(f"{where}: pageable_copy direction {op.direction!r} is not one of "
                             f"{HOST_COPY_KINDS}")
        if not 0 <= op.buffer < len(case.buffers):
            raise GraphError(f"{where}: buffer {op.buffer} out of range")
    if isinstance(op, Cond):
        _check_cond(case, op, where)
    if isinstance(op, EndOnSide) and op.stream in case.origins:
        raise GraphError(f"{where}: end_on_side on the origin stream ends the capture")


def _check_cond(case: Case, op: Cond, where: str) -> None:
    """A conditional task of a known type with a branch count it takes (COND-05), each
    branch 1..4 valid launches."""
    if op.type not in COND_SIZES:
        raise GraphError(f"{where}: cond type {op.type!r} is not one of {sorted(COND_SIZES)}")
    lo, hi = COND_SIZES[op.type]
    if not lo <= len(op.branches) <= hi:
        raise GraphError(f"{where}: {op.type} with {len(op.branches)} branches (COND-05: "
                         f"{lo}..{hi})")
    for b, ops in enumerate(op.branches):
        if not 1 <= len(ops) <= 4:
            raise GraphError(f"{where}: branch {b} holds {len(ops)} launches, not 1..4")
        for k, launch in enumerate(ops):
            if not isinstance(launch, Launch):
                raise GraphError(f"{where}: branch {b}[{k}] is not a launch")
            _check_launch(case, launch, f"{where} branch {b}[{k}]")


def _check_copy(case: Case, op: Copy, where: str) -> None:
    """A copy names a capturable kind (MODE-01) and two distinct regions of one size."""
    if op.direction not in COPY_KINDS:
        raise GraphError(f"{where}: copy direction {op.direction!r} is not one of {COPY_KINDS}")
    src_pool = case.hosts if op.direction == "h2d" else case.buffers
    dst_pool = case.hosts if op.direction == "d2h" else case.buffers
    if not (0 <= op.src < len(src_pool) and 0 <= op.dst < len(dst_pool)):
        raise GraphError(f"{where}: {op.direction} copy from {op.src} to {op.dst}, "
                         "one out of range")
    same = op.direction == "d2d" and op.src == op.dst
    if same or len(src_pool[op.src]) != len(dst_pool[op.dst]):
        raise GraphError(f"{where}: copy needs two distinct buffers of one size")


def _check_step(case: Case, step: Step, where: str) -> None:
    """A plan step's references are in range (HostWrite only to a host word)."""
    if isinstance(step, HostWrite):
        if not 0 <= step.word < len(case.words):
            raise GraphError(f"{where}: word {step.word} out of range")
        if not 0 <= step.value <= WORD_MASK:
            raise GraphError(f"{where}: value {step.value} is not a 64-bit unsigned word")
        if step.word not in host_words(case):
            raise GraphError(f"{where}: word {step.word} is written by a captured op")
    if isinstance(step, HostFill) and not 0 <= step.host < len(case.hosts):
        raise GraphError(f"{where}: host buffer {step.host} out of range")
    if isinstance(step, (Update, Execute)) and not 0 <= step.model < case.models:
        raise GraphError(f"{where}: model {step.model} out of range")
    op_index = getattr(step, "op", None)
    if op_index is not None and not 0 <= op_index < len(case.ops):
        raise GraphError(f"{where}: op {op_index} out of range")
    if op_index is not None and isinstance(case.ops[op_index], NO_TASK_OPS):
        raise GraphError(f"{where}: op {op_index} issues no task")
    if op_index is not None and isinstance(case.ops[op_index], Cond) != isinstance(step, SetCond):
        raise GraphError(f"{where}: {_TAG[type(step)]} on a {_TAG[type(case.ops[op_index])]} op "
                         "(a cond task takes only set_cond)")
    if isinstance(step, SetCond):
        if not 0 <= step.value <= WORD_MASK:
            raise GraphError(f"{where}: value {step.value} is not a 64-bit unsigned word")
    if isinstance(step, SetValue):
        target = case.ops[step.op]
        if step.word is None and not isinstance(target, ValueWrite):
            raise GraphError(f"{where}: set_value without a word on a {_TAG[type(target)]} op")
        if step.word is not None and not isinstance(target, Launch):
            raise GraphError(f"{where}: set_value converting a {_TAG[type(target)]} op "
                             "(only a launch is converted)")
        if step.word is not None and not 0 <= step.word < len(case.words):
            raise GraphError(f"{where}: word {step.word} out of range")
    if isinstance(step, SetKernel):
        target = case.ops[step.op]
        if not isinstance(target, Launch):
            raise GraphError(f"{where}: set_kernel on a {_TAG[type(target)]} op")
        new = Launch(target.stream, step.kernel or target.kernel, step.args, target.num_blocks)
        if catalog.get(new.kernel).fields != catalog.get(target.kernel).fields:
            raise GraphError(f"{where}: kernel {new.kernel} changes the argument layout")
        _check_launch(case, new, where)


def _check_destroy(case: Case, i: int, step: Destroy) -> None:
    """A Destroy ends the model's part of the plan (only Syncs follow: the model is gone,
    LIFE-01) of a one-model case; its release store targets a host word with a 64-bit
    value, after 1..5000 ms."""
    if case.models != 1:
        raise GraphError(f"plan[{i}]: destroy in a case of several models")
    later = [s for s in case.plan[i + 1:] if not isinstance(s, Sync)]
    if later:
        raise GraphError(f"plan[{i}]: destroy must be the model's last step "
                         f"({_TAG[type(later[0])]} follows)")
    if step.release_word is None:
        return
    if step.release_word not in host_words(case):
        raise GraphError(f"plan[{i}]: destroy releases word {step.release_word}, which is not "
                         "a host word")
    if not 0 <= step.release_value <= WORD_MASK:
        raise GraphError(f"plan[{i}]: value {step.release_value} is not a 64-bit unsigned word")
    if not 1 <= step.after_ms <= 5000:
        raise GraphError(f"plan[{i}]: after_ms {step.after_ms} is not in 1..5000")


def _check_launch(case: Case, op: Launch, where: str) -> None:
    try:
        spec = catalog.get(op.kernel)
    except KeyError as exc:
        raise GraphError(f"{where}: {exc.args[0]}") from None
    names = {f.name for f in spec.fields}
    if set(op.args) != names:
        raise GraphError(f"{where}: {op.kernel} takes {sorted(names)}, got {sorted(op.args)}")
    n = op.args.get("n", catalog.SEED_ELEMENTS)
    for f in spec.fields:
        if f.kind == "ptr":
            b = op.args[f.name]
            if not 0 <= b < len(case.buffers):
                raise GraphError(f"{where}: buffer {b} out of range")
            if len(case.buffers[b]) < n:
                raise GraphError(f"{where}: buffer {b} holds {len(case.buffers[b])} < {n} elements")


def last_task_ops(case: Case) -> dict[int, int]:
    """Per stream, the index of its last task-issuing op."""
    last: dict[int, int] = {}
    for i, op in enumerate(case.ops):
        if isinstance(op, TASK_OPS):
            last[op.stream] = i
    return last


def unjoined_streams(case: Case) -> list[int]:
    """The side streams whose last task is not an event record, or is a record that no
    wait issued after it takes: CaptureEnd fails with 107025 and destroys the model (XS-02,
    XS-03, CAP-13). A wait issued before that record, on the same event, took an earlier
    record's internal event (XS-13), so a side stream that records its fork or join event
    again after the origin's wait is unjoined (XS-15)."""
    last = last_task_ops(case)
    return [s for s in range(case.streams)
            if s not in case.origins and s in last and not _waited_after(case, last[s])]


def _waited_after(case: Case, i: int) -> bool:
    """Whether op ``i`` is a record that a wait on another stream, issued after it, takes."""
    op = case.ops[i]
    return isinstance(op, Record) and any(
        isinstance(w, Wait) and w.event == op.event and w.stream != op.stream
        for w in case.ops[i + 1:])


def _check_joins(case: Case) -> None:
    """Every side stream issues something; one whose last task is a record must be joined
    back to its model's origin through it (a record nobody orders is left undefined here);
    one whose last task is not a record is unjoined (:func:`unjoined_streams`)."""
    before = happens_before(case)
    last = last_task_ops(case)
    sm = stream_models(case)
    for s in range(case.streams):
        if s in case.origins:
            continue
        if s not in last:
            raise GraphError(f"stream {s}: issues nothing (remove it or use it)")
        origin = case.origins[sm[s]]
        if origin not in last:
            raise GraphError("ops: the origin stream issues nothing, so nothing can join back")
        if _waited_after(case, last[s]) and last[s] not in before[last[origin]]:
            raise GraphError(f"stream {s}: not joined back to the origin stream (XS-02)")
    if unjoined_streams(case) and (case.plan or case.models > 1):
        raise GraphError("plan: a case whose capture fails (an unjoined side stream, XS-02) "
                         "has no model to run a plan on")


def _check_races(case: Case) -> None:
    """No two unordered ops of one model touch a buffer, word or host buffer with a write
    (ops of different models never run together: executions queue on one stream)."""
    before = happens_before(case)
    models = op_models(case)
    foot = [op_footprint(op) for op in case.ops]
    for i in range(len(case.ops)):
        for j in range(i):
            if j in before[i] or models[i] != models[j]:
                continue
            touched = clash(foot[i], foot[j])
            if touched:
                kind, idx = sorted(touched)[0]
                raise GraphError(f"ops[{j}] and ops[{i}] touch {kind} {idx} unordered")


def wait_holds(have: int, want: int, flag: int) -> bool:
    """Whether ``aclrtValueWait(addr, want, flag)`` is satisfied by ``*addr == have``
    (abi.md §3.5): GEQ ``(int64)(have - want) >= 0`` (wrap-around counts), EQ equality,
    AND ``(have & want) != 0``, NOR ``~(have | want) != 0``, all on 64 bits. Raises
    GraphError for another flag."""
    have, want = have & WORD_MASK, want & WORD_MASK
    if flag == 0:
        return ((have - want) & WORD_MASK) < (1 << 63)
    if flag == 1:
        return have == want
    if flag == 2:
        return (have & want) != 0
    if flag == 3:
        return (~(have | want) & WORD_MASK) != 0
    raise GraphError(f"value wait flag {flag} is not GEQ 0, EQ 1, AND 2 or NOR 3")


def host_words(case: Case) -> set[int]:
    """The words no captured op writes: only the host (HostWrite steps) changes them."""
    written = {op.word for op in case.ops if isinstance(op, ValueWrite)}
    return set(range(len(case.words))) - written


def _check_value_waits(case: Case) -> None:
    """A value wait on a word the program writes must be satisfied by the last ordered write
    (or the initial value, when no other model writes the word: another model's execution
    would change it), so the program itself never blocks. A wait on a host word may
    block; then a HostWrite step or a Destroy's release store of that word must exist to
    release it (a model left blocked cannot be destroyed quickly, LIFE-03)."""
    before = happens_before(case)
    models = op_models(case)
    hosts = host_words(case)
    released = {s.word for s in case.plan if isinstance(s, HostWrite)}
    released |= {s.release_word for s in case.plan if isinstance(s, Destroy)}
    for i, op in enumerate(case.ops):
        if not isinstance(op, ValueWait):
            continue
        if not 0 <= op.value <= WORD_MASK:
            raise GraphError(f"ops[{i}]: value {op.value} is not a 64-bit unsigned word")
        value: int | None = case.words[op.word]
        if any(isinstance(o, ValueWrite) and o.word == op.word and models[k] != models[i]
               for k, o in enumerate(case.ops)):
            value = None  # another model's last write, whichever ran last
        for j in sorted(before[i]):
            prev = case.ops[j]
            if isinstance(prev, ValueWrite) and prev.word == op.word:
                value = prev.value
        if value is None:
            raise GraphError(f"ops[{i}]: waits on word {op.word}, which another model writes, "
                             "with no ordered write of its own before it")
        try:
            holds = wait_holds(value, op.value, op.flag)
        except GraphError as exc:
            raise GraphError(f"ops[{i}]: {exc}") from None
        if holds:
            continue
        if op.word not in hosts:
            raise GraphError(f"ops[{i}]: waits for {op.value} (flag {op.flag}) but word "
                             f"{op.word} holds {value}")
        if op.word not in released:
            raise GraphError(f"ops[{i}]: blocks on host word {op.word} and no host_write step "
                             "or destroy releases it")


def ops_on(case: Case, stream: int) -> list[int]:
    """Indices of the ops issued on ``stream``, in order."""
    return [i for i, op in enumerate(case.ops) if op.stream == stream]


def kinds(items: Iterable[Any]) -> list[str]:
    """The JSON kind tags of ops or steps."""
    return [_TAG[type(x)] for x in items]

