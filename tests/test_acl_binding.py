"""The acl binding without a runtime: TaskParams <-> ctypes round trips, handles, sentinels,
and the no-library path (every spec UNSUPPORTED with one reason; the CLI prints one line)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mdlri_conformance.backends.acl import create
from mdlri_conformance.backends.acl import structs as S
from mdlri_conformance.backends.acl.backend import AclRc
from mdlri_conformance.backends.acl.convert import (BYTE_SENTINEL, PTR_SENTINEL, Handle, KeepAlive, handle,
                                  out_handle, params_from_c, params_to_c, sentinel_params,
                                  untouched)
from mdlri_conformance.backends.contract import (UNION_MEMBER_SIZE, UNION_SIZE, UNWRITTEN, Backend, Err,
                               EventRecordTaskParams, EventResetTaskParams,
                               EventWaitTaskParams, KernelTaskParams, TaskParams, TaskType,
                               ValueWaitTaskParams, ValueWriteTaskParams, err_name)

ROOT = Path(__file__).resolve().parents[1]

u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)
ptr = st.one_of(st.none(), st.integers(1, 2**63 - 1))


def handles(kind: str) -> st.SearchStrategy:
    return ptr.map(lambda p: handle(p, kind))


def _tail(ttype: TaskType) -> st.SearchStrategy[bytes]:
    n = UNION_SIZE - UNION_MEMBER_SIZE[ttype]
    return st.binary(min_size=n, max_size=n)


@st.composite
def task_params(draw: st.DrawFn) -> TaskParams:
    """Any TaskParams whose values fit the C fields (device-address args, int opInfo)."""
    ttype = draw(st.sampled_from([t for t in TaskType if t != TaskType.DEFAULT]))
    p = TaskParams(type=ttype, rsv0=tuple(draw(st.lists(u32, min_size=3, max_size=3))),
                   task_grp=draw(handles("taskgrp")), op_info_ptr=draw(ptr),
                   op_info_size=draw(u64), rsv1=draw(st.binary(min_size=32, max_size=32)),
                   union_tail=draw(_tail(ttype)))
    if ttype == TaskType.KERNEL:
        p.kernel = KernelTaskParams(draw(handles("func")), draw(ptr), draw(ptr), draw(u32),
                                    draw(u64), draw(u32),
                                    tuple(draw(st.lists(u32, min_size=10, max_size=10))))
    elif ttype == TaskType.EVENT_RECORD:
        p.event_record = EventRecordTaskParams(draw(handles("event")), draw(u32), draw(u32))
    elif ttype == TaskType.EVENT_WAIT:
        p.event_wait = EventWaitTaskParams(draw(handles("event")), draw(u32), draw(u32))
    elif ttype == TaskType.EVENT_RESET:
        p.event_reset = EventResetTaskParams(draw(handles("event")), draw(u32), draw(u32))
    elif ttype == TaskType.VALUE_WRITE:
        p.value_write = ValueWriteTaskParams(draw(ptr), draw(u64))
    else:
        p.value_wait = ValueWaitTaskParams(draw(ptr), draw(u64), draw(u32))
    return p


@given(task_params())
def test_task_params_round_trip(p: TaskParams) -> None:
    keep = KeepAlive()
    c = params_to_c(p, keep)
    assert ctypes.sizeof(c) == 200
    back = params_from_c(c)
    assert back == p
    # and C -> Python -> C reproduces every byte
    assert bytes(params_to_c(back, KeepAlive())) == bytes(c)


def test_kernel_params_land_at_the_abi_offsets() -> None:
    p = TaskParams(type=TaskType.KERNEL, kernel=KernelTaskParams(
        func_handle=handle(0x1111, "func"), cfg=None, args=0x2222, is_host_args=0,
        args_size=0x33, num_blocks=0x44), union_tail=bytes(40))
    raw = bytes(params_to_c(p, KeepAlive()))
    assert int.from_bytes(raw[0:4], "little") == TaskType.KERNEL
    assert int.from_bytes(raw[72:80], "little") == 0x1111          # funcHandle
    assert int.from_bytes(raw[88:96], "little") == 0x2222          # args (72 + 16)
    assert int.from_bytes(raw[104:112], "little") == 0x33          # argsSize (72 + 32)
    assert int.from_bytes(raw[112:116], "little") == 0x44          # numBlocks (72 + 40)


def test_host_bytes_are_kept_alive_and_padded() -> None:
    keep = KeepAlive()
    p = TaskParams(type=TaskType.KERNEL, op_info_ptr=b"\x01\x02\x03",
                   kernel=KernelTaskParams(func_handle=handle(0x10, "func"), args=b"\xAA" * 8,
                                           is_host_args=1, args_size=16, num_blocks=1))
    c = params_to_c(p, keep)
    assert len(keep) == 2
    assert ctypes.string_at(c.kernelTaskParams.args, 16) == b"\xAA" * 8 + bytes(8)
    assert ctypes.string_at(c.opInfoPtr, 3) == b"\x01\x02\x03"


def test_only_the_member_named_by_type_is_written() -> None:
    p = TaskParams(type=TaskType.VALUE_WRITE, kernel=KernelTaskParams(func_handle=handle(7, "f")),
                   union_tail=bytes(112))
    c = params_to_c(p, KeepAlive())
    assert bytes(c.u.rsv2) == bytes(128)


def test_sentinel_struct_detects_untouched() -> None:
    c = sentinel_params()
    assert untouched(c) and bytes(c)[:1] == bytes([BYTE_SENTINEL])
    c.type = 1
    assert not untouched(c)


def test_handles_are_interned_and_compare_by_pointer() -> None:
    a = handle(0x1234, "model")
    assert handle(0x1234, "model") is a and a == handle(0x1234, "model")
    assert handle(0, "model") is None and handle(None, "model") is None
    assert out_handle(PTR_SENTINEL, "model") is UNWRITTEN
    assert a != 0x1234 and a not in (None, UNWRITTEN)
    assert isinstance(a, Handle) and int(a) == 0x1234


def test_rc_detail_reaches_err_name() -> None:
    rc = AclRc(207000, "symbol aclmdlRITaskGetParams not found in libacl_rt.so")
    assert rc == Err.RT_FEATURE_NOT_SUPPORT and isinstance(rc, int)
    assert err_name(rc) == ("207000 (RT_FEATURE_NOT_SUPPORT): symbol aclmdlRITaskGetParams "
                            "not found in libacl_rt.so")
    assert err_name(107000) == "107000 (RT_PARAM_INVALID)"


# ---------------------------------------------------------------------------------------------
# no library


@pytest.fixture
def no_cann(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment where discovery finds nothing (HOME and env roots emptied)."""
    for var in ("MDLRI_ACL_LIB", "ASCEND_HOME_PATH", "ASCEND_INSTALL_PATH",
                "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return dict(os.environ)


def _system_cann() -> bool:
    return any(Path(p).exists() for p in ("/usr/local/Ascend", "/opt/Ascend"))


@pytest.mark.skipif(_system_cann(), reason="a system CANN install exists on this machine")
def test_no_library_backend_declares_nothing(no_cann: dict[str, str]) -> None:
    b = create()
    assert isinstance(b, Backend)
    assert b.capabilities == frozenset()
    reason = b.unsupported_reason()
    assert reason and "no CANN runtime library" in reason and "\n" not in reason
    rc, s = b.create_stream()
    assert rc == Err.RT_FEATURE_NOT_SUPPORT and s is UNWRITTEN and rc.detail == reason
    rc, slots, n = b.get_streams(None, 3)
    assert slots == [UNWRITTEN] * 3 and n is UNWRITTEN
    b.close()


@pytest.mark.skipif(_system_cann(), reason="a system CANN install exists on this machine")
def test_cli_run_without_library_is_nothing_tested(no_cann: dict[str, str],
                                                    tmp_path: Path) -> None:
    """No runtime found: one NOTHING TESTED line naming the reason, exit 3, no run written."""
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run", "--backend", "acl",
                          "--report-dir", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, env=no_cann)
    assert res.returncode == 3, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "mdlri-conformance: NOTHING TESTED: acl backend: no CANN runtime library"), lines
    assert not (tmp_path / "out").exists()  # pytest did not run, nothing left behind


