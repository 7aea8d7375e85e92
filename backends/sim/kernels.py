"""The simulator's "kernel binary": a manifest naming catalog kernels (kernel/sim_kernels.manifest).

``aclrtBinaryLoadFromFile`` accepts an absolute path to an existing file whose first line is
``mdlri-sim-kernels 1``; the following non-comment lines name kernels of
:data:`kernel.catalog.KERNELS`. ``aclrtBinaryGetFunction`` hands out one function handle per
(binary, name), whose ``spec`` is the catalog entry the device runs.
"""

from __future__ import annotations

import importlib.resources
import os
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


def parse_manifest(path: str) -> list[str] | None:
    """Kernel names of a manifest, or None if ``path`` is not a valid manifest."""
    if not isinstance(path, str) or not os.path.isabs(path) or not os.path.isfile(path):
        return None
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines or lines[0].strip() != MAGIC:
        return None
    return [ln.strip() for ln in lines[1:] if ln.strip() and not ln.strip().startswith("#")]
