"""Task-graph descriptions: a captured program and the host plan that follows it.

A :class:`Case` is plain data, JSON round-trippable, and independent of any backend:

* ``streams`` user streams (1-4); stream 0 is the origin that begins and ends the capture.
  Every other stream joins the capture by waiting on an event recorded on a capturing
  stream (XS-01) and must end with a record that another stream waits on (XS-02).
* ``buffers``: device int32 buffers with their initial contents (outputs start at the
  sentinel -1); ``words``: 64-bit device words for value write/wait, with initial values.
* ``ops``: what is issued during the capture, in host issue order (kernel launches from
  the catalog, event record/wait, value write/wait, memset, device-to-device copy, and
  ``end_on_side``: a
  CaptureEnd on a joined side stream, which must fail, CAP-11).
* ``plan``: the host steps after CaptureEnd (SetParams, Disable, Update, Execute, Sync,
  Query, and HostWrite: a host store into a word, which releases a blocked value wait).

A value wait on a *host word* (a word no captured op writes) may block an execution until a
plan step stores a satisfying value (TMO-01, TMO-03, TMO-06); a side stream whose last op is
not a record is *unjoined*, and CaptureEnd fails with 107025 (XS-02, XS-03, CAP-13).

Op references in plan steps are indices into ``ops``. :func:`check` validates a case that
came from outside (a JSON file): it must stay inside defined behaviour (every event
recorded once and before its waits, every side stream forked and joined, no two unordered
ops touching the same buffer or word with a write). Violations raise :class:`GraphError`
with a one-line message.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Union

from mdlri_conformance.kernel import catalog

SCHEMA = 1
SENTINEL = -1
MAX_STREAMS = 4
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
    """aclrtMemsetAsync of a whole buffer with a byte value (a DEFAULT-type task)."""

    stream: int
    buffer: int
    value: int


@dataclass(frozen=True)
class EndOnSide:
    """aclmdlRICaptureEnd on a joined side stream while the capture is open: 107036, and the
    capture stays ACTIVE (CAP-11). Issues no task."""

    stream: int


@dataclass(frozen=True)
class Copy:
    """aclrtMemcpyAsync(DEVICE_TO_DEVICE) of a whole buffer into another of the same size:
    captured as a DEFAULT-type task (CAP-01, TYPE-02; the other kinds involve host memory,
    which a capture only takes pinned, MODE-01)."""

    stream: int
    src: int
    dst: int


@dataclass(frozen=True)
class OutsideWait:
    """aclrtStreamWaitEvent on a capturing stream for an event recorded before the capture
    began (the replay records one such event on the origin before CaptureBegin): 107024,
    and the capture goes on (XS-05). Issues no task."""

    stream: int


Op = Union[Launch, Record, Wait, ValueWrite, ValueWait, Memset, Copy, EndOnSide, OutsideWait]
#: the ops that issue a task (the others are host calls made during the capture)
TASK_OPS = (Launch, Record, Wait, ValueWrite, ValueWait, Memset, Copy)
#: host calls made during the capture that issue no task and order nothing
HOST_CALL_OPS = (EndOnSide, OutsideWait)
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
    """TaskSetParams(VALUE_WRITE) on a ValueWrite op: same word, new value."""

    op: int
    value: int


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
    """aclmdlRIUpdate."""


@dataclass(frozen=True)
class Execute:
    """aclmdlRIExecuteAsync on the origin stream, ``times`` times in a row."""

    times: int = 1


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
class Destroy:
    """aclmdlRIDestroy of the model. With ``release_word`` set, a host thread stores
    ``release_value`` into that host word ``after_ms`` after the call began: Destroy of a
    model whose execution is blocked waits for it (it polls for about 10 s, LIFE-03), so the
    store releases the execution and Destroy returns 0 only after it. Only Sync may follow."""

    release_word: int | None = None
    release_value: int = 0
    after_ms: int = 100


Step = Union[SetKernel, SetValue, SetBadType, Disable, Update, Execute, Sync, HostWrite, Query,
             Destroy]

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

    def task_count(self) -> int:
        """Captured user tasks (the size measure of a counterexample)."""
        return len(self.ops)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": self.schema, "name": self.name, "note": self.note,
            "streams": self.streams, "buffers": self.buffers, "words": self.words,
            "events": self.events,
            "ops": [_tagged(o) for o in self.ops],
            "plan": [_tagged(s) for s in self.plan],
        }

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)


_OPS: dict[str, type] = {"launch": Launch, "record": Record, "wait": Wait,
                         "value_write": ValueWrite, "value_wait": ValueWait, "memset": Memset,
                         "copy": Copy,
                         "end_on_side": EndOnSide, "outside_wait": OutsideWait}
_STEPS: dict[str, type] = {"set_kernel": SetKernel, "set_value": SetValue,
                           "set_bad_type": SetBadType, "disable": Disable, "update": Update,
                           "execute": Execute, "sync": Sync, "host_write": HostWrite,
                           "query": Query, "destroy": Destroy}
_TAG = {cls: tag for tag, cls in {**_OPS, **_STEPS}.items()}


def _tagged(obj: Any) -> dict[str, Any]:
    return {"kind": _TAG[type(obj)], **asdict(obj)}


def _build(table: dict[str, type], raw: Any, where: str) -> Any:
    if not isinstance(raw, dict) or raw.get("kind") not in table:
        raise GraphError(f"{where}: expected an object with kind in {sorted(table)}")
    cls = table[raw["kind"]]
    fields = {k: v for k, v in raw.items() if k != "kind"}
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
            name=str(d.get("name", "")), note=str(d.get("note", "")))
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


#: (reads, writes) of an op: ("buf", i) / ("word", i) references
Footprint = tuple[set[tuple[str, int]], set[tuple[str, int]]]


def op_footprint(op: Op) -> Footprint:
    """(reads, writes) of an op as sets of ("buf", i) / ("word", i); KeyError names an
    unknown kernel."""
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
        reads.add(("buf", op.src))
        writes.add(("buf", op.dst))
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
    of :data:`HOST_CALL_OPS` issue no task and take part in nothing either.
    """
    before: list[set[int]] = []
    last_on: dict[int, int] = {}
    record_of: dict[int, int] = {}
    for i, op in enumerate(ops):
        preds: set[int] = set()
        if op is not None and not isinstance(op, HOST_CALL_OPS):
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


