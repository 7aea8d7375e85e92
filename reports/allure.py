"""The Allure 3 HTML report of a run (the npm ``allure`` package, run with Node.js).

``generate(run_dir)`` turns ``run_dir/allure-results`` (written by ``run --allure``) into
``run_dir/allure-report``; ``install()`` installs the pinned package once.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


class AllureError(Exception):
    """Why the Allure report cannot be made (one line)."""


def install() -> Path:
    """Install the pinned Allure 3 package; returns where it went."""
    raise AllureError("installing Allure is not available yet")


def generate(run_dir: Path) -> Path:
    """Build ``run_dir/allure-report`` from ``run_dir/allure-results``; returns its index."""
    results = run_dir / "allure-results"
    if not results.is_dir():
        raise AllureError(f"{run_dir}: no allure-results (run with mdlri-conformance run --allure)")
    npx = shutil.which("npx")
    if npx is None:
        raise AllureError("the Allure HTML report needs Node.js (npx not found); "
                          f"the static report is {run_dir / 'index.html'}")
    out = run_dir / "allure-report"
    proc = subprocess.run([npx, "--yes", "allure@3", "generate", str(results), "--output",
                           str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise AllureError(f"allure generate failed: {last[0]}")
    return out / "index.html"
