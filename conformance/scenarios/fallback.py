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

from mdlri_conformance.backends.contract import Backend, CaptureMode, TaskType

from ._common import Example, Runner, ScenarioError, reports_unsupported, run_scenario

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


NAME = "0_model_task_fallback"


def _pack(inp: int, out: int) -> bytes:
    return struct.pack("<QQ", inp, out)  # KernelArgs {int32_t* input; int32_t* output;}


@reports_unsupported
def run_fallback(b: Backend, emit: Callable[[str], None] = print) -> FallbackResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = FallbackResult()
    return run_scenario(res, b, emit, lambda r: _steps(r, res), sample=NAME)


EXAMPLE = Example(run_fallback, ("fallback", NAME))


def _steps(r: Runner, res: FallbackResult) -> None:
    b = r.b
    stream = r.stream()

    def execute(model: Any) -> None:
        r.check(b.execute_async(model, stream), "aclmdlRIExecuteAsync")
        r.check(b.synchronize_stream_with_timeout(stream, TIMEOUT_MS),
                "aclrtSynchronizeStreamWithTimeout")

    primary, backup, main_out, opt_out = (r.malloc(BYTES) for _ in range(4))
    r.h2d(primary, PRIMARY)
    r.h2d(backup, BACKUP)
    sentinel = np.full(ELEMENTS, SENTINEL, dtype=np.int32)
    r.h2d(main_out, sentinel)
    r.h2d(opt_out, sentinel)

    funcs = r.load_functions("fallback_main", "fallback_postprocess")
    main_fn, opt_fn = funcs["fallback_main"], funcs["fallback_postprocess"]

    # CaptureModel
    r.check(b.capture_begin(stream, CaptureMode.RELAXED), "aclmdlRICaptureBegin")
    capturing = r.opened(lambda: b.capture_end(stream))
    main_args, opt_args = _pack(primary, main_out), _pack(main_out, opt_out)
    r.check(b.launch_kernel_with_host_args(main_fn, 1, stream, None, main_args, len(main_args)),
            "aclrtLaunchKernelWithHostArgs")
    r.check(b.launch_kernel_with_host_args(opt_fn, 1, stream, None, opt_args, len(opt_args)),
            "aclrtLaunchKernelWithHostArgs")
    rc, model = b.capture_end(stream)
    r.closed(capturing)
    r.check(rc, "aclmdlRICaptureEnd")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))

    # Baseline
    execute(model)
    main, opt = r.d2h(main_out, PRIMARY), r.d2h(opt_out, PRIMARY)
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
    execute(model)
    main, opt = r.d2h(main_out, PRIMARY), r.d2h(opt_out, PRIMARY)
    res.fallback_main, res.fallback_optional = main, opt
    exp_main = BACKUP + MAIN_BIAS
    for i in range(ELEMENTS):
        if main[i] != exp_main[i] or opt[i] != SENTINEL:
            raise ScenarioError(f"Path mismatch at {i}: main={main[i]}, optional={opt[i]}.")
    r.info(f"Fallback path verified: main_first={main[0]}, optional_first={opt[0]}.")
