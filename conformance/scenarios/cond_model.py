"""Scenario S4, ``3_cond_model``: conditional tasks (IF / WHILE / SWITCH) with sub-models.

Reproduces the CANN example (scenarios.md S4) through the contract. Each test captures a
parent model (THREAD_LOCAL) whose only task is a conditional task: ``aclmdlRICaptureGetInfo``
gives the parent, ``aclmdlRICondHandleCreate(parent, 0, flag)``, ``GetCondPtr``,
``aclmdlRIAddCondTask`` fills the sub-model array, and each branch body is captured on a
second stream with ``aclmdlRICaptureToModelRIBegin`` / ``aclmdlRICaptureEnd``. Every body is
``dst = A + B * alpha`` (the example's aclnnAdd, here the catalog's float32 ``axpy_f32``)
with ``A = 1..8`` and ``B = 0.5..4``; the WHILE body also copies 8 zero bytes into the
condition (captured D2D ``aclrtMemcpyAsync``) so it would leave the loop after one pass.
Before each run the host writes the condition with a synchronous 8-byte H2D copy.

The example uses ``ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT`` with default 0, so by the
documented rule (COND-03, COND-12) the runtime re-initialises the condition to 0 at every
launch and the host's writes do not survive: IF always takes ``modelRIArray[1]`` (alpha 0.5,
``1.2500 ...``), WHILE never runs its body, SWITCH always runs case 0 (alpha 1.0,
``1.5000 ...``). This is what the example's README prints. One deliberate difference:
every ``dst`` is prefilled with the sentinel -1.0 (scenarios.md S4 advice), so WHILE
prints ``-1.0000`` eight times where the README shows IF's left-over ``1.2500 ...`` from a
reused allocation.

``run_cond_model(..., flag=CondHandleFlag.NONE)`` runs the same tests with a host-managed
condition: IF 2,4,...,16 then 1.25,...,10; WHILE one pass, 1.5,...,12; SWITCH cases 0/1/2
give 1.5... / 2,4,... / 1.25....
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (
    UNWRITTEN,
    Backend,
    CaptureMode,
    CondHandleFlag,
    CondTaskParams,
    CondTaskType,
    MemcpyKind,
)
from mdlri_conformance.kernel import catalog

from ._common import Example, Runner, ScenarioError, print_array, reports_unsupported, run_steps

NAME = "3_cond_model"
ELEMENTS = 8
BYTES = ELEMENTS * 4
A = np.arange(1, 9, dtype=np.float32)
B = (np.arange(1, 9, dtype=np.float32) * np.float32(0.5)).astype(np.float32)
SENTINEL = np.float32(-1.0)
IF_ALPHAS = (2.0, 0.5)
WHILE_ALPHA = 1.0
SWITCH_ALPHAS = (1.0, 2.0, 0.5)


def body(alpha: float) -> np.ndarray:
    """``A + B * alpha`` in float32."""
    return (A + B * np.float32(alpha)).astype(np.float32)


def sentinel() -> np.ndarray:
    """What an output no branch wrote holds."""
    return np.full(ELEMENTS, SENTINEL, dtype=np.float32)


def expected(flag: int) -> dict[str, list[np.ndarray]]:
    """The documented results per test for ``flag`` (COND-03, COND-11)."""
    if flag == CondHandleFlag.ASSIGN_DEFAULT:  # the condition is 0 at every launch
        return {"IF": [body(IF_ALPHAS[1])] * 2, "WHILE": [sentinel()],
                "SWITCH": [body(SWITCH_ALPHAS[0])] * 3}
    return {"IF": [body(IF_ALPHAS[0]), body(IF_ALPHAS[1])], "WHILE": [body(WHILE_ALPHA)],
            "SWITCH": [body(a) for a in SWITCH_ALPHAS]}


@dataclass
class CondResult:
    """Everything the scenario observed: per test, the dst read back after each run."""

    lines: list[str] = field(default_factory=list)
    outputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    passed: dict[str, bool] = field(default_factory=dict)
    ok: bool = False


@reports_unsupported
def run_cond_model(b: Backend, emit: Callable[[str], None] = print,
                   flag: int = CondHandleFlag.ASSIGN_DEFAULT) -> CondResult:
    """Run IF, WHILE and SWITCH on ``b`` in that order; ``emit`` receives each line."""
    res = CondResult()
    for name, size, alphas, cond_values in (
            ("IF", 2, IF_ALPHAS, (1, 0)),
            ("WHILE", 1, (WHILE_ALPHA,), (1,)),
            ("SWITCH", 3, SWITCH_ALPHAS, (0, 1, 2))):
        r = Runner(b, emit, res.lines)
        r.info(f"========== {name} condition ==========")
        outs: list[np.ndarray] = []
        res.outputs[name] = outs
        res.passed[name] = run_steps(r, functools.partial(
            _test, r, name, size, alphas, cond_values, flag, outs))
        if res.passed[name]:
            r.info(f"{name} condition PASSED")
    res.ok = all(res.passed.values())
    Runner(b, emit, res.lines).info("========== All tests PASSED ==========")
    return res


EXAMPLE = Example(run_cond_model, ("cond_model", NAME))


def _label(name: str, cond: int) -> str:
    if name == "IF":
        return "IF true branch result:" if cond else "IF false branch result:"
    if name == "WHILE":
        return "WHILE single iteration result:"
    return f"SWITCH case {cond} result:"


def _test(r: Runner, name: str, size: int, alphas: tuple[float, ...],
          cond_values: tuple[int, ...], flag: int, outs: list[np.ndarray]) -> None:
    b: Any = r.b
    stream, sub_stream, exec_stream = r.stream(), r.stream(), r.stream()
    a_dev, b_dev, dst = r.malloc(BYTES), r.malloc(BYTES), r.malloc(BYTES)
    r.h2d(a_dev, A)
    r.h2d(b_dev, B)
    r.h2d(dst, sentinel())
    zero_dev = r.malloc(8)
    r.h2d(zero_dev, np.zeros(1, dtype=np.uint64))
    fn = r.load_functions("axpy_f32")["axpy_f32"]

    r.check(b.capture_begin(stream, CaptureMode.THREAD_LOCAL), "aclmdlRICaptureBegin")
    capturing = r.opened(lambda: b.capture_end(stream))
    rc, _status, parent = b.capture_get_info(stream)
    r.check(rc, "aclmdlRICaptureGetInfo")
    rc, handle = b.cond_handle_create(parent, 0, flag)
    r.check(rc, "aclmdlRICondHandleCreate")
    rc, cond_dev = b.cond_handle_get_cond_ptr(handle)
    r.check(rc, "aclmdlRICondHandleGetCondPtr")
    ctype = {"IF": CondTaskType.IF, "WHILE": CondTaskType.WHILE, "SWITCH": CondTaskType.SWITCH}
    rc, subs = b.add_cond_task(CondTaskParams(handle=handle, type=ctype[name], size=size,
                                              model_ri_array=size), stream, 0)
    r.check(rc, "aclmdlRIAddCondTask")
    for i, alpha in enumerate(alphas):
        r.check(b.capture_to_model_ri_begin(sub_stream, subs[i], CaptureMode.THREAD_LOCAL),
                "aclmdlRICaptureToModelRIBegin")
        sub_capturing = r.opened(lambda: b.capture_end(sub_stream))
        args = catalog.get("axpy_f32").pack(x=a_dev, y=b_dev, out=dst, n=ELEMENTS,
                                            alpha=catalog.f32_bits(alpha))
        r.check(b.launch_kernel_with_host_args(fn, 1, sub_stream, None, args, len(args)),
                "aclnnAdd")
        if name == "WHILE":
            r.check(b.memcpy_async(cond_dev, 8, zero_dev, 8, MemcpyKind.DEVICE_TO_DEVICE,
                                   sub_stream), "aclrtMemcpyAsync")
        rc, _sub = b.capture_end(sub_stream)
        r.closed(sub_capturing)
        r.check(rc, "aclmdlRICaptureEnd")
    rc, model = b.capture_end(stream)
    r.closed(capturing)
    r.check(rc, "aclmdlRICaptureEnd")
    if model in (None, UNWRITTEN):
        raise ScenarioError("Operation failed: aclmdlRICaptureEnd returned no Model RI")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))

    for cond in cond_values:
        r.check(b.memcpy(cond_dev, 8, np.array([cond], dtype=np.uint64), 8,
                         MemcpyKind.HOST_TO_DEVICE), "aclrtMemcpy")
        r.check(b.execute_async(model, exec_stream), "aclmdlRIExecuteAsync")
        r.check(b.synchronize_stream(exec_stream), "aclrtSynchronizeStream")
        out = r.d2h(dst, A)
        outs.append(out)
        r.info(_label(name, cond))
        r.info(print_array(out))
