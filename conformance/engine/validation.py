"""The validation of a task-graph case that came from outside (a JSON case file).

:func:`check` raises :class:`~conformance.engine.graphs.GraphError` (one line, naming the
offending part) unless the case stays inside defined behaviour: references in range, every
event recorded before its waits and a wait taking the event's latest record (XS-13), every
side stream forked and joined (XS-01, XS-02), no event crossing models (XS-07), no two
unordered ops touching the same buffer or word with a write (:mod:`conformance.engine.ordering`),
value waits that either hold or are released by the plan (TMO-01, LIFE-03), task groups
(TG-04..TG-07, TG-13), built models (BLD-03), cond tasks (COND-05) and plan steps in range.
"""

from __future__ import annotations

from mdlri_conformance.kernel import catalog

from .graphs import (COND_SIZES, COPY_KINDS, HOST_COPY_KINDS, MAX_MODELS, MAX_STREAMS,
                     NO_TASK_OPS, TASK_OPS, WORD_MASK, Case, Cond, Copy, EndOnSide,
                     GraphError, GroupBegin, GroupEnd, Launch, Memset, Op, PageableCopy, Record,
                     StrayWait, ValueWait, ValueWrite, Wait, grouped_ops, groups, host_words,
                     kind_of, op_models, stream_models, wait_holds)
from .ordering import check_races, happens_before, last_task_ops, unjoined_streams, waited_after
from .steps import (Destroy, Disable, Execute, ExecuteBuilt, GroupUpdate, HostFill, HostWrite,
                    SetCond, SetKernel, SetValue, Step, Sync, Update)


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
                raise GraphError(f"{where}: {kind_of(op)} on stream {op.stream}, which has "
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
    before = happens_before(case)
    _check_joins(case, before)
    check_races(case, before)
    _check_value_waits(case, before)
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
            raise GraphError(f"{where}: {kind_of(op)} on stream {op.stream} while the group "
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
        raise GraphError(f"{where}: {kind_of(step)} on a {kind_of(case.ops[op_index])} op "
                         "(a cond task takes only set_cond)")
    if isinstance(step, SetCond):
        if not 0 <= step.value <= WORD_MASK:
            raise GraphError(f"{where}: value {step.value} is not a 64-bit unsigned word")
    if isinstance(step, SetValue):
        target = case.ops[step.op]
        if step.word is None and not isinstance(target, ValueWrite):
            raise GraphError(f"{where}: set_value without a word on a {kind_of(target)} op")
        if step.word is not None and not isinstance(target, Launch):
            raise GraphError(f"{where}: set_value converting a {kind_of(target)} op "
                             "(only a launch is converted)")
        if step.word is not None and not 0 <= step.word < len(case.words):
            raise GraphError(f"{where}: word {step.word} out of range")
    if isinstance(step, SetKernel):
        target = case.ops[step.op]
        if not isinstance(target, Launch):
            raise GraphError(f"{where}: set_kernel on a {kind_of(target)} op")
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
                         f"({kind_of(later[0])} follows)")
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


def _check_joins(case: Case, before: list[set[int]]) -> None:
    """Every side stream issues something; one whose last task is a record must be joined
    back to its model's origin through it (a record nobody orders is left undefined here);
    one whose last task is not a record is unjoined (:func:`.ordering.unjoined_streams`).
    ``before``: :func:`.ordering.happens_before` of the case."""
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
        if waited_after(case, last[s]) and last[s] not in before[last[origin]]:
            raise GraphError(f"stream {s}: not joined back to the origin stream (XS-02)")
    if unjoined_streams(case) and (case.plan or case.models > 1):
        raise GraphError("plan: a case whose capture fails (an unjoined side stream, XS-02) "
                         "has no model to run a plan on")


def _check_value_waits(case: Case, before: list[set[int]]) -> None:
    """A value wait on a word the program writes must be satisfied by the last ordered write
    (or the initial value, when no other model writes the word: another model's execution
    would change it), so the program itself never blocks. A wait on a host word may
    block; then a HostWrite step or a Destroy's release store of that word must exist to
    release it (a model left blocked cannot be destroyed quickly, LIFE-03). ``before``:
    :func:`.ordering.happens_before` of the case."""
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
