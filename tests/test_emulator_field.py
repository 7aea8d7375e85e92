"""Smoke checks of the emulator's field hooks (FLD-06..10, conformance/clauses-field.toml):
the stream-resource limits (RESOURCE_LIMITS) and the trapping kernel ``trap_if``
(DEVICE_FAULTS), through the ctypes binding. The FLD specs are the full check."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import CaptureMode, Cap, Err, MemcpyKind

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")


@pytest.fixture(scope="module")
def b() -> Any:
    from mdlri_conformance.backends.acl import create

    backend = create("emulator")
    yield backend
    backend.close()


def _trap(b: Any) -> tuple[Any, int, bytes]:
    rc, binh = b.binary_load_from_file(b.kernel_binary_path())
    assert rc == 0
    rc, f = b.binary_get_function(binh, "trap_if")
    assert rc == 0
    rc, flag = b.malloc(64)
    assert rc == 0
    _arm(b, flag, 1)
    return f, flag, struct.pack("<Q", flag)


def _arm(b: Any, flag: int, v: int) -> None:
    assert b.memcpy(flag, 4, np.array([v], np.int32), 4, MemcpyKind.HOST_TO_DEVICE) == 0


def test_resource_limits_are_declared(b: Any) -> None:
    """The emulator's default limits reach the backend as RESOURCE_LIMITS and the two
    attributes the FLD specs read."""
    assert Cap.RESOURCE_LIMITS in b.capabilities
    assert (b.stream_limit, b.model_stream_limit) == (512, 64)


def test_trap_on_a_stream(b: Any) -> None:
    """FLD-09: an armed trap_if: launch 0, the next sync 507015, then 0; the stream goes on."""
    f, flag, args = _trap(b)
    rc, s = b.create_stream()
    assert b.launch_kernel_with_host_args(f, 1, s, None, args, len(args)) == 0
    assert b.synchronize_stream(s) == Err.RT_AICORE_EXCEPTION
    assert b.synchronize_stream(s) == 0
    _arm(b, flag, 0)
    assert b.launch_kernel_with_host_args(f, 1, s, None, args, len(args)) == 0
    assert b.synchronize_stream(s) == 0
    assert b.destroy_stream(s) == 0


def test_trap_in_a_replay(b: Any) -> None:
    """FLD-10: an armed trap_if in a replay: the execute stream's next sync 507011, then 0;
    the model stays usable (Update 0) and replays once disarmed."""
    f, flag, args = _trap(b)
    rc, s = b.create_stream()
    rc, x = b.create_stream()
    assert b.capture_begin(s, CaptureMode.RELAXED) == 0
    assert b.launch_kernel_with_host_args(f, 1, s, None, args, len(args)) == 0
    rc, m = b.capture_end(s)
    assert rc == 0
    assert b.execute_async(m, x) == 0
    assert b.synchronize_stream(x) == Err.RT_MODEL_EXECUTE
    assert b.synchronize_stream(x) == 0
    assert b.update(m) == 0
    _arm(b, flag, 0)
    assert b.execute_async(m, x) == 0
    assert b.synchronize_stream(x) == 0
    assert b.destroy(m) == 0
    for st in (s, x):
        assert b.destroy_stream(st) == 0


_LIMIT_SCRIPT = r"""
import ctypes as C, sys
lib = C.CDLL(sys.argv[1])
VP = C.c_void_p
lib.aclmdlRICaptureBegin.argtypes = [VP, C.c_int]
lib.aclmdlRICaptureEnd.argtypes = [VP, C.POINTER(VP)]
lib.aclmdlRIDestroy.argtypes = [VP]
lib.aclrtDestroyStream.argtypes = [VP]
lim, mlim = C.c_uint32(), C.c_uint32()
lib.mdlriEmuResourceLimits(C.byref(lim), C.byref(mlim))
assert lib.aclrtSetDevice(0) == 0
streams, rc = [], 0
while True:
    s = VP()
    rc = lib.aclrtCreateStream(C.byref(s))
    if rc:
        break
    streams.append(s)
begin = lib.aclmdlRICaptureBegin(streams[0], 2)
lib.aclrtDestroyStream(streams.pop())
begin2 = lib.aclmdlRICaptureBegin(streams[0], 2)
m = VP()
end = lib.aclmdlRICaptureEnd(streams[0], C.byref(m))
print(lim.value, mlim.value, len(streams) + 1, rc, begin, begin2, end, lib.aclmdlRIDestroy(m))
"""


def test_stream_limit_from_the_environment() -> None:
    """MDLRI_EMU_STREAM_LIMIT bounds user + capture-internal streams: creation 207008 at the
    limit, CaptureBegin 207008 with no room for the capture stream, 0 once one is freed
    (FLD-06); the model's internal stream is released at destroy."""
    from mdlri_conformance.backends.acl.emulator.build import emulator_library

    env = dict(os.environ, MDLRI_EMU_STREAM_LIMIT="8", MDLRI_EMU_MODEL_STREAM_LIMIT="3")
    r = subprocess.run([sys.executable, "-c", _LIMIT_SCRIPT, str(emulator_library())],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["8", "3", "8", "207008", "207008", "0", "0", "0"]
