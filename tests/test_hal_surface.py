"""The virtual device's driver surface beyond the TS: the device and feature queries, memory
and the list of driver symbols the CANN runtime needs (``backends/hal/README.md``, "HAL
symbols the runtime library needs"), through the device's own interface (no runtime here).
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from mdlri_conformance.backends.hal.build import ascend_hal_library, hal_library

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

NEEDED = Path(__file__).resolve().parents[1] / "backends" / "hal" / "needed_symbols.txt"

# drvError_t (pkg_inc/driver/ascend_hal_error.h:34-50,144)
OK, INVALID_DEVICE, INVALID_VALUE, NOT_SUPPORT = 0, 2, 3, 0xFFFE
# DEV_MODULE_TYPE / DEV_INFO_TYPE (ascend_hal_base.h:333-420)
SYSTEM, AICORE, VECTOR_CORE = 0, 4, 7
INFO_VERSION, INFO_CORE_NUM = 1, 3
# halMemAlloc flag kinds (ascend_hal_define.h:704-723) and DVattribute memType bits (:783-785,
# ascend_hal_base.h:1928-1933)
MEM_DEV, MEM_HOST = 1 << 10, 2 << 10
DV_MEM_LOCK_HOST, DV_MEM_LOCK_DEV, DV_MEM_USER_MALLOC, DV_MEM_USER_REGISTER = 0x8, 0x10, 0x80, 0x100
# drvFeature_t (ascend_hal_define.h:1512-1525)
FEATURE_SVM_GET_USER_MALLOC_ATTR, FEATURE_TRSDRV_SQ_SUPPORT_DYNAMIC_BIND = 2, 4
FEATURE_MEMCPY_BATCH_ASYNC = 3
U32, U64, P = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p


class DVattribute(ctypes.Structure):
    """``struct DVattribute`` (ascend_hal_base.h:1938-1955)."""

    _fields_ = [("memType", U32), ("resv1", U32), ("resv2", U32), ("devId", U32),
                ("pageSize", U32), ("resv", U32 * 8)]


class MemPhyInfo(ctypes.Structure):
    """``struct MemPhyInfo`` on Linux (ascend_hal_base.h:2901-2917)."""

    _fields_ = [(name, ctypes.c_ulong) for name in
                ("total", "free", "huge_total", "huge_free", "giant_total", "giant_free")]


def bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Argument and result types of the entry points these tests call."""
    sigs: dict[str, tuple[list[type], type]] = {
        "drvGetDevNum": ([ctypes.POINTER(U32)], ctypes.c_int),
        "drvGetDevIDs": ([ctypes.POINTER(U32), U32], ctypes.c_int),
        "drvGetPlatformInfo": ([ctypes.POINTER(U32)], ctypes.c_int),
        "drvDeviceGetPhyIdByIndex": ([U32, ctypes.POINTER(U32)], ctypes.c_int),
        "halGetDeviceInfo": ([U32, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64)],
                             ctypes.c_int),
        "halGetAPIVersion": ([ctypes.POINTER(ctypes.c_int)], ctypes.c_int),
        "halSupportFeature": ([U32, ctypes.c_int], ctypes.c_bool),
        "halMemAlloc": ([ctypes.POINTER(P), U64, U64], ctypes.c_int),
        "halMemFree": ([P], ctypes.c_int),
        "halMemcpy": ([U64, ctypes.c_size_t, U64, ctypes.c_size_t, ctypes.c_int], ctypes.c_int),
        "drvMemcpy": ([U64, ctypes.c_size_t, U64, ctypes.c_size_t], ctypes.c_int),
        "drvMemsetD8": ([U64, ctypes.c_size_t, ctypes.c_uint8, ctypes.c_size_t], ctypes.c_int),
        "drvMemGetAttribute": ([U64, ctypes.POINTER(DVattribute)], ctypes.c_int),
        "halHostRegister": ([P, U64, U32, U32, ctypes.POINTER(P)], ctypes.c_int),
        "halHostUnregister": ([P, U32], ctypes.c_int),
        "halMemGetInfo": ([U32, ctypes.c_uint, ctypes.POINTER(MemPhyInfo)], ctypes.c_int),
        "mdlri_hal_mem_in_use": ([], ctypes.c_ulonglong),
        "mdlri_hal_settings_reload": ([], None),
        "halQueueCreate": ([U32, P, ctypes.POINTER(U32)], ctypes.c_int),
    }
    for name, (argtypes, restype) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = argtypes, restype
    return lib


