"""Generated task graphs: the runner's observations against the independent oracle.

Hypothesis draws cases from :mod:`conformance.engine.strategies` (multi-stream fork/join
graphs of catalog kernels, value write/wait tasks with every wait flag, memsets and copies
of every capturable kind, with SetParams/Disable/Update/Execute plans),
:mod:`conformance.engine.strategies_blocked`, :mod:`conformance.engine.strategies_capture`,
:mod:`conformance.engine.strategies_models` (several models over shared buffers),
:mod:`conformance.engine.strategies_copies` (pinned host copies, rejected pageable copies),
:mod:`conformance.engine.strategies_groups` (task groups and their updates, built models) and
:mod:`conformance.engine.strategies_cond` (IF and SWITCH tasks with captured sub-models);
:func:`conformance.engine.runner.replay` runs them on
the backend and :func:`conformance.engine.oracle.expected` says what a conforming runtime
shows. The comparison is split by observation category so each spec cites clauses of the
right level:

* return codes and buffer/word contents of defined plans: documented clauses;
* the listing and seq-id properties: implementation clauses (a difference is CHANGED);
* execution while UPDATING: documented (EXE-07);
* the other negative plans (bad SetParams type, Disable of a DEFAULT task, timeout below
  -1): implementation clauses;
* blocked executions (a value wait on a host word, any flag, 64-bit edge values, released
  by a host store; probed meanwhile with timed syncs, StreamQuery, SetParams/Disable,
  Update): implementation clauses (TMO-03, TMO-06, UPD-09);
* Destroy of a blocked model, released from another host thread while Destroy waits:
  documented (LIFE-03);
* CaptureEnd on a joined side stream and captures with an unjoined side stream (CAP-11,
  CAP-13; XS-15: one whose last task records an event again after the origin's wait), and
  streams emptied by Disable, still listed by GetStreams in the same order
  (DIS-07, DIS-11): implementation clauses;
* a capturing stream waiting on an event recorded before the capture (XS-05): documented;
  on an event not recorded yet, a fresh one or one recorded later in the capture (XS-14):
  implementation;
* several models captured in turn or together over the same buffers and executed in a
  drawn order on one stream: results against documented clauses (EXE-01, EXE-02, UPD-05),
  the per-model listing and seq ids against implementation ones (CAP-07, SEQ-07);
* pinned host-to-device and device-to-host copies, refilled on the host between
  executions (documented: CAP-01, CAP-19, MODE-01), and pageable copies rejected during the
  capture with 107000 while the capture goes on (documented: MODE-14); captured memsets of
  odd and even byte counts at any byte offset (documented: RT-45);
* task groups updated in rounds, by task-group updates or by SetParams + Update of grouped
  kernels (documented: TG-01, TG-10, SETP-01), their listing (TG-01, LIST-08), and models
  built next to a captured one and executed in its stream order (documented: BLD-03,
  EXE-01); IF and SWITCH tasks whose condition value is written between executions
  (implementation: COND-01..COND-08, COND-11 from the example, COND-13 for SWITCH values at
  or past the branch count), also at the end of several
  models sharing buffers, each with its own value.

A sync timeout of 0 is never drawn: the documented immediate check (TMO-07) and the
code's 107000 (TMO-02/TMO-08) disagree, so the fault 'timeout-zero-waits' is left to the
specs of that dispute. A Destroy that would poll its full 10 s (LIFE-03, 107037) is not
drawn: each draw releases the execution while Destroy waits. Abort of a blocked model is
not drawn: Abort of a captured model is implementation-defined (ABT-01).

The number of examples comes from the loaded Hypothesis profile (``--profile``), cut down on a
runtime whose first execution of a model is slow (the probes time it; see
:mod:`conformance.framework.exec_budget`): as many examples as fit the spec timeout, no
shrinking, and a spec whose example cannot fit is UNSUPPORTED ("execution too slow for the
generated tier"), never TIMEOUT. A failure
shows the shrunk case JSON, the first differing observation and a replay command; the JSON
is written under ``<report-dir>/cases/`` (or a temp dir) on the final, shrunk example only.
Every JSON file in ``conformance/cases/`` is replayed as well.

What the runtime cannot show is not judged (:func:`conformance.engine.divergence.judgeable`):
buffer and word contents need ``Cap.DATA_MOVEMENT`` (buffers of cases with kernels also
``Cap.KERNEL_EXEC``); the return codes, listing and seq ids are judged regardless, and the
listing specs match tasks by listing order and type when GetParams or data movement is
missing. A difference at or after a call that answered 207000 / 207019 is UNSUPPORTED.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from pathlib import Path
from typing import Any

from typing import Iterator

import pytest
from hypothesis import Phase, given, reject, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context

from mdlri_conformance.backends.contract import Cap
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.engine import (case_facts, divergence, graphs, oracle, runner,
                                                  strategies, strategies_blocked,
                                                  strategies_capture, strategies_cond,
                                                  strategies_copies, strategies_groups,
                                                  strategies_memsets, strategies_models,
                                                  validation)
from mdlri_conformance.conformance.engine.steps import Destroy
from mdlri_conformance.conformance.framework import exec_budget, outcomes, probe

#: what listing a replayed case needs (tasks are matched by order and type at worst)
LISTING_CAPS = (Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE,
                Cap.SEQ_ID, Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT)
#: what running the plans needs besides
PLAN_CAPS = (Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE)
pytestmark = pytest.mark.requires(*LISTING_CAPS)
needs_plans = pytest.mark.requires(*PLAN_CAPS)

CASES_DIR = Path(str(importlib.resources.files("mdlri_conformance.conformance") / "cases"))
RESULTS = ("capture", "step", "sync")
LISTING = ("capture", "listing")


#: the budget of the running generated spec on a runtime with slow first executions
_budget: exec_budget.Budget | None = None


@pytest.fixture(autouse=True)
def _sized_to_the_runtime(request: pytest.FixtureRequest, backend: Any) -> Iterator[None]:
    """On a runtime whose first execution is slow, a generated spec runs as many examples as
    fit ``--spec-timeout`` (each costed at MAX_STREAMS streams), without shrinking; one that
    cannot run a single example is UNSUPPORTED (exec_budget)."""
    global _budget
    fn = request.function
    budget = exec_budget.budget_for(backend, float(request.config.getoption("--spec-timeout",
                                                                            0) or 0))
    if budget is None or not getattr(fn, "is_hypothesis_test", False):
        yield
        return
    old = fn._hypothesis_internal_use_settings
    n = budget.examples(graphs.MAX_STREAMS, old.max_examples)
    if n < 1:
        pytest.skip(f"UNSUPPORTED: {budget.too_slow(graphs.MAX_STREAMS)}")
    # Hypothesis reads a test's settings from this attribute when the test is called
    fn._hypothesis_internal_use_settings = settings(
        old, max_examples=n, deadline=None, phases=[Phase.explicit, Phase.generate])
    _budget = budget
    try:
        yield
    finally:
        fn._hypothesis_internal_use_settings = old
        _budget = None


def _admit(case: graphs.Case) -> None:
    """Skip an example whose first executions no longer fit the spec's budget; the first one
    that cannot fit makes the spec UNSUPPORTED."""
    if _budget is None:
        return
    if not _budget.admit(case.streams):
        if _budget.ran == 0:
            raise outcomes.Unsupported(_budget.too_slow(case.streams))
        reject()
    _budget.ran += 1


def _report_dir(config: pytest.Config) -> str | None:
    rd = config.getoption("--report-dir", None)
    return str(rd) if rd else None


def _final_example() -> bool:
    """True on Hypothesis's final (shrunk, reported) run, and outside Hypothesis."""
    try:
        return bool(current_build_context().is_final)
    except Exception:
        return True


