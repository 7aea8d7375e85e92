"""Kernel binary API (emulator ``binary.c``): aclrtBinaryLoadFromFile,
aclrtBinaryGetFunction, aclrtBinaryUnLoad, aclrtFunctionGetParamCount/Info,
aclrtLaunchKernelWithHostArgs."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, TaskType
from mdlri_conformance.kernel import catalog

from ..attributes import launch_cfg_refused, parse_cfg, timeout_seconds
from ..device import KernelOp
from ..guard import NO_CTX_OUT, guarded
from ..handles import live
from ..kernels import BinHandle, FuncHandle, parse_manifest
from ..model import TaskRecord
from ..taskgroups import ApplyOp
from .checks import E_HANDLE, E_INTERNAL, E_NULL, E_PARAM, OK, host_bytes, is_int


class BinaryApi:
    """The manifest "binary", its function handles, and kernel launches."""

    @guarded(NO_CTX_OUT)
    def binary_load_from_file(self, bin_path: str, options: Any = None) -> tuple[int, Any]:
        """aclrtBinaryLoadFromFile: an absolute path to a 'mdlri-sim-kernels 1' manifest."""
        if bin_path is None:
            return E_NULL, UNWRITTEN
        names = parse_manifest(bin_path)
        if names is None:
            return E_PARAM, UNWRITTEN
        b = BinHandle(bin_path, names)
        self._binaries.append(b)
        return OK, b

    @guarded(NO_CTX_OUT)
    def binary_get_function(self, bin_handle: Any, kernel_name: str) -> tuple[int, Any]:
        """aclrtBinaryGetFunction: one stable handle per (binary, name)."""
        if bin_handle is None or kernel_name is None:
            return E_NULL, UNWRITTEN
        if not live(bin_handle, BinHandle):
            return E_HANDLE, UNWRITTEN
        if kernel_name not in bin_handle.names or kernel_name not in catalog.KERNELS:
            return E_PARAM, UNWRITTEN
        fn = bin_handle.functions.get(kernel_name)
        if fn is None:
            fn = FuncHandle(bin_handle, catalog.KERNELS[kernel_name])
            bin_handle.functions[kernel_name] = fn
        return OK, fn

    @guarded()
    def binary_unload(self, bin_handle: Any) -> int:
        """aclrtBinaryUnLoad: its function handles become invalid (107017)."""
        if bin_handle is None:
            return E_NULL
        if not live(bin_handle, BinHandle):
            return E_HANDLE
        bin_handle.alive = False
        for fn in bin_handle.functions.values():
            fn.alive = False
        self._binaries.remove(bin_handle)
        return OK

    @guarded(needs_context=False)
    def function_get_param_count(self, func: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtFunctionGetParamCount: the number of fields of the kernel's argument struct
        (KRN-02). NULL func / count 100000 (ACL layer), a function that is not live 107017
        (KRN-03). No context is needed: neither the ACL layer nor rtFunctionGetParamCount nor
        ApiErrorDecorator / ApiImpl::FunctionGetParamCount looks for one
        (`src/acl/aclrt_impl/kernel.cpp:741-748`, `api/api_c_standard_soc.cc:1581-1597`,
        `api/impl/api_error.cc:7606-7616`, `api/impl/api_impl.cc:9322-9326`)."""
        if func is None or null_out:
            return E_NULL, UNWRITTEN
        if not live(func, FuncHandle):
            return E_HANDLE, UNWRITTEN
        return OK, len(func.spec.fields)

    @guarded(needs_context=False)
    def function_get_param_info(self, func: Any, index: int, *, null_offset: bool = False,
                                null_size: bool = False) -> tuple[int, Any, Any]:
        """aclrtFunctionGetParamInfo: the ``(offset, size)`` of field ``index`` in the
        kernel's argument bytes, the layout its ``spec`` packs with (KRN-02). NULL func, or
        offset and size both NULL, 100000; not live 107017; ``index`` >= the count 107000;
        a NULL out-pointer leaves only that value unwritten (KRN-03). No context is needed,
        as for the count (`api/api_c_standard_soc.cc:1599-1615`, `api/impl/api_error.cc:
        7618-7636`, `api/impl/api_impl.cc:9328-9342`)."""
        if func is None or (null_offset and null_size):
            return E_NULL, UNWRITTEN, UNWRITTEN
        if not live(func, FuncHandle):
            return E_HANDLE, UNWRITTEN, UNWRITTEN
        slots = func.spec.layout
        if not is_int(index) or not 0 <= int(index) < len(slots):
            return E_PARAM, UNWRITTEN, UNWRITTEN
        offset, size = slots[int(index)]
        return OK, UNWRITTEN if null_offset else offset, UNWRITTEN if null_size else size

    @guarded()
    def launch_kernel_with_host_args(self, func_handle: Any, num_blocks: int, stream: Any,
                                     cfg: Any, host_args: bytes | None, args_size: int,
                                     placeholders: Any = None,
                                     placeholder_num: int = 0) -> int:
        """aclrtLaunchKernelWithHostArgs: NULL func/args -> 100000, bad func -> 107017; the
        first ``args_size`` bytes are copied to a fresh device block at the call (GETP-03).

        A bad launch cfg -> 107000 (ATTR). Then, by the stream: in task-update mode the launch
        replaces the next grouped task when it runs (TG-10; more launches than tasks, or a
        destroyed model, 507000: TG-13); capturing, a KERNEL task with the launch attributes;
        bound to a built model, a stored KERNEL task (BLD-03); else the kernel runs under the
        launch's op timeout (TMO-10)."""
        if func_handle is None or host_args is None:
            return E_NULL
        if not live(func_handle, FuncHandle):
            return E_HANDLE
        data = host_bytes(host_args)
        if data is None or not is_int(num_blocks) or not is_int(args_size):
            return E_PARAM
        if num_blocks <= 0 or args_size <= 0 or args_size > len(data):
            return E_PARAM
        if placeholders is None and placeholder_num:
            return E_PARAM
        rc, st = self._stream(stream)
        if rc:
            return rc
        valid, attrs = parse_cfg(cfg)
        if not valid or launch_cfg_refused(cfg):
            return E_PARAM
        size = int(args_size)
        u = self._upd.get(st)
        if u is not None:  # TG-10, TG-13
            g = u.group
            if u.index >= len(g.tasks) or not g.model.alive:
                return E_INTERNAL
            task = g.tasks[u.index]
            u.index += 1
            addr = self.mem.alloc(size, "internal")
            self.mem.write(addr, data[:size])
            g.model.internal_allocs.append(addr)
            rec = TaskRecord(TaskType.KERNEL, func=func_handle, args_addr=addr, args_size=size,
                             num_blocks=int(num_blocks), attrs=attrs)
            self.engine.enqueue(st.queue, ApplyOp(task, rec))
            return OK
        if st.capturing:
            model = st.session.model
        elif st in self._bound:
            model = self._bound[st][0]
        else:  # an ordinary stream: runs under the launch's op timeout (TMO-10)
            addr = self.mem.alloc(size, "internal")
            self.mem.write(addr, data[:size])
            self._enqueue(st, KernelOp(func_handle.spec, addr, size,
                                       release=lambda a=addr: self.mem.free(a),
                                       timeout_s=timeout_seconds(attrs),
                                       num_blocks=int(num_blocks)))
            return OK
        addr = self.mem.alloc(size, "internal")
        self.mem.write(addr, data[:size])
        model.internal_allocs.append(addr)
        rec = TaskRecord(TaskType.KERNEL, func=func_handle, args_addr=addr, args_size=size,
                         num_blocks=int(num_blocks), attrs=attrs)
        if st.capturing:
            self._append(st, rec)
        else:
            model.append(self._bound[st][1], rec)
        return OK
