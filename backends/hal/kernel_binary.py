"""The virtual kernel binary: an ELF object the real runtime's kernel loader accepts, whose
code bytes name the catalog kernel the virtual device runs in its place.

The runtime reads kernel binaries with its own ELF64 reader (hicann/runtime @681ef76,
``src/runtime/core/src/kernel/elf.cc``). What it needs, and what this file writes:

* ELF64 little-endian (class ``elf.cc:1532-1538``, data ``:1502-1516``), ``e_shentsize`` 64
  (``:225-231``), section headers inside the file (``:214-255``), a ``.shstrtab``
  (``:1390-1412``). ``e_type`` is ET_REL: a symbol's ``st_value`` is then its offset from the
  first allocated section, which is what the kernel's pc adds to the copy's base
  (``kernel.cc:101-124``, ``program.cc:1714-1716``). ``e_machine`` 0 (only 183, AICPU, is
  looked at: ``program.cc:949-957``).
* ``.text``, the one SHF_ALLOC section: the bytes the runtime copies to device memory at the
  first ``aclrtBinaryGetFunction`` (``elf.cc:1450-1464``, ``runtime.cc:4885-4935``). It holds
  one :data:`RECORD_SIZE`-byte record per kernel, read only by the virtual device at the pc of
  a kernel SQE: magic :data:`MAGIC`, u32 version, u32 argument-struct size, u32 flags, u32 name
  length, the name and a NUL (our own format; device memory is host memory on that device).
* ``.ascend.meta.<name>`` per kernel (not allocated, so not copied; matched to the symbol by
  name, ``elf.cc:919-953, 1147``): TLVs ``{u16 type; u16 length}`` + body (``elf.hpp:131-134``,
  ``elf.cc:737-762``): KERNEL_TYPE (1) = 2, AIC, the 910B (v220) cube-core function type
  (``elf.hpp:93-95``; 1, AICORE, is the older chips'), no cross-core sync TLV, so no mix
  kernel: kernel attribute type CUBE (``program.cc:1564-1606``), whose tasks are
  KERNEL_AICORE (only VECTOR makes KERNEL_AIVEC, ``davinci_kernel_task.cc:62-68``) and whose
  SQE is the FFTS kernel SQE with fftsType AIC_ONLY and the same pc and argument fields as a
  vector kernel's (``davinci_kernel_task_v100.cc:583-601, 855, 911-919``); PARAM_SUMMARY (16: u32 count, u64 total size, ``elf.hpp:196-200``);
  one PARAM_INFO (17: index, ordinal, offset, size, u16 align, u16 type, 4 x u32 zero,
  ``elf.hpp:202-218``) per parameter, from the catalog's C struct: what
  ``aclrtFunctionGetParamCount/Info`` answer (``kernel.cc:427-448``).
* ``.symtab`` (entry size 24) with one GLOBAL FUNC, default-visibility symbol per kernel
  (``elf.cc:283-362, 1242-1312``) in section 1 at its record, and its ``.strtab``.

No ``.data`` section, no object symbols and no ``.json`` beside the file: the code stays
read-only and the loader's json and data paths are not taken (``program.cc:1030-1037``,
``loader.cc:242-250``). Catalog names end in no ``_<digits>`` (a tiling key) and no
``_mix_aic``/``_mix_aiv`` (``program.cc:1043-1060, 1543-1562``); :func:`elf_bytes` refuses such
names.

``virtual_kernel_binary()`` writes the file for the whole catalog into the cache (by content)
and returns its path; ``python -m backends.hal.kernel_binary`` prints it.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from ...kernel.catalog import NATURAL, KernelSpec
from ..cbuild import CacheNotWritable, cache_base

#: the first bytes of a kernel's record in ``.text``
MAGIC = b"MDLRIKRN"
RECORD_VERSION = 1
#: bytes per record (records sit at multiples of it; the runtime's copy is 4 KiB aligned)
RECORD_SIZE = 256
FILE_NAME = "mdlri_virtual_kernels.o"

_TLV_KERNEL_TYPE, _TLV_PARAM_SUMMARY, _TLV_PARAM_INFO = 1, 16, 17
#: KERNEL_FUNCTION_TYPE_AIC (elf.hpp:94): a 910B cube kernel, task type KERNEL_AICORE
_FUNC_TYPE_AIC = 2
_SHT_PROGBITS, _SHT_SYMTAB, _SHT_STRTAB = 1, 2, 3
_SHF_ALLOC_EXECINSTR = 0x6
_STT_FUNC_GLOBAL = 0x12
_BAD_NAME = re.compile(r"(_\d+|_mix_aic|_mix_aiv)$")


@dataclass(frozen=True)
class Record:
    """A kernel's record as the device reads it back (:func:`parse_record`)."""

    name: str
    args_size: int
    version: int
    flags: int


