"""A second copy of the host ABI emulator in one process is refused in one line at load.

Two copies mapped RTLD_GLOBAL export the same symbols; the second copy's calls into its own
exported functions bind to the first copy's, so the second backend's work lands in the
first's state and a run fails later (the fallback example's sync times out after 5 s) instead
of loudly. Each case runs in a fresh interpreter: a process holds one emulator for life."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the acl emulator cannot be built")

PROLOGUE = '''
import os, sys
from mdlri_conformance.backends import acl
from mdlri_conformance.backends.contract import BackendConfigError
from mdlri_conformance.conformance.scenarios import EXAMPLES

def second(**kw):
    try:
        acl.create(**kw)
    except BackendConfigError as exc:
        print("REFUSED", exc)
    else:
        print("LOADED")
'''


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROLOGUE + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, **env})


@pytest.fixture(scope="module")
def emulator_dir() -> Path:
    """The built emulator's cache folder (built once if needed)."""
    from mdlri_conformance.backends.acl.emulator.build import emulator_library
    return emulator_library().parent


def test_the_loader_knows_the_emulator_file_name() -> None:
    from mdlri_conformance.backends.acl import library
    from mdlri_conformance.backends.acl.emulator import build
    assert library.EMULATOR_FILE == build.EMULATOR_NAME


def test_a_second_emulator_build_in_one_process_is_refused(emulator_dir: Path,
                                                           tmp_path: Path) -> None:
    """The emulator from a second cache (another MDLRI_CACHE_DIR: the same build, another
    file) is refused in one line naming both copies; the first backend keeps working."""
    other = tmp_path / "cache" / emulator_dir.name
    shutil.copytree(emulator_dir, other)  # a built copy: nothing to compile
    res = _python(f'''
        first = acl.create(lib="emulator")
        print("FIRST", first.lib_path)
        os.environ["MDLRI_CACHE_DIR"] = {str(tmp_path / "cache")!r}
        second(lib="emulator")
        print("FIRST WORKS", EXAMPLES["fallback"](first, lambda *a: None))
    ''')
    assert res.returncode == 0, res.stderr[-3000:]
    first = next(ln.split(" ", 1)[1] for ln in res.stdout.splitlines() if ln.startswith("FIRST "))
    refused = [ln for ln in res.stdout.splitlines() if ln.startswith("REFUSED")]
    assert refused == [f"REFUSED cannot load {other / 'libmdlri_acl_emu.so'}: a second copy of "
                       f"the ACL emulator in this process, which already holds "
                       f"{os.path.realpath(first)} (two copies share their exported symbols "
                       "and fail later); use one emulator build per process (one "
                       "MDLRI_CACHE_DIR, CC and MDLRI_EMU_COVERAGE) or a fresh process"], res.stdout
    assert "FIRST WORKS True" in res.stdout, res.stdout


def test_an_emulator_copy_under_another_name_is_refused(emulator_dir: Path,
                                                        tmp_path: Path) -> None:
    """A copy of the emulator named libacl_rt.so (``--acl-lib``) is known by its
    mdlriEmuVersion symbol once loaded, and refused before any use."""
    lib = tmp_path / "libacl_rt.so"
    shutil.copy(emulator_dir / "libmdlri_acl_emu.so", lib)
    res = _python(f'''
        acl.create(lib="emulator")
        second(lib={str(lib)!r})
    ''')
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"REFUSED cannot load {lib}: a second copy of the ACL emulator" in res.stdout, \
        res.stdout + res.stderr[-2000:]


def test_the_same_emulator_twice_is_one_copy() -> None:
    """Two backends on the same emulator file share it: nothing is refused."""
    res = _python('''
        acl.create(lib="emulator")
        second(lib="emulator")
    ''')
    assert res.returncode == 0 and res.stdout.strip().splitlines()[-1] == "LOADED", \
        res.stdout + res.stderr[-2000:]
