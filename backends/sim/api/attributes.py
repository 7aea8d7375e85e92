"""Launch attributes (emulator ``attributes.c``): aclmdlRIKernelTaskGetAttribute (ATTR). The
attributes are parsed at launch and SetParams (:mod:`backends.sim.attributes`)."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, TaskType

from ..attributes import QUERYABLE, query
from ..guard import NO_CTX_OUT, guarded
from ..handles import live
from ..model import Task
from .checks import E_HANDLE, E_NULL, E_PARAM, OK, is_plain_int


class AttributesApi:
    """The attributes of a captured kernel task."""

    @guarded(NO_CTX_OUT)
    def kernel_task_get_attribute(self, task: Any, attr_id: int, *,
                                  null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIKernelTaskGetAttribute (ATTR-01..06)."""
        if task is None or null_out:
            return E_NULL, UNWRITTEN  # ATTR-05
        if not (live(task, Task) and task.model.alive):
            return E_HANDLE, UNWRITTEN
        if task.host.type != TaskType.KERNEL:
            return E_PARAM, UNWRITTEN  # ATTR-01
        if not is_plain_int(attr_id) or attr_id not in {int(a) for a in QUERYABLE}:
            return E_PARAM, UNWRITTEN  # ATTR-02
        return OK, query(task.host.attrs, int(attr_id))
