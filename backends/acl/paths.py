"""Where the acl backend's built artefacts live: the cache root and the kernels fatbin per
SoC (a leaf module: the package, the doctor's probe and ``kernels build`` all import it)."""

from __future__ import annotations

import os
from pathlib import Path

#: where built artefacts are cached (kernels per SoC)
CACHE_VAR = "MDLRI_CACHE_DIR"
#: file name of the catalog kernels' fatbin in the kernels cache
KERNEL_FATBIN = "mdlri_kernels.o"


def cache_root() -> Path:
    """``$MDLRI_CACHE_DIR``, else ``~/.cache/mdlri-conformance`` (shared with the emulator
    build)."""
    if os.environ.get(CACHE_VAR):
        return Path(os.environ[CACHE_VAR]).expanduser()
    return Path.home() / ".cache" / "mdlri-conformance"


def default_kernel_binary(soc: str | None) -> Path:
    """Where ``mdlri-conformance kernels build`` leaves the fatbin for SoC ``soc``."""
    return cache_root() / "kernels" / (soc or "unknown-soc") / KERNEL_FATBIN
