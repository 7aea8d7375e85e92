"""The independent oracle: what a conforming runtime must show for a task-graph case.

From a :class:`~conformance.engine.graphs.Case` alone, :func:`expected` computes the list of
:class:`~conformance.engine.observe.Observation` that replaying the case on a conforming
backend produces, in the order of :mod:`conformance.engine.observe`. It shares no code with
the simulator (``backends/sim``) nor with the runner: it imports only the case description
(:mod:`conformance.engine.graphs` and its steps, ordering and validation), the observation
shape, the backend contract's constants and the kernels' specification
(:mod:`kernel.catalog`), which is what makes a difference from a backend mean something.

Three parts, each usable on its own:

* :class:`.oracle_state.ModelState`: the model state machine of the catalog (§0.3): NONE,
  CAPTURE_ACTIVE, READY, UPDATING, FAULT, with the return code of every host call
  (SETP-01/02/03/10/13, DIS-02/06/09, UPD-01..04, EXE-04/07, TMO-02, LIFE-02).
* :class:`.oracle_program.Program`: the captured program with its committed and pending
  changes (SETP-01: SetParams and Disable take effect at Update; DIS-04: the last of
  SetParams/Disable on a task wins; DIS-01/DIS-05: disabled tasks leave the listing and stop
  running; UPD-05: set tasks run their new parameters), and an interpreter that runs it once
  per execution (EXE-02) on an :class:`.oracle_memory.OracleMemory`. An execution that
  reaches a value wait on a host word that does not hold stays *in flight* until a HostWrite
  satisfies it: meanwhile a timed sync expires with 507046 (TMO-03), StreamQuery says
  NOT_READY, SetParams/Disable answer 107040 (SETP-12, TMO-06) and Update, which has no
  running check, is the no-op of a READY model (UPD-09, UPD-01). Destroy waits for it
  (LIFE-03): the plan's release store, made from another host thread while Destroy polls,
  lets it finish first.
* :func:`expected`: the two above driven by a case's plan, one of each per captured model
  (``Case.origins``) over one shared memory: the models' executions queue on one stream
  in plan order (EXE-01), so what one model's execution leaves in a buffer, word or
  pinned host buffer is what the next one reads (CAP-19: host memory is read at execution).
  A task-group update replaces a group's ops at once (TG-10), a built model's launches run
  at its ExecuteBuilt (BLD-03), and a cond task runs the branch its condition value selects
  (COND-11); a task-group update and a condition write are defined only after a Sync.

Execution order: a case that passes :func:`conformance.engine.validation.check` has no two
unordered ops touching the same buffer or word with a write, so every schedule that respects
stream order and record->wait edges gives the same memory. Host issue order is such a schedule
(records come before their waits), so the interpreter runs surviving ops in issue order.
A blocked execution resumes in issue order from the blocked wait: memory is read only
after a sync that returned 0, when every schedule has given the same result. A program
that a plan made undefined (a wait whose record was disabled, a race created by Disable or
SetParams, a side stream no longer joined) raises :class:`.oracle_state.UndefinedCase` when it
would be executed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mdlri_conformance.backends.contract import Err, StreamStatus, TaskType

from . import case_facts, graphs
from .graphs import DEFAULT_OPS, Case, Launch, Op, ValueWrite
from .observe import Observation
from .oracle_listing import (capture_listing_extras, capture_observations, emptied_observations,
                             listing_observations)
from .oracle_memory import OracleMemory
from .oracle_program import ExecQueue, Program, run_launch
from .oracle_state import SETTABLE_TYPES, ModelState, State, UndefinedCase, task_type
from .steps import (Destroy, Disable, Execute, ExecuteBuilt, GroupUpdate, HostFill, HostWrite,
                    Query, SetBadType, SetCond, SetKernel, SetValue, Step, Sync, Update)
from .validation import check

__all__ = ["expected", "sync_observations"]


# ---------------------------------------------------------------------------------------------
# expected observations of a case


def sync_observations(index: int, memory: OracleMemory) -> list[Observation]:
    """Every buffer (int32 list), then every word (int), then every pinned host buffer
    (int32 list), after the Sync of step ``index``."""
    obs = [Observation("sync", index, f"buffer {b}", vals)
           for b, vals in enumerate(memory.buffers())]
    obs += [Observation("sync", index, f"word {w}", v) for w, v in enumerate(memory.words())]
    obs += [Observation("sync", index, f"host {h}", vals)
            for h, vals in enumerate(memory.hosts())]
    return obs


@dataclass
class _Models:
    """The state machine and program of every model of a case, over one memory and one
    execution queue."""

    states: list[ModelState]
    programs: list[Program]
    queue: ExecQueue
    op_model: list[int]
    #: an execution was queued since the last successful Sync (it may still be running)
    unsynced: bool = False

    @property
    def memory(self) -> OracleMemory:
        return self.programs[0].memory

    def of_op(self, i: int) -> tuple[ModelState, Program]:
        """The state and program of the model op ``i`` belongs to."""
        if not 0 <= i < len(self.op_model):
            raise UndefinedCase(f"op {i} does not exist")
        m = self.op_model[i]
        return self.states[m], self.programs[m]

    def host_store(self, word: int, value: int) -> None:
        """A host store into a word: the executions in flight go on as far as it lets them
        (TMO-03)."""
        self.memory.set_word(word, value)
        self.queue.advance()


def expected(case: Case) -> list[Observation]:
    """The observations a conforming runtime shows when ``case`` is replayed.

    Raises :class:`conformance.engine.graphs.GraphError` for a case outside defined behaviour at
    capture, and :class:`UndefinedCase` when its plan leads outside defined behaviour.
    """
    check(case)
    states = [ModelState() for _ in case.origins]
    for state in states:
        state.begin_capture()
    obs, made = capture_observations(case)
    if not made:
        return obs
    memory = OracleMemory(case.buffers, case.words, case.hosts)
    queue = ExecQueue()
    models = _Models(states, [Program(case, memory, m, queue) for m in range(case.models)],
                     queue, graphs.op_models(case))
    for m, state in enumerate(states):
        state.end_capture()
        obs += listing_observations(-1, models.programs[m].listing(), m)
        obs += capture_listing_extras(case, m)
    for i, step in enumerate(case.plan):
        obs += _step(i, step, models)
    return obs


def _step(i: int, step: Step, models: _Models) -> list[Observation]:
    """Apply one plan step; its observations."""
    if isinstance(step, Execute):
        model, program = models.states[step.model], models.programs[step.model]
        rcs = []
        for _ in range(step.times):
            rc = model.execute()
            if rc == Err.SUCCESS:
                program.start()
            rcs.append(int(rc))
        models.unsynced = models.unsynced or Err.SUCCESS in rcs
        return [Observation("step", i, "rc", rcs)]
    if isinstance(step, Sync):
        rc = ModelState.sync(step.timeout_ms, models.queue.busy())
        if rc == Err.SUCCESS:
            models.unsynced = False
        if rc == Err.RT_STREAM_SYNC_TIMEOUT:
            return [Observation("step", i, "rc", int(rc)),
                    Observation("step", i, "waited the timeout", True)]
        return [Observation("step", i, "rc", int(rc))] + sync_observations(i, models.memory)
    if isinstance(step, HostWrite):
        models.host_store(step.word, step.value)
        return [Observation("step", i, "rc", int(Err.SUCCESS))]
    if isinstance(step, HostFill):
        if models.queue.busy():
            raise UndefinedCase(f"plan[{i}]: a host store into host buffer {step.host} races "
                                "with an execution in flight")
        models.memory.fill_host(step.host, step.value)
        return []
    if isinstance(step, Query):
        status = StreamStatus.NOT_READY if models.queue.busy() else StreamStatus.COMPLETE
        return [Observation("step", i, "rc", [int(Err.SUCCESS), int(status)])]
    if isinstance(step, Update):
        return _update(i, step, models)
    if isinstance(step, Destroy):
        return _destroy(i, step, models)
    if isinstance(step, GroupUpdate):
        return _group_update(i, step, models)
    if isinstance(step, ExecuteBuilt):
        return _execute_built(i, step, models)
    if isinstance(step, SetCond):
        if models.unsynced or models.queue.busy():
            raise UndefinedCase(f"plan[{i}]: a condition value written while an execution may "
                                "still run")
        models.of_op(step.op)[1].cond_values[step.op] = step.value
        return [Observation("step", i, "rc", int(Err.SUCCESS))]
    model, program = models.of_op(getattr(step, "op", -1))
    rc = _change(i, step, model, program)
    return [Observation("step", i, "rc", int(rc))]


def _destroy(i: int, step: Destroy, models: _Models) -> list[Observation]:
    """Destroy of model 0 (a one-model case): with an execution in flight it waits for it
    (LIFE-03), which the release store lets finish, and returns 0 only after that store
    began; an idle model is destroyed at once (LIFE-01). A model still blocked after the
    store would make Destroy poll its 10 s and answer 107037: not drawn."""
    model, program = models.states[0], models.programs[0]
    if step.release_word is None:
        if program.busy:
            raise UndefinedCase(f"plan[{i}]: destroy of a blocked model with no release")
        return [Observation("step", i, "rc", int(model.destroy()))]
    if not program.busy:
        raise UndefinedCase(f"plan[{i}]: destroy with a release store but nothing blocked")
    models.host_store(step.release_word, step.release_value)
    if program.busy:
        raise UndefinedCase(f"plan[{i}]: the release store leaves the execution blocked, so "
                            "Destroy would poll for 10 s (107037)")
    return [Observation("step", i, "rc", int(model.destroy())),
            Observation("step", i, "returned after the release store began", True)]


def _group_update(i: int, step: GroupUpdate, models: _Models) -> list[Observation]:
    """A task-group update (TG-10): UpdateBegin, one launch per grouped task, UpdateEnd and
    the sync of the update stream all answer 0, and from then on each grouped task runs its
    replacement (another operator allowed). Defined here only for a READY model with no
    pending change, after a Sync of every execution queued before it (an update racing
    with an execution is open, Q-21). An empty group's update has no launch and also
    answers 0 throughout: 0 launches match its 0 tasks (TG-14)."""
    case = models.programs[0].case
    members = graphs.groups(case)[step.group]
    model, program = models.of_op(graphs.group_ends(case)[step.group])
    if models.unsynced:
        raise UndefinedCase(f"plan[{i}]: task-group update while an execution may still run "
                            "(no Sync since it was queued, Q-21)")
    if model.state is not State.READY or program.busy or program.pending:
        raise UndefinedCase(f"plan[{i}]: task-group update of a {model.state.name} model "
                            "(busy or with pending changes)")
    for k, kernel, args in zip(members, step.kernels, step.args):
        captured = program.live(k)
        program.ops[k] = Launch(captured.stream, kernel, dict(args),
                                getattr(captured, "num_blocks", 1))
        program.host[k] = program.ops[k]
    program.invalidate()
    return [Observation("step", i, "rc", [int(Err.SUCCESS)] * (len(members) + 3))]


def _execute_built(i: int, step: ExecuteBuilt, models: _Models) -> list[Observation]:
    """ExecuteAsync of a built model on stream 0 (BLD-03): its stored launches run, in
    order, once per execution; defined here only with no captured execution in flight
    (they would queue behind a blocked one)."""
    if models.queue.busy():
        raise UndefinedCase(f"plan[{i}]: a built model's execution queued behind a blocked one")
    launches = models.programs[0].case.builds[step.build]
    for _ in range(step.times):
        for k, op in enumerate(launches):
            run_launch(models.memory, op, f"builds[{step.build}][{k}]")
    models.unsynced = True
    return [Observation("step", i, "rc", [int(Err.SUCCESS)] * step.times)]


def _update(i: int, step: Update, models: _Models) -> list[Observation]:
    """aclmdlRIUpdate of one model: its rc, and after a success its listing and, when
    streams are emptied, the GetStreams order and the emptied streams (UPD-02, DIS-05,
    DIS-07, DIS-11). With an execution of the model in flight the
    model is READY (SetParams and Disable were refused, SETP-12) and Update, which has no
    running check, is its no-op (UPD-09, UPD-01)."""
    model, program = models.states[step.model], models.programs[step.model]
    if program.busy and model.state is not State.READY:
        raise UndefinedCase(f"plan[{i}]: Update of a {model.state.name} model while an "
                            "execution is in flight")
    rc = model.update()
    obs = [Observation("step", i, "rc", int(rc))]
    if rc == Err.SUCCESS:
        program.commit()
        obs += listing_observations(i, program.listing(), step.model)
        removed = {k for k, op in enumerate(program.ops)
                   if op is None and models.op_model[k] == step.model}
        emptied = [s for s in case_facts.emptied_streams(program.case, removed)
                   if s in program.user_streams]
        obs += emptied_observations(program.case, i, emptied, step.model)
    return obs


def _change(i: int, step: Step, model: ModelState, program: Program) -> int:
    """SetKernel / SetValue / SetBadType / Disable: the rc, recording accepted changes."""
    where = f"plan[{i}]"
    running = program.busy
    if isinstance(step, Disable):
        captured = program.captured[step.op]
        program.live(step.op)
        rc = model.disable(is_default=isinstance(captured, DEFAULT_OPS), running=running)
        if rc == Err.SUCCESS:
            program.disable(step.op)
        return rc
    if isinstance(step, SetBadType):
        if step.type in SETTABLE_TYPES:
            raise UndefinedCase(f"{where}: set_bad_type with the accepted type {step.type}")
        program.live(step.op)
        return model.set_params(step.type, task_type(program.captured[step.op]), running)
    if isinstance(step, SetKernel):
        target = program.captured[step.op]
        if not isinstance(target, Launch):
            raise UndefinedCase(f"{where}: set_kernel on a non-launch op")
        # the new kernel is step.kernel, else the captured op's kernel (as validation.check
        # reads it)
        new: Op = Launch(target.stream, step.kernel or target.kernel, dict(step.args),
                         target.num_blocks)
        kind = TaskType.KERNEL
    elif isinstance(step, SetValue):
        target = program.captured[step.op]
        if step.word is not None and isinstance(target, Launch):
            # SETP-07: the kernel task becomes a value write, same task and seq id (SEQ-05)
            new = ValueWrite(target.stream, step.word, step.value)
        elif step.word is None and isinstance(target, ValueWrite):
            new = replace(target, value=step.value)
        else:
            raise UndefinedCase(f"{where}: set_value on a {type(target).__name__} op "
                                f"with word {step.word}")
        kind = TaskType.VALUE_WRITE
    else:
        raise UndefinedCase(f"{where}: unknown step {step!r}")
    program.live(step.op)
    rc = model.set_params(kind, task_type(target), running)
    if rc == Err.SUCCESS:
        program.set_op(step.op, new)
    return rc
