"""Scenario S1, ``0_simple_model``: stream capture, capture modes, repeated execution.

Reproduces the CANN example (scenarios.md S1) through the contract. The model computes
``out = (self + other * alpha) * other`` on 8 float32 values with ``self = 1..8``,
``other = 2``, ``alpha = 1.1``:

1. pinned ``selfHost`` (``aclrtMallocHost``) filled by a host-to-host ``aclrtMemcpy``;
2. ``aclmdlRICaptureBegin(GLOBAL)``; ``aclrtMemcpyAsync(selfDevice <- selfHost)`` from pinned
   memory is "safe" and is captured;
3. ``aclmdlRICaptureThreadExchangeMode(RELAXED)`` (returns GLOBAL), a synchronous
   ``aclrtMemcpy(otherDevice <- other)`` that runs at once and is not captured (MODE-06),
   then the exchange back (returns RELAXED);
4. the two operators, captured: the example's ``aclnnAdd`` / ``aclnnMul`` are the catalog's
   float32 kernels ``axpy_f32`` (``outTmp = self + other * alpha``) and ``mul_f32``
   (``out = outTmp * other``), launched with host args;
5. ``aclmdlRICaptureEnd``; ``aclmdlRIDebugJsonPrint(model, path, SUMMARY)`` when the backend
   declares Cap.DEBUG_JSON (the file is written into a temporary directory, not the current
   one);
6. four times: ``execute model, loop count: <i>.``, ExecuteAsync, sync, D2H of ``out`` and
   ``PrintArray`` (``%.4f`` + two spaces): ``6.4000  8.4000 ... 20.4000  ``.

Differences from the example: aclnn operators become catalog kernels (the contract has no
aclnn), the context and device are the backend's, and the pinned buffer is freed (the
example leaks it).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import DEBUG_JSON_SUMMARY, Backend, Cap, CaptureMode, MemcpyKind
from mdlri_conformance.kernel import catalog

from ._common import Example, Runner, print_array, reports_unsupported, run_scenario

NAME = "0_simple_model"
ELEMENTS = 8
BYTES = ELEMENTS * 4
ALPHA = 1.1
LOOP_COUNT = 4
SELF = np.arange(1, 9, dtype=np.float32)
OTHER = np.full(ELEMENTS, 2, dtype=np.float32)


def expected_out() -> np.ndarray:
    """``(self + other * alpha) * other`` in float32, as the kernels compute it."""
    tmp = (SELF + OTHER * np.float32(ALPHA)).astype(np.float32)
    return (tmp * OTHER).astype(np.float32)


@dataclass
class SimpleModelResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    #: what ThreadExchangeMode left in *mode: (after RELAXED in, after GLOBAL back in)
    exchanged: tuple[Any, Any] | None = None
    #: otherDevice read back while the capture was still open (the eager copy took effect)
    other_during_capture: np.ndarray | None = None
    #: DebugJsonPrint: None when the backend lacks Cap.DEBUG_JSON, else (rc, file written)
    debug_json: tuple[int, bool] | None = None
    outputs: list[np.ndarray] = field(default_factory=list)
    ok: bool = False


@reports_unsupported
def run_simple_model(b: Backend, emit: Callable[[str], None] = print) -> SimpleModelResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = SimpleModelResult()
    return run_scenario(res, b, emit, lambda r: _steps(r, res))


EXAMPLE = Example(run_simple_model, ("simple_model", NAME))


def _steps(r: Runner, res: SimpleModelResult) -> None:
    b = r.b
    self_dev, other_dev, out_dev, tmp_dev = (r.malloc(BYTES) for _ in range(4))
    funcs = r.load_functions("axpy_f32", "mul_f32")
    stream = r.stream()
    self_host = r.malloc_host(BYTES)
    r.check(b.memcpy(self_host, BYTES, SELF, BYTES, MemcpyKind.HOST_TO_HOST), "aclrtMemcpy")

    r.check(b.capture_begin(stream, CaptureMode.GLOBAL), "aclmdlRICaptureBegin")

    def abort() -> None:
        b.capture_thread_exchange_mode(CaptureMode.GLOBAL)
        b.capture_end(stream)

    capturing = r.opened(abort)
    r.check(b.memcpy_async(self_dev, BYTES, self_host, BYTES, MemcpyKind.HOST_TO_DEVICE, stream),
            "aclrtMemcpyAsync")
    rc, old = b.capture_thread_exchange_mode(CaptureMode.RELAXED)
    r.check(rc, "aclmdlRICaptureThreadExchangeMode")
    r.check(b.memcpy(other_dev, BYTES, OTHER, BYTES, MemcpyKind.HOST_TO_DEVICE), "aclrtMemcpy")
    res.other_during_capture = r.d2h(other_dev, OTHER)
    rc, back = b.capture_thread_exchange_mode(old)
    r.check(rc, "aclmdlRICaptureThreadExchangeMode")
    res.exchanged = (old, back)

    add = catalog.get("axpy_f32").pack(x=self_dev, y=other_dev, out=tmp_dev, n=ELEMENTS,
                                       alpha=catalog.f32_bits(ALPHA))
    mul = catalog.get("mul_f32").pack(x=tmp_dev, y=other_dev, out=out_dev, n=ELEMENTS)
    r.check(b.launch_kernel_with_host_args(funcs["axpy_f32"], 1, stream, None, add, len(add)),
            "aclrtLaunchKernelWithHostArgs")
    r.check(b.launch_kernel_with_host_args(funcs["mul_f32"], 1, stream, None, mul, len(mul)),
            "aclrtLaunchKernelWithHostArgs")
    rc, model = b.capture_end(stream)
    r.closed(capturing)
    r.check(rc, "aclmdlRICaptureEnd")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))

    if Cap.DEBUG_JSON in b.capabilities:
        with tempfile.TemporaryDirectory(prefix="mdlri-s1-") as tmp:
            path = os.path.join(tmp, "modelRI.json")
            rc = b.debug_json_print(model, path, DEBUG_JSON_SUMMARY)
            res.debug_json = (rc, os.path.isfile(path) and os.path.getsize(path) > 0)
        r.check(rc, "aclmdlRIDebugJsonPrint")

    for i in range(LOOP_COUNT):
        r.info(f"execute model, loop count: {i + 1}.")
        r.check(b.execute_async(model, stream), "aclmdlRIExecuteAsync")
        r.check(b.synchronize_stream(stream), "aclrtSynchronizeStream")
        out = r.d2h(out_dev, SELF)
        res.outputs.append(out)
        r.info(print_array(out))
