"""ctypes mirrors of the ACL structs the binding passes (shared/ref/abi.md §4).

Natural alignment everywhere, never ``_pack_``: gcc lays these out with the platform's
natural alignment and so does ctypes. Enums are 4-byte (``c_int``, no negative
enumerators). The anonymous union of ``aclmdlRITaskParams`` is modelled with
``_anonymous_`` so ``params.kernelTaskParams`` reads like C.

Computed layouts this module must reproduce (checked by tests/test_acl_layout.py against a
C probe compiled with the emulator's header, and the real ``acl/acl_rt.h`` when present):

* ``aclmdlRITaskParams``       200 / 8, union at 72 (128 bytes)
* ``aclmdlRIKernelTaskParams``  88 / 8, 4-byte hole after ``isHostArgs`` (argsSize at 32)
* event task params             16 / 8
* ``aclmdlRIValueWriteTaskParams`` 16 / 8, ``aclmdlRIValueWaitTaskParams`` 24 / 8
* ``aclmdlRICondTaskParams``    24 / 8 (passed by value)
* ``aclrtLaunchKernelAttr`` / ``aclrtBinaryLoadOption`` 20 / 4 (value union at 4)
"""

from __future__ import annotations

from ctypes import (CFUNCTYPE, POINTER, Structure, Union, c_int, c_int32, c_size_t, c_uint8,
                    c_uint16, c_uint32, c_uint64, c_void_p)

#: C enums: 4 bytes, no negative enumerators (abi.md §1)
c_enum = c_int

#: ``aclrtCallback``: ``void (*)(void *userData)`` (abi.md §1, §7.12); instances must be kept
#: alive while the runtime holds them
Callback = CFUNCTYPE(None, c_void_p)

# ---------------------------------------------------------------------------------------------
# task params (abi.md §4.1-§4.4)


class KernelTaskParams(Structure):
    """``aclmdlRIKernelTaskParams``: 88 bytes; 4-byte hole at 28, tail padding at 84."""

    _fields_ = [
        ("funcHandle", c_void_p),
        ("cfg", c_void_p),            # aclrtLaunchKernelCfg*
        ("args", c_void_p),
        ("isHostArgs", c_uint32),
        ("argsSize", c_size_t),
        ("numBlocks", c_uint32),
        ("rsv", c_uint32 * 10),
    ]


class EventRecordTaskParams(Structure):
    """``aclmdlRIEventRecordTaskParams``: 16 bytes."""

    _fields_ = [("event", c_void_p), ("eventFlag", c_uint32), ("recordFlag", c_uint32)]


class EventWaitTaskParams(Structure):
    """``aclmdlRIEventWaitTaskParams``: 16 bytes."""

    _fields_ = [("event", c_void_p), ("eventFlag", c_uint32), ("waitFlag", c_uint32)]


class EventResetTaskParams(Structure):
    """``aclmdlRIEventResetTaskParams``: 16 bytes."""

    _fields_ = [("event", c_void_p), ("eventFlag", c_uint32), ("resetFlag", c_uint32)]


class ValueWriteTaskParams(Structure):
    """``aclmdlRIValueWriteTaskParams``: 16 bytes."""

    _fields_ = [("devAddr", c_void_p), ("value", c_uint64)]


class ValueWaitTaskParams(Structure):
    """``aclmdlRIValueWaitTaskParams``: 24 bytes (4 bytes of tail padding)."""

    _fields_ = [("devAddr", c_void_p), ("value", c_uint64), ("flag", c_uint32)]


class TaskParamsUnion(Union):
    """The anonymous union of ``aclmdlRITaskParams`` (128 bytes)."""

    _fields_ = [
        ("rsv2", c_uint8 * 128),
        ("kernelTaskParams", KernelTaskParams),
        ("eventRecordTaskParams", EventRecordTaskParams),
        ("eventWaitTaskParams", EventWaitTaskParams),
        ("eventResetTaskParams", EventResetTaskParams),
        ("valueWriteTaskParams", ValueWriteTaskParams),
        ("valueWaitTaskParams", ValueWaitTaskParams),
    ]


class TaskParams(Structure):
    """``aclmdlRITaskParams``: 200 bytes, union at offset 72."""

    _anonymous_ = ("u",)
    _fields_ = [
        ("type", c_enum),             # aclmdlRITaskType
        ("rsv0", c_uint32 * 3),
        ("taskGrp", c_void_p),
        ("opInfoPtr", c_void_p),
        ("opInfoSize", c_size_t),
        ("rsv1", c_uint8 * 32),
        ("u", TaskParamsUnion),
    ]


#: union member name per aclmdlRITaskType value
UNION_MEMBER = {
    1: "kernelTaskParams",
    2: "eventRecordTaskParams",
    3: "eventWaitTaskParams",
    4: "eventResetTaskParams",
    5: "valueWriteTaskParams",
    6: "valueWaitTaskParams",
}

# ---------------------------------------------------------------------------------------------
# conditional tasks (abi.md §4.5)


class CondTaskParams(Structure):
    """``aclmdlRICondTaskParams``: 24 bytes, passed **by value** to aclmdlRIAddCondTask."""

    _fields_ = [
        ("handle", c_void_p),         # aclmdlRICondHandle
        ("type", c_enum),             # aclmdlRICondTaskType
        ("size", c_uint32),
        ("modelRIArray", POINTER(c_void_p)),
    ]


# ---------------------------------------------------------------------------------------------
# launch config (abi.md §4.6)


