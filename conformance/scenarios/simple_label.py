"""Scenario S8, ``label/0_simple_label``: a build-mode model with a label switch.

Reproduces the CANN example (scenarios.md S8) through the contract: one PERSISTENT
``labelStream`` bound HEAD to a model from ``aclmdlRIBuildBegin``, a uint32 branch index 1
on the device (synchronous H2D), two labels in a label list, and on ``labelStream``:
``aclrtSwitchLabelByIndex(branchIndexDevice, 2, list)``, ``aclrtSetLabel(label0)``,
``aclrtSetLabel(label1)``, ``aclmdlRIEndTask``; ``aclmdlRIBuildEnd``, then
``aclmdlRIExecuteAsync`` on an ordinary ``executeStream`` and a sync. One INFO line per step
(18 lines); no data is checked. Cleanup logs ``Operation failed: <api> returned error code
<n>`` per failing call.

Differences from the example: aclInit, the device and the context are the backend's (the
first three lines are printed after ``set_device(0)``, the contract has no
``aclrtCreateContext``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import Backend, ModelStreamFlag, StreamFlag

from ._common import Example, Runner, reports_unsupported, run_scenario

NAME = "label/0_simple_label"
BRANCH_INDEX = 1
LABELS = 2


@dataclass
class SimpleLabelResult:
    """Everything the scenario observed."""

    lines: list[str] = field(default_factory=list)
    ok: bool = False


@reports_unsupported
def run_simple_label(b: Backend, emit: Callable[[str], None] = print) -> SimpleLabelResult:
    """Run the scenario on ``b``; ``emit`` receives each printed line."""
    return run_scenario(SimpleLabelResult(), b, emit, _steps)


EXAMPLE = Example(run_simple_label, ("simple_label", "0_simple_label"))


def _steps(r: Runner) -> None:
    b: Any = r.b
    r.info("ACL initialized.")
    r.check(b.set_device(0), "aclrtSetDevice")
    r.info("Device 0 selected.")
    r.info("Context created on device 0.")

    rc, label_stream = b.create_stream_with_config(0, StreamFlag.PERSISTENT)
    r.check(rc, "aclrtCreateStreamWithConfig")
    r.defer("aclrtDestroyStream", lambda: b.destroy_stream(label_stream))
    r.info("Persistent label stream created.")
    execute_stream = r.stream()
    r.info("Execute stream created.")

    rc, model = b.build_begin(0)
    r.check(rc, "aclmdlRIBuildBegin")
    r.defer("aclmdlRIDestroy", lambda: b.destroy(model))
    r.info("Model runtime instance build started.")
    r.check(b.bind_stream(model, label_stream, ModelStreamFlag.HEAD), "aclmdlRIBindStream")
    r.defer("aclmdlRIUnbindStream", lambda: b.unbind_stream(model, label_stream))
    r.info("Persistent label stream bound to the model runtime instance.")

    branch = r.malloc(4)
    r.info("Allocated device memory for branch index.")
    r.h2d(branch, np.array([BRANCH_INDEX], dtype=np.uint32))
    r.info(f"Copied branch index {BRANCH_INDEX} from host to device.")

    labels = []
    for i in range(LABELS):
        rc, label = b.create_label()
        r.check(rc, "aclrtCreateLabel")
        r.defer("aclrtDestroyLabel", lambda label=label: b.destroy_label(label))
        labels.append(label)
        r.info(f"Created label {i}.")
    rc, label_list = b.create_label_list(labels, LABELS)
    r.check(rc, "aclrtCreateLabelList")
    r.defer("aclrtDestroyLabelList", lambda: b.destroy_label_list(label_list))
    r.info(f"Created label list with {LABELS} labels.")

    r.check(b.switch_label_by_index(branch, LABELS, label_list, label_stream),
            "aclrtSwitchLabelByIndex")
    r.info(f"Submitted switch-label task with branch index {BRANCH_INDEX}.")
    for i, label in enumerate(labels):
        r.check(b.set_label(label, label_stream), "aclrtSetLabel")
        r.info(f"Set label {i} on the persistent stream.")
    r.check(b.end_task(model, label_stream), "aclmdlRIEndTask")
    r.check(b.build_end(model, None), "aclmdlRIBuildEnd")
    r.info("Model runtime instance build finished.")

    r.check(b.execute_async(model, execute_stream), "aclmdlRIExecuteAsync")
    r.check(b.synchronize_stream(execute_stream), "aclrtSynchronizeStream")
    r.info(f"Switch label executed successfully with branch index {BRANCH_INDEX}.")
    r.info("Run the simple_label sample successfully.")
