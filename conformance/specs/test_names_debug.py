"""Names, ids and debug output (NAME-01..NAME-05, DBG-01..DBG-06, ERR-24..ERR-26, Q-24).

Three capabilities: the NAME specs need Cap.NAMES, the DBG specs Cap.DEBUG_JSON, and those of
the deprecated aclmdlRIDebugPrint Cap.DEBUG_PRINT (each spec carries its own; the module needs
only capture). aclmdlRIDebugJsonPrint writes into the spec's
``tmp_path`` and the file is parsed as JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import DEBUG_JSON_SUMMARY, DEBUG_JSON_VERBOSE, Cap, Err
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.specs._setups import Case, begin_build, case

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS)

NAMES = pytest.mark.requires(Cap.NAMES)
DEBUG = pytest.mark.requires(Cap.DEBUG_JSON)
PRINT = pytest.mark.requires(Cap.DEBUG_PRINT)

X = np.arange(1, 9, dtype=np.int32)
BUF = 1024


def model(dev: Dev) -> Any:
    """A captured model with one kernel."""
    s = dev.stream()
    x, out = dev.buffer(X), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=out)
    return dev.end(s)


def capturing(dev: Dev) -> Any:
    """The GetInfo model of a capture left open (closed at cleanup)."""
    s = dev.stream()
    dev.begin(s)
    dev.launch("fallback_main", s, input=dev.buffer(X), output=dev.buffer(n=8))
    rc, _, m = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    return m


def name_of(dev: Dev, m: Any, max_len: int = BUF) -> Any:
    rc, name = dev.b.get_name(m, max_len)
    expect.ok(rc, "aclmdlRIGetName")
    return name


# ---------------------------------------------------------------------------------------------
# NAME


@pytest.mark.clause("NAME-01")
@NAMES
def test_last_set_name_wins(dev: Dev) -> None:
    """NAME-01: after two SetName calls GetName returns the second name."""
    m = model(dev)
    expect.ok(dev.b.set_name(m, "first"), "aclmdlRISetName first")
    expect.ok(dev.b.set_name(m, "second-name"), "aclmdlRISetName second")
    expect.eq(name_of(dev, m), "second-name", "GetName")


@pytest.mark.clause("NAME-02")
@NAMES
def test_name_without_set_is_empty(dev: Dev) -> None:
    """NAME-02: GetName on a model never named returns the empty string."""
    expect.eq(name_of(dev, model(dev)), "", "GetName of an unnamed model")


@pytest.mark.clause("NAME-03")
@NAMES
def test_long_name_is_not_truncated(dev: Dev) -> None:
    """NAME-03: a 600-byte name comes back whole (API15 L1135 documents truncation at 512 bytes)."""
    m = model(dev)
    long = "".join(chr(ord("a") + i % 26) for i in range(600))
    expect.ok(dev.b.set_name(m, long), "aclmdlRISetName (600 bytes)")
    expect.eq(name_of(dev, m, 1024), long, "GetName of the 600-byte name")


@pytest.mark.clause("NAME-03")
@NAMES
@pytest.mark.parametrize("max_len", [1, 5, 6])
def test_short_buffer_errors(dev: Dev, max_len: int) -> None:
    """NAME-03: GetName with maxLen < strlen + 1 returns 507000 (no truncated name)."""
    m = model(dev)
    expect.ok(dev.b.set_name(m, "abcdef"), "aclmdlRISetName (setup)")
    rc, _ = dev.b.get_name(m, max_len)
    expect.rc(rc, Err.RT_INTERNAL_ERROR, f"aclmdlRIGetName(maxLen {max_len}) of a 6-byte name")


@pytest.mark.clause("NAME-03")
@NAMES
def test_exact_buffer_fits(dev: Dev) -> None:
    """NAME-03: GetName with maxLen == strlen + 1 returns the whole name."""
    m = model(dev)
    expect.ok(dev.b.set_name(m, "abcdef"), "aclmdlRISetName (setup)")
    expect.eq(name_of(dev, m, 7), "abcdef", "GetName(maxLen 7)")


@pytest.mark.clause("NAME-04")
@NAMES
def test_get_name_max_len_zero(dev: Dev) -> None:
    """NAME-04: GetName with maxLen 0 returns 107000."""
    expect.rc(dev.b.get_name(model(dev), 0)[0], Err.RT_PARAM_INVALID, "aclmdlRIGetName(maxLen 0)")


@pytest.mark.clause("NAME-04")
@NAMES
@pytest.mark.parametrize("call", ["set_null_model", "set_null_name", "get_null_model",
                                  "get_null_buf"])
def test_name_null_arguments(dev: Dev, call: str) -> None:
    """NAME-04: a NULL model, name or buffer returns 100000."""
    b = dev.b
    rc = {
        "set_null_model": lambda: b.set_name(None, "x"),
        "set_null_name": lambda: b.set_name(model(dev), None),
        "get_null_model": lambda: b.get_name(None, BUF)[0],
        "get_null_buf": lambda: b.get_name(model(dev), BUF, null_buf=True)[0],
    }[call]()
    expect.rc(rc, Err.INVALID_PARAM, call)


@pytest.mark.clause("NAME-04")
@NAMES
def test_set_name_during_capture(dev: Dev) -> None:
    """NAME-04: SetName works during capture on the GetInfo model; the name survives CaptureEnd."""
    s = dev.stream()
    dev.begin(s)
    rc, _, m = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    expect.ok(dev.b.set_name(m, "in-capture"), "aclmdlRISetName during capture")
    ended = dev.end(s)
    expect.eq(name_of(dev, ended), "in-capture", "GetName after CaptureEnd")


@pytest.mark.clause("NAME-05")
@NAMES
def test_ids_are_distinct_among_live_models(dev: Dev) -> None:
    """NAME-05: GetId succeeds and gives distinct ids to live models, stable per model."""
    models = [model(dev) for _ in range(3)]
    ids = []
    for m in models:
        rc, i = dev.b.get_id(m)
        expect.ok(rc, "aclmdlRIGetId")
        ids.append(i)
    expect.eq(len(set(ids)), len(ids), f"distinct ids {ids}")
    expect.eq(dev.b.get_id(models[0])[1], ids[0], "GetId again")


@pytest.mark.clause("NAME-05")
@NAMES
@pytest.mark.parametrize("which", ["model", "out"])
def test_get_id_null(dev: Dev, which: str) -> None:
    """NAME-05: GetId with a NULL model or out-pointer returns 100000."""
    rc = dev.b.get_id(None)[0] if which == "model" else dev.b.get_id(model(dev), null_out=True)[0]
    expect.rc(rc, Err.INVALID_PARAM, f"aclmdlRIGetId(NULL {which})")


@pytest.mark.clause("Q-24")
@NAMES
def test_id_reuse_after_destroy(dev: Dev, fingerprint: Any) -> None:
    """Q-24: whether a destroyed model's id is reused by the next model (recorded)."""
    m = model(dev)
    rc, old = dev.b.get_id(m)
    expect.ok(rc, "aclmdlRIGetId (setup)")
    expect.ok(dev.destroy(m), "aclmdlRIDestroy (setup)")
    rc, new = dev.b.get_id(model(dev))
    expect.ok(rc, "aclmdlRIGetId (setup)")
    fingerprint.record("Q-24:reused", new == old)


