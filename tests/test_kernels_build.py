"""``mdlri-conformance kernels build`` without CANN: the one-line refusal, discovery of
ascendc.cmake and the SoC over fake trees, and the cmake command lines (subprocess mocked)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.backends.acl import kernels_build as kb
from mdlri_conformance.conformance import cli

ARCH = "x86_64"


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# fake\n")
    return path


def no_probe(env: Any) -> str | None:
    raise AssertionError("the SoC probe must not run")


# ------------------------------------------------------------------------------ CANN absent


def test_cli_without_cann_exits_2_with_one_line() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ASCEND_HOME_PATH", "ASCEND_INSTALL_PATH")}
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "kernels", "build"],
                         capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "ASCEND_HOME_PATH" in lines[0]
    assert "Traceback" not in res.stderr


def test_cli_reports_missing_ascendc_cmake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path / "cann"))
    monkeypatch.delenv("ASCENDC_CMAKE_DIR", raising=False)
    assert cli.main(["kernels", "build", "--soc", "Ascend910B3"]) == 2
    err = capsys.readouterr().err
    assert "no ascendc.cmake under" in err and err.count("\n") == 1


def test_missing_root_and_cmake(tmp_path: Path) -> None:
    with pytest.raises(kb.CannMissing, match="ASCEND_HOME_PATH"):
        kb.find_toolchain("Ascend910B3", env={}, probe=no_probe)
    root = tmp_path / "cann"
    touch(root / f"{ARCH}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
    with pytest.raises(kb.CannMissing, match="cmake not found"):
        kb.find_toolchain("Ascend910B3", env={"ASCEND_HOME_PATH": str(root)}, arch=ARCH,
                          probe=no_probe, which=lambda _n: None)


# ------------------------------------------------------------------------------ discovery


def test_cmake_dir_candidates_in_order(tmp_path: Path) -> None:
    root = tmp_path / "cann"
    env = {"ASCEND_INSTALL_PATH": str(root)}
    assert kb.cann_root(env) == root
    last = touch(root / "compiler/tikcpp/ascendc_kernel_cmake/ascendc.cmake").parent
    assert kb.find_cmake_dir(root, env, ARCH) == last
    plain = touch(root / "tikcpp/ascendc_kernel_cmake/ascendc.cmake").parent
    assert kb.find_cmake_dir(root, env, ARCH) == plain
    other = touch(root / "aarch64-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake").parent
    assert kb.find_cmake_dir(root, env, ARCH) == other
    host = touch(root / f"{ARCH}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake").parent
    assert kb.find_cmake_dir(root, env, ARCH) == host


def test_cmake_dir_from_env(tmp_path: Path) -> None:
    root = tmp_path / "cann"
    touch(root / f"{ARCH}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake")
    custom = touch(tmp_path / "custom/ascendc.cmake").parent
    assert kb.find_cmake_dir(root, {"ASCENDC_CMAKE_DIR": str(custom)}, ARCH) == custom
    with pytest.raises(kb.CannMissing, match="holds no ascendc.cmake"):
        kb.find_cmake_dir(root, {"ASCENDC_CMAKE_DIR": str(tmp_path / "nothing")}, ARCH)


def test_soc_order() -> None:
    env = {"SOC_VERSION": "Ascend910B2"}
    assert kb.find_soc("Ascend910_9362", env, no_probe) == "Ascend910_9362"
    assert kb.find_soc(None, env, no_probe) == "Ascend910B2"
    assert kb.find_soc(None, {}, lambda _e: "Ascend910B3") == "Ascend910B3"
    with pytest.raises(kb.CannMissing, match="--soc NAME"):
        kb.find_soc(None, {}, lambda _e: None)
    with pytest.raises(kb.CannMissing, match="not a SoC name"):
        kb.find_soc("Ascend 910B", {}, no_probe)


def test_probe_soc_runs_a_subprocess_and_takes_the_first_name() -> None:
    calls: list[list[str]] = []

    def runner(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "[WARN] noise here\nAscend910B3\n", "")

    assert kb.probe_soc({}, runner) == "Ascend910B3"
    assert calls[0][1:] == ["-m", "mdlri_conformance.backends.acl.kernels_build", "--print-soc"]
    fail = lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", "no library")  # noqa: E731
    assert kb.probe_soc({}, fail) is None


def test_print_soc_without_library_fails_quietly(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    for var in ("MDLRI_ACL_LIB", "ASCEND_HOME_PATH", "ASCEND_INSTALL_PATH",
                "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    if Path("/usr/local/Ascend").exists() or Path("/opt/Ascend").exists():
        pytest.skip("a CANN install is present on this machine")
    assert kb.main(["--print-soc"]) == 1


# ------------------------------------------------------------------------------ cmake


def fake_toolchain(tmp_path: Path) -> kb.Toolchain:
    root = tmp_path / "cann"
    cmake_dir = touch(root / f"{ARCH}-linux/tikcpp/ascendc_kernel_cmake/ascendc.cmake").parent
    return kb.Toolchain(root, cmake_dir, "Ascend910B3", "/usr/bin/cmake")


def test_cmake_command_lines(tmp_path: Path) -> None:
    tc = fake_toolchain(tmp_path)
    cmds = kb.cmake_commands(tc, tmp_path / "b", tmp_path / "o")
    assert cmds[0] == ["/usr/bin/cmake", "-S", str(kb.SOURCE_DIR), "-B", str(tmp_path / "b"),
                       "-DSOC_VERSION=Ascend910B3", f"-DASCENDC_CMAKE_DIR={tc.cmake_dir}",
                       f"-DASCEND_CANN_PACKAGE_PATH={tc.root}",
                       f"-DCMAKE_INSTALL_PREFIX={tmp_path / 'o'}"]
    assert cmds[1] == ["/usr/bin/cmake", "--build", str(tmp_path / "b"), "-j"]
    assert cmds[2] == ["/usr/bin/cmake", "--install", str(tmp_path / "b")]
    assert (kb.SOURCE_DIR / "CMakeLists.txt").is_file()
    assert (kb.SOURCE_DIR / "mdlri_kernels.cpp").is_file()


class FakeCmake:
    """Records the command lines; ``--install`` writes the fatbin where ascendc.cmake would."""

    def __init__(self, fail_at: int | None = None, install: bool = True) -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []
        self.fail_at, self.install = fail_at, install

    def __call__(self, cmd: list[str], env: dict[str, str], **kw: Any
                 ) -> subprocess.CompletedProcess[str]:
        self.calls.append((cmd, env))
        if self.fail_at == len(self.calls) - 1:
            return subprocess.CompletedProcess(cmd, 1)
        if cmd[1] == "-S":
            self.prefix = Path(cmd[-1].split("=", 1)[1])
        if cmd[1] == "--install" and self.install:
            out = self.prefix / "fatbin" / "mdlri_kernels" / "mdlri_kernels.o"
            out.parent.mkdir(parents=True)
            out.write_bytes(b"\x7fELF fake fatbin")
        return subprocess.CompletedProcess(cmd, 0)


def test_build_copies_into_the_kernels_cache(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(tmp_path / "cache"))
    tc = fake_toolchain(tmp_path)
    fake = FakeCmake()
    path = kb.build(env={"PATH": "/bin"}, runner=fake, toolchain=tc, log=io.StringIO())
    from mdlri_conformance.backends.acl import default_kernel_binary
    assert path == default_kernel_binary("Ascend910B3")
    assert path == tmp_path / "cache/kernels/Ascend910B3/mdlri_kernels.o"
    assert path.read_bytes() == b"\x7fELF fake fatbin"
    assert [c[1] for c, _ in fake.calls] == ["-S", "--build", "--install"]
    env = fake.calls[0][1]
    assert env["SOC_VERSION"] == "Ascend910B3" and env["ASCENDC_CMAKE_DIR"] == str(tc.cmake_dir)
    assert env["ASCEND_HOME_PATH"] == str(tc.root) and env["PATH"] == "/bin"
    build_dir = Path(fake.calls[0][0][4])
    assert not build_dir.exists()  # the temporary build directory is gone


def test_build_to_output_dir(tmp_path: Path) -> None:
    path = kb.build(output=tmp_path / "elsewhere", env={}, runner=FakeCmake(),
                    toolchain=fake_toolchain(tmp_path), log=io.StringIO())
    assert path == tmp_path / "elsewhere" / "mdlri_kernels.o" and path.is_file()


def test_build_failures_are_one_line(tmp_path: Path) -> None:
    tc = fake_toolchain(tmp_path)
    with pytest.raises(kb.BuildFailed, match="--build .* exit status 1"):
        kb.build(output=tmp_path, env={}, runner=FakeCmake(fail_at=1), toolchain=tc,
                 log=io.StringIO())
    with pytest.raises(kb.BuildFailed, match="installed no mdlri_kernels.o"):
        kb.build(output=tmp_path, env={}, runner=FakeCmake(install=False), toolchain=tc,
                 log=io.StringIO())


def test_cli_prints_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(tmp_path / "cache"))
    tc = fake_toolchain(tmp_path)
    real_build = kb.build

    def fake_build(soc: str | None = None, output: Any = None) -> Path:
        assert soc == "Ascend910B3"
        return real_build(soc, output, env={}, runner=FakeCmake(), toolchain=tc,
                          log=io.StringIO())

    monkeypatch.setattr(kb, "build", fake_build)
    assert cli.main(["kernels", "build", "--soc", "Ascend910B3"]) == 0
    out = capsys.readouterr().out.strip()
    assert out == str(tmp_path / "cache/kernels/Ascend910B3/mdlri_kernels.o")