def check(case: Case) -> None:
    """Raise GraphError unless the case stays inside defined behaviour."""
    if not 1 <= case.streams <= MAX_STREAMS:
        raise GraphError(f"streams: {case.streams} is not in 1..{MAX_STREAMS}")
    for i, b in enumerate(case.buffers):
        if not b:
            raise GraphError(f"buffers[{i}]: empty")
    joined = {0}
    recorded: dict[int, int] = {}
    waited: set[int] = set()
    for i, op in enumerate(case.ops):
        where = f"ops[{i}]"
        if not 0 <= op.stream < case.streams:
            raise GraphError(f"{where}: stream {op.stream} out of range")
        if op.stream not in joined:
            if isinstance(op, HOST_CALL_OPS):
                raise GraphError(f"{where}: {_TAG[type(op)]} on stream {op.stream}, which has "
                                 "not joined the capture")
            if not (isinstance(op, Wait) and op.event in recorded):
                raise GraphError(f"{where}: stream {op.stream} must join the capture by waiting "
                                 "on a recorded event first")
            joined.add(op.stream)
        if isinstance(op, (Record, Wait)) and not 0 <= op.event < case.events:
            raise GraphError(f"{where}: event {op.event} out of range")
        if isinstance(op, Record):
            if op.event in recorded:
                raise GraphError(f"{where}: event {op.event} recorded twice")
            recorded[op.event] = i
        if isinstance(op, Wait):
            if op.event not in recorded:
                raise GraphError(f"{where}: wait on event {op.event} before its record")
            waited.add(op.event)
        if isinstance(op, Launch):
            _check_launch(case, op, where)
        if isinstance(op, (ValueWrite, ValueWait)) and not 0 <= op.word < len(case.words):
            raise GraphError(f"{where}: word {op.word} out of range")
        if isinstance(op, Memset) and not 0 <= op.buffer < len(case.buffers):
            raise GraphError(f"{where}: buffer {op.buffer} out of range")
        if isinstance(op, Copy):
            if not (0 <= op.src < len(case.buffers) and 0 <= op.dst < len(case.buffers)):
                raise GraphError(f"{where}: copy between buffers {op.src} and {op.dst}, "
                                 "one out of range")
            if op.src == op.dst or len(case.buffers[op.src]) != len(case.buffers[op.dst]):
                raise GraphError(f"{where}: copy needs two distinct buffers of one size")
        if isinstance(op, EndOnSide) and op.stream == 0:
            raise GraphError(f"{where}: end_on_side on the origin stream ends the capture")
    _check_joins(case)
    _check_races(case)
    _check_value_waits(case)
    for i, step in enumerate(case.plan):
        if isinstance(step, HostWrite):
            if not 0 <= step.word < len(case.words):
                raise GraphError(f"plan[{i}]: word {step.word} out of range")
            if not 0 <= step.value <= WORD_MASK:
                raise GraphError(f"plan[{i}]: value {step.value} is not a 64-bit unsigned word")
            if step.word not in host_words(case):
                raise GraphError(f"plan[{i}]: word {step.word} is written by a captured op")
        if isinstance(step, Destroy):
            _check_destroy(case, i, step)
        op_index = getattr(step, "op", None)
        if op_index is not None and not 0 <= op_index < len(case.ops):
            raise GraphError(f"plan[{i}]: op {op_index} out of range")
        if isinstance(step, SetKernel):
            target = case.ops[step.op]
            if not isinstance(target, Launch):
                raise GraphError(f"plan[{i}]: set_kernel on a {_TAG[type(target)]} op")
            new = Launch(target.stream, step.kernel or target.kernel, step.args, target.num_blocks)
            if catalog.get(new.kernel).fields != catalog.get(target.kernel).fields:
                raise GraphError(f"plan[{i}]: kernel {new.kernel} changes the argument layout")
            _check_launch(case, new, f"plan[{i}]")


