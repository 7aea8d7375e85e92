"""Kernel launch attributes: aclmdlRIKernelTaskGetAttribute (ATTR-01..ATTR-06, SETP-08, ERR-15).

Kernels are captured with aclrtLaunchKernelWithHostArgs and a LaunchKernelCfg; the attributes
are read back from the model's KERNEL task.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, Err, LaunchAttr, LaunchAttrId, LaunchKernelCfg, TaskType,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.specs._setups import Case

pytestmark = pytest.mark.requires(Cap.ATTRIBUTES, Cap.CAPTURE, Cap.KERNELS, Cap.LISTING,
                                  Cap.TASK_TYPE)

X = np.arange(1, 9, dtype=np.int32)
QUERYABLE = (LaunchAttrId.SCHEM_MODE, LaunchAttrId.DYN_UBUF_SIZE, LaunchAttrId.DATA_DUMP,
             LaunchAttrId.TIMEOUT, LaunchAttrId.TIMEOUT_US)


def kernel_tasks(dev: Dev, *cfgs: LaunchKernelCfg | None) -> tuple[Any, list[Any]]:
    """Capture one fallback_main per cfg; returns (model, its KERNEL tasks in launch order)."""
    s = dev.stream()
    x = dev.buffer(X)
    dev.begin(s)
    for cfg in cfgs:
        data = dev.args("fallback_main", input=x, output=dev.buffer(n=8))
        expect.ok(dev.b.launch_kernel_with_host_args(dev.func("fallback_main"), 1, s, cfg, data,
                                                     len(data)),
                  "aclrtLaunchKernelWithHostArgs with cfg (setup)")
    model = dev.end(s)
    tasks = dev.kernel_tasks(model)
    expect.eq(len(tasks), len(cfgs), "KERNEL tasks listed (setup)")
    return model, tasks


def cfg(*attrs: tuple[int, Any]) -> LaunchKernelCfg:
    return LaunchKernelCfg([LaunchAttr(i, v) for i, v in attrs])


def attr(dev: Dev, task: Any, attr_id: int) -> Any:
    rc, v = dev.b.kernel_task_get_attribute(task, attr_id)
    expect.ok(rc, f"aclmdlRIKernelTaskGetAttribute({LaunchAttrId(attr_id).name})")
    return v


def us(value: Any) -> int:
    """A TIMEOUT_US value (low, high) as one integer."""
    low, high = value
    return (int(high) << 32) | int(low)


@pytest.mark.clause("ATTR-01")
@pytest.mark.requires(Cap.VALUE_TASKS)
def test_non_kernel_task(dev: Dev) -> None:
    """ATTR-01: GetAttribute on a non-kernel (VALUE_WRITE) task returns 107000."""
    s = dev.stream()
    word = dev.buffer64(0)
    dev.begin(s)
    expect.ok(dev.b.value_write(word, 1, 0, s), "aclrtValueWrite (setup)")
    model = dev.end(s)
    (task,) = dev.tasks_of_type(model, TaskType.VALUE_WRITE)
    rc, _ = dev.b.kernel_task_get_attribute(task, LaunchAttrId.TIMEOUT)
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclmdlRIKernelTaskGetAttribute on a VALUE_WRITE task")


@pytest.mark.clause("ATTR-02")
@pytest.mark.parametrize("attr_id", QUERYABLE, ids=lambda a: a.name)
def test_queryable_ids(dev: Dev, attr_id: LaunchAttrId) -> None:
    """ATTR-02: SCHEM_MODE, DYN_UBUF_SIZE, DATA_DUMP, TIMEOUT and TIMEOUT_US can be queried."""
    _, (task,) = kernel_tasks(dev, None)
    rc, _ = dev.b.kernel_task_get_attribute(task, attr_id)
    expect.ok(rc, f"aclmdlRIKernelTaskGetAttribute({attr_id.name})")


@pytest.mark.clause("ATTR-02")
@pytest.mark.parametrize("attr_id", [LaunchAttrId.ENGINE_TYPE, LaunchAttrId.BLOCKDIM_OFFSET,
                                     LaunchAttrId.BLOCK_TASK_PREFETCH, 0, 99],
                         ids=["ENGINE_TYPE", "BLOCKDIM_OFFSET", "BLOCK_TASK_PREFETCH", "id0",
                              "id99"])
def test_unqueryable_ids(dev: Dev, attr_id: int) -> None:
    """ATTR-02: ENGINE_TYPE, BLOCKDIM_OFFSET, BLOCK_TASK_PREFETCH and unknown ids return 107000."""
    _, (task,) = kernel_tasks(dev, None)
    rc, _ = dev.b.kernel_task_get_attribute(task, attr_id)
    expect.rc(rc, Err.RT_PARAM_INVALID, f"aclmdlRIKernelTaskGetAttribute(id {int(attr_id)})")


@pytest.mark.clause("ATTR-03")
def test_timeout_in_seconds_and_microseconds(dev: Dev) -> None:
    """ATTR-03: a launch TIMEOUT of 5 s reads back as TIMEOUT 5 and TIMEOUT_US 5000000."""
    _, (task,) = kernel_tasks(dev, cfg((LaunchAttrId.TIMEOUT, 5)))
    expect.eq(attr(dev, task, LaunchAttrId.TIMEOUT), 5, "TIMEOUT (s)")
    expect.eq(us(attr(dev, task, LaunchAttrId.TIMEOUT_US)), 5_000_000, "TIMEOUT_US (us)")


@pytest.mark.clause("ATTR-03")
def test_timeout_us_reads_back(dev: Dev) -> None:
    """ATTR-03: a launch TIMEOUT_US of 7 s (low/high words) reads back as 7000000 us and TIMEOUT 7."""
    _, (task,) = kernel_tasks(dev, cfg((LaunchAttrId.TIMEOUT_US, (7_000_000, 0))))
    expect.eq(us(attr(dev, task, LaunchAttrId.TIMEOUT_US)), 7_000_000, "TIMEOUT_US (us)")
    expect.eq(attr(dev, task, LaunchAttrId.TIMEOUT), 7, "TIMEOUT (s)")


@pytest.mark.clause("ATTR-03")
def test_default_timeout_is_not_zero(dev: Dev, fingerprint: Any) -> None:
    """ATTR-03: a kernel launched without a timeout reports the system default (non-zero)."""
    _, (plain,) = kernel_tasks(dev, None)
    default = attr(dev, plain, LaunchAttrId.TIMEOUT)
    fingerprint.record("ATTR-03:default_s", default)
    expect.ne(default, 0, "TIMEOUT of a kernel launched without one")


@pytest.mark.clause("ATTR-03")
@pytest.mark.requires(Cap.NEVER_TIMEOUT)
def test_never_timeout_reads_zero(dev: Dev) -> None:
    """ATTR-03: a kernel launched with TIMEOUT 0 ("never") reports 0 — only where the TS firmware
    supports "never" (`core/src/task/task_info/davinci/davinci_kernel_task.cc:175-179`; without it
    the maximum is stored and reported, `core/src/kernel/kernel_utils.cc:286-298`)."""
    _, (never,) = kernel_tasks(dev, cfg((LaunchAttrId.TIMEOUT, 0)))
    expect.eq(attr(dev, never, LaunchAttrId.TIMEOUT), 0, "TIMEOUT of a 'never time out' kernel")


@pytest.mark.clause("ATTR-04")
def test_schem_mode(dev: Dev, fingerprint: Any) -> None:
    """ATTR-04: without a setting SCHEM_MODE is the kernel's own mode (0 or 1); an explicit 1 reads 1."""
    _, (plain, batch) = kernel_tasks(dev, None, cfg((LaunchAttrId.SCHEM_MODE, 1)))
    own = attr(dev, plain, LaunchAttrId.SCHEM_MODE)
    fingerprint.record("ATTR-04:own", own)
    expect.true(own in (0, 1), "SCHEM_MODE without a setting", "0 or 1", own)
    expect.eq(attr(dev, batch, LaunchAttrId.SCHEM_MODE), 1, "SCHEM_MODE set to 1")