def compare(backend: Any, config: pytest.Config, case: graphs.Case,
            phases: tuple[str, ...] | None = None, path: Path | None = None) -> None:
    """Replay ``case`` and fail via conformance.expect at the first difference from the
    oracle (restricted to ``phases``); the message is divergence.divergence_message's."""
    __tracebackhide__ = True
    if case_facts.may_block(case) and Cap.BLOCKING_WAIT not in backend.capabilities:
        raise outcomes.Unsupported("generated case: its execution blocks on a value wait, and "
                                   "the backend's waits do not block (blocking_wait)")
    if case_facts.uses_pageable(case) and Cap.PAGEABLE_DETECTION not in backend.capabilities:
        raise outcomes.Unsupported("case: a pageable copy is refused only where the runtime "
                                   "tells pageable memory: "
                                   + (probe.reason(backend, Cap.PAGEABLE_DETECTION)
                                      or "pageable_detection absent"))
    _admit(case)
    exp = oracle.expected(case)
    obs = runner.replay(backend, case)
    div = divergence.compare(case, backend.name, exp, obs,
                         keep=divergence.judgeable(backend.capabilities, case, phases))
    if div is None:
        return
    if div.unsupported:
        raise outcomes.Unsupported(f"generated case: {div.unsupported}")
    div.path = path
    msg = divergence.divergence_message(div, _report_dir(config), write=_final_example())
    d = div.difference
    where = d.expected or d.observed
    label = f"{where.phase}[{where.index}] {where.what}" if where else "observation"
    faults = "".join(f" --fault {f}" for f in (config.getoption("--fault", None) or ()))
    if faults:  # a planted fault is part of the backend the case diverged on
        msg = msg.replace(f"--backend {backend.name}", f"--backend {backend.name}{faults}")
    replay = next((ln.strip().removeprefix("replay: ") for ln in msg.splitlines()
                   if ln.strip().startswith("replay: ")), "")
    expect.diverge(f"generated case, {label}",
                   d.expected.value if d.expected else "nothing",
                   d.observed.value if d.observed else "nothing",
                   case=case.to_dict(), replay=replay, extra=msg)


