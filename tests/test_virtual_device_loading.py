"""``--virtual-device``: a real runtime's ``libascend_hal.so`` resolves to the virtual device
(``backends/acl/driver.py``), and the run names the stack it tested.

A stand-in runtime (a shared library whose DT_NEEDED names ``libascend_hal.so`` and which takes
the address of a driver entry point) is loaded through ``backends.acl.library.load`` in a fresh
interpreter, with a stand-in NPU driver beside it, as an installed CANN has one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mdlri_conformance.backends.acl import driver
from mdlri_conformance.backends.cbuild import BuildError, compiler
from mdlri_conformance.backends.hal.build import hal_library
from mdlri_conformance.conformance.framework.verdicts.summary import merged_stack, verdict_line
from mdlri_conformance.reports.stack import stack_text

ENTRY = "halSqTaskSend"


def _cc(out: Path, source: str, *args: str) -> Path:
    src = out.with_suffix(".c")
    src.write_text(textwrap.dedent(source))
    subprocess.run([*compiler(), "-shared", "-fPIC", "-o", str(out), str(src), *args],
                   check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``rt/libfake_rt.so`` (needs libascend_hal.so) and ``rt/libascend_hal.so``, a stand-in
    NPU driver in the runtime's own folder, where the loader's preloading finds it."""
    try:
        hal_library()
    except BuildError as exc:
        pytest.fail(f"the virtual device does not build: {exc}")
    rt = tmp_path_factory.mktemp("rt")
    _cc(rt / "libascend_hal.so", f"int {ENTRY}(void) {{ return 4242; }}\n",
        "-Wl,-soname,libascend_hal.so")
    _cc(rt / "libfake_rt.so", f"""
        extern int {ENTRY}(void);
        void *fake_driver_entry(void) {{ return (void *)&{ENTRY}; }}
        """, f"-L{rt}", "-lascend_hal")
    return rt


def _load_in_child(rt: Path, virtual: str | None) -> dict[str, object]:
    """Load the stand-in runtime in a fresh interpreter; what its driver entry resolved to."""
    code = textwrap.dedent(f"""
        import ctypes, json
        from mdlri_conformance.backends.acl import driver, library
        lib = library.load(library.Path({str(rt / 'libfake_rt.so')!r}))
        lib.fake_driver_entry.restype = ctypes.c_void_p
        entry = lib.fake_driver_entry()
        mapped = driver.mapped_driver()
        own = ctypes.CDLL(mapped)
        print(json.dumps({{"mapped": mapped, "describe": driver.describe(mapped),
                          "same": entry == ctypes.cast(own.{ENTRY}, ctypes.c_void_p).value}}))
        """)
    env = {k: v for k, v in os.environ.items() if k != driver.VIRTUAL_DEVICE_VAR}
    if virtual is not None:
        env[driver.VIRTUAL_DEVICE_VAR] = virtual
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_virtual_device_replaces_the_installed_driver(stand_ins: Path) -> None:
    """With MDLRI_VIRTUAL_DEVICE=1 the runtime's driver entry binds to the virtual device even
    with a driver beside the runtime, and the process names the virtual device."""
    got = _load_in_child(stand_ins, "1")
    assert Path(str(got["mapped"])).name == driver.VIRTUAL_FILE, got
    assert got["same"] is True, got
    assert str(got["describe"]).startswith("virtual device ("), got


def test_without_the_flag_the_installed_driver_is_used(stand_ins: Path) -> None:
    """Without the variable (or with 0) the driver beside the runtime is loaded and named."""
    for value in (None, "0"):
        got = _load_in_child(stand_ins, value)
        assert got["mapped"] == os.path.realpath(stand_ins / "libascend_hal.so"), got
        assert got["same"] is True, got
        assert got["describe"] == f"NPU driver {got['mapped']}", got


@pytest.mark.parametrize("value, wanted", [("", False), ("0", False), ("1", True)])
def test_virtual_device_wanted(value: str, wanted: bool) -> None:
    assert driver.virtual_device_wanted({driver.VIRTUAL_DEVICE_VAR: value}) is wanted


def test_a_bad_variable_value_is_one_line() -> None:
    with pytest.raises(driver.VirtualDeviceError, match=r"MDLRI_VIRTUAL_DEVICE='yes': expected 1"):
        driver.virtual_device_wanted({driver.VIRTUAL_DEVICE_VAR: "yes"})


