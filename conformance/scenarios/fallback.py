"""Scenario S6, ``0_model_task_fallback``: task introspection, SetParams, Disable, Update.

Reproduces the CANN example step for step through the contract (scenarios.md S6):
capture ``fallback_main`` then ``fallback_postprocess`` (RELAXED, host args, one block),
execute with a 5000 ms timed sync, verify the baseline, select the two kernel tasks by type
KERNEL + function handle + seq-id order, point the main task at the backup input with
host args, disable the optional task, commit with Update, execute again and verify that
the main output came from the backup input and the optional output kept its sentinel.

It prints the example's lines (``[INFO]  `` prefix, two spaces) and returns what it saw, so
the end-to-end spec can assert every number and the CLI can print the same transcript.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import Backend, CaptureMode, Err, MemcpyKind, TaskType, err_name

from ._common import ScenarioError, not_supported, reports_unsupported

ELEMENTS = 8
BYTES = ELEMENTS * 4
TIMEOUT_MS = 5000
MAIN_BIAS = 10
POST_SCALE = 2
SENTINEL = -1
PRIMARY = np.arange(1, 9, dtype=np.int32)
BACKUP = np.arange(21, 29, dtype=np.int32)


@dataclass
class FallbackResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    baseline_main: np.ndarray | None = None
    baseline_optional: np.ndarray | None = None
    main_seq: int | None = None
    optional_seq: int | None = None
    stream_count: int | None = None
    kernel_count: int | None = None
    fallback_main: np.ndarray | None = None
    fallback_optional: np.ndarray | None = None
    ok: bool = False


def _pack(inp: int, out: int) -> bytes:
    return struct.pack("<QQ", inp, out)  # KernelArgs {int32_t* input; int32_t* output;}


class _Run:
    def __init__(self, b: Backend, emit: Callable[[str], None], res: FallbackResult) -> None:
        self.b, self.res = b, res
        self._emit = emit
        self.cleanup: list[tuple[str, Callable[[], int]]] = []
        self.stream: Any = None
        self.capturing = False

    def info(self, msg: str) -> None:
        line = f"[INFO]  {msg}"
        self.res.lines.append(line)
        self._emit(line)

    def error(self, msg: str) -> None:
        line = f"[ERROR]  {msg}"
        self.res.lines.append(line)
        self._emit(line)

    def check(self, rc: int, call: str) -> None:
        not_supported(rc, call)
        if rc != Err.SUCCESS:
            raise ScenarioError(f"Operation failed: {call} returned error code {err_name(rc)}")

    def h2d(self, dst: int, values: np.ndarray) -> None:
        arr = np.ascontiguousarray(values, dtype=np.int32)
        self.check(self.b.memcpy(dst, BYTES, arr, BYTES, MemcpyKind.HOST_TO_DEVICE), "aclrtMemcpy")

    def d2h(self, src: int) -> np.ndarray:
        out = np.zeros(ELEMENTS, dtype=np.int32)
        self.check(self.b.memcpy(out, BYTES, src, BYTES, MemcpyKind.DEVICE_TO_HOST), "aclrtMemcpy")
        return out

    def malloc(self) -> int:
        rc, addr = self.b.malloc(BYTES)
        self.check(rc, "aclrtMalloc")
        self.cleanup.append(("aclrtFree", lambda: self.b.free(addr)))
        return addr

    def execute(self, model: Any) -> None:
        self.check(self.b.execute_async(model, self.stream), "aclmdlRIExecuteAsync")
        self.check(self.b.synchronize_stream_with_timeout(self.stream, TIMEOUT_MS),
                   "aclrtSynchronizeStreamWithTimeout")


@reports_unsupported
def run_fallback(b: Backend, emit: Callable[[str], None] = print) -> FallbackResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = FallbackResult()
    r = _Run(b, emit, res)
    r.info("Start to run 0_model_task_fallback sample.")
    try:
        _steps(r)
        res.ok = True
    except ScenarioError as exc:
        r.error(str(exc))
    finally:
        if r.capturing:
            b.capture_end(r.stream)
        for op, fn in reversed(r.cleanup):
            rc = fn()
            if rc != Err.SUCCESS:
                r.error(f"Cleanup failed: {op} returned error code {rc}")
                res.ok = False
    if res.ok:
        r.info("Run the 0_model_task_fallback sample successfully.")
    else:
        r.error("Run the 0_model_task_fallback sample failed.")
    return res


def _steps(r: _Run) -> None:
    b, res = r.b, r.res
    rc, r.stream = b.create_stream()
    r.check(rc, "aclrtCreateStream")
    stream = r.stream
    r.cleanup.append(("aclrtDestroyStream", lambda: b.destroy_stream(stream)))

    primary, backup, main_out, opt_out = (r.malloc() for _ in range(4))
    r.h2d(primary, PRIMARY)
    r.h2d(backup, BACKUP)
    sentinel = np.full(ELEMENTS, SENTINEL, dtype=np.int32)
    r.h2d(main_out, sentinel)
    r.h2d(opt_out, sentinel)

    rc, binh = b.binary_load_from_file(b.kernel_binary_path(), None)
    r.check(rc, "aclrtBinaryLoadFromFile")
    r.cleanup.append(("aclrtBinaryUnLoad", lambda: b.binary_unload(binh)))
    rc, main_fn = b.binary_get_function(binh, "fallback_main")
    r.check(rc, "aclrtBinaryGetFunction")
    rc, opt_fn = b.binary_get_function(binh, "fallback_postprocess")
    r.check(rc, "aclrtBinaryGetFunction")

    # CaptureModel
    r.check(b.capture_begin(stream, CaptureMode.RELAXED), "aclmdlRICaptureBegin")
    r.capturing = True
    main_args, opt_args = _pack(primary, main_out), _pack(main_out, opt_out)
    r.check(b.launch_kernel_with_host_args(main_fn, 1, stream, None, main_args, len(main_args)),
            "aclrtLaunchKernelWithHostArgs")
    r.check(b.launch_kernel_with_host_args(opt_fn, 1, stream, None, opt_args, len(opt_args)),
            "aclrtLaunchKernelWithHostArgs")
    rc, model = b.capture_end(stream)
    r.capturing = False
    r.check(rc, "aclmdlRICaptureEnd")
    r.cleanup.append(("aclmdlRIDestroy", lambda: b.destroy(model)))

    # Baseline
    r.execute(model)
    main, opt = r.d2h(main_out), r.d2h(opt_out)
    res.baseline_main, res.baseline_optional = main, opt
    exp_main = PRIMARY + MAIN_BIAS
    for i in range(ELEMENTS):
        if main[i] != exp_main[i] or opt[i] != exp_main[i] * POST_SCALE:
            raise ScenarioError(f"Path mismatch at {i}: main={main[i]}, optional={opt[i]}.")
    r.info(f"Baseline path verified: main_first={main[0]}, optional_first={opt[0]}.")
    r.h2d(main_out, sentinel)
    r.h2d(opt_out, sentinel)

    # SelectTasks: exactly one model stream, at least two tasks
    rc, _, n = b.get_streams(model, None)
    r.check(rc, "aclmdlRIGetStreams")
    res.stream_count = n
    if n != 1:
        raise ScenarioError(f"Expected one model Stream, but found {n}.")
    rc, streams, n = b.get_streams(model, n)
    r.check(rc, "aclmdlRIGetStreams")
    rc, _, t = b.get_tasks_by_stream(streams[0], None)
    r.check(rc, "aclmdlRIGetTasksByStream")
    if t < 2:
        raise ScenarioError(f"Expected at least two model tasks, but found {t}.")
    rc, tasks, t = b.get_tasks_by_stream(streams[0], t)
    r.check(rc, "aclmdlRIGetTasksByStream")

    kernels = 0
    main_sel = opt_sel = None
    for task in tasks[:t]:
        rc, ttype = b.task_get_type(task)
        r.check(rc, "aclmdlRITaskGetType")
        if ttype != TaskType.KERNEL:
            continue
        kernels += 1
        rc, seq = b.task_get_seq_id(task)
        r.check(rc, "aclmdlRITaskGetSeqId")
        rc, params = b.task_get_params(task)
        r.check(rc, "aclmdlRITaskGetParams")
        if params.kernel.func_handle == main_fn:
            main_sel = (task, seq, params)
        elif params.kernel.func_handle == opt_fn:
            opt_sel = (task, seq)
    res.kernel_count = kernels
    if kernels != 2 or main_sel is None or opt_sel is None or not main_sel[1] < opt_sel[1]:
        raise ScenarioError("Cannot uniquely identify the ordered main and optional tasks.")
    res.main_seq, res.optional_seq = main_sel[1], opt_sel[1]
    r.info(f"Selected fallback tasks: main_seq={main_sel[1]}, optional_seq={opt_sel[1]}.")

    # ApplyFallback
    task, _, params = main_sel
    k = params.kernel
    if (params.type != TaskType.KERNEL or k.func_handle != main_fn or k.is_host_args != 0
            or k.args_size != len(main_args) or k.num_blocks != 1):
        raise ScenarioError("The main task parameters do not match the captured Kernel launch.")
    fallback_args = _pack(backup, main_out)
    updated = replace(params, kernel=replace(k, args=fallback_args, is_host_args=1))
    r.check(b.task_set_params(task, updated), "aclmdlRITaskSetParams")
    r.check(b.task_disable(opt_sel[0]), "aclmdlRITaskDisable")
    r.check(b.update(model), "aclmdlRIUpdate")

    # Fallback run
    r.execute(model)
    main, opt = r.d2h(main_out), r.d2h(opt_out)
    res.fallback_main, res.fallback_optional = main, opt
    exp_main = BACKUP + MAIN_BIAS
    for i in range(ELEMENTS):
        if main[i] != exp_main[i] or opt[i] != SENTINEL:
            raise ScenarioError(f"Path mismatch at {i}: main={main[i]}, optional={opt[i]}.")
    r.info(f"Fallback path verified: main_first={main[0]}, optional_first={opt[0]}.")
