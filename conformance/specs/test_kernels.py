"""Kernels and their arguments (KRN-01..03, clauses-kernels.toml): a launch's output does not
depend on numBlocks, and the argument bytes follow the parameter layout the runtime reports
(aclrtFunctionGetParamCount / aclrtFunctionGetParamInfo).

Every other kernel spec launches one block and packs the catalog's C struct; these specs
check that both rest on something: each catalog kernel is launched with 1, 2, 3, 8 and 13
blocks on fresh buffers and every buffer it can touch is read back and held against the
catalog's numpy semantics (:mod:`kernel.catalog`, evaluated here on host copies) and against
the one-block launch; and each kernel's reported layout is the one the suite packs with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.kernel_layouts import strict_mode
from mdlri_conformance.backends.contract import UNWRITTEN, Cap, Err
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.harness import Buf, Dev, in_thread
from mdlri_conformance.kernel import catalog
from mdlri_conformance.kernel.layout import FOLLOW, SAME, compare

#: elements of the parametric kernels: none of BLOCKS divides it, so the last share is short
N = 67
#: the block counts held against one block (KRN-01)
BLOCKS = (2, 3, 8, 13)
#: the scalar arguments other than ``n``
SCALARS = {"a": -3, "b": 7, "value": 42, "alpha": catalog.f32_bits(0.5)}
FLOAT_KERNELS = frozenset({"axpy_f32", "mul_f32"})


class HostMirror:
    """A :class:`kernel.catalog.DeviceMemory` over host copies of the spec's buffers, keyed by
    their device addresses: the catalog's semantics run on it give the expected contents."""

    def __init__(self) -> None:
        self.regions: dict[int, np.ndarray] = {}

    def add(self, buf: Buf, values: np.ndarray) -> None:
        self.regions[buf.addr] = np.ascontiguousarray(values, dtype=np.int32).view(np.uint8).copy()

    def _find(self, addr: int, nbytes: int) -> tuple[np.ndarray, int]:
        for base, data in self.regions.items():
            if base <= addr and addr + nbytes <= base + data.size:
                return data, addr - base
        raise AssertionError(f"host mirror: no buffer holds [{addr:#x}, +{nbytes})")

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        data, off = self._find(addr, nbytes)
        return data[off:off + nbytes].copy()

    def write(self, addr: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8)
        region, off = self._find(addr, raw.size)
        region[off:off + raw.size] = raw

    def values(self, buf: Buf) -> np.ndarray:
        return self.regions[buf.addr].view(np.int32).copy()


@dataclass(frozen=True)
class Case:
    """A catalog kernel and, optionally, one pointer field aliasing another buffer at an
    element offset (``copy`` with overlapping ranges, ``affine`` in place)."""

    kernel: str
    alias: tuple[str, str, int] | None = None  # (field, aliased field, element offset)

    @property
    def id(self) -> str:
        return self.kernel if self.alias is None else \
            f"{self.kernel}-{'in-place' if self.alias[2] == 0 else 'overlap'}"


CASES = [Case(k) for k in catalog.KERNELS] + [Case("copy", ("dst", "src", 5)),
                                              Case("affine", ("y", "x", 0))]


def _initial(case: Case, field: catalog.Field, k: int, n: int) -> np.ndarray:
    """A pointer field's initial contents: outputs -1, wait_flag's flag set (it runs),
    trap_if's clear (it does not trap), data an int32 pattern with wrap-around values (float
    bits for the float32 kernels)."""
    if case.kernel == "wait_flag" and field.name == "flag":
        return np.array([1] + [0] * (n - 1), dtype=np.int32)
    if case.kernel == "trap_if":
        return np.zeros(n, dtype=np.int32)
    if field.role == "out":
        return np.full(n, -1, dtype=np.int32)
    if case.kernel in FLOAT_KERNELS:
        return (np.arange(n, dtype=np.float32) * np.float32(0.25) - np.float32(3 - k)).view(np.int32)
    raw = (np.arange(n, dtype=np.int64) * 0x0123_4567 + (k + 1) * 0x7654_3210) & 0xFFFF_FFFF
    return raw.astype(np.uint32).view(np.int32)