@pytest.mark.clause("ATTR-05")
@pytest.mark.parametrize("which", ["task", "value"])
def test_null_arguments(dev: Dev, which: str) -> None:
    """ATTR-05: a NULL task or attrValue returns 100000 (unlike the other task APIs)."""
    if which == "task":
        rc, _ = dev.b.kernel_task_get_attribute(None, LaunchAttrId.TIMEOUT)
    else:
        _, (task,) = kernel_tasks(dev, None)
        rc, _ = dev.b.kernel_task_get_attribute(task, LaunchAttrId.TIMEOUT, null_out=True)
    expect.rc(rc, Err.INVALID_PARAM, f"aclmdlRIKernelTaskGetAttribute(NULL {which})")


@pytest.mark.clause("ATTR-06")
@pytest.mark.requires(Cap.SET_PARAMS)
def test_attributes_follow_set_params(dev: Dev) -> None:
    """ATTR-06: after SetParams with cfg TIMEOUT 9 the attribute reads 9 before Update."""
    _, (task,) = kernel_tasks(dev, cfg((LaunchAttrId.TIMEOUT, 3)))
    params = dev.kernel_params("fallback_main", cfg=cfg((LaunchAttrId.TIMEOUT, 9)),
                                input=dev.buffer(X), output=dev.buffer(n=8))
    expect.ok(dev.b.task_set_params(task, params), "aclmdlRITaskSetParams with cfg")
    expect.eq(attr(dev, task, LaunchAttrId.TIMEOUT), 9, "TIMEOUT after SetParams, before Update")