@pytest.mark.clause("CAP-01", "XS-01", "XS-02", "SETP-01", "DIS-01", "UPD-05", "EXE-02")
@needs_plans
@given(case=strategies.positive_cases())
def test_generated_results(backend: Any, pytestconfig: pytest.Config, case: graphs.Case) -> None:
    """Return codes and every buffer/word after every Sync match the oracle: captured work
    runs only on execution, side streams fork/join, SetParams/Disable apply after Update,
    repeated executions re-run everything."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("LIST-08", "SEQ-03", "SEQ-04", "SEQ-05", "DIS-05", "LIST-02", "LIST-05")
@given(case=strategies.positive_cases())
def test_generated_listing(backend: Any, pytestconfig: pytest.Config, case: graphs.Case) -> None:
    """Per user stream, the listed user-visible tasks are its ops in capture order, minus
    the disabled ones after Update; seq ids are unique, increasing and stable; GetStreams
    lists the origin last, most recently attached first; a listing one slot short answers
    107039 with *num = capacity and writes nothing past it (GetStreams nothing at all)."""
    compare(backend, pytestconfig, case, LISTING)


@pytest.mark.clause("DIS-07", "DIS-05", "DIS-11")
@needs_plans
@pytest.mark.requires(Cap.INTERNAL_TASKS)
@given(case=strategies_capture.emptied_stream())
def test_generated_emptied_stream(backend: Any, pytestconfig: pytest.Config,
                                  case: graphs.Case) -> None:
    """Disabling every task of a stream over one or two Updates leaves it listing one
    DEFAULT task (the NOP Update appends) and GetStreams still listing it, with the same
    count and order; the emptied model still executes."""
    compare(backend, pytestconfig, case)


@pytest.mark.clause("TMO-03", "TMO-06", "UPD-09")
@needs_plans
@pytest.mark.requires(Cap.BLOCKING_WAIT, Cap.DATA_MOVEMENT)
@given(case=strategies_blocked.blocked_cases())
def test_generated_blocked(backend: Any, pytestconfig: pytest.Config, case: graphs.Case) -> None:
    """An execution blocked on a value wait (GEQ/EQ/AND/NOR, 64-bit edge values) stays in
    flight: a timed sync expires with 507046 after waiting its timeout, StreamQuery says
    NOT_READY, SetParams/Disable answer 107040 and change nothing, Update answers 0 and
    changes nothing; a host store releases it, and a sync then sees every result. Syncs and
    queries run with a host deadline, so one that never returns is a divergence, not a
    hang."""
    compare(backend, pytestconfig, case)


#: how long after Destroy was called the host store releases the blocked execution (ms,
#: LIFE-03): it only has to outlast a Destroy that does not wait (well under 1 ms on the
#: simulator and the emulator), and each example pays it in full
DESTROY_RELEASE_MS: tuple[int, ...] = (10, 20)


@st.composite
def destroyed_soon_while_blocked(draw: st.DrawFn) -> graphs.Case:
    """A :func:`strategies_blocked.destroyed_while_blocked` case whose host store comes
    :data:`DESTROY_RELEASE_MS` after Destroy was called."""
    case = draw(strategies_blocked.destroyed_while_blocked())
    after = draw(st.sampled_from(DESTROY_RELEASE_MS))
    case.plan = [dataclasses.replace(s, after_ms=after) if isinstance(s, Destroy) else s
                 for s in case.plan]
    return case


@pytest.mark.clause("LIFE-03")
@needs_plans
@pytest.mark.requires(Cap.BLOCKING_WAIT, Cap.DATA_MOVEMENT, Cap.THREADS)
@given(case=destroyed_soon_while_blocked())
def test_generated_destroy_while_blocked(backend: Any, pytestconfig: pytest.Config,
                                         case: graphs.Case) -> None:
    """Destroy of a model whose execution is blocked on a value wait waits for it: a host
    thread releases the wait while Destroy polls, Destroy returns 0 only after that store
    began, and a sync of the origin stream then sees every result of the execution."""
    compare(backend, pytestconfig, case)


@pytest.mark.clause("CAP-11", "CAP-13", "XS-15")
@needs_plans
@given(case=st.one_of(strategies_capture.end_on_side(), strategies_capture.unjoined(),
                      strategies_capture.record_again()))
def test_generated_failed_ends(backend: Any, pytestconfig: pytest.Config,
                               case: graphs.Case) -> None:
    """CaptureEnd on a joined side stream answers 107036 and the capture stays ACTIVE on
    every stream, then ends on the origin as usual; a side stream whose last task is not a
    record, or records its fork or join event again after the origin's wait, makes
    CaptureEnd fail (107025), with the model NULL and every stream out of capture."""
    compare(backend, pytestconfig, case)


@pytest.mark.clause("XS-05")
@needs_plans
@given(case=strategies_capture.outside_wait())
def test_generated_outside_wait(backend: Any, pytestconfig: pytest.Config,
                                case: graphs.Case) -> None:
    """A capturing stream (the origin, or a side stream that joined) waiting on an event
    recorded before the capture began answers 107024 and captures nothing; the capture
    goes on, ends normally, lists every other task and runs its plan as usual."""
    compare(backend, pytestconfig, case)


@pytest.mark.clause("XS-14")
@needs_plans
@given(case=strategies_capture.stray_wait())
def test_generated_stray_wait(backend: Any, pytestconfig: pytest.Config,
                             case: graphs.Case) -> None:
    """A capturing stream (the origin, or a side stream that joined) waiting on an event
    that has not been recorded yet (a fresh one, or one the capture records later) answers
    0 and captures nothing; the later record is captured as usual, the capture ends
    normally, lists every other task and runs its plan as usual."""
    compare(backend, pytestconfig, case)


@pytest.mark.clause("EXE-07", "SETP-02", "DIS-02")
@needs_plans
@given(case=strategies.execute_while_updating())
def test_generated_execute_while_updating(backend: Any, pytestconfig: pytest.Config,
                                          case: graphs.Case) -> None:
    """ExecuteAsync between SetParams/Disable and Update returns 507011 and runs nothing;
    the later Update commits and execution resumes."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("SETP-03", "SETP-10", "DIS-06", "TMO-02", "UPD-04")
