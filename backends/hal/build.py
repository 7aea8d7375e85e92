"""Build the virtual device ``libmdlri_hal.so`` (and ``libascend_hal.so`` beside it, the name
the CANN runtime loads) and the project's host kernels for it, with gcc, cached by content.

``hal_library()`` and ``ascend_hal_library()`` return paths in
``$MDLRI_CACHE_DIR/hal-<hash>/``; ``host_kernel_library()`` returns
``libmdlri_host_kernels.so`` built from ``kernel/host/`` in ``$MDLRI_CACHE_DIR/hal-kernels-<hash>/``
(the device's own copy: nothing of the emulator's build is used). Failures raise
:class:`backends.cbuild.BuildError` with one line saying what to do.

``python -m backends.hal.build`` prints the three paths.
"""

from __future__ import annotations

import importlib.resources
import os
import secrets
from pathlib import Path

from ...kernel import HOST_DIR, HOST_LIBRARY_NAME
from ..cbuild import CacheNotWritable, print_paths, shared_library

HERE = Path(str(importlib.resources.files("mdlri_conformance.backends.hal")))
HAL_INCLUDE = HERE / "include"
HAL_SRC = HERE / "src"

HAL_NAME = "libmdlri_hal.so"
#: the file name the runtime's loader asks for
ASCEND_HAL_NAME = "libascend_hal.so"


def hal_library() -> Path:
    """Path of ``libmdlri_hal.so``, compiled if this source version is not cached yet.

    Its soname is ``libascend_hal.so``: a runtime linked against the driver records that
    name (DT_NEEDED), and the loader then takes this library for it."""
    inputs = [*sorted(HAL_INCLUDE.glob("*.h")), *sorted(HAL_SRC.glob("*.h")),
              Path(__file__).resolve()]
    return shared_library("hal", HAL_NAME, sorted(HAL_SRC.glob("*.c")), inputs=inputs,
                          flags=[f"-I{HAL_INCLUDE}", f"-I{HAL_SRC}"],
                          libs=["-ldl", "-lpthread", f"-Wl,-soname,{ASCEND_HAL_NAME}"])


def ascend_hal_library() -> Path:
    """Path of ``libascend_hal.so``: a symbolic link to ``libmdlri_hal.so`` in its folder."""
    lib = hal_library()
    link = lib.parent / ASCEND_HAL_NAME
    if link.is_symlink() and link.resolve() == lib.resolve():
        return link
    try:
        tmp = lib.parent / f".{ASCEND_HAL_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
        os.symlink(lib.name, tmp)
        os.replace(tmp, link)  # atomic: a concurrent builder's identical link may win
    except OSError as exc:
        raise CacheNotWritable(f"cannot link {link} ({exc.strerror or exc}): set "
                               "MDLRI_CACHE_DIR to a writable directory") from None
    return link


def host_kernel_library() -> Path:
    """Path of the host kernels (``kernel/host/``) the device's kernel registry binds to."""
    return shared_library("hal-kernels", HOST_LIBRARY_NAME, sorted(HOST_DIR.glob("*.c")),
                          inputs=[*sorted(HOST_DIR.glob("*.h")), Path(__file__).resolve()],
                          flags=[f"-I{HOST_DIR}"])


def main() -> int:
    """Print the three paths (building them); a build error is one line, status 1."""
    return print_paths(hal_library, ascend_hal_library, host_kernel_library)


if __name__ == "__main__":
    raise SystemExit(main())
