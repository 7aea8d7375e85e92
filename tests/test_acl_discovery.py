"""Library discovery of the acl backend over fake install trees (dummy files, no loading)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from mdlri_conformance.backends.acl.library import (LIB_VAR, check_shared_object, find_library, is_stub,
                                  missing_required, needed, preload_dependencies)

ARCH = "x86_64"


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not really ELF")
    return path


def search(tmp: Path, env: dict[str, str] | None = None, explicit: str | None = None):
    """find_library confined to the fake tree: sysroot and home below ``tmp``."""
    return find_library(explicit, env=env or {}, home=tmp / "home", sysroot=tmp / "root",
                        arch=ARCH)


def test_nothing_found_gives_one_line_reason(tmp_path: Path) -> None:
    d = search(tmp_path)
    assert d.path is None and not d.emulator
    assert "no CANN runtime library" in d.reason and "\n" not in d.reason
    assert any("usr/local/Ascend/cann/lib64/libacl_rt.so" in t for t in d.tried)


def test_system_roots_in_order(tmp_path: Path) -> None:
    old = touch(tmp_path / "root/usr/local/Ascend/ascend-toolkit/latest/lib64/libacl_rt.so")
    assert search(tmp_path).path == old
    new = touch(tmp_path / "root/usr/local/Ascend/cann/lib64/libacl_rt.so")
    assert search(tmp_path).path == new  # the CANN 8.5+ layout is tried first
    home = touch(tmp_path / "home/Ascend/cann/lib64/libacl_rt.so")
    assert search(tmp_path).path == home  # a user install wins over system roots


def test_arch_lib_dir(tmp_path: Path) -> None:
    p = touch(tmp_path / f"root/usr/local/Ascend/cann/{ARCH}-linux/lib64/libacl_rt.so")
    d = search(tmp_path)
    assert d.path == p and "install root" in d.source


def test_acl_rt_before_ascendcl(tmp_path: Path) -> None:
    root = tmp_path / "root/usr/local/Ascend/cann"
    legacy = touch(root / "lib64/libascendcl.so")
    assert search(tmp_path).path == legacy
    preferred = touch(root / f"{ARCH}-linux/lib64/libacl_rt.so")
    assert search(tmp_path).path == preferred  # in any lib dir of the same root


def test_devlib_stub_never_taken(tmp_path: Path) -> None:
    root = tmp_path / "root/usr/local/Ascend/cann"
    touch(root / f"{ARCH}-linux/devlib/linux/{ARCH}/libacl_rt.so")
    touch(root / f"{ARCH}-linux/devlib/libacl_rt.so")
    assert search(tmp_path).path is None
    stub = root / f"{ARCH}-linux/devlib/libacl_rt.so"
    d = search(tmp_path, explicit=str(stub))
    assert d.path is None and "stub" in d.reason
    d = search(tmp_path, env={"LD_LIBRARY_PATH": str(stub.parent)})
    assert d.path is None
    assert is_stub(stub) and not is_stub(root / "lib64/libacl_rt.so")


def test_env_roots_before_defaults(tmp_path: Path) -> None:
    touch(tmp_path / "root/usr/local/Ascend/cann/lib64/libacl_rt.so")
    custom = touch(tmp_path / "custom/cann/lib64/libacl_rt.so")
    d = search(tmp_path, env={"ASCEND_HOME_PATH": str(tmp_path / "custom/cann")})
    assert d.path == custom and d.source == "$ASCEND_HOME_PATH"
    d = search(tmp_path, env={"ASCEND_INSTALL_PATH": str(tmp_path / "custom/cann")})
    assert d.path == custom and d.source == "$ASCEND_INSTALL_PATH"


def test_ld_library_path(tmp_path: Path) -> None:
    touch(tmp_path / "root/usr/local/Ascend/cann/lib64/libacl_rt.so")
    shim = touch(tmp_path / "shim/libascendcl.so")
    d = search(tmp_path, env={"LD_LIBRARY_PATH": f"/nonexistent:{tmp_path / 'shim'}"})
    assert d.path == shim and d.source == "$LD_LIBRARY_PATH"


def test_explicit_and_env_override_everything(tmp_path: Path) -> None:
    touch(tmp_path / "home/Ascend/cann/lib64/libacl_rt.so")
    mine = touch(tmp_path / "mine/libascendcl.so")
    env = {"ASCEND_HOME_PATH": str(tmp_path / "home/Ascend/cann")}
    assert search(tmp_path, env={**env, LIB_VAR: str(mine)}).path == mine
    other = touch(tmp_path / "other/libacl_rt.so")
    d = search(tmp_path, env={**env, LIB_VAR: str(mine)}, explicit=str(other))
    assert d.path == other and d.source == "--acl-lib"
    d = search(tmp_path, explicit=str(tmp_path / "other"))  # a directory
    assert d.path == other


def test_explicit_missing_is_not_silently_replaced(tmp_path: Path) -> None:
    touch(tmp_path / "home/Ascend/cann/lib64/libacl_rt.so")
    d = search(tmp_path, explicit=str(tmp_path / "nope.so"))
    assert d.path is None and "no such file" in d.reason
    assert d.error == d.reason == f"--acl-lib {tmp_path / 'nope.so'}: no such file or directory"


def test_explicit_errors_name_the_option_as_typed(tmp_path: Path) -> None:
    """A named library's problem is Discovery.error, which the backend raises as bad input;
    discovery that finds nothing sets no error (the backend is then merely unavailable)."""
    (tmp_path / "empty").mkdir()
    d = search(tmp_path, env={LIB_VAR: str(tmp_path / "empty")})
    assert d.path is None and d.explicit == f"{LIB_VAR}={tmp_path / 'empty'}"
    assert d.error.startswith(f"{LIB_VAR}={tmp_path / 'empty'}: no libacl_rt.so or "
                              "libascendcl.so in that directory")
    found = touch(tmp_path / "mine/libacl_rt.so")
    d = search(tmp_path, explicit=str(tmp_path / "mine"))
    assert d.path == found and d.explicit == f"--acl-lib {tmp_path / 'mine'}" and not d.error
    d = search(tmp_path)
    assert d.path is None and not d.explicit and not d.error and d.reason


def test_check_shared_object_reads_the_header(tmp_path: Path) -> None:
    """Nothing is loaded: the ELF header says whether dlopen could take the file."""
    text = tmp_path / "text.so"
    text.write_text("INPUT(libfoo.so)\n")
    assert check_shared_object(text) == "not a shared library (a text file)"
    junk = tmp_path / "junk.so"
    junk.write_bytes(bytes(range(256)))
    assert check_shared_object(junk) == "not a shared library (not an ELF file)"
    assert check_shared_object(tmp_path / "absent.so").startswith("cannot be read")
    lib = _elf_with_needed(tmp_path / "lib.so", ["libc.so.6"])
    assert check_shared_object(lib, "x86_64") == ""
    assert "another architecture" in check_shared_object(lib, "aarch64")
    obj = _elf_with_needed(tmp_path / "k.o", [], e_type=1)
    assert check_shared_object(obj, "x86_64") == "not a shared library (a relocatable object (.o))"
    pie = _elf_with_needed(tmp_path / "ls", ["libc.so.6"], extra=[(0x6FFFFFFB, 0x08000001)])
    assert check_shared_object(pie, "x86_64") == \
        "not a shared library (a position-independent executable)"
    elf32 = tmp_path / "lib32.so"
    elf32.write_bytes(b"\x7fELF" + bytes([1, 1, 1]) + bytes(57))
    assert "32-bit" in check_shared_object(elf32)
    assert needed(pie) == ["libc.so.6"]


def test_missing_required_symbols() -> None:
    class Lib:
        aclInit = aclrtSetDevice = object()
    assert missing_required(Lib()) == ["aclrtCreateStream"]


def test_emulator_keyword(tmp_path: Path) -> None:
    assert search(tmp_path, explicit="emulator").emulator
    assert search(tmp_path, env={LIB_VAR: "emulator"}).emulator


def _elf_with_needed(path: Path, names: list[str], extra: list[tuple[int, int]] = (),
                     e_type: int = 3, machine: int = 62) -> Path:
    """A minimal 64-bit ELF: one PT_LOAD over the file, a PT_DYNAMIC with DT_NEEDED (and the
    ``extra`` dynamic entries)."""
    strtab = b"\0" + b"".join(n.encode() + b"\0" for n in names)
    ehdr_size, phdr_size = 64, 56
    dyn_off = ehdr_size + 2 * phdr_size
    offsets, pos = [], 1
    for n in names:
        offsets.append(pos)
        pos += len(n) + 1
    dyn_entries = [(1, o) for o in offsets] + list(extra) + [(5, 0), (0, 0)]
    dyn = b"".join(struct.pack("<qQ", t, v) for t, v in dyn_entries)
    str_off = dyn_off + len(dyn)
    dyn_entries[-2] = (5, str_off)  # DT_STRTAB as a vaddr (vaddr == file offset here)
    dyn = b"".join(struct.pack("<qQ", t, v) for t, v in dyn_entries)
    total = str_off + len(strtab)
    ehdr = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", e_type, machine, 1, 0, ehdr_size, 0, 0, ehdr_size, phdr_size, 2, 64,
        0, 0)
    load = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, total, total, 0x1000)
    dynp = struct.pack("<IIQQQQQQ", 2, 6, dyn_off, dyn_off, dyn_off, len(dyn), len(dyn), 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(ehdr + load + dynp + dyn + strtab)
    return path


def test_needed_reads_dt_needed(tmp_path: Path) -> None:
    lib = _elf_with_needed(tmp_path / "lib64/libacl_rt.so", ["libruntime.so", "libc.so.6"])
    assert needed(lib) == ["libruntime.so", "libc.so.6"]
    assert needed(tmp_path / "missing.so") == []
    assert needed(touch(tmp_path / "junk.so")) == []


def test_preload_walks_dependencies_next_to_the_library(tmp_path: Path) -> None:
    d = tmp_path / "lib64"
    lib = _elf_with_needed(d / "libacl_rt.so", ["libruntime.so", "libc_sec.so", "libc.so.6"])
    _elf_with_needed(d / "libruntime.so", ["libascend_hal.so", "libc_sec.so"])
    _elf_with_needed(d / "libc_sec.so", [])
    drv = _elf_with_needed(tmp_path / "driver/libascend_hal.so", [])
    loaded: list[Path] = []

    def loader(p: Path) -> None:
        loaded.append(p)
        if p.name == "libc_sec.so":
            raise OSError("boom")

    failures = preload_dependencies(lib, [d, drv.parent], loader)
    # deepest first, each once, by absolute path; libc.so.6 is left to the system loader
    assert loaded == [drv, d / "libc_sec.so", d / "libruntime.so"]
    assert failures == [f"{d / 'libc_sec.so'}: boom"]


@pytest.mark.parametrize("value", ["", None])
def test_empty_explicit_falls_through(tmp_path: Path, value: str | None) -> None:
    p = touch(tmp_path / "root/opt/Ascend/cann/lib64/libacl_rt.so")
    assert search(tmp_path, explicit=value).path == p
