"""The ctypes structs of backends/acl/structs.py against C: a probe compiled with gcc prints
sizeof, alignment and every modelled field's offset and size; ctypes must agree exactly.

Headers: the emulator's ``mdlri_acl_rt.h`` always; the real ``acl/acl_rt.h`` when
``ASCEND_HOME_PATH`` points to a CANN install that has it (skipped with a reason otherwise).
The header is never copied into the repository.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from mdlri_conformance.backends.acl import structs as S

ROOT = Path(__file__).resolve().parents[1]
EMU_INCLUDE = ROOT / "backends" / "acl" / "emulator" / "include"

#: structs the binding passes to the emulator: its header must declare them
REQUIRED = {S.TaskParams, S.KernelTaskParams, S.EventRecordTaskParams, S.EventWaitTaskParams,
            S.EventResetTaskParams, S.ValueWriteTaskParams, S.ValueWaitTaskParams,
            S.LaunchKernelCfg, S.LaunchKernelAttr, S.LaunchKernelAttrValue, S.TimeoutUs,
            S.BinaryLoadOptions, S.BinaryLoadOption, S.BinaryLoadOptionValue,
            S.PlaceHolderInfo, S.CondTaskParams}


@dataclass(frozen=True)
class Header:
    """One header to probe: its ``#include`` line and include dirs."""

    name: str
    include: str
    dirs: tuple[str, ...]


def _headers() -> list[object]:
    emu = Header("emulator", '#include "mdlri_acl_rt.h"', (str(EMU_INCLUDE),))
    params: list[object] = [pytest.param(emu, id="emulator")]
    home = os.environ.get("ASCEND_HOME_PATH")
    real_h = Path(home) / "include" / "acl" / "acl_rt.h" if home else None
    if real_h is not None and real_h.is_file():
        real = Header("cann", "#include <acl/acl_rt.h>", (str(Path(home) / "include"),))
        params.append(pytest.param(real, id="cann"))
    else:
        why = ("ASCEND_HOME_PATH is not set" if not home
               else f"{real_h} does not exist")
        params.append(pytest.param(None, id="cann", marks=pytest.mark.skip(
            reason=f"no CANN headers to compare against: {why}")))
    return params


def c_fields(cls: type) -> list[tuple[str, int, int]]:
    """(C member designator, offset, size) of every modelled field; the anonymous union's
    members are members of the enclosing struct in C."""
    out: list[tuple[str, int, int]] = []
    anon = set(getattr(cls, "_anonymous_", ()))
    for name, ftype, *_ in cls._fields_:
        desc = getattr(cls, name)
        if name in anon:
            for sub, stype, *_ in ftype._fields_:
                out.append((sub, desc.offset + getattr(ftype, sub).offset, ctypes.sizeof(stype)))
        else:
            out.append((name, desc.offset, desc.size))
    return out


def probe_source(header: Header, cls: type) -> str:
    cname = S.C_NAMES[cls]
    lines = [header.include, "#include <stdio.h>", "#include <stddef.h>", "int main(void) {",
             f'  printf("sizeof %zu\\n", sizeof({cname}));',
             f'  printf("align %zu\\n", _Alignof({cname}));']
    for member, _, _ in c_fields(cls):
        lines.append(f'  printf("field {member} %zu %zu\\n", offsetof({cname}, {member}), '
                     f"sizeof((({cname} *)0)->{member}));")
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def run_probe(header: Header, cls: type, tmp: Path) -> dict[str, tuple[int, ...]] | str:
    """Compile and run the probe: parsed output, or the compiler's complaint (a str)."""
    src = tmp / f"probe_{cls.__name__}.c"
    exe = tmp / f"probe_{cls.__name__}"
    src.write_text(probe_source(header, cls))
    cmd = ["gcc", "-std=c11", "-Wall", "-o", str(exe), str(src)]
    cmd += [f"-I{d}" for d in header.dirs]
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}  # ASCII quotes in gcc's messages
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    if res.returncode != 0:
        return res.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True)
    table: dict[str, tuple[int, ...]] = {}
    for line in out.stdout.splitlines():
        key, *rest = line.split()
        if key == "field":
            table[f"field {rest[0]}"] = tuple(int(x) for x in rest[1:])
        else:
            table[key] = (int(rest[0]),)
    return table


def mismatches(cls: type, table: dict[str, tuple[int, ...]]) -> list[str]:
    """Every disagreement between ctypes and the C probe."""
    bad = []
    if table["sizeof"] != (ctypes.sizeof(cls),):
        bad.append(f"sizeof: C {table['sizeof'][0]}, ctypes {ctypes.sizeof(cls)}")
    if table["align"] != (ctypes.alignment(cls),):
        bad.append(f"align: C {table['align'][0]}, ctypes {ctypes.alignment(cls)}")
    for member, off, size in c_fields(cls):
        c_off, c_size = table[f"field {member}"]
        if (c_off, c_size) != (off, size):
            bad.append(f"{member}: C offset {c_off} size {c_size}, ctypes offset {off} "
                       f"size {size}")
    return bad


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


