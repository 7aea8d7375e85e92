"""The KERNEL ``aclmdlRITaskParams`` that SetParams takes, built from a packed argument struct.

One builder for every caller that points a captured kernel task at new arguments (the specs
through ``Dev.kernel_params``, the capability probes): the rule it encodes is the contract's
``aclmdlRIKernelTaskParams`` fields (GETP-03) and isHostArgs semantics (SETP-09): ``args`` is
host bytes with ``isHostArgs = 1``, or a device address with ``isHostArgs = 0``; ``argsSize``
is the size of the argument struct either way.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import KernelTaskParams, TaskParams, TaskType


def kernel_task_params(func_handle: Any, args: bytes | int, *, args_size: int | None = None,
                       cfg: Any = None, num_blocks: int = 1) -> TaskParams:
    """KERNEL task params running ``func_handle`` on ``args``.

    ``args`` is the packed struct (host args) or the device address holding it (then
    ``args_size``, the struct's size, is required).
    """
    host = isinstance(args, (bytes, bytearray))
    if args_size is None:
        if not host:
            raise ValueError("kernel_task_params: device args need args_size")
        args_size = len(args)
    return TaskParams(type=TaskType.KERNEL, kernel=KernelTaskParams(
        func_handle=func_handle, cfg=cfg, args=args, is_host_args=1 if host else 0,
        args_size=args_size, num_blocks=num_blocks))