@pytest.mark.clause("SETP-08")
@pytest.mark.requires(Cap.GET_PARAMS, Cap.SET_PARAMS)
def test_round_trip_drops_launch_attributes(dev: Dev) -> None:
    """SETP-08: a GetParams->SetParams round trip (cfg NULL) resets TIMEOUT to the default."""
    _, (plain, timed) = kernel_tasks(dev, None, cfg((LaunchAttrId.TIMEOUT, 9)))
    default = attr(dev, plain, LaunchAttrId.TIMEOUT)
    expect.eq(attr(dev, timed, LaunchAttrId.TIMEOUT), 9, "TIMEOUT before the round trip (setup)")
    params = dev.params_of(timed)
    expect.eq(params.kernel.cfg, None, "GetParams cfg (setup)")
    expect.ok(dev.b.task_set_params(timed, replace(params, task_grp=None)),
              "aclmdlRITaskSetParams with the task's own params")
    expect.eq(attr(dev, timed, LaunchAttrId.TIMEOUT), default, "TIMEOUT after the round trip")


# ---------------------------------------------------------------------------------------------
# ERR-15


def _null_task(dev: Dev) -> int:
    return dev.b.kernel_task_get_attribute(None, LaunchAttrId.TIMEOUT)[0]


def _null_value(dev: Dev) -> int:
    _, (task,) = kernel_tasks(dev, None)
    return dev.b.kernel_task_get_attribute(task, LaunchAttrId.TIMEOUT, null_out=True)[0]


def _non_kernel(dev: Dev) -> int:
    s = dev.stream()
    word = dev.buffer64(0)
    dev.begin(s)
    expect.ok(dev.b.value_write(word, 1, 0, s), "aclrtValueWrite (setup)")
    (task,) = dev.tasks_of_type(dev.end(s), TaskType.VALUE_WRITE)
    return dev.b.kernel_task_get_attribute(task, LaunchAttrId.TIMEOUT)[0]


def _unsupported_attr(dev: Dev) -> int:
    _, (task,) = kernel_tasks(dev, None)
    return dev.b.kernel_task_get_attribute(task, LaunchAttrId.ENGINE_TYPE)[0]


@pytest.mark.clause("ERR-15")
@pytest.mark.parametrize("make, expected", [
    pytest.param(_null_task, Err.INVALID_PARAM, id="null_task"),
    pytest.param(_null_value, Err.INVALID_PARAM, id="null_value"),
    pytest.param(_non_kernel, Err.RT_PARAM_INVALID, id="non_kernel",
                 marks=pytest.mark.requires(Cap.VALUE_TASKS)),
    pytest.param(_unsupported_attr, Err.RT_PARAM_INVALID, id="unsupported_attr"),
])
def test_err15_kernel_task_get_attribute(dev: Dev, make: Case, expected: int) -> None:
    """ERR-15: aclmdlRIKernelTaskGetAttribute returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIKernelTaskGetAttribute")


@pytest.mark.clause("RT-36")
@pytest.mark.parametrize("bad", [
    cfg(),
    cfg((LaunchAttrId.SCHEM_MODE, 2)),
    cfg((LaunchAttrId.BLOCK_TASK_PREFETCH, 2)),
    cfg((LaunchAttrId.DATA_DUMP, 2)),
    cfg((LaunchAttrId.ENABLE_PROFILING, 2)),
], ids=["attrs_null", "schem_mode_2", "prefetch_2", "data_dump_2", "profiling_2"])
def test_launch_cfg_values_are_checked(dev: Dev, bad: LaunchKernelCfg) -> None:
    """RT-36: aclrtLaunchKernelWithHostArgs with a cfg whose attrs is NULL, SCHEM_MODE 2,
    BLOCK_TASK_PREFETCH, DATA_DUMP or ENABLE_PROFILING 2 returns 107000 and captures nothing
    (CheckKernelLaunchCfg, `api/impl/api_error.cc:950-1044`); the same kernel launched with the
    value 1 is captured."""
    x = dev.buffer(np.arange(1, 9, dtype=np.int32))
    s = dev.stream()
    dev.begin(s)
    data = dev.args("fallback_main", input=x, output=dev.buffer(n=8))
    rc = dev.b.launch_kernel_with_host_args(dev.func("fallback_main"), 1, s, bad, data, len(data))
    expect.rc(rc, Err.RT_PARAM_INVALID, "aclrtLaunchKernelWithHostArgs with a bad cfg",
              clause="RT-36")
    good = LaunchKernelCfg([replace(a, value=1) for a in bad.attrs]) if bad.attrs else None
    expect.ok(dev.b.launch_kernel_with_host_args(dev.func("fallback_main"), 1, s, good, data,
                                                 len(data)),
              "aclrtLaunchKernelWithHostArgs with the value 1 (or no cfg)")
    model = dev.end(s)
    expect.eq(len(dev.kernel_tasks(model)), 1, "KERNEL tasks captured", clause="RT-36")
