"""The kernel catalog (``catalog.py``) and its implementations: ``host/`` (host C, built by the
emulator's and the virtual device's build modules), ``ascendc/`` (AscendC) and the simulator's
manifest."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

#: the host C kernels' folder (package data: installed beside this module, or the checkout's)
HOST_DIR = Path(str(importlib.resources.files(__name__))) / "host"
#: the file name of the host kernels' shared library, whichever build makes it
HOST_LIBRARY_NAME = "libmdlri_host_kernels.so"