def _run(dev: Dev, case: Case, blocks: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Fresh buffers, one launch of ``case`` with ``blocks`` blocks, a timed sync; returns the
    buffers read back and their expected contents (the catalog's semantics on host copies)."""
    spec = catalog.get(case.kernel)
    n = catalog.SEED_ELEMENTS if case.kernel.startswith("fallback") else N
    mirror = HostMirror()
    values: dict[str, Any] = {}
    bufs: list[Buf] = []
    for k, f in enumerate(spec.fields):
        if f.kind != "ptr":
            values[f.name] = n if f.name == "n" else SCALARS[f.name]
        elif case.alias is not None and f.name == case.alias[0]:
            continue  # placed below, inside the aliased buffer
        else:
            extra = case.alias[2] if case.alias is not None and f.name == case.alias[1] else 0
            data = _initial(case, f, k, n + extra)
            buf = dev.buffer(data)
            mirror.add(buf, data)
            values[f.name] = buf
            bufs.append(buf)
    if case.alias is not None:
        name, target, offset = case.alias
        values[name] = values[target].at(offset)
    s = dev.stream()
    dev.launch(case.kernel, s, blocks, **values)
    dev.sync(s)
    observed = [dev.read(b) for b in bufs]
    spec.body(mirror, {k: int(v) for k, v in values.items()})
    return observed, [mirror.values(b) for b in bufs]


@pytest.mark.clause("KRN-01")
@pytest.mark.requires(Cap.KERNELS, Cap.SYNC_TIMEOUT)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_output_does_not_depend_on_num_blocks(dev: Dev, case: Case) -> None:
    """KRN-01: the kernel launched with 1, 2, 3, 8 and 13 blocks (fresh buffers each time)
    leaves every buffer it can touch as the catalog's semantics say, and the multi-block
    buffers equal the one-block ones (numBlocks: the cores the kernel runs on,
    `docs/zh/api_ref/14_Kernel_loading_and_execution.md:1626`)."""
    single, expected = _run(dev, case, 1)
    for i, (o, e) in enumerate(zip(single, expected)):
        expect.eq(o, e, f"{case.id} numBlocks 1: buffer {i} against the catalog semantics")
    for blocks in BLOCKS:
        observed, _ = _run(dev, case, blocks)
        for i, (o, one) in enumerate(zip(observed, single)):
            expect.eq(o, one, f"{case.id} numBlocks {blocks}: buffer {i} against numBlocks 1")


@pytest.mark.clause("KRN-01")
@pytest.mark.requires(Cap.CAPTURE, Cap.KERNELS, Cap.SYNC_TIMEOUT)
def test_replayed_multi_block_kernels(dev: Dev) -> None:
    """KRN-01 in a model: an accumulate launched with 3 blocks and an in-place affine with 8,
    captured once and executed twice, leave acc = acc0 + 2 x and y = 3 (3 y0 + 1) + 1 (int32,
    wrapping); a kernel that did its whole operation on every block would add x six times."""
    x0 = _initial(Case("accumulate"), catalog.Field("x", "ptr", "in"), 1, N)
    acc0 = _initial(Case("accumulate"), catalog.Field("acc", "ptr", "inout"), 0, N)
    y0 = _initial(Case("affine"), catalog.Field("x", "ptr", "in"), 2, N)
    acc, x, y = dev.buffer(acc0), dev.buffer(x0), dev.buffer(y0)
    s, e = dev.stream(), dev.stream()
    dev.begin(s)
    dev.launch("accumulate", s, 3, acc=acc, x=x, n=N)
    dev.launch("affine", s, 8, x=y, y=y, n=N, a=3, b=1)
    model = dev.end(s)
    dev.execute(model, e)
    dev.execute(model, e)
    with np.errstate(over="ignore"):
        want_acc = ((acc0.astype(np.int64) + 2 * x0.astype(np.int64)) & 0xFFFF_FFFF
                    ).astype(np.uint32)
        want_y = y0.astype(np.int64)
        for _ in range(2):
            want_y = (3 * want_y + 1) & 0xFFFF_FFFF  # one in-place affine per execution
    expect.eq(dev.read(acc), want_acc.view(np.int32), "acc after two executions")
    expect.eq(dev.read(y), want_y.astype(np.uint32).view(np.int32),
              "y after two executions (one in-place affine each)")
    expect.eq(dev.read(x), x0, "x (input) after two executions")


# ---------------------------------------------------------------------------------------------
# KRN-02, KRN-03: the reported parameter layout


def _param_api(dev: Dev) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The backend's function_get_param_count / _info (FunctionInfoBackend); UNSUPPORTED
    without them."""
    count = getattr(dev.b, "function_get_param_count", None)
    info = getattr(dev.b, "function_get_param_info", None)
    if count is None or info is None:
        raise outcomes.Unsupported("the backend has no aclrtFunctionGetParamCount/Info "
                                   "(FunctionInfoBackend)")
    return count, info


def _count_of(dev: Dev, name: str) -> tuple[Any, int]:
    """The function handle of ``name`` and its reported parameter count; UNSUPPORTED when
    the runtime has no parameter information for it (107000: a kernel object without the
    parameter records, `api/impl/api_error.cc:7610-7614`)."""
    count_fn, info = _param_api(dev)
    func = dev.func(name)
    rc, count = count_fn(func)
    if rc == Err.RT_PARAM_INVALID:
        raise outcomes.Unsupported(f"the runtime has no parameter information for {name} "
                                   f"(aclrtFunctionGetParamCount answered {int(rc)})")
    expect.ok(rc, f"aclrtFunctionGetParamCount({name})")
    expect.unsupported_if(info(func, 0)[0], f"aclrtFunctionGetParamInfo({name}, 0)")
    return func, count


@pytest.mark.clause("KRN-02")
@pytest.mark.requires(Cap.KERNELS, Cap.SYNC_TIMEOUT)
@pytest.mark.parametrize("name", list(catalog.KERNELS))
def test_reported_layout_is_the_packed_layout(dev: Dev, name: str) -> None:
    """KRN-02: the runtime reports one parameter per field of the kernel's struct (then,
    unless ``--kernel-layout strict``, possibly hidden trailing parameters of at least 8
    bytes), each at an offset and size the suite can pack the field into (`kernel/layout.py`),
    and that layout is the one the suite packs with in this process (the C struct, or the
    runtime's layout the backend followed when it started); a launch packed so leaves the
    catalog's output."""
    _, info = _param_api(dev)
    func, count = _count_of(dev, name)
    spec = catalog.get(name)
    expect.true(count >= len(spec.fields), f"{name}: parameters reported vs struct fields",
                f">= {len(spec.fields)}", count)
    slots = []
    for i in range(count):
        rc, offset, size = info(func, i)
        expect.ok(rc, f"aclrtFunctionGetParamInfo({name}, {i})")
        slots.append((offset, size))
    check = compare(catalog.NATURAL[name], slots, strict_mode())
    expect.true(check.verdict in (SAME, FOLLOW), f"{name}: a layout the suite can pack",
                "same or follow", check.detail)
    expect.eq(tuple(slots[:len(spec.fields)]), spec.layout,
              f"{name}: reported layout vs the layout packed")
    observed, expected = _run(dev, Case(name), 1)
    for i, (o, e) in enumerate(zip(observed, expected)):
        expect.eq(o, e, f"{name}: buffer {i} after a launch packed in that layout")


@pytest.mark.clause("KRN-03")
@pytest.mark.requires(Cap.KERNELS)
def test_param_info_argument_checks(dev: Dev) -> None:
    """KRN-03: NULL func, NULL count, and offset and size both NULL are the ACL layer's 100000
    (`src/acl/aclrt_impl/kernel.cpp:741-766`); an index at or past the count is 107000, also
    one that only fits in 64 bits (`api/impl/api_error.cc:7629-7633` compares the size_t);
    with one out-pointer NULL the other is written (`api/impl/api_impl.cc:9328-9342`). Each
    refused call leaves its out-parameters unwritten."""
    count_fn, info = _param_api(dev)
    func, count = _count_of(dev, "affine")
    layout = catalog.get("affine").layout
    expect.eq(count_fn(None), (Err.INVALID_PARAM, UNWRITTEN), "ParamCount(func=NULL)")
    expect.eq(count_fn(func, null_out=True), (Err.INVALID_PARAM, UNWRITTEN),
              "ParamCount(paramCount=NULL)")
    expect.eq(info(None, 0), (Err.INVALID_PARAM, UNWRITTEN, UNWRITTEN), "ParamInfo(func=NULL)")
    expect.eq(info(func, 0, null_offset=True, null_size=True),
              (Err.INVALID_PARAM, UNWRITTEN, UNWRITTEN), "ParamInfo(offset=NULL, size=NULL)")
    for index in (count, count + 1, 1 << 32):
        expect.eq(info(func, index), (Err.RT_PARAM_INVALID, UNWRITTEN, UNWRITTEN),
                  f"ParamInfo(index {index}, count {count})")
    expect.eq(info(func, 2, null_offset=True), (Err.SUCCESS, UNWRITTEN, layout[2][1]),
              "ParamInfo(index 2, offset=NULL)")
    expect.eq(info(func, 2, null_size=True), (Err.SUCCESS, layout[2][0], UNWRITTEN),
              "ParamInfo(index 2, size=NULL)")


@pytest.mark.clause("KRN-03")
@pytest.mark.requires(Cap.KERNELS, Cap.THREADS)
def test_param_info_null_checks_come_before_the_context(dev: Dev) -> None:
    """KRN-03: the NULL checks are the ACL layer's, made before the runtime looks for a
    context (`src/acl/aclrt_impl/kernel.cpp:741-766`): in a thread with no current context a
    NULL func, a NULL count, or offset and size both NULL still answer 100000, nothing
    written."""
    count_fn, info = _param_api(dev)
    func, _ = _count_of(dev, "affine")
    # deliberately no aclrtSetDevice in the worker: the missing context is the point
    got = in_thread(dev.b, lambda: (count_fn(None), count_fn(func, null_out=True),
                                    info(None, 0),
                                    info(func, 0, null_offset=True, null_size=True)),
                    set_device=False)
    expect.eq(list(got), [(Err.INVALID_PARAM, UNWRITTEN), (Err.INVALID_PARAM, UNWRITTEN),
                          (Err.INVALID_PARAM, UNWRITTEN, UNWRITTEN),
                          (Err.INVALID_PARAM, UNWRITTEN, UNWRITTEN)],
              "ParamCount(NULL), ParamCount(count=NULL), ParamInfo(NULL), "
              "ParamInfo(offset=size=NULL) without a context")


@pytest.mark.clause("KRN-03")
@pytest.mark.requires(Cap.KERNELS, Cap.THREADS)
def test_param_info_needs_no_context(dev: Dev) -> None:
    """KRN-03: no layer of aclrtFunctionGetParamCount/Info looks for a context (ACL layer
    `src/acl/aclrt_impl/kernel.cpp:741-766`, `api/api_c_standard_soc.cc:1581-1615`,
    `api/impl/api_error.cc:7606-7636`, `api/impl/api_impl.cc:9322-9342`): in a thread with no
    current context the count and the info are answered (one out-pointer NULL leaves only that
    value unwritten) and an index past the count is still 107000."""
    count_fn, info = _param_api(dev)
    func, count = _count_of(dev, "affine")
    layout = catalog.get("affine").layout
    # deliberately no aclrtSetDevice in the worker: the missing context is the point
    got = in_thread(dev.b, lambda: (count_fn(func), info(func, 2, null_offset=True),
                                    info(func, 2, null_size=True), info(func, count)),
                    set_device=False)
    expect.eq(list(got), [(Err.SUCCESS, count), (Err.SUCCESS, UNWRITTEN, layout[2][1]),
                          (Err.SUCCESS, layout[2][0], UNWRITTEN),
                          (Err.RT_PARAM_INVALID, UNWRITTEN, UNWRITTEN)],
              "ParamCount, ParamInfo(2, offset=NULL), ParamInfo(2, size=NULL), "
              f"ParamInfo({count}) without a context")


@pytest.mark.clause("KRN-03")
@pytest.mark.requires(Cap.KERNELS, Cap.HANDLE_VALIDATION)
def test_param_info_of_an_unloaded_function(dev: Dev) -> None:
    """KRN-03: the function of an unloaded binary is no live kernel handle: ParamCount and
    ParamInfo answer 107017 with nothing written (`core/src/common/runtime_handle_guard.cc:
    70-93`; on hardware this is use-after-free, hence HANDLE_VALIDATION)."""
    count_fn, info = _param_api(dev)
    rc, binary = dev.b.binary_load_from_file(dev.b.kernel_binary_path(), None)
    expect.ok(rc, "aclrtBinaryLoadFromFile (setup)")
    rc, func = dev.b.binary_get_function(binary, "fill")
    if rc != Err.SUCCESS:
        dev.b.binary_unload(binary)
    expect.ok(rc, "aclrtBinaryGetFunction fill (setup)")
    rc, count = count_fn(func)
    expect.ok(dev.b.binary_unload(binary), "aclrtBinaryUnLoad")
    if rc == Err.RT_PARAM_INVALID:
        raise outcomes.Unsupported("the runtime has no parameter information for fill")
    expect.ok(rc, "aclrtFunctionGetParamCount(fill) while loaded")
    expect.eq(count_fn(func), (Err.RT_INVALID_HANDLE, UNWRITTEN),
              "ParamCount of an unloaded binary's function")
    expect.eq(info(func, 0), (Err.RT_INVALID_HANDLE, UNWRITTEN, UNWRITTEN),
              "ParamInfo of an unloaded binary's function")