@pytest.fixture(scope="module")
def lib() -> ctypes.CDLL:
    return bind(ctypes.CDLL(str(hal_library())))


@pytest.fixture
def settings(lib: ctypes.CDLL, monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Environment settings read afresh by the device, and forgotten after the test."""
    for name in ("MDLRI_HAL_DEVICES", "MDLRI_HAL_FEATURES", "MDLRI_HAL_TRACE"):
        monkeypatch.delenv(name, raising=False)
    lib.mdlri_hal_settings_reload()
    yield monkeypatch
    monkeypatch.undo()
    lib.mdlri_hal_settings_reload()


def info(lib: ctypes.CDLL, dev: int, module: int, kind: int) -> tuple[int, int]:
    value = ctypes.c_int64(-1)
    rc = lib.halGetDeviceInfo(dev, module, kind, ctypes.byref(value))
    return rc, value.value


def alloc(lib: ctypes.CDLL, size: int, flag: int) -> int:
    ptr = P()
    assert lib.halMemAlloc(ctypes.byref(ptr), size, flag) == OK
    assert ptr.value
    return int(ptr.value)


def attribute(lib: ctypes.CDLL, address: int) -> DVattribute:
    attr = DVattribute()
    assert lib.drvMemGetAttribute(address, ctypes.byref(attr)) == OK
    return attr


# ---- device queries ----

def test_one_910b_device_by_default(lib: ctypes.CDLL, settings: pytest.MonkeyPatch) -> None:
    count = U32(0)
    assert lib.drvGetDevNum(ctypes.byref(count)) == OK and count.value == 1
    # PLAT_COMBINE(ARCH_C220 4, CHIP_910_B_93 5, RT_VER_BIN1 1), config.h:23
    assert info(lib, 0, SYSTEM, INFO_VERSION) == (OK, (4 << 16) | (5 << 8) | 1)
    assert info(lib, 0, AICORE, INFO_CORE_NUM) == (OK, 24)
    assert info(lib, 0, VECTOR_CORE, INFO_CORE_NUM) == (OK, 48)
    assert info(lib, 1, SYSTEM, INFO_VERSION)[0] == INVALID_DEVICE
    mode = U32(7)
    assert lib.drvGetPlatformInfo(ctypes.byref(mode)) == OK and mode.value == 1  # online


def test_unknown_device_info_is_not_supported(lib: ctypes.CDLL, settings: pytest.MonkeyPatch) -> None:
    assert info(lib, 0, SYSTEM, 63)[0] == NOT_SUPPORT


def test_device_count_follows_the_setting(lib: ctypes.CDLL, settings: pytest.MonkeyPatch) -> None:
    settings.setenv("MDLRI_HAL_DEVICES", "3")
    lib.mdlri_hal_settings_reload()
    count = U32(0)
    assert lib.drvGetDevNum(ctypes.byref(count)) == OK and count.value == 3
    ids = (U32 * 3)(9, 9, 9)
    assert lib.drvGetDevIDs(ids, 3) == OK and list(ids) == [0, 1, 2]
    phy = U32(9)
    assert lib.drvDeviceGetPhyIdByIndex(2, ctypes.byref(phy)) == OK and phy.value == 2
    assert lib.drvDeviceGetPhyIdByIndex(3, ctypes.byref(phy)) == INVALID_DEVICE
    assert info(lib, 2, AICORE, INFO_CORE_NUM) == (OK, 24)


def test_a_bad_device_count_setting_falls_back_to_one(lib: ctypes.CDLL,
                                                       settings: pytest.MonkeyPatch) -> None:
    settings.setenv("MDLRI_HAL_DEVICES", "many")
    lib.mdlri_hal_settings_reload()
    count = U32(0)
    assert lib.drvGetDevNum(ctypes.byref(count)) == OK and count.value == 1


def test_api_version_is_the_headers_one(lib: ctypes.CDLL) -> None:
    version = ctypes.c_int(0)
    assert lib.halGetAPIVersion(ctypes.byref(version)) == OK
    assert version.value == 0x072419  # ascend_hal_base.h:225-247


@pytest.mark.parametrize("setting, expected", [(None, False), ("off", False), ("on", True)])
def test_driver_features_follow_the_setting(lib: ctypes.CDLL, settings: pytest.MonkeyPatch,
                                            setting: str | None, expected: bool) -> None:
    if setting is not None:
        settings.setenv("MDLRI_HAL_FEATURES", setting)
    lib.mdlri_hal_settings_reload()
    assert lib.halSupportFeature(0, FEATURE_TRSDRV_SQ_SUPPORT_DYNAMIC_BIND) is expected
    assert lib.halSupportFeature(0, FEATURE_SVM_GET_USER_MALLOC_ATTR) is expected
    assert lib.halSupportFeature(0, FEATURE_MEMCPY_BATCH_ASYNC) is False  # never offered


# ---- memory ----

def test_device_memory_is_usable_and_says_what_it_is(lib: ctypes.CDLL) -> None:
    before = lib.mdlri_hal_mem_in_use()
    dev = alloc(lib, 256, MEM_DEV)
    assert lib.mdlri_hal_mem_in_use() == before + 256
    attr = attribute(lib, dev + 100)  # inside the block
    assert (attr.memType, attr.devId, attr.pageSize) == (DV_MEM_LOCK_DEV, 0, 4096)
    src = (ctypes.c_uint8 * 256)(*range(256))
    assert lib.halMemcpy(dev, 256, ctypes.addressof(src), 256, 1) == OK
    assert lib.drvMemsetD8(dev + 8, 248, 0xAB, 4) == OK
    out = (ctypes.c_uint8 * 256)()
    assert lib.drvMemcpy(ctypes.addressof(out), 256, dev, 256) == OK
    assert list(out) == [*range(8), 0xAB, 0xAB, 0xAB, 0xAB, *range(12, 256)]
    assert lib.halMemFree(dev) == OK
    assert lib.mdlri_hal_mem_in_use() == before
    attr = DVattribute()
    rc = lib.drvMemGetAttribute(dev, ctypes.byref(attr))
    assert rc != OK or attr.memType != DV_MEM_LOCK_DEV  # forgotten once freed


def test_copies_past_the_destination_are_refused(lib: ctypes.CDLL) -> None:
    dst = (ctypes.c_uint8 * 4)(1, 2, 3, 4)
    src = (ctypes.c_uint8 * 8)()
    assert lib.drvMemcpy(ctypes.addressof(dst), 4, ctypes.addressof(src), 8) == INVALID_VALUE
    assert lib.drvMemsetD8(ctypes.addressof(dst), 2, 0, 3) == INVALID_VALUE
    assert list(dst) == [1, 2, 3, 4]


def test_host_memory_kinds(lib: ctypes.CDLL, settings: pytest.MonkeyPatch) -> None:
    settings.setenv("MDLRI_HAL_FEATURES", "on")
    lib.mdlri_hal_settings_reload()
    host = alloc(lib, 64, MEM_HOST)
    assert attribute(lib, host).memType == DV_MEM_LOCK_HOST
    assert lib.halMemFree(host) == OK
    plain = (ctypes.c_uint8 * 64)()
    assert attribute(lib, ctypes.addressof(plain)).memType == DV_MEM_USER_MALLOC
    dev_ptr = P()
    assert lib.halHostRegister(ctypes.addressof(plain), 64, 0, 0, ctypes.byref(dev_ptr)) == OK
    assert dev_ptr.value == ctypes.addressof(plain)
    assert attribute(lib, ctypes.addressof(plain) + 63).memType == DV_MEM_USER_REGISTER
    assert lib.halHostUnregister(ctypes.addressof(plain), 0) == OK
    assert attribute(lib, ctypes.addressof(plain)).memType == DV_MEM_USER_MALLOC
    assert lib.halHostUnregister(ctypes.addressof(plain), 0) == INVALID_VALUE


def test_pageable_memory_is_unknown_without_the_feature(lib: ctypes.CDLL,
                                                        settings: pytest.MonkeyPatch) -> None:
    """A driver without SVM_GET_USER_MALLOC_ATTR fails drvMemGetAttribute for malloc'd memory
    (api_error.cc:2812-2826) and still answers for the memory it handed out or registered."""
    settings.setenv("MDLRI_HAL_FEATURES", "off")
    lib.mdlri_hal_settings_reload()
    plain = (ctypes.c_uint8 * 64)()
    attr = DVattribute()
    assert lib.drvMemGetAttribute(ctypes.addressof(plain), ctypes.byref(attr)) == INVALID_VALUE
    dev_ptr = P()
    assert lib.halHostRegister(ctypes.addressof(plain), 64, 0, 0, ctypes.byref(dev_ptr)) == OK
    assert attribute(lib, ctypes.addressof(plain)).memType == DV_MEM_USER_REGISTER
    assert lib.halHostUnregister(ctypes.addressof(plain), 0) == OK
    host = alloc(lib, 64, MEM_HOST)
    assert attribute(lib, host).memType == DV_MEM_LOCK_HOST
    assert lib.halMemFree(host) == OK


def test_free_takes_only_what_was_allocated(lib: ctypes.CDLL) -> None:
    dev = alloc(lib, 128, MEM_DEV)
    assert lib.halMemFree(dev + 64) == INVALID_VALUE
    assert lib.halMemFree(dev) == OK
    assert lib.halMemFree(dev) == INVALID_VALUE
    ptr = P()
    assert lib.halMemAlloc(ctypes.byref(ptr), 0, MEM_DEV) == INVALID_VALUE


def test_memory_info_counts_what_is_in_use(lib: ctypes.CDLL) -> None:
    phy = MemPhyInfo()
    assert lib.halMemGetInfo(0, 2, ctypes.byref(phy)) == OK  # MEM_INFO_TYPE_HBM_SIZE
    dev = alloc(lib, 1 << 20, MEM_DEV)
    after = MemPhyInfo()
    assert lib.halMemGetInfo(0, 2, ctypes.byref(after)) == OK
    assert after.total == phy.total > 0
    assert after.free == phy.free - (1 << 20)
    assert lib.halMemFree(dev) == OK
    assert lib.halMemGetInfo(0, 9, ctypes.byref(after)) == NOT_SUPPORT


# ---- the symbols the runtime needs ----

def needed_symbols() -> list[str]:
    names = [line.strip() for line in NEEDED.read_text().splitlines()]
    return [n for n in names if n and not n.startswith("#")]


def test_the_needed_list_is_the_driver_namespace() -> None:
    names = needed_symbols()
    assert len(names) == len(set(names)) > 200
    assert all(n.startswith(("hal", "drv")) for n in names)


def test_every_symbol_the_runtime_needs_is_exported() -> None:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed: the export table cannot be read")
    out = subprocess.run([nm, "-D", "--defined-only", str(ascend_hal_library())],
                         capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.split()[-2:-1] in (["T"], ["W"])}
    missing = sorted(set(needed_symbols()) - exported)
    assert not missing, f"not exported by libascend_hal.so: {missing}"


def test_entry_points_without_a_model_answer_not_supported(lib: ctypes.CDLL) -> None:
    qid = U32(0)
    assert lib.halQueueCreate(0, None, ctypes.byref(qid)) == NOT_SUPPORT


# ---- what device start asks ----

class ResourceIdInput(ctypes.Structure):
    """``struct halResourceIdInputInfo`` (trs_pkg.h:191-196)."""

    _fields_ = [("type", ctypes.c_int), ("tsId", U32), ("resourceId", U32), ("res", U32 * 8)]


class ResourceConfig(ctypes.Structure):
    """``struct halResourceConfigInfo`` (ascend_hal_define.h:1158-1161)."""

    _fields_ = [("prop", ctypes.c_int), ("value", U32 * 7)]


DRV_STREAM_ID, DRV_NOTIFY_ID = 0, 3
BIND_LOGIC_CQ, UNBIND_LOGIC_CQ, ID_RECORD, ID_RESET = 0, 1, 2, 4


def resource_config(lib: ctypes.CDLL, id_type: int, resource_id: int, prop: int,
                    value: int = 0) -> int:
    cfg = ResourceConfig(prop=prop)
    cfg.value[0] = value
    return int(lib.halResourceConfig(0, ctypes.byref(ResourceIdInput(type=id_type,
                                                                     resourceId=resource_id)),
                                     ctypes.byref(cfg)))


def test_a_stream_bound_to_a_logic_cq_reports_there() -> None:
    from mdlri_conformance.backends.hal import sqe
    from mdlri_conformance.backends.hal.device import DRV_LOGIC_TYPE, HalDevice, SqCqInput, SqCqOutput

    dev = HalDevice(hal_library())
    dev.reset()
    try:
        q = dev.alloc(stream_id=7)
        out = SqCqOutput()
        assert dev.lib.halSqCqAllocate(0, ctypes.byref(SqCqInput(type=DRV_LOGIC_TYPE, cqeDepth=64)),
                                       ctypes.byref(out)) == OK
        logic = int(out.cqId)
        assert resource_config(dev.lib, DRV_STREAM_ID, 7, BIND_LOGIC_CQ, logic) == OK
        dev.submit(q.sq, sqe.nop(7, 1, wr_cqe=1))
        assert [c.task_id for c in dev.collect(logic, 1)] == [1]
        assert dev.recv(q.cq, timeout_ms=0)[1] == []  # not on the SQ's own CQ
        assert resource_config(dev.lib, DRV_STREAM_ID, 7, UNBIND_LOGIC_CQ) == OK
        dev.submit(q.sq, sqe.nop(7, 2, wr_cqe=1))
        assert [c.task_id for c in dev.collect(q.cq, 1)] == [2]
        assert resource_config(dev.lib, DRV_STREAM_ID, 7, BIND_LOGIC_CQ, 255) == INVALID_VALUE
    finally:
        dev.reset()


def test_host_records_and_resets_a_notify() -> None:
    from mdlri_conformance.backends.hal.device import DRV_NOTIFY_ID as NOTIFY, HalDevice

    dev = HalDevice(hal_library())
    dev.reset()
    try:
        rc, notify = dev.alloc_id(NOTIFY)
        assert rc == OK and dev.notify_state(notify) == 0
        assert resource_config(dev.lib, DRV_NOTIFY_ID, notify, ID_RECORD) == OK
        assert dev.notify_state(notify) == 1
        assert resource_config(dev.lib, DRV_NOTIFY_ID, 0xFFFFFFFF, ID_RESET) == OK  # every id
        assert dev.notify_state(notify) == 0
    finally:
        dev.reset()


def test_the_c2c_control_block_is_device_memory(lib: ctypes.CDLL) -> None:
    in_para = (U32 * 2)(1, 0)  # ADDR_MAP_TYPE_REG_C2C_CTRL, device 0
    out_para = (U64 * 2)()
    size = ctypes.c_size_t(16)
    lib.halMemCtl.argtypes = [ctypes.c_int, P, ctypes.c_size_t, P, ctypes.POINTER(ctypes.c_size_t)]
    assert lib.halMemCtl(0, in_para, 8, out_para, ctypes.byref(size)) == OK  # CTRL_TYPE_ADDR_MAP
    assert out_para[0] != 0 and out_para[1] >= 4096
    assert attribute(lib, out_para[0]).memType == DV_MEM_LOCK_DEV
    again = (U64 * 2)()
    assert lib.halMemCtl(0, in_para, 8, again, ctypes.byref(size)) == OK
    assert again[0] == out_para[0]  # one block per device
    assert lib.halMemCtl(0, (U32 * 2)(7, 0), 8, again, ctypes.byref(size)) == NOT_SUPPORT
    assert lib.halMemCtl(9, in_para, 8, again, ctypes.byref(size)) == NOT_SUPPORT


def test_address_translation_is_identity_for_device_memory(lib: ctypes.CDLL) -> None:
    lib.drvMemAddressTranslate.argtypes = [U64, ctypes.POINTER(U64)]
    dev = alloc(lib, 64, MEM_DEV)
    phys = U64(0)
    assert lib.drvMemAddressTranslate(dev + 8, ctypes.byref(phys)) == OK and phys.value == dev + 8
    plain = (ctypes.c_uint8 * 8)()
    assert lib.drvMemAddressTranslate(ctypes.addressof(plain), ctypes.byref(phys)) == INVALID_VALUE
    assert lib.halMemFree(dev) == OK
