"""Scenario S3, ``2_model_switch``: explicit build, bound persistent streams, switch/activate.

Reproduces the CANN example (scenarios.md S3) through the contract. A model is built by hand
(``aclmdlRIBuildBegin``) over five PERSISTENT streams: ``stream1`` bound HEAD, ``stream2``,
``stream3``, ``stream4`` and ``endStream`` bound DEFAULT (they run only once activated):

* stream1: H2D ``self1``/``other1``, add1 (``out1 = 1 + 2 * 1.2 = 3.4``), a device-to-device
  copy of 4 bytes ``numDevice <- targetValDev_1``, then ``aclrtSwitchStream(numDevice, EQUAL,
  rightDevice1 (1), INT32, stream3)`` and ``aclrtSwitchStream(numDevice, EQUAL, rightDevice2
  (2), INT32, stream4)``;
* stream2: H2D ``self2``/``other2``, add2 (``out2 = 4.4``), ``aclrtActiveStream(endStream)``;
* stream3: H2D ``self3``/``other3``, add3 (``out3 = 5.4``), ``aclrtActiveStream(endStream)``;
* stream4: ``aclrtActiveStream(stream2)``; endStream: ``aclmdlRIEndTask``.

Run 1 (``targetValDev_1 = 1``): the first switch jumps to stream3, so out1 = 3.4, out3 = 5.4
and out2 keeps what it held. Then ``targetValDev_1 = 2`` (async H2D on ``copyStream``) and
run 2: the second switch goes to stream4, which activates stream2: out1 = 3.4, out2 = 4.4 and
out3 keeps 5.4 from run 1. Each run prints ``After executing, print dataK.`` /
``After second execution, print dataK.`` and the array (``PrintArray``).

Differences from the example: the aclnn adds are the catalog's ``axpy_f32`` kernel, the
context and device are the backend's, and the outputs are prefilled with ``sentinel``
(default 0.0, which gives the example's printed ``0.0000`` for the never-written ``data2`` of
run 1; the example relied on fresh device memory reading zero, scenarios.md §6).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (Backend, CompareDataType, Condition, MemcpyKind,
                               ModelStreamFlag, StreamFlag)
from mdlri_conformance.kernel import catalog

from ._common import Example, Runner, print_array, reports_unsupported, run_scenario

NAME = "2_model_switch"
ELEMENTS = 8
BYTES = ELEMENTS * 4
ALPHA = 1.2
SELVES = (1.0, 2.0, 3.0)
OTHER = 2.0


def expected_out(k: int) -> np.ndarray:
    """``outK = selfK + other * alpha`` (K = 1..3) in float32."""
    self_k = np.full(ELEMENTS, SELVES[k - 1], dtype=np.float32)
    return (self_k + np.full(ELEMENTS, OTHER, dtype=np.float32) * np.float32(ALPHA)) \
        .astype(np.float32)


def expected_outputs(sentinel: float = 0.0) -> list[list[np.ndarray]]:
    """[run][K-1]: run 1 -> out1, sentinel, out3; run 2 -> out1, out2, out3 (left over)."""
    s = np.full(ELEMENTS, sentinel, dtype=np.float32)
    return [[expected_out(1), s, expected_out(3)],
            [expected_out(1), expected_out(2), expected_out(3)]]


@dataclass
class ModelSwitchResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    #: [run][K-1] the three outputs read back after each run
    outputs: list[list[np.ndarray]] = field(default_factory=list)
    ok: bool = False


@reports_unsupported
def run_model_switch(b: Backend, emit: Callable[[str], None] = print,
                     sentinel: float = 0.0) -> ModelSwitchResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    res = ModelSwitchResult()
    return run_scenario(res, b, emit, lambda r: _steps(r, res, float(sentinel)))


EXAMPLE = Example(run_model_switch, ("model_switch", NAME))


def _steps(r: Runner, res: ModelSwitchResult, sentinel: float) -> None:
    b: Any = r.b
    fn = r.load_functions("axpy_f32")["axpy_f32"]

    def host(values: np.ndarray) -> np.ndarray:
        """Pinned host memory holding ``values`` (the async copies need pinned memory)."""
        arr = np.ascontiguousarray(values)
        buf = r.malloc_host(arr.nbytes)
        buf[:] = arr.view(np.uint8)
        return buf

    def device(values: np.ndarray) -> int:
        addr = r.malloc(np.ascontiguousarray(values).nbytes)
        r.h2d(addr, values)
        return addr

    selves_host = [host(np.full(ELEMENTS, v, dtype=np.float32)) for v in SELVES]
    others_host = [host(np.full(ELEMENTS, OTHER, dtype=np.float32)) for _ in SELVES]
    selves_dev = [r.malloc(BYTES) for _ in SELVES]
    others_dev = [r.malloc(BYTES) for _ in SELVES]
    outs_dev = [device(np.full(ELEMENTS, sentinel, dtype=np.float32)) for _ in SELVES]
    right1 = device(np.array([1], dtype=np.int32))
    right2 = device(np.array([2], dtype=np.int32))
    num_dev = device(np.array([0], dtype=np.uint32))
    target_val = device(np.array([1], dtype=np.uint32))

    def persistent() -> Any:
        rc, s = b.create_stream_with_config(0, StreamFlag.PERSISTENT)
        r.check(rc, "aclrtCreateStreamWithConfig")
        r.defer("aclrtDestroyStream", lambda: b.destroy_stream(s))
        return s

    stream1, stream2, stream3, stream4, end_stream = (persistent() for _ in range(5))
    copy_stream = r.stream()

    rc, model = b.build_begin(0)
    r.check(rc, "aclmdlRIBuildBegin")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))
    for s, flag in ((stream1, ModelStreamFlag.HEAD), (stream2, ModelStreamFlag.DEFAULT),
                    (stream3, ModelStreamFlag.DEFAULT), (stream4, ModelStreamFlag.DEFAULT),
                    (end_stream, ModelStreamFlag.DEFAULT)):
        r.check(b.bind_stream(model, s, flag), "aclmdlRIBindStream")
        r.defer("aclmdlRIUnbindStream", lambda s=s: b.unbind_stream(model, s))

    def add(k: int, s: Any) -> None:
        i = k - 1
        for dst, src in ((selves_dev[i], selves_host[i]), (others_dev[i], others_host[i])):
            r.check(b.memcpy_async(dst, BYTES, src, BYTES, MemcpyKind.HOST_TO_DEVICE, s),
                    "aclrtMemcpyAsync")
        args = catalog.get("axpy_f32").pack(x=selves_dev[i], y=others_dev[i], out=outs_dev[i],
                                            n=ELEMENTS, alpha=catalog.f32_bits(ALPHA))
        r.check(b.launch_kernel_with_host_args(fn, 1, s, None, args, len(args)), "aclnnAdd")

    add(1, stream1)
    r.check(b.memcpy_async(num_dev, 4, target_val, 4, MemcpyKind.DEVICE_TO_DEVICE, stream1),
            "aclrtMemcpyAsync")
    add(2, stream2)
    r.check(b.active_stream(end_stream, stream2), "aclrtActiveStream")
    add(3, stream3)
    r.check(b.active_stream(end_stream, stream3), "aclrtActiveStream")
    r.check(b.switch_stream(num_dev, Condition.EQUAL, right1, CompareDataType.INT32, stream3,
                            None, stream1), "aclrtSwitchStream")
    r.check(b.switch_stream(num_dev, Condition.EQUAL, right2, CompareDataType.INT32, stream4,
                            None, stream1), "aclrtSwitchStream")
    r.check(b.active_stream(stream2, stream4), "aclrtActiveStream")
    r.check(b.end_task(model, end_stream), "aclmdlRIEndTask")
    r.check(b.build_end(model, None), "aclmdlRIBuildEnd")

    rc, execute_stream = b.create_stream()  # the example does not check this one
    if rc == 0:
        r.defer("aclrtDestroyStream", lambda: b.destroy_stream(execute_stream))

    outs_host = [r.malloc_host(BYTES) for _ in SELVES]

    def run(title: str) -> None:
        r.check(b.execute_async(model, execute_stream), "aclmdlRIExecuteAsync")
        r.check(b.synchronize_stream(execute_stream), "aclrtSynchronizeStream")
        for dst, src in zip(outs_host, outs_dev):
            r.check(b.memcpy_async(dst, BYTES, src, BYTES, MemcpyKind.DEVICE_TO_HOST,
                                   copy_stream), "aclrtMemcpyAsync")
        r.check(b.synchronize_stream(copy_stream), "aclrtSynchronizeStream")
        got = []
        for k, h in enumerate(outs_host, start=1):
            data = h.view(np.float32).copy()
            got.append(data)
            r.info(f"{title}, print data{k}.")
            r.info(print_array(data))
        res.outputs.append(got)

    run("After executing")
    two = host(np.array([2], dtype=np.uint32))
    r.check(b.memcpy_async(target_val, 4, two, 4, MemcpyKind.HOST_TO_DEVICE, copy_stream),
            "aclrtMemcpyAsync")
    r.check(b.synchronize_stream(copy_stream), "aclrtSynchronizeStream")
    for h in outs_host:
        h[:] = 0
    run("After second execution")
