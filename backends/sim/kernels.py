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

import numpy as np

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


# ---------------------------------------------------------------------------------------------
# fast bodies: the catalog's int32 kernels on views of device memory
#
# Each takes the device memory and the decoded arguments and returns True once it has done
# exactly what the catalog body does, or False having done nothing (a range outside every live
# allocation, a negative count): the caller then runs the catalog body, which reports that
# access as it always has. All the views are resolved before anything is written, and every
# result is computed into a new array before it is stored, so overlapping buffers give what
# the catalog's read-copy-then-write gives.


def _fast_fallback_main(mem, a) -> bool:
    x = mem.view_i32(a["input"], catalog.SEED_ELEMENTS)
    if x is None:
        return False
    y = mem.view_i32(a["output"], catalog.SEED_ELEMENTS)
    if y is None:
        return False
    y[:] = x + catalog.SEED_MAIN_BIAS
    return True


def _fast_fallback_postprocess(mem, a) -> bool:
    x = mem.view_i32(a["input"], catalog.SEED_ELEMENTS)
    if x is None:
        return False
    y = mem.view_i32(a["output"], catalog.SEED_ELEMENTS)
    if y is None:
        return False
    y[:] = x * catalog.SEED_POST_SCALE
    return True


def _fast_affine(mem, a) -> bool:
    n = a["n"]
    x = mem.view_i32(a["x"], n)
    if x is None:
        return False
    y = mem.view_i32(a["y"], n)
    if y is None:
        return False
    y[:] = x * np.int32(a["a"]) + np.int32(a["b"])
    return True


def _fast_add(mem, a) -> bool:
    n = a["n"]
    x = mem.view_i32(a["a"], n)
    if x is None:
        return False
    y = mem.view_i32(a["b"], n)
    if y is None:
        return False
    out = mem.view_i32(a["out"], n)
    if out is None:
        return False
    out[:] = x + y
    return True


def _fast_accumulate(mem, a) -> bool:
    n = a["n"]
    acc = mem.view_i32(a["acc"], n)
    if acc is None:
        return False
    x = mem.view_i32(a["x"], n)
    if x is None:
        return False
    acc[:] = acc + x
    return True


def _fast_fill(mem, a) -> bool:
    out = mem.view_i32(a["out"], a["n"])
    if out is None:
        return False
    out[:] = a["value"]
    return True


def _fast_copy(mem, a) -> bool:
    n = a["n"]
    src = mem.view_i32(a["src"], n)
    if src is None:
        return False
    dst = mem.view_i32(a["dst"], n)
    if dst is None:
        return False
    dst[:] = src  # numpy copies through a temporary when the two ranges overlap
    return True


#: catalog body -> its fast body (keyed by the function, so a spec with another body, or a
#: layout installed from a runtime, still decodes with its own slots and only the body differs)
FAST_BODIES = {
    catalog._fallback_main: _fast_fallback_main,
    catalog._fallback_postprocess: _fast_fallback_postprocess,
    catalog._affine: _fast_affine,
    catalog._add: _fast_add,
    catalog._accumulate: _fast_accumulate,
    catalog._fill: _fast_fill,
    catalog._copy: _fast_copy,
}
