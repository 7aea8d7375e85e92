"""Branch figures of deep campaigns: the emulator's gcov build beside the normal one, and
the counting of gcov and coverage.py results (nothing run is nothing reached)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework.power import branch_coverage

needs_gcov = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("gcov") is None,
                                reason="gcc and gcov are needed for the emulator's coverage")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MDLRI_EMU_COVERAGE", raising=False)
    return tmp_path / "cache"


@needs_gcov
def test_coverage_build_is_separate_and_unreached_without_counters(cache: Path) -> None:
    from mdlri_conformance.backends.acl.emulator import build
    plain = build.emulator_library()
    instrumented = build.emulator_library(coverage=True)
    assert plain != instrumented
    assert instrumented.parent == build.coverage_dir()
    assert instrumented.parent.name.endswith("-coverage")
    assert not list(plain.parent.glob("*.gcno"))  # the normal build stays uninstrumented
    notes = sorted(p.stem for p in (build.coverage_dir() / "obj").glob("*.gcno"))
    assert notes == sorted(p.stem for p in build.EMU_SRC.glob("*.c"))
    figures = branch_coverage.gcov_branches(cache / "no-counters", build.coverage_dir() / "obj",
                                            [build.EMU_SRC, build.EMU_INCLUDE])
    assert figures.total > 100 and figures.reached == 0


@needs_gcov
def test_environment_selects_the_coverage_build(cache: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from mdlri_conformance.backends.acl.emulator import build
    monkeypatch.setenv(build.COVERAGE_VAR, "1")
    assert build.emulator_library() == build.coverage_dir() / build.EMULATOR_NAME
    env = build.gcov_env(cache / "counters")
    obj = build.coverage_dir() / "obj"
    # the object folder's components are stripped: counters land directly in the folder
    assert env == {"GCOV_PREFIX": str(cache / "counters"),
                   "GCOV_PREFIX_STRIP": str(len(obj.parts) - 1)}


def test_python_branches_count_only_what_ran(tmp_path: Path) -> None:
    pytest.importorskip("coverage", reason="the [deep] extra is not installed")
    pkg = tmp_path / "pkg_deep_cov"
    pkg.mkdir()
    (pkg / "mod.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    (pkg / "never.py").write_text("def g(y):\n    if y:\n        return 3\n    return 4\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("pkg_deep_cov_mod", pkg / "mod.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    cov = branch_coverage.start_python(pkg)
    spec.loader.exec_module(mod)
    mod.f(True)
    figures = branch_coverage.python_branches(cov, pkg)
    assert figures.files["mod.py"] == (1, 2)  # one of the if's two ways
    assert figures.files["never.py"] == (0, 2)  # never imported: unreached, still counted
    assert (figures.reached, figures.total) == (1, 4)
    assert figures.line() == "1/4 (25.0%)"