@needs_gcc
@pytest.mark.parametrize("header", _headers())
@pytest.mark.parametrize("cls", list(S.C_NAMES), ids=lambda c: S.C_NAMES[c])
def test_layout_matches_c(header: Header, cls: type, tmp_path: Path) -> None:
    result = run_probe(header, cls, tmp_path)
    if isinstance(result, str):
        cname = S.C_NAMES[cls]
        undeclared = f"unknown type name '{cname}'" in result or f"'{cname}' undeclared" in result
        if undeclared and not (header.name == "emulator" and cls in REQUIRED):
            pytest.skip(f"{header.name} header does not declare {cname}")
        pytest.fail(f"probe for {cname} did not compile against the {header.name} header:\n"
                    f"{result}")
    assert mismatches(cls, result) == []


@needs_gcc
def test_a_moved_offset_is_caught(tmp_path: Path) -> None:
    """The comparison notices a field moved by a wrong type (isHostArgs as uint64 would
    move nothing; numBlocks as uint64 moves rsv; a _pack_ shifts argsSize)."""

    class Packed(ctypes.Structure):
        _pack_ = 4
        _fields_ = S.KernelTaskParams._fields_

    emu = Header("emulator", '#include "mdlri_acl_rt.h"', (str(EMU_INCLUDE),))
    table = run_probe(emu, S.KernelTaskParams, tmp_path)
    assert isinstance(table, dict), table
    assert mismatches(S.KernelTaskParams, table) == []
    bad = mismatches(Packed, table)
    assert any(b.startswith("argsSize") for b in bad) and any(b.startswith("sizeof") for b in bad)


def test_literal_abi_numbers() -> None:
    """The abi.md §4 numbers, checked everywhere (no compiler needed)."""
    assert ctypes.sizeof(S.TaskParams) == 200 and S.TaskParams.u.offset == 72
    assert ctypes.sizeof(S.KernelTaskParams) == 88
    assert (S.KernelTaskParams.isHostArgs.offset, S.KernelTaskParams.argsSize.offset,
            S.KernelTaskParams.numBlocks.offset, S.KernelTaskParams.rsv.offset) == (24, 32, 40, 44)
    assert ctypes.sizeof(S.ValueWaitTaskParams) == 24
    assert ctypes.sizeof(S.ValueWriteTaskParams) == 16
    assert ctypes.sizeof(S.CondTaskParams) == 24 and S.CondTaskParams.modelRIArray.offset == 16
    assert ctypes.sizeof(S.LaunchKernelAttr) == 20 and S.LaunchKernelAttr.value.offset == 4
    assert ctypes.alignment(S.LaunchKernelAttr) == 4
    assert ctypes.sizeof(S.BinaryLoadOption) == 20 and S.BinaryLoadOption.value.offset == 4
    assert ctypes.sizeof(S.MallocAttribute) == 12 and ctypes.sizeof(S.Dim3) == 12


#: host-state functions (HostStateBackend) and the kernel parameter layout
#: (FunctionInfoBackend): the C prototype (abi.md §3.1, §3.4; hicann/runtime @681ef76
#: include/external/acl/acl_rt.h:5773, 5787) and the ctypes argtypes backends/acl/symbols.py
#: must give them
PROTOTYPES: dict[str, tuple[str, list[object]]] = {
    "aclrtGetDevice": ("aclError (*)(int32_t *)", [ctypes.POINTER(ctypes.c_int32)]),
    "aclrtGetCurrentContext": ("aclError (*)(aclrtContext *)",
                               [ctypes.POINTER(ctypes.c_void_p)]),
    "aclrtSynchronizeEvent": ("aclError (*)(aclrtEvent)", [ctypes.c_void_p]),
    "aclrtSynchronizeEventWithTimeout": ("aclError (*)(aclrtEvent, int32_t)",
                                         [ctypes.c_void_p, ctypes.c_int32]),
    "aclrtFunctionGetParamCount": ("aclError (*)(const void *, size_t *)",
                                   [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]),
    "aclrtFunctionGetParamInfo": ("aclError (*)(const void *, size_t, size_t *, size_t *)",
                                  [ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.POINTER(ctypes.c_size_t),
                                   ctypes.POINTER(ctypes.c_size_t)]),
}


def test_host_state_argtypes() -> None:
    """The binding's argtypes for the host-state and parameter-layout functions follow their
    C prototypes (size_t is c_size_t, 8 bytes on LP64)."""
    from mdlri_conformance.backends.acl.symbols import SIGNATURES

    for name, (_, argtypes) in PROTOTYPES.items():
        restype, got = SIGNATURES[name]
        assert restype is ctypes.c_int, name
        assert [str(t) for t in got] == [str(t) for t in argtypes], name


@needs_gcc
@pytest.mark.parametrize("header", _headers())
def test_host_state_prototypes(header: Header, tmp_path: Path) -> None:
    """Each header declares the host-state and parameter-layout functions with exactly these
    prototypes: a function pointer of the expected type initialised from the name compiles
    with -Werror."""
    lines = [header.include, "#include <stdint.h>", "#include <stddef.h>"]
    lines += [f"{proto.replace('(*)', f'(*p_{name})', 1)} = {name};"
              for name, (proto, _) in PROTOTYPES.items()]
    src = tmp_path / "protos.c"
    src.write_text("\n".join(lines) + "\nint main(void) { return 0; }\n")
    cmd = ["gcc", "-std=c11", "-Wall", "-Werror", "-c", "-o", str(tmp_path / "protos.o"),
           str(src)] + [f"-I{d}" for d in header.dirs]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "LC_ALL": "C", "LANG": "C"})
    assert res.returncode == 0, res.stderr