# ---------------------------------------------------------------------------------------------
# DBG


def trace(path: Path) -> list[Any]:
    """The JSON array in ``path`` (a failure names the observable)."""
    expect.true(path.is_file(), f"{path.name} written", "a file", "missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        expect.fail(f"{path.name} parses as JSON", "valid JSON", str(exc))
    expect.true(isinstance(data, list), "top-level JSON value", "an array", type(data).__name__)
    return data


def trace_events(dev: Dev, m: Any, path: Path) -> list[dict[str, Any]]:
    """DebugJsonPrint ``m`` (summary) into ``path`` and return its "X" trace events (DBG-01)."""
    expect.ok(dev.b.debug_json_print(m, str(path), DEBUG_JSON_SUMMARY), "aclmdlRIDebugJsonPrint")
    return [e for e in trace(path) if isinstance(e, dict) and e.get("ph") == "X"]


@pytest.mark.clause("DBG-01")
@DEBUG
def test_debug_json_is_a_chrome_trace(dev: Dev, tmp_path: Path) -> None:
    """DBG-01: DebugJsonPrint writes a JSON array of "X" trace events (stream tid, aclGraph pid)."""
    m = model(dev)
    events = trace_events(dev, m, tmp_path / "model.json")
    expect.true(len(events) >= 1, "trace events with ph 'X'", ">= 1", len(events))
    for e in events:
        expect.true(str(e.get("tid", "")).startswith("stream"), "event tid", "stream<id>",
                    e.get("tid"))
        expect.true("aclGraph" in str(e.get("pid", "")), "event pid", "'<pid> aclGraph'",
                    e.get("pid"))


#: the args keys of every trace event (`core/src/stream/stream.cc:4980-5017`, "Task Type" at :4994)
ARGS_KEYS = ("Model Id", "Stream Id", "Task Id", "Task Type")
#: the extra args keys of a kernel's event
KERNEL_ARGS_KEYS = ("Numblocks", "Schem Mode")


@pytest.mark.clause("DBG-05")
@DEBUG
def test_debug_json_args_keys(dev: Dev, tmp_path: Path) -> None:
    """DBG-05: every event's args carry "Model Id", "Stream Id", "Task Id", "Task Type"; a kernel's
    also "Numblocks" and "Schem Mode", with "Task Type" KERNEL_AICORE (the runtime's typeName)."""
    m = model(dev)
    events = trace_events(dev, m, tmp_path / "model.json")
    expect.true(len(events) >= 1, "trace events with ph 'X'", ">= 1", len(events))
    for e in events:
        args = e.get("args") or {}
        missing = [k for k in ARGS_KEYS if k not in args]
        expect.eq(missing, [], f"args keys missing from event {e.get('name')!r}")
    kernels = [e for e in events if (e.get("args") or {}).get("Task Type") == "KERNEL_AICORE"]
    expect.true(len(kernels) >= 1, "events with Task Type KERNEL_AICORE", ">= 1",
                sorted({str((e.get("args") or {}).get("Task Type")) for e in events}))
    for e in kernels:
        missing = [k for k in KERNEL_ARGS_KEYS if k not in e["args"]]
        expect.eq(missing, [], "kernel args keys missing")


@pytest.mark.clause("DBG-01")
@DEBUG
@pytest.mark.requires(Cap.LISTING)
def test_debug_json_covers_every_stream(dev: Dev, tmp_path: Path) -> None:
    """DBG-01: the trace has one tid per internal stream of a two-stream model."""
    s1, s2 = dev.stream(), dev.stream()
    fork, join = dev.event(), dev.event()
    x, y1, y2 = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s1)
    dev.b.record_event(fork, s1)
    dev.b.stream_wait_event(s2, fork)
    dev.launch("fallback_main", s1, input=x, output=y1)
    dev.launch("fallback_main", s2, input=x, output=y2)
    dev.b.record_event(join, s2)
    dev.b.stream_wait_event(s1, join)
    m = dev.end(s1)
    tids = {e.get("tid") for e in trace_events(dev, m, tmp_path / "two.json")}
    expect.eq(len(tids), len(dev.streams_of(m)), f"distinct tids {sorted(map(str, tids))}")