def _check_destroy(case: Case, i: int, step: Destroy) -> None:
    """A Destroy ends the model's part of the plan (only Syncs follow: the model is gone,
    LIFE-01); its release store targets a host word with a 64-bit value, after 1..5000 ms."""
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
    """The side streams whose last task is not an event record: CaptureEnd fails with
    107025 and destroys the model (XS-02, XS-03, CAP-13)."""
    last = last_task_ops(case)
    return [s for s in range(1, case.streams)
            if s in last and not isinstance(case.ops[last[s]], Record)]


def _check_joins(case: Case) -> None:
    """Every side stream issues something; one whose last task is a record must be joined
    back to the origin through it (a record nobody orders is left undefined here); one whose
    last task is not a record is unjoined (:func:`unjoined_streams`)."""
    before = happens_before(case)
    last = last_task_ops(case)
    if case.streams > 1 and 0 not in last:
        raise GraphError("ops: the origin stream issues nothing, so nothing can join back")
    for s in range(1, case.streams):
        if s not in last:
            raise GraphError(f"stream {s}: issues nothing (remove it or use it)")
        if isinstance(case.ops[last[s]], Record) and last[s] not in before[last[0]]:
            raise GraphError(f"stream {s}: not joined back to the origin stream (XS-02)")
    if unjoined_streams(case) and case.plan:
        raise GraphError("plan: a case whose capture fails (an unjoined side stream, XS-02) "
                         "has no model to run a plan on")


def _check_races(case: Case) -> None:
    before = happens_before(case)
    foot = [op_footprint(op) for op in case.ops]
    for i in range(len(case.ops)):
        for j in range(i):
            if j in before[i]:
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
    (or the initial value), so the program itself never blocks. A wait on a host word may
    block; then a HostWrite step or a Destroy's release store of that word must exist to
    release it (a model left blocked cannot be destroyed quickly, LIFE-03)."""
    before = happens_before(case)
    hosts = host_words(case)
    released = {s.word for s in case.plan if isinstance(s, HostWrite)}
    released |= {s.release_word for s in case.plan if isinstance(s, Destroy)}
    for i, op in enumerate(case.ops):
        if not isinstance(op, ValueWait):
            continue
        if not 0 <= op.value <= WORD_MASK:
            raise GraphError(f"ops[{i}]: value {op.value} is not a 64-bit unsigned word")
        value = case.words[op.word]
        for j in sorted(before[i]):
            prev = case.ops[j]
            if isinstance(prev, ValueWrite) and prev.word == op.word:
                value = prev.value
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