def record(spec: KernelSpec) -> bytes:
    """The :data:`RECORD_SIZE` bytes that stand for ``spec``'s code."""
    name = spec.name.encode()
    head = MAGIC + struct.pack("<IIII", RECORD_VERSION, spec.args_size, 0, len(name))
    body = head + name + b"\0"
    if len(body) > RECORD_SIZE:
        raise ValueError(f"kernel name too long for a record: {spec.name!r}")
    return body.ljust(RECORD_SIZE, b"\0")


def parse_record(data: bytes) -> Record | None:
    """The record at the start of ``data``, None when it does not start with :data:`MAGIC`."""
    if len(data) < 24 or data[:8] != MAGIC:
        return None
    version, args_size, flags, n = struct.unpack_from("<IIII", data, 8)
    name = data[24:24 + n]
    if len(name) != n:
        return None
    return Record(name.decode(errors="replace"), args_size, version, flags)


def meta(spec: KernelSpec) -> bytes:
    """The ``.ascend.meta.<name>`` TLVs: kernel type, parameter summary, parameter infos."""
    out = struct.pack("<HHI", _TLV_KERNEL_TYPE, 4, _FUNC_TYPE_AIC)
    slots = spec.layout
    out += struct.pack("<HHIQ", _TLV_PARAM_SUMMARY, 12, len(slots), spec.args_size)
    for i, (offset, size) in enumerate(slots):
        out += struct.pack("<HHIIIIHHIIII", _TLV_PARAM_INFO, 36, i, i, offset, size, size, 0,
                           0, 0, 0, 0)
    return out


def _strtab(names: Iterable[str]) -> tuple[bytes, dict[str, int]]:
    data, at = b"\0", {}
    for n in names:
        at[n] = len(data)
        data += n.encode() + b"\0"
    return data, at


def elf_bytes(specs: Sequence[KernelSpec]) -> bytes:
    """The ELF64 relocatable object for ``specs`` (see the module docstring)."""
    if not specs:
        raise ValueError("a kernel binary needs at least one kernel")
    for s in specs:
        if _BAD_NAME.search(s.name):
            raise ValueError(f"{s.name!r}: the runtime would read its suffix as a tiling key "
                             "or a mix kernel (program.cc:1043-1060, 1543-1562)")
    text = b"".join(record(s) for s in specs)
    metas = [meta(s) for s in specs]
    names = [s.name for s in specs]
    strtab, name_at = _strtab(names)
    symtab = bytes(24) + b"".join(
        struct.pack("<IBBHQQ", name_at[s.name], _STT_FUNC_GLOBAL, 0, 1, i * RECORD_SIZE,
                    RECORD_SIZE) for i, s in enumerate(specs))
    sec_names = [".text", *(f".ascend.meta.{n}" for n in names), ".symtab", ".strtab",
                 ".shstrtab"]
    shstrtab, sec_at = _strtab(sec_names)
    i_symtab = 2 + len(specs)
    i_strtab, i_shstrtab = i_symtab + 1, i_symtab + 2
    # (name, type, flags, data, link, info, align, entsize), after the null section
    sections = [(".text", _SHT_PROGBITS, _SHF_ALLOC_EXECINSTR, text, 0, 0, RECORD_SIZE, 0),
                *((f".ascend.meta.{n}", _SHT_PROGBITS, 0, m, 0, 0, 4, 0)
                  for n, m in zip(names, metas)),
                (".symtab", _SHT_SYMTAB, 0, symtab, i_strtab, 1, 8, 24),
                (".strtab", _SHT_STRTAB, 0, strtab, 0, 0, 1, 0),
                (".shstrtab", _SHT_STRTAB, 0, shstrtab, 0, 0, 1, 0)]
    body = bytearray(RECORD_SIZE)  # the ELF header, then padding: .text starts aligned
    headers = [bytes(64)]
    for name, typ, flags, data, link, info, align, entsize in sections:
        body += bytes(-len(body) % align)
        headers.append(struct.pack("<IIQQQQIIQQ", sec_at[name], typ, flags, 0, len(body),
                                   len(data), link, info, align, entsize))
        body += data
    body += bytes(-len(body) % 8)
    shoff = len(body)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    body[:64] = ident + struct.pack("<HHIQQQIHHHHHH", 1, 0, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                                    len(headers), i_shstrtab)
    return bytes(body) + b"".join(headers)


def virtual_kernel_binary(specs: Sequence[KernelSpec] | None = None) -> Path:
    """Path of the virtual kernel binary of ``specs`` (default: the catalog's C structs) in
    ``$MDLRI_CACHE_DIR/hal-kbin-<hash>/``, written when this content is not there yet."""
    data = elf_bytes(list(NATURAL.values()) if specs is None else specs)
    out = cache_base() / f"hal-kbin-{hashlib.sha256(data).hexdigest()[:16]}" / FILE_NAME
    if out.is_file() and out.read_bytes() == data:
        return out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{FILE_NAME}.{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, out)
    except OSError as exc:
        raise CacheNotWritable(f"cannot write {out} ({exc.strerror or exc}): set "
                               "MDLRI_CACHE_DIR to a writable directory") from None
    return out


def main() -> int:
    try:
        print(virtual_kernel_binary())
    except CacheNotWritable as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