def _task_types(events: list[dict[str, Any]]) -> list[str]:
    """The "Task Type" of every trace event, in file order (DBG-05)."""
    return [str((e.get("args") or {}).get("Task Type")) for e in events]


def _kernels(types: list[str]) -> int:
    return sum(t.startswith("KERNEL") for t in types)


@pytest.mark.clause("DBG-06", "DIS-05")
@DEBUG
@pytest.mark.requires(Cap.DISABLE, Cap.UPDATE, Cap.LISTING, Cap.TASK_TYPE)
def test_debug_json_traces_a_disabled_task_until_update(dev: Dev, tmp_path: Path) -> None:
    """DBG-06: a disabled task stays in the trace until Update (Disable only flags it,
    `api/impl/api_impl.cc:9787`); after Update it is gone and nothing else changes (the
    stream's list is rebuilt from the kept tasks, `core/src/stream/stream.cc:3602-3605`)."""
    s = dev.stream()
    x, mid, out = dev.buffer(X), dev.buffer(n=8), dev.buffer(n=8)
    dev.begin(s)
    dev.launch("fallback_main", s, input=x, output=mid)
    dev.launch("fallback_postprocess", s, input=mid, output=out)
    m = dev.end(s)
    first = _task_types(trace_events(dev, m, tmp_path / "captured.json"))
    expect.eq(_kernels(first), 2, f"kernel events of the captured model (setup, types {first})")
    kernels = dev.kernel_tasks(m)
    expect.ok(dev.b.task_disable(kernels[-1]), "aclmdlRITaskDisable (the second kernel)")
    pending = _task_types(trace_events(dev, m, tmp_path / "disabled.json"))
    expect.eq(pending, first, "trace Task Types after Disable, before Update")
    expect.ok(dev.b.update(m), "aclmdlRIUpdate")
    after = _task_types(trace_events(dev, m, tmp_path / "updated.json"))
    expect.eq(_kernels(after), 1, f"kernel events after Update (types {after})")
    expect.eq(len(after), len(first) - 1, f"trace events after Update (types {after})")