@needs_plans
@given(case=strategies.negative_cases(kinds=("disable-default", "set-bad-type",
                                             "sync-timeout-below-minus-one")))
def test_generated_negative(backend: Any, pytestconfig: pytest.Config,
                            case: graphs.Case) -> None:
    """Disable of a DEFAULT task and SetParams with a rejected type give 107000 and a FAULT
    model (later Update 107040, Execute 507011); a sync timeout below -1 gives 107000."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("EXE-01", "EXE-02", "UPD-05", "SETP-01", "DIS-01")
@needs_plans
@given(case=strategies_models.shared_models())
def test_generated_shared_models(backend: Any, pytestconfig: pytest.Config,
                                 case: graphs.Case) -> None:
    """Two or three models captured over the same buffers, words and pinned host buffers,
    executed in a drawn order on one stream (with or without a Sync between them): each
    execution starts from what the previous one, of whichever model, left in memory; a
    model's SetParams/Disable apply after that model's Update and change no other model."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("CAP-07", "SEQ-07", "SEQ-04", "LIST-08", "LIST-02")
@given(case=strategies_models.shared_models())
def test_generated_shared_models_listing(backend: Any, pytestconfig: pytest.Config,
                                         case: graphs.Case) -> None:
    """Captures of several models, one after the other or open together, each list only
    their own streams and tasks (origin last), with seq ids unique and increasing within
    each model, and stable across that model's Updates."""
    compare(backend, pytestconfig, case, LISTING)