def test_mapped_driver_reads_the_maps() -> None:
    maps = ("7f00-7f01 r-xp 00000000 08:01 1 /opt/x/libascend_hal.so\n"
            "7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/libc.so.6\n")
    assert driver.mapped_driver(maps) == os.path.realpath("/opt/x/libascend_hal.so")
    assert driver.mapped_driver("7f02-7f03 r-xp 00000000 08:01 2 /usr/lib/libc.so.6\n") is None
    assert driver.describe(None) == "no driver library loaded"


@pytest.mark.parametrize("argv, message", [
    (["run", "--backend", "sim", "--virtual-device", "--report-dir", "{tmp}"],
     "--virtual-device: only the acl backend takes it (this run's backend is 'sim')"),
    (["run", "--backend", "acl", "--acl-lib", "emulator", "--virtual-device", "-k", "x",
      "--report-dir", "{tmp}"],
     "--virtual-device: the ACL emulator (--acl-lib emulator) is no CANN runtime"),
    (["doctor", "--acl-lib", "emulator", "--virtual-device"],
     "--virtual-device: the ACL emulator (--acl-lib emulator) is no CANN runtime"),
])
def test_cli_refuses_the_flag_where_no_driver_is_loaded(argv: list[str], message: str,
                                                        tmp_path: Path) -> None:
    """The flag with the simulator or the emulator is a usage error: one line, exit 2."""
    argv = [a.replace("{tmp}", str(tmp_path / "r")) for a in argv]
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", *argv],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def test_merged_stack_lists_differing_fields() -> None:
    a = {"runtime": "/r/libacl.so", "version": "ACL 1.17.0", "device": "NPU driver /d/a.so"}
    b = dict(a, device="virtual device (x)")
    assert merged_stack([a, a]) == a
    assert merged_stack([a, b])["device"] == "NPU driver /d/a.so | virtual device (x)"
    assert merged_stack([]) is None


def test_the_verdict_and_the_reports_name_the_stack() -> None:
    summary = {"backend": "acl", "gate": "pass",
               "verdict": {"verdict": "PASS", "why": "3 spec(s) exercised the backend"},
               "stack": {"runtime": "/r/libascendcl.so", "version": "ACL 1.17.0",
                         "device": "virtual device (libmdlri_hal.so at /c/libmdlri_hal.so)"}}
    want = ("acl: /r/libascendcl.so, ACL 1.17.0, device: virtual device (libmdlri_hal.so at "
            "/c/libmdlri_hal.so)")
    assert stack_text(summary) == want
    assert verdict_line(summary) == f"gate: PASS (backend {want}): 3 spec(s) exercised the backend"
    assert stack_text({"backend": "sim"}) == "sim"
    assert stack_text({}) == "not recorded"


def test_a_run_records_its_stack(tmp_path: Path) -> None:
    """summary.json, summary.md, index.html and the verdict line carry the stack a worker
    process reported (sim, two workers)."""
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run",
                          "--backend", "sim", "-n", "2", "-k", "test_empty_group",
                          "--report-dir", str(tmp_path / "r")],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["stack"]["runtime"] == "the embedded simulator"
    text = stack_text(summary)
    assert f"gate: PASS (backend {text})" in res.stdout
    assert text in (tmp_path / "r" / "summary.md").read_text()
    assert text in (tmp_path / "r" / "index.html").read_text()


def test_doctor_names_the_driver() -> None:
    """``doctor`` says which driver the runtime reached the device through (the emulator:
    none, its own host device)."""
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "doctor",
                          "--acl-lib", "emulator"], capture_output=True, text=True, timeout=300)
    assert "driver: the emulator's host device (no driver)" in res.stdout.splitlines(), \
        res.stdout[-2000:] + res.stderr[-2000:]


def test_the_virtual_device_brings_its_kernel_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the virtual device a real runtime's default kernel binary is the virtual one
    (backends/hal/kernel_binary.py); never for the emulator, never without the flag."""
    from mdlri_conformance.backends.acl import virtual_kernels
    from mdlri_conformance.backends.hal.kernel_binary import FILE_NAME
    monkeypatch.setenv(driver.VIRTUAL_DEVICE_VAR, "1")
    path = virtual_kernels(False)
    assert path is not None and Path(path).name == FILE_NAME and Path(path).is_file()
    assert virtual_kernels(True) is None
    monkeypatch.setenv(driver.VIRTUAL_DEVICE_VAR, "0")
    assert virtual_kernels(False) is None