@pytest.mark.clause("DBG-06", "DIS-07")
@DEBUG
@pytest.mark.requires(Cap.DISABLE, Cap.UPDATE, Cap.LISTING, Cap.TASK_TYPE,
                      Cap.INTERNAL_TASKS)
def test_debug_json_after_update_shows_the_nop_of_an_emptied_stream(dev: Dev,
                                                                  tmp_path: Path) -> None:
    """DBG-06: a stream whose only kernel is disabled traces it until Update; after Update
    the kernel is gone and the trace shows one more NOP, the one Update appends to an
    emptied stream (DIS-07, `core/src/stream/stream.cc:3676-3682`)."""
    m = model(dev)
    first = _task_types(trace_events(dev, m, tmp_path / "captured.json"))
    (kernel,) = dev.kernel_tasks(m)
    expect.ok(dev.b.task_disable(kernel), "aclmdlRITaskDisable (the only kernel)")
    pending = _task_types(trace_events(dev, m, tmp_path / "disabled.json"))
    expect.eq(pending, first, "trace Task Types after Disable, before Update")
    expect.ok(dev.b.update(m), "aclmdlRIUpdate")
    after = _task_types(trace_events(dev, m, tmp_path / "updated.json"))
    expect.eq(_kernels(after), 0, f"kernel events after Update (types {after})")
    expect.eq(after.count("NOP"), first.count("NOP") + 1, f"NOP events after Update "
              f"(types before {first}, after {after})")


@pytest.mark.clause("DBG-01")
@DEBUG
def test_debug_json_overwrites(dev: Dev, tmp_path: Path) -> None:
    """DBG-01: an existing file is overwritten with the trace."""
    path = tmp_path / "old.json"
    path.write_text("not json at all " * 100, encoding="utf-8")
    expect.ok(dev.b.debug_json_print(model(dev), str(path), DEBUG_JSON_SUMMARY),
              "aclmdlRIDebugJsonPrint")
    trace(path)


@pytest.mark.clause("DBG-02")
@DEBUG
def test_debug_json_missing_directory(dev: Dev, tmp_path: Path) -> None:
    """DBG-02: a path whose directory does not exist returns 107000."""
    path = tmp_path / "no" / "such" / "dir" / "m.json"
    expect.rc(dev.b.debug_json_print(model(dev), str(path), DEBUG_JSON_SUMMARY),
              Err.RT_PARAM_INVALID, "aclmdlRIDebugJsonPrint into a missing directory")


@pytest.mark.clause("DBG-02")
@DEBUG
@pytest.mark.parametrize("which", ["model", "path"])
def test_debug_json_null(dev: Dev, tmp_path: Path, which: str) -> None:
    """DBG-02: a NULL model or path returns 100000."""
    if which == "model":
        rc = dev.b.debug_json_print(None, str(tmp_path / "m.json"), DEBUG_JSON_SUMMARY)
    else:
        rc = dev.b.debug_json_print(model(dev), None, DEBUG_JSON_SUMMARY)
    expect.rc(rc, Err.INVALID_PARAM, f"aclmdlRIDebugJsonPrint(NULL {which})")


@pytest.mark.clause("DBG-03")
@DEBUG
@pytest.mark.parametrize("flags", [DEBUG_JSON_VERBOSE, 7, 0x100])
def test_debug_json_flags_not_validated(dev: Dev, tmp_path: Path, flags: int) -> None:
    """DBG-03: any flags value is accepted and a valid trace is written."""
    path = tmp_path / f"f{flags}.json"
    expect.ok(dev.b.debug_json_print(model(dev), str(path), flags),
              f"aclmdlRIDebugJsonPrint(flags {flags:#x})")
    trace(path)


@pytest.mark.clause("DBG-04")
@DEBUG
def test_debug_json_during_capture(dev: Dev, tmp_path: Path) -> None:
    """DBG-04: DebugJsonPrint works on the GetInfo model during capture (doc: only after CaptureEnd)."""
    path = tmp_path / "capturing.json"
    expect.ok(dev.b.debug_json_print(capturing(dev), str(path), DEBUG_JSON_SUMMARY),
              "aclmdlRIDebugJsonPrint during capture")
    trace(path)


