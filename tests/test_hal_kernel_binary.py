"""The virtual kernel binary (``backends/hal/kernel_binary.py``), read back by binutils'
``readelf`` and by a TLV walk written here from the runtime's facts (``elf.cc:737-762``):
what the runtime's loader takes from it (the one allocated section, the kernels' symbols, each
kernel's parameter layout) and what the virtual device reads at a kernel's pc (its record)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from mdlri_conformance.backends.cbuild import CacheNotWritable
from mdlri_conformance.backends.hal import kernel_binary as kb
from mdlri_conformance.kernel.catalog import NATURAL, Field, KernelSpec

SPECS = list(NATURAL.values())


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kbin") / "k.o"
    path.write_bytes(kb.elf_bytes(SPECS))
    return path


def _readelf(*args: str) -> str:
    exe = shutil.which("readelf")
    if exe is None:
        pytest.fail("readelf (binutils) is needed: it comes with gcc")
    return subprocess.run([exe, "-W", *args], capture_output=True, text=True,
                          check=True).stdout


def _sections(path: Path) -> dict[str, dict[str, str]]:
    out = {}
    for m in re.finditer(r"\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+"
                         r"([0-9a-f]+)\s+([0-9a-f]+)\s+(\S*)\s+(\d+)\s+(\d+)\s+(\d+)",
                         _readelf("-S", str(path))):
        out[m.group(2)] = {"index": m.group(1), "type": m.group(3), "offset": m.group(5),
                           "size": m.group(6), "flags": m.group(8)}
    return out


def test_readelf_sees_a_relocatable_object_with_one_allocated_section(binary: Path) -> None:
    """ET_REL, and ``.text`` is the only SHF_ALLOC section: the bytes the runtime copies
    (elf.cc:1450-1464)."""
    assert re.search(r"Type:\s+REL ", _readelf("-h", str(binary)))
    secs = _sections(binary)
    allocated = [name for name, s in secs.items() if "A" in s["flags"]]
    assert allocated == [".text"], secs
    assert secs[".text"]["type"] == "PROGBITS" and "X" in secs[".text"]["flags"]
    assert {f".ascend.meta.{s.name}" for s in SPECS} <= set(secs)


def test_every_kernel_is_a_global_function_at_its_record(binary: Path) -> None:
    """One GLOBAL FUNC DEFAULT symbol per catalog kernel, in ``.text``, at a record offset
    (elf.cc:356-362: what becomes a kernel)."""
    syms = {}
    for line in _readelf("-s", str(binary)).splitlines():
        f = line.split()
        if len(f) == 8 and f[3] == "FUNC":
            syms[f[7]] = (int(f[1], 16), int(f[2]), f[4], f[5], f[6])
    assert set(syms) == {s.name for s in SPECS}
    offsets = sorted(v[0] for v in syms.values())
    assert offsets == [i * kb.RECORD_SIZE for i in range(len(SPECS))]
    assert all(v[1:] == (kb.RECORD_SIZE, "GLOBAL", "DEFAULT", "1") for v in syms.values())


def test_the_record_at_each_symbol_names_its_kernel(binary: Path) -> None:
    """The device reads the kernel's name and argument size at its pc."""
    data = binary.read_bytes()
    text = int(_sections(binary)[".text"]["offset"], 16)
    for line in _readelf("-s", str(binary)).splitlines():
        f = line.split()
        if len(f) == 8 and f[3] == "FUNC":
            rec = kb.parse_record(data[text + int(f[1], 16):])
            assert rec is not None and rec.name == f[7], (f, rec)
            assert rec.args_size == NATURAL[f[7]].args_size
            assert rec.version == kb.RECORD_VERSION
    assert kb.parse_record(b"NOTMAGIC" + bytes(40)) is None


def _tlvs(data: bytes) -> list[tuple[int, bytes]]:
    out, pos = [], 0
    while len(data) - pos > 4:
        typ, n = struct.unpack_from("<HH", data, pos)
        if pos + 4 + n > len(data):
            break
        out.append((typ, data[pos + 4:pos + 4 + n]))
        pos += 4 + n
    return out


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_meta_gives_the_catalog_layout(binary: Path, spec: KernelSpec) -> None:
    """KERNEL_TYPE 2 (AIC, a 910B cube kernel: tasks KERNEL_AICORE, program.cc:1601-1606,
    davinci_kernel_task.cc:62-68; no mix kernel), PARAM_SUMMARY (count, sizeof) and one
    PARAM_INFO per field at the C struct's (offset, size): what aclrtFunctionGetParamCount/Info
    answer (elf.cc:594-639)."""
    sec = _sections(binary)[f".ascend.meta.{spec.name}"]
    data = binary.read_bytes()
    tlvs = _tlvs(data[int(sec["offset"], 16):][:int(sec["size"], 16)])
    assert [t for t, _ in tlvs] == [1, 16] + [17] * len(spec.fields)
    assert struct.unpack("<I", tlvs[0][1]) == (2,)
    assert struct.unpack("<IQ", tlvs[1][1]) == (len(spec.fields), spec.args_size)
    infos = [struct.unpack("<IIII", body[:16]) for t, body in tlvs[2:]]
    assert [(i[2], i[3]) for i in infos] == list(spec.layout)
    assert [i[1] for i in infos] == list(range(len(spec.fields)))


@pytest.mark.parametrize("name", ["add_2", "k_mix_aic", "k_mix_aiv"])
def test_names_the_runtime_would_rename_are_refused(name: str) -> None:
    spec = KernelSpec(name, (Field("p", "ptr", "in"),), lambda m, a: None, "")
    with pytest.raises(ValueError, match="tiling key or a mix kernel"):
        kb.elf_bytes([spec])


def test_cached_by_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(tmp_path))
    first = kb.virtual_kernel_binary()
    assert first.read_bytes() == kb.elf_bytes(SPECS)
    assert kb.virtual_kernel_binary() == first
    other = kb.virtual_kernel_binary(SPECS[:1])
    assert other != first and other.read_bytes() == kb.elf_bytes(SPECS[:1])


def test_an_unwritable_cache_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(blocker))
    with pytest.raises(CacheNotWritable, match="set MDLRI_CACHE_DIR to a writable directory"):
        kb.virtual_kernel_binary()