@pytest.mark.clause("CAP-01", "CAP-19", "MODE-01", "EXE-02")
@needs_plans
@given(case=strategies_copies.copy_cases())
def test_generated_copy_kinds(backend: Any, pytestconfig: pytest.Config,
                              case: graphs.Case) -> None:
    """Captured copies of every kind a capture takes (device to device, pinned host to
    device, device to pinned host) move their bytes at every execution, not at capture: a
    pinned source refilled on the host is copied with its new contents, and a pinned
    destination holds what the last execution copied."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("RT-45", "CAP-01", "EXE-02")
@needs_plans
@given(case=strategies_memsets.memset_span_cases())
def test_generated_memset_spans(backend: Any, pytestconfig: pytest.Config,
                                case: graphs.Case) -> None:
    """Captured memsets of odd and even byte counts at any byte offset set exactly those
    bytes at every execution, and no byte around them."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("MODE-14", "MODE-12")
@needs_plans
@pytest.mark.requires(Cap.PAGEABLE_DETECTION)
@given(case=strategies_copies.pageable_copies())
def test_generated_pageable_copy(backend: Any, pytestconfig: pytest.Config,
                                 case: graphs.Case) -> None:
    """An async copy between device memory and pageable host memory on a capturing stream
    answers 107000, issues no task (the stream's join is unchanged) and leaves the capture
    valid: CaptureEnd succeeds and the model runs as if the copy had never been issued."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("TG-01", "TG-10", "SETP-01", "UPD-05", "EXE-02")
@needs_plans
@pytest.mark.requires(Cap.TASK_GROUPS)
@given(case=strategies_groups.group_cases())
def test_generated_task_groups(backend: Any, pytestconfig: pytest.Config,
                               case: graphs.Case) -> None:
    """Kernels captured in task groups (GrpBegin/GrpEnd give 0 and a handle) run like any
    other; a task-group update (UpdateBegin, one launch per grouped task, any operator,
    UpdateEnd, all 0) replaces the group's tasks once the update stream has synced, and
    SetParams + Update of a grouped kernel (fresh params, taskGrp NULL) applies at Update:
    every later execution runs the new kernels."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("TG-01", "LIST-08", "SEQ-03", "SEQ-04", "SEQ-05")