class TimeoutUs(Structure):
    """``aclrtTimeoutUs``: two uint32 halves (8 bytes, align 4), not one uint64."""

    _fields_ = [("timeoutLow", c_uint32), ("timeoutHigh", c_uint32)]


class LaunchKernelAttrValue(Union):
    """``aclrtLaunchKernelAttrValue``: 16 bytes, align 4."""

    _fields_ = [
        ("schemMode", c_uint8),
        ("localMemorySize", c_uint32),
        ("dynUBufSize", c_uint32),
        ("engineType", c_enum),
        ("blockDimOffset", c_uint32),
        ("isBlockTaskPrefetch", c_uint8),
        ("isDataDump", c_uint8),
        ("timeout", c_uint16),
        ("timeoutUs", TimeoutUs),
        ("enableProfiling", c_uint8),
        ("rsv", c_uint32 * 4),
    ]


class LaunchKernelAttr(Structure):
    """``aclrtLaunchKernelAttr``: 20 bytes, align 4 (value union at 4; array stride 20)."""

    _fields_ = [("id", c_enum), ("value", LaunchKernelAttrValue)]


class LaunchKernelCfg(Structure):
    """``aclrtLaunchKernelCfg``: 16 bytes."""

    _fields_ = [("attrs", POINTER(LaunchKernelAttr)), ("numAttrs", c_size_t)]


# ---------------------------------------------------------------------------------------------
# binary load options (abi.md §4.7)


class BinaryLoadOptionValue(Union):
    """``aclrtBinaryLoadOptionValue``: 16 bytes, align 4."""

    _fields_ = [
        ("isLazyLoad", c_uint32),
        ("magic", c_uint32),
        ("cpuKernelMode", c_int32),
        ("rsv", c_uint32 * 4),
    ]


class BinaryLoadOption(Structure):
    """``aclrtBinaryLoadOption``: 20 bytes, align 4."""

    _fields_ = [("type", c_enum), ("value", BinaryLoadOptionValue)]


class BinaryLoadOptions(Structure):
    """``aclrtBinaryLoadOptions``: 16 bytes."""

    _fields_ = [("options", POINTER(BinaryLoadOption)), ("numOpt", c_size_t)]


# ---------------------------------------------------------------------------------------------
# misc (abi.md §4.8)


class PlaceHolderInfo(Structure):
    """``aclrtPlaceHolderInfo``: 8 bytes, align 4."""

    _fields_ = [("addrOffset", c_uint32), ("dataOffset", c_uint32)]


class Dim3(Structure):
    """``dim3``: 12 bytes, align 4 (passed by value to the SIMT launches)."""

    _fields_ = [("x", c_uint32), ("y", c_uint32), ("z", c_uint32)]


class MallocAttrValue(Union):
    """``aclrtMallocAttrValue``: 8 bytes, align 4."""

    _fields_ = [("moduleId", c_uint16), ("deviceId", c_uint32), ("vaFlag", c_uint32),
                ("rsv", c_uint8 * 8)]


class MallocAttribute(Structure):
    """``aclrtMallocAttribute``: 12 bytes, align 4."""

    _fields_ = [("attr", c_enum), ("value", MallocAttrValue)]


class MallocConfig(Structure):
    """``aclrtMallocConfig``: 16 bytes."""

    _fields_ = [("attrs", POINTER(MallocAttribute)), ("numAttrs", c_size_t)]


class MemLocation(Structure):
    """``aclrtMemLocation`` (``acl_rt.h:322-325``): 8 bytes, align 4."""

    _fields_ = [("id", c_uint32), ("type", c_enum)]


class PtrAttributes(Structure):
    """``aclrtPtrAttributes`` (``acl_rt.h:327-331``): 28 bytes, align 4."""

    _fields_ = [("location", MemLocation), ("pageSize", c_uint32), ("rsv", c_uint32 * 4)]


#: ctypes class -> C type name, for the layout probe (tests/test_acl_layout.py)
C_NAMES: dict[type, str] = {
    TaskParams: "aclmdlRITaskParams",
    KernelTaskParams: "aclmdlRIKernelTaskParams",
    EventRecordTaskParams: "aclmdlRIEventRecordTaskParams",
    EventWaitTaskParams: "aclmdlRIEventWaitTaskParams",
    EventResetTaskParams: "aclmdlRIEventResetTaskParams",
    ValueWriteTaskParams: "aclmdlRIValueWriteTaskParams",
    ValueWaitTaskParams: "aclmdlRIValueWaitTaskParams",
    CondTaskParams: "aclmdlRICondTaskParams",
    TimeoutUs: "aclrtTimeoutUs",
    LaunchKernelAttrValue: "aclrtLaunchKernelAttrValue",
    LaunchKernelAttr: "aclrtLaunchKernelAttr",
    LaunchKernelCfg: "aclrtLaunchKernelCfg",
    BinaryLoadOptionValue: "aclrtBinaryLoadOptionValue",
    BinaryLoadOption: "aclrtBinaryLoadOption",
    BinaryLoadOptions: "aclrtBinaryLoadOptions",
    PlaceHolderInfo: "aclrtPlaceHolderInfo",
    Dim3: "dim3",
    MallocAttrValue: "aclrtMallocAttrValue",
    MallocAttribute: "aclrtMallocAttribute",
    MallocConfig: "aclrtMallocConfig",
    MemLocation: "aclrtMemLocation",
    PtrAttributes: "aclrtPtrAttributes",
}
