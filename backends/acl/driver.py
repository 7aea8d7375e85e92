"""Which driver library (``libascend_hal.so``) a real CANN runtime reaches the device through.

A real runtime loads the NPU driver's ``libascend_hal.so``. With ``MDLRI_VIRTUAL_DEVICE=1``
(``--virtual-device``) every process that loads a runtime first loads the project's virtual
Ascend device (``backends/hal``, ``libmdlri_hal.so``, whose soname is ``libascend_hal.so``)
with RTLD_GLOBAL, so the runtime's dependency on the driver resolves to it and the real
driver, installed or not, is never opened. The variable is inherited, so the doctor's probe
subprocess and every xdist worker make the same choice.

:func:`mapped_driver` reads which driver library this process has mapped, whoever loaded it,
and :func:`describe` names it for the doctor, the verdict line and the reports.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping
from pathlib import Path

#: ``1``: load the virtual device in place of the driver; ``0`` or unset: the installed driver
VIRTUAL_DEVICE_VAR = "MDLRI_VIRTUAL_DEVICE"
#: the driver's file name, which the runtime's DT_NEEDED entry and dlopen ask for
DRIVER_FILE = "libascend_hal.so"
#: the virtual device's own file name (``backends/hal/build.py``)
VIRTUAL_FILE = "libmdlri_hal.so"
#: the host kernel library the virtual device runs a kernel record's kernel from (kbin.c)
HOST_KERNELS_VAR = "MDLRI_HAL_HOST_KERNELS"


class VirtualDeviceError(Exception):
    """The virtual device was asked for but cannot be set up; the message is one line."""


def virtual_device_wanted(env: Mapping[str, str] | None = None) -> bool:
    """Whether :data:`VIRTUAL_DEVICE_VAR` asks for the virtual device (raises
    :class:`VirtualDeviceError` for a value other than 0 or 1)."""
    value = (os.environ if env is None else env).get(VIRTUAL_DEVICE_VAR, "").strip()
    if value in ("", "0"):
        return False
    if value == "1":
        return True
    raise VirtualDeviceError(f"{VIRTUAL_DEVICE_VAR}={value!r}: expected 1 (load the virtual "
                             "device in place of the NPU driver) or 0")


def load_virtual_device() -> Path:
    """Build (cached) and load the virtual device with RTLD_GLOBAL, before the runtime, so the
    runtime's ``libascend_hal.so`` resolves to it, and name its host kernel library in
    :data:`HOST_KERNELS_VAR` (unless set); returns the device's path."""
    from ..cbuild import BuildError
    from ..hal.build import ascend_hal_library, host_kernel_library
    try:
        path = ascend_hal_library()
        os.environ.setdefault(HOST_KERNELS_VAR, str(host_kernel_library()))
    except BuildError as exc:
        raise VirtualDeviceError(f"--virtual-device: cannot build the virtual device: {exc}"
                                 ) from None
    try:
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        raise VirtualDeviceError(f"--virtual-device: cannot load {path}: {exc}") from None
    return path


def mapped_driver(maps: str | None = None) -> str | None:
    """The real path of the driver library this process has mapped (the NPU driver's
    ``libascend_hal.so`` or the virtual device), None when it has none (the emulator, the
    simulator, or a runtime not loaded yet). ``maps``: the text of ``/proc/self/maps``."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return None
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6:
            continue
        path = fields[5].strip()
        name = path.rsplit("/", 1)[-1]
        if name.startswith(DRIVER_FILE) or name == VIRTUAL_FILE:
            return os.path.realpath(path)
    return None


def describe(path: str | None) -> str:
    """``virtual device (libmdlri_hal.so at P)``, ``NPU driver P``, or ``no driver library
    loaded``."""
    if path is None:
        return "no driver library loaded"
    if Path(path).name == VIRTUAL_FILE:
        return f"virtual device ({VIRTUAL_FILE} at {path})"
    return f"NPU driver {path}"