@pytest.mark.requires(Cap.TASK_GROUPS)
@given(case=strategies_groups.group_cases())
def test_generated_task_groups_listing(backend: Any, pytestconfig: pytest.Config,
                                       case: graphs.Case) -> None:
    """A model with task groups lists every grouped kernel as a user task of its stream in
    issue order (the NOPs GrpBegin adds are DEFAULT and not matched), with seq ids unique,
    increasing and stable across Updates."""
    compare(backend, pytestconfig, case, LISTING)


@pytest.mark.clause("BLD-01", "BLD-02", "BLD-03", "BLD-05", "EXE-01")
@needs_plans
@pytest.mark.requires(Cap.BUILD)
@given(case=strategies_groups.built_cases())
def test_generated_built_models(backend: Any, pytestconfig: pytest.Config,
                                case: graphs.Case) -> None:
    """Models built with BuildBegin/BindStream/EndTask/BuildEnd next to a captured one over
    the same buffers run nothing at build time and run their stored kernels at every
    ExecuteAsync, in stream order with the captured model's executions."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("COND-01", "COND-02", "COND-04", "COND-05", "COND-06", "COND-07",
                     "COND-08", "COND-11", "COND-13")
@needs_plans
@pytest.mark.requires(Cap.COND)
@given(case=strategies_cond.cond_cases())
def test_generated_cond(backend: Any, pytestconfig: pytest.Config, case: graphs.Case) -> None:
    """An IF or SWITCH task added to a capture, its sub-models captured on their own
    streams: the condition value starts at 0 and, written on the host between executions,
    selects the sub-model every later execution runs (IF: sub-model 0 for non-zero, 1 for
    0; SWITCH: sub-model value, none for a value at or past its branch count)."""
    compare(backend, pytestconfig, case, RESULTS)


@pytest.mark.clause("COND-01", "COND-02", "COND-04", "COND-11", "COND-13", "CAP-07", "EXE-01")
@needs_plans
@pytest.mark.requires(Cap.COND)
@given(case=strategies_cond.shared_models_cond())
def test_generated_shared_models_cond(backend: Any, pytestconfig: pytest.Config,
                                      case: graphs.Case) -> None:
    """Several models over the same buffers, some ending with an IF or SWITCH task: each
    task's condition value is its own (written for one model, it changes no other model's
    branch), and the models run in the drawn order on one stream, each execution seeing what
    the previous one wrote."""
    compare(backend, pytestconfig, case, RESULTS)


def _case_files() -> list[Path]:
    return sorted(CASES_DIR.glob("*.json"))


def _load(path: Path) -> graphs.Case:
    try:
        case = graphs.from_json(path.read_text(encoding="utf-8"))
        validation.check(case)
    except graphs.GraphError as exc:
        expect.fail(f"case file {path.name}", "a valid case", str(exc))
    return case


@pytest.mark.clause("CAP-01", "XS-01", "XS-02", "SETP-01", "DIS-01", "UPD-05", "EXE-02")
@needs_plans
@pytest.mark.parametrize("path", _case_files(), ids=lambda p: p.stem)
def test_case_file_results(backend: Any, pytestconfig: pytest.Config, path: Path) -> None:
    """Every kept case under conformance/cases/: return codes and buffers/words."""
    compare(backend, pytestconfig, _load(path), RESULTS, path=path)


@pytest.mark.clause("LIST-08", "SEQ-03", "SEQ-04", "SEQ-05", "DIS-05")
@pytest.mark.parametrize("path", _case_files(), ids=lambda p: p.stem)
def test_case_file_listing(backend: Any, pytestconfig: pytest.Config, path: Path) -> None:
    """Every kept case under conformance/cases/: listing and seq-id properties."""
    compare(backend, pytestconfig, _load(path), LISTING, path=path)
