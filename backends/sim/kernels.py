"""The simulator's "kernel binary": a manifest naming catalog kernels (kernel/sim_kernels.manifest).

``aclrtBinaryLoadFromFile`` accepts an absolute path to an existing file whose first line is
``mdlri-sim-kernels 1``; the following non-comment lines name kernels of
:data:`kernel.catalog.KERNELS`. ``aclrtBinaryGetFunction`` hands out one function handle per
(binary, name), whose ``spec`` is the catalog entry the device runs.
"""

from __future__ import annotations

import importlib.resources
import os
import stat
from pathlib import Path

from mdlri_conformance.kernel import catalog

from .handles import Handle

MAGIC = "mdlri-sim-kernels 1"
#: kernel/sim_kernels.manifest (package data of mdlri_conformance.kernel)
MANIFEST_PATH = str(importlib.resources.files("mdlri_conformance.kernel") / "sim_kernels.manifest")


class BinHandle(Handle):
    """An ``aclrtBinHandle``: the kernels a manifest names."""

    kind = "binary"

    def __init__(self, path: str, names: list[str]) -> None:
        super().__init__()
        self.path = path
        self.names = names
        self.functions: dict[str, "FuncHandle"] = {}


class FuncHandle(Handle):
    """An ``aclrtFuncHandle``: one catalog kernel of a loaded binary."""

    kind = "function"

    def __init__(self, binary: BinHandle, spec: catalog.KernelSpec) -> None:
        super().__init__()
        self.binary = binary
        self.spec = spec

    def __repr__(self) -> str:
        return f"<sim function {self.spec.name} #{self.id}{'' if self.alive else ' dead'}>"


#: path -> (the file's identity when it was read, its kernel names or None): a replay loads the
#: binary once per case, and the file is read again only when it changed
_MANIFESTS: dict[str, tuple[tuple[int, int, int, int, int], list[str] | None]] = {}


def parse_manifest(path: str) -> list[str] | None:
    """Kernel names of a manifest, or None if ``path`` is not a valid manifest (an absolute
    path to a regular file whose first line is :data:`MAGIC`). The file is read again
    whenever its device, inode, size, modification or change time differ from the last
    read; a new list every call."""
    if not isinstance(path, str) or not os.path.isabs(path):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _MANIFESTS.get(path)
    if hit is not None and hit[0] == key:
        return None if hit[1] is None else list(hit[1])
    names = _read_manifest(path)
    _MANIFESTS[path] = (key, names)
    return None if names is None else list(names)


def _read_manifest(path: str) -> list[str] | None:
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or lines[0].strip() != MAGIC:
        return None
    return [ln.strip() for ln in lines[1:] if ln.strip() and not ln.strip().startswith("#")]
