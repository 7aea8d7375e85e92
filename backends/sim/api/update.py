"""Deferred update (emulator ``model.c``): aclmdlRITaskSetParams, aclmdlRITaskDisable,
aclmdlRIUpdate. SetParams/Disable change the host record now; Update commits it to the
device record the executions use (SETP, DIS, UPD; Q-07)."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import Err, TaskParams, TaskType

from ..attributes import parse_cfg
from ..build import BuiltModel
from ..cond import SubModel
from ..device import U64
from ..guard import guarded
from ..handles import live
from ..kernels import FuncHandle
from ..model import ModelStatus, SimModel, Task, TaskRecord
from .checks import E_HANDLE, E_NOT_SUPPORT, E_PARAM, OK, host_bytes, is_int


def _update_blocked(model: SimModel) -> bool:
    """Preliminary state check of SetParams/Disable: capturing, FAULT or running
    (an execution enqueued and not completed) -> 107040, no state change (SETP-11..13)."""
    running = model.running > 0 and "setparams-while-running" not in model.faults
    return model.status in (ModelStatus.CAPTURE_ACTIVE, ModelStatus.FAULT) or running


class UpdateApi:
    """SetParams, Disable and Update of a captured model's tasks."""

    @guarded()
    def task_set_params(self, task: Any, params: TaskParams | None) -> int:
        """aclmdlRITaskSetParams (SETP-01..16): host record now, device record at Update. A
        sub-model's or built model's task 207000 (COND-10, BLD-06); a bad launch ``cfg`` in a
        kernel's params 107000 + FAULT, its attributes are kept with the record (SETP-08,
        ATTR-06)."""
        if task is None or params is None:
            return E_PARAM
        rc, t = self._task(task)
        if rc:
            return rc
        if self._task_refused(t, True):
            return E_NOT_SUPPORT  # COND-10, BLD-06
        model = t.model
        attrs = None
        if isinstance(params, TaskParams) and params.type == TaskType.KERNEL \
                and params.kernel is not None:
            valid, attrs = parse_cfg(params.kernel.cfg)
            if not valid:
                if _update_blocked(model):
                    return int(Err.RT_MODEL_UPDATE_FAILED)
                model.status = ModelStatus.FAULT
                return E_PARAM
        if _update_blocked(model):
            return int(Err.RT_MODEL_UPDATE_FAILED)
        rc, rec = self._new_record(t, params)
        if rc:
            if not self.has_fault("bad-type-no-fault"):
                model.status = ModelStatus.FAULT  # SETP-10
            return rc
        t.host = rec
        t.disabled = False  # DIS-04: last write wins
        if self.has_fault("setparams-without-update"):
            t.dev = rec  # SETP-01 broken: live at once (without the cfg), stays READY
        else:
            model.status = ModelStatus.UPDATING
        if rec.type == TaskType.KERNEL:
            t.host = rec.replace(attrs=attrs)  # SETP-08, ATTR-06
        return OK

    def _new_record(self, task: Task, params: Any) -> tuple[int, TaskRecord | None]:
        """Validate SetParams input against the task; the new host record or an error."""
        if not isinstance(params, TaskParams):
            return E_PARAM, None
        ptype = params.type
        if ptype == TaskType.KERNEL:
            return self._kernel_record(task, params)
        if ptype in (TaskType.VALUE_WRITE, TaskType.VALUE_WAIT):
            return _value_record(task, params)
        return E_PARAM, None  # SETP-03

    def _kernel_record(self, task: Task, params: TaskParams) -> tuple[int, TaskRecord | None]:
        """SETP-04/05/09/15/16."""
        k = params.kernel
        if task.host.type != TaskType.KERNEL or params.task_grp is not None or k is None:
            return E_PARAM, None
        if k.func_handle is None:
            return E_PARAM, None
        if not live(k.func_handle, FuncHandle):
            return E_HANDLE, None
        if k.args is None or not is_int(k.args_size) or k.args_size <= 0:
            return E_PARAM, None
        if not is_int(k.num_blocks) or k.num_blocks < 0:
            return E_PARAM, None
        size = int(k.args_size)
        if k.is_host_args == 1:
            data = host_bytes(k.args)
            if data is None or len(data) < size:
                return E_PARAM, None
            addr = self.mem.alloc(size, "internal")
            self.mem.write(addr, data[:size])
            task.model.internal_allocs.append(addr)
        elif k.is_host_args == 0 and is_int(k.args):
            addr = int(k.args)
        else:
            return E_PARAM, None
        keep_info = params.op_info_ptr is not None and is_int(params.op_info_size) \
            and params.op_info_size > 0
        return OK, TaskRecord(TaskType.KERNEL, func=k.func_handle, args_addr=addr,
                              args_size=size, num_blocks=int(k.num_blocks) & 0xFFFF,
                              op_info_ptr=params.op_info_ptr if keep_info else None,
                              op_info_size=int(params.op_info_size) if keep_info else 0)

    @guarded()
    def task_disable(self, task: Any) -> int:
        """aclmdlRITaskDisable (DIS-01..10): marks the task; removed at Update. A sub-model's
        or built model's task 207000 (COND-10, BLD-06)."""
        if task is None:
            return E_PARAM
        rc, t = self._task(task)
        if rc:
            return rc
        if self._task_refused(t, True):
            return E_NOT_SUPPORT
        model = t.model
        if _update_blocked(model):
            return int(Err.RT_MODEL_UPDATE_FAILED)
        if t.host.type == TaskType.DEFAULT and not self.has_fault("disable-default-accepted"):
            model.status = ModelStatus.FAULT  # DIS-06
            return E_PARAM
        t.disabled = True
        t.host = t.host.replace(op_info_ptr=None, op_info_size=0)  # DIS-10
        model.status = ModelStatus.UPDATING
        return OK

    @guarded()
    def update(self, model: Any) -> int:
        """aclmdlRIUpdate (UPD-01..04): commits host records, drops disabled tasks; a
        sub-model or built model 207000 (COND-10, BLD-06)."""
        rc, m = self._model(model, E_PARAM)
        if rc:
            return rc
        if isinstance(m, (SubModel, BuiltModel)):
            return E_NOT_SUPPORT  # COND-10, BLD-06
        if m.status == ModelStatus.READY:
            return OK
        if m.status == ModelStatus.FAULT and self.has_fault("fault-not-sticky"):
            m.status = ModelStatus.READY
            return OK
        if m.status != ModelStatus.UPDATING:
            return int(Err.RT_MODEL_UPDATE_FAILED)
        m.commit_update()
        m.status = ModelStatus.READY
        if not m.faults:
            m.prepare_plan(self.engine)  # the task streams the next executions will run
        return OK


def _value_record(task: Task, params: TaskParams) -> tuple[int, TaskRecord | None]:
    """SETP-07: converts any non-DEFAULT task into a value write / wait."""
    if task.host.type == TaskType.DEFAULT or params.task_grp is not None:
        return E_PARAM, None
    if params.op_info_ptr is not None or params.op_info_size != 0:
        return E_PARAM, None
    wait = params.type == TaskType.VALUE_WAIT
    m = params.value_wait if wait else params.value_write
    if m is None or m.dev_addr is None or not is_int(m.dev_addr) or not is_int(m.value):
        return E_PARAM, None
    if m.dev_addr % 8:
        return E_PARAM, None
    flag = 0
    if wait:
        if not is_int(m.flag) or not 0 <= m.flag <= 3:
            return E_PARAM, None
        flag = int(m.flag)
    return OK, TaskRecord(TaskType(params.type), dev_addr=int(m.dev_addr),
                          value=int(m.value) & U64, flag=flag)