@pytest.mark.clause("DBG-04")
@DEBUG
@pytest.mark.requires(Cap.BUILD)
def test_debug_json_built_model(dev: Dev, tmp_path: Path) -> None:
    """DBG-04: DebugJsonPrint works on a built model."""
    m = begin_build(dev)
    path = tmp_path / "built.json"
    expect.ok(dev.b.debug_json_print(m, str(path), DEBUG_JSON_SUMMARY),
              "aclmdlRIDebugJsonPrint of a built model")
    trace(path)


@pytest.mark.clause("DBG-04")
@PRINT
@pytest.mark.parametrize("which", [
    "capturing", "captured", pytest.param("built", marks=pytest.mark.requires(Cap.BUILD))])
def test_debug_print_any_time(dev: Dev, which: str) -> None:
    """DBG-04: aclmdlRIDebugPrint returns 0 on the GetInfo model during capture, on a captured
    model and on a built model (doc: only after CaptureEnd); it checks only the model
    (`feature/aclgraph/api_error_aclgraph.cc:122-128`, `model_aclgraph.cc:31-48`)."""
    m = {"capturing": capturing, "captured": model, "built": begin_build}[which](dev)
    expect.ok(dev.b.debug_print(m), f"aclmdlRIDebugPrint of a {which} model", clause="DBG-04")


@pytest.mark.clause("ERR-26")
@PRINT
def test_err26_debug_print_null(dev: Dev) -> None:
    """ERR-26: aclmdlRIDebugPrint(NULL) returns 100000 (the ACL layer's NULL check,
    `src/acl/aclrt_impl/model_ri.cpp:118`)."""
    expect.rc(dev.b.debug_print(None), Err.INVALID_PARAM, "aclmdlRIDebugPrint(NULL)",
              clause="ERR-26")


# ---------------------------------------------------------------------------------------------
# ERR-24 .. ERR-26


def _set_null_model(dev: Dev) -> int:
    return dev.b.set_name(None, "x")


def _set_null_name(dev: Dev) -> int:
    return dev.b.set_name(model(dev), None)


def _get_null_buf(dev: Dev) -> int:
    return dev.b.get_name(model(dev), BUF, null_buf=True)[0]


def _get_max_len_zero(dev: Dev) -> int:
    return dev.b.get_name(model(dev), 0)[0]


def _get_too_small(dev: Dev) -> int:
    m = model(dev)
    expect.ok(dev.b.set_name(m, "longer-than-four"), "aclmdlRISetName (setup)")
    return dev.b.get_name(m, 4)[0]


@pytest.mark.clause("ERR-24")
@NAMES
@pytest.mark.parametrize("make, expected", [
    case(_set_null_model, Err.INVALID_PARAM),
    case(_set_null_name, Err.INVALID_PARAM),
    case(_get_null_buf, Err.INVALID_PARAM),
    case(_get_max_len_zero, Err.RT_PARAM_INVALID),
    case(_get_too_small, Err.RT_INTERNAL_ERROR),
])
def test_err24_set_get_name(dev: Dev, make: Case, expected: int) -> None:
    """ERR-24: SetName/GetName return the error of their error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRISetName / aclmdlRIGetName")


@pytest.mark.clause("ERR-25")
@NAMES
@pytest.mark.parametrize("which", ["model", "out"])
def test_err25_get_id(dev: Dev, which: str) -> None:
    """ERR-25: GetId with a NULL model or out-pointer returns 100000."""
    rc = dev.b.get_id(None)[0] if which == "model" else dev.b.get_id(model(dev), null_out=True)[0]
    expect.rc(rc, Err.INVALID_PARAM, "aclmdlRIGetId")


@pytest.mark.clause("ERR-26")
@DEBUG
@pytest.mark.parametrize("which, expected", [("model", Err.INVALID_PARAM),
                                             ("path", Err.INVALID_PARAM),
                                             ("unopenable", Err.RT_PARAM_INVALID)])
def test_err26_debug_json_print(dev: Dev, tmp_path: Path, which: str, expected: int) -> None:
    """ERR-26: DebugJsonPrint returns the error of its error-table cell (other-context cell untested)."""
    path = str(tmp_path / "m.json")
    if which == "model":
        rc = dev.b.debug_json_print(None, path, DEBUG_JSON_SUMMARY)
    elif which == "path":
        rc = dev.b.debug_json_print(model(dev), None, DEBUG_JSON_SUMMARY)
    else:
        rc = dev.b.debug_json_print(model(dev), str(tmp_path / "missing" / "m.json"),
                                    DEBUG_JSON_SUMMARY)
    expect.rc(rc, expected, "aclmdlRIDebugJsonPrint")
