"""The doctor's probe of an ACL library, run in a subprocess (``aclInit`` works once per
process, and a broken driver can hang or abort).

``python -m backends.acl.probe LIB [--device N]`` prints one JSON object: ``version``,
``emulator``, ``soc``, ``init_rc``, ``device_count`` / ``device_count_rc``,
``set_device_rc``, ``errors`` (aclGetRecentErrMsg texts), ``missing`` (absent symbols of
the contract), ``missing_required`` (absent :data:`~.library.REQUIRED_SYMBOLS`: not an ACL
runtime; nothing is called then). ``--count-only`` stops after ``aclrtGetDeviceCount`` (no
``aclrtSetDevice``): what :func:`backends.acl.preflight` needs. :func:`run_probe` runs it and
returns the dict.

``--kernel-binary PATH`` (``auto``: the kernels cache's fatbin for the reported SoC) adds the
kernels' argument layouts as the runtime reports them (KRN-02, even with ``--count-only``):
``layout_binary`` and ``layout`` (one :class:`~kernel.layout.LayoutCheck` dict per catalog
kernel), or ``layout_error`` saying why there is none (the library does not export
aclrtFunctionGetParamCount/Info, no binary, it does not load, the device is absent).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from ctypes import byref, c_int32, c_uint32
from pathlib import Path
from typing import Any

from . import driver
from .library import LibraryNotFound, load, missing_required
from .symbols import SIGNATURES, SymbolTable

#: the probe's wall-clock limit (a hung driver must not hang the doctor)
TIMEOUT_S = 120


def _layouts(lib: Any, lib_path: Path, device: int, kernel_binary: str, soc: str | None,
             emulator: bool) -> dict[str, Any]:
    """The ``layout*`` entries of the probe (see the module docstring)."""
    from mdlri_conformance.backends.kernel_layouts import (BinaryNotLoaded, LayoutModeError,
                                                           check_binary)

    from .backend import LAYOUT_SYMBOLS, AclBackend
    from .paths import default_kernel_binary
    kb = str(default_kernel_binary(soc)) if kernel_binary == "auto" else kernel_binary
    out: dict[str, Any] = {"layout_binary": kb}
    missing = [n for n in LAYOUT_SYMBOLS if not hasattr(lib, n)]
    if missing:
        out["layout_error"] = f"the library does not export {', '.join(missing)}"
        return out
    if not os.path.isfile(kb):
        out["layout_error"] = f"no kernel binary at {kb}"
        return out
    backend = AclBackend(lib, lib_path=lib_path, device=device, kernel_binary=kb,
                         emulator=emulator)
    why = backend.unsupported_reason()
    if why:
        out["layout_error"] = why
        return out
    try:
        out["layout"] = [c.to_json() for c in check_binary(backend, kb)]
    except (BinaryNotLoaded, LayoutModeError) as exc:
        out["layout_error"] = str(exc)
    finally:
        backend.close()
    return out


def probe(lib_path: Path, device: int = 0, count_only: bool = False,
          kernel_binary: str | None = None) -> dict[str, Any]:
    """Load the library and ask it what the doctor reports (in this process); ``count_only``:
    stop after the device count; ``kernel_binary``: add the kernels' layouts."""
    out: dict[str, Any] = {"library": str(lib_path), "errors": []}
    try:
        lib = load(lib_path)
    except LibraryNotFound as exc:
        out["load_error"] = str(exc)
        return out
    out["missing_required"] = missing_required(lib)
    if out["missing_required"]:
        return out
    sym = SymbolTable(lib, str(lib_path))
    out["missing"] = sorted(n for n in SIGNATURES
                            if not n.startswith("mdlriEmu") and not sym.has(n))

    def err() -> None:
        fn = sym.get("aclGetRecentErrMsg")
        msg = fn() if fn else None
        if msg:
            out["errors"].append(msg.decode(errors="replace").strip())

    if (fn := sym.get("aclrtGetVersion")) is not None:
        v = [c_int32(-1) for _ in range(3)]
        rc = fn(*[byref(x) for x in v])
        out["version"] = ".".join(str(x.value) for x in v) if rc == 0 else f"rc {rc}"
    if (fn := sym.get("mdlriEmuVersion")) is not None:
        raw = fn()
        out["emulator"] = raw.decode(errors="replace") if raw else "mdlri-emu"
    if (fn := sym.get("aclrtGetSocName")) is not None:
        raw = fn()
        out["soc"] = raw.decode(errors="replace") if raw else None
    out["driver"] = ("the emulator's host device (no driver)" if "emulator" in out
                     else driver.describe(driver.mapped_driver()))
    if (fn := sym.get("aclInit")) is not None:
        out["init_rc"] = int(fn(None))
        if out["init_rc"] not in (0, 100002):
            err()
            return out
    if (fn := sym.get("aclrtGetDeviceCount")) is not None:
        n = c_uint32(0)
        out["device_count_rc"] = int(fn(byref(n)))
        out["device_count"] = n.value
        if out["device_count_rc"]:
            err()
    count = out.get("device_count")
    if kernel_binary and out.get("device_count_rc") == 0 and isinstance(count, int) \
            and device < count:
        out.update(_layouts(lib, lib_path, device, kernel_binary, out.get("soc"),
                            "emulator" in out))
    elif kernel_binary:
        out["layout_error"] = f"device {device} is not available"
    if count_only:
        return out
    if (fn := sym.get("aclrtSetDevice")) is not None:
        out["set_device_rc"] = int(fn(device))
        if out["set_device_rc"]:
            err()
        elif (reset := sym.get("aclrtResetDevice")) is not None:
            reset(device)
    return out


def run_probe(lib_path: Path, device: int = 0, timeout_s: float = TIMEOUT_S, *,
              count_only: bool = False, drop_env: tuple[str, ...] = (),
              kernel_binary: str | None = None) -> dict[str, Any]:
    """Run :func:`probe` in a fresh interpreter (without the variables ``drop_env``); a crash
    or hang becomes ``probe_error``."""
    cmd = [sys.executable, "-m", "mdlri_conformance.backends.acl.probe", str(lib_path), "--device", str(device)]
    if count_only:
        cmd.append("--count-only")
    if kernel_binary:
        cmd += ["--kernel-binary", str(kernel_binary)]
    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return {"library": str(lib_path), "probe_error": f"probe timed out after {timeout_s} s"}
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode != 0 or not lines:
        tail = (res.stderr.strip().splitlines() or [f"exit status {res.returncode}"])[-1]
        return {"library": str(lib_path),
                "probe_error": f"probe exited with {res.returncode}: {tail}"}
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m backends.acl.probe")
    ap.add_argument("lib")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--count-only", action="store_true",
                    help="stop after aclrtGetDeviceCount (no aclrtSetDevice)")
    ap.add_argument("--kernel-binary", default=None,
                    help="add the kernels' argument layouts from this binary (auto: the "
                         "kernels cache's for the SoC)")
    ns = ap.parse_args(argv)
    print(json.dumps(probe(Path(ns.lib), ns.device, ns.count_only, ns.kernel_binary)),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