@pytest.mark.skipif(_system_cann(), reason="a system CANN install exists on this machine")
def test_pytest_without_library_reports_every_spec_unsupported(no_cann: dict[str, str],
                                                               tmp_path: Path) -> None:
    """Plain pytest: every spec UNSUPPORTED with the reason; the verdict is NOTHING TESTED and
    pytest's exit status is 5 (no tests), never 0."""
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "pytest", "conformance/specs/test_update.py",
                          "-p", "no:cacheprovider", "-q", "--backend", "acl",
                          "--report-dir", str(out)],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, env=no_cann)
    assert res.returncode == 5, res.stdout[-2000:]
    import json
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert rows and all(r["outcome"] == "UNSUPPORTED" for r in rows)
    assert all(r["message"].startswith("UNSUPPORTED: acl backend: no CANN runtime library")
               and r.get("backend_unavailable") for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"]["verdict"] == "NOTHING TESTED"


def test_explicit_bad_path_is_bad_input(tmp_path: Path) -> None:
    from mdlri_conformance.backends.contract import BackendConfigError
    with pytest.raises(BackendConfigError,
                       match=r"^--acl-lib .*nope\.so: no such file or directory$"):
        create(lib=str(tmp_path / "nope.so"))


def test_struct_field_types_follow_the_abi() -> None:
    k = {name: t for name, t in S.KernelTaskParams._fields_}
    assert k["isHostArgs"] is ctypes.c_uint32 and k["argsSize"] is ctypes.c_size_t
    assert S.TaskParams._anonymous_ == ("u",)
    assert not hasattr(S.TaskParams, "_pack_")


# ---------------------------------------------------------------------------------------------
# options


def test_backend_options_bind_each_worker_to_a_device() -> None:
    from mdlri_conformance.conformance.framework.backend_loader import BackendLoadError, backend_options, parse_devices
    assert backend_options("sim", acl_lib="x", devices="3") == {}
    assert backend_options("acl") == {"device": 0}
    assert backend_options("acl", acl_lib="emulator", kernel_binary="/k.o", devices="4") == {
        "device": 4, "lib": "emulator", "kernel_binary": "/k.o"}
    ids = "0,1,2,3,4,5,6,7"
    assert [backend_options("acl", devices=ids, worker=f"gw{k}")["device"]
            for k in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    assert parse_devices(" 2, 5 ") == [2, 5]
    for bad in ("a,b", "-1"):
        with pytest.raises(BackendLoadError):
            parse_devices(bad)


# ---------------------------------------------------------------------------------------------
# a library that lacks symbols (a fake CDLL: Python functions stand in for C ones)


class FakeLib:
    """Exports every SIGNATURES name except ``absent``; each call returns 0."""

    def __init__(self, absent: set[str]) -> None:
        from mdlri_conformance.backends.acl.symbols import SIGNATURES
        for name in SIGNATURES:
            if name not in absent and not name.startswith("mdlriEmu"):
                setattr(self, name, self._fn(name))

    @staticmethod
    def _fn(name: str):
        def fn(*args):
            return None if name in ("aclrtGetSocName", "aclGetRecentErrMsg") else 0
        fn.__name__ = name
        return fn


def test_missing_symbols_make_dependent_caps_and_calls_unsupported(tmp_path: Path) -> None:
    from mdlri_conformance.backends.acl import AclBackend
    from mdlri_conformance.backends.contract import Cap
    kb = tmp_path / "k.o"
    kb.write_bytes(b"")
    b = AclBackend(FakeLib({"aclmdlRITaskGetParams", "aclrtValueWait"}), lib_path=Path("fake.so"),
                   kernel_binary=str(kb))
    assert b.unsupported_reason() is None
    assert Cap.GET_PARAMS not in b.capabilities and Cap.VALUE_TASKS not in b.capabilities
    assert Cap.SET_PARAMS in b.capabilities and Cap.KERNELS in b.capabilities
    # a real library: no stale-handle validation, no internal-task counts
    assert Cap.HANDLE_VALIDATION not in b.capabilities
    assert "use-after-free" in b.unsupported_reason(Cap.HANDLE_VALIDATION.value)
    reason = b.unsupported_reason(Cap.GET_PARAMS.value)
    assert reason == "symbol aclmdlRITaskGetParams not found in fake.so"
    assert b.unsupported_reason("task_get_params") == reason
    rc, p = b.task_get_params(handle(0x40, "task"))
    assert rc == Err.RT_FEATURE_NOT_SUPPORT and p is UNWRITTEN and rc.detail == reason
    from mdlri_conformance.conformance import expect
    from mdlri_conformance.conformance.framework import outcomes
    with pytest.raises(outcomes.Unsupported, match="not found in fake.so"):
        expect.ok(rc, "aclmdlRITaskGetParams")


def test_hardware_without_kernel_binary_lacks_kernels(tmp_path: Path) -> None:
    from mdlri_conformance.backends.acl import AclBackend
    from mdlri_conformance.backends.contract import Cap
    b = AclBackend(FakeLib(set()), lib_path=Path("fake.so"), kernel_binary=None)
    assert Cap.KERNELS not in b.capabilities and Cap.CAPTURE in b.capabilities
    assert "kernels build" in (b.unsupported_reason(Cap.KERNELS.value) or "")


# ---------------------------------------------------------------------------------------------
# out-parameters (each call's own), inline handle conversion, the closed backend


def test_threads_calling_at_once_each_read_their_own_out_parameters() -> None:
    """Each call makes its own out-parameters: threads asking about different tasks at once
    (the C call releases the GIL) each read back their own task's answer."""
    import threading

    from mdlri_conformance.backends.contract import CaptureMode
    b = create(lib="emulator")
    assert not b.unsupported_reason(), f"emulator unavailable: {b.unsupported_reason()}"
    try:
        rc, s = b.create_stream()
        rc2, addr = b.malloc(64)
        assert rc == rc2 == 0
        assert b.capture_begin(s, CaptureMode.RELAXED) == 0
        assert b.value_write(addr, 1, 0, s) == 0 and b.memset_async(addr, 64, 0, 64, s) == 0
        rc, model = b.capture_end(s)
        rc, streams, _ = b.get_streams(model, 1)
        rc, tasks, _ = b.get_tasks_by_stream(streams[0], 2)
        want = [(b.task_get_seq_id(t)[1], b.task_get_type(t)[1]) for t in tasks]
        assert want[0] != want[1]
        wrong: list[Any] = []

        def ask(task: Any, expected: tuple[int, Any]) -> None:
            b.set_device(0)
            for _ in range(20000):
                got = (b.task_get_seq_id(task)[1], b.task_get_type(task)[1])
                if got != expected:
                    wrong.append(got)
                    return

        threads = [threading.Thread(target=ask, args=(t, w))
                   for t, w in zip(tasks * 2, want * 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert wrong == []
        b.destroy(model)
        b.free(addr)
        b.destroy_stream(s)
    finally:
        b.close()
    with pytest.raises(RuntimeError, match="aclmdlRITaskGetType called on a closed AclBackend"):
        b.task_get_type(tasks[0])
    with pytest.raises(RuntimeError, match="aclrtDestroyStream called on a closed AclBackend"):
        b.destroy_stream(s)


def test_prepared_resolves_each_function_once_then_serves_it_as_an_attribute() -> None:
    """``Prepared`` asks the table once per C name when it is built (a missing one is None),
    keeps each answer as a plain instance attribute with nothing of that name on the class
    (so the per-call lookup specialises), and refuses names that are no C function."""
    from mdlri_conformance.backends.acl.symbols import SIGNATURES, Prepared

    asked: list[str] = []

    class Table:
        def get(self, name: str) -> Any:
            asked.append(name)
            return None if name == "aclrtFree" else f"fn:{name}"

    p: Any = Prepared(Table())  # type: ignore[arg-type]
    assert sorted(asked) == sorted(SIGNATURES)
    assert p.aclrtFree is None and p.aclrtFree is None
    assert p.aclrtMalloc == "fn:aclrtMalloc" and p.aclrtMalloc == "fn:aclrtMalloc"
    assert len(asked) == len(SIGNATURES)
    assert vars(p)["aclrtMalloc"] == "fn:aclrtMalloc"
    assert not any(hasattr(Prepared, name) for name in SIGNATURES)
    with pytest.raises(AttributeError):
        p.notACFunction


def test_inline_handle_conversion_answers_like_as_ptr() -> None:
    """The methods that convert a :class:`Handle` by its ``ptr`` inline answer exactly what
    the same pointer gives through ``as_ptr`` (an int, a numpy integer, a Handle subclass):
    on a live handle, on a stale one, and during a capture; NULL alike (None and 0); a bool
    is still refused."""
    import numpy as np

    from mdlri_conformance.backends.contract import CaptureMode
    b = create(lib="emulator")
    assert not b.unsupported_reason(), f"emulator unavailable: {b.unsupported_reason()}"

    class SubHandle(Handle):
        __slots__ = ()

    def answer(method: Any, arg: Any) -> tuple[Any, ...]:
        """The method's result with each rc as (code, detail)."""
        res = method(arg)
        res = res if isinstance(res, tuple) else (res,)
        return tuple((int(x), getattr(x, "detail", "")) if isinstance(x, int) else x
                     for x in res)

    def same_for_every_form(method: Any, h: Handle) -> tuple[Any, ...]:
        first = answer(method, h)
        for arg in (h.ptr, np.uint64(h.ptr), SubHandle(h.ptr, h.kind)):
            assert answer(method, arg) == first, (method.__name__, arg)
        assert answer(method, None) == answer(method, 0), method.__name__
        with pytest.raises(TypeError):
            method(True)
        return first

    try:
        rc, s = b.create_stream()
        rc2, addr = b.malloc(64)
        assert rc == rc2 == 0
        assert b.capture_begin(s, CaptureMode.RELAXED) == 0
        status = same_for_every_form(b.capture_get_info, s)
        assert status[0][0] == 0 and status[2] is not None, status
        assert b.value_write(addr, 1, 0, s) == 0
        rc, model = b.capture_end(s)
        rc, streams, _ = b.get_streams(model, 1)
        rc, tasks, _ = b.get_tasks_by_stream(streams[0], 1)
        cases = [(b.synchronize_stream, s), (b.stream_query, s), (b.capture_get_info, s),
                 (b.task_get_type, tasks[0]), (b.task_get_seq_id, tasks[0])]
        for method, h in cases:
            assert same_for_every_form(method, h)[0][0] == 0, method.__name__
        b.destroy(model)
        b.free(addr)
        rc, stale = b.create_stream()
        assert rc == 0 and b.destroy_stream(stale) == 0
        for method in (b.synchronize_stream, b.stream_query, b.capture_get_info):
            assert same_for_every_form(method, stale)[0][0] != 0, method.__name__
        assert b.destroy_stream(s) == 0
    finally:
        b.close()
