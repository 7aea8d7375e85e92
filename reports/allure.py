"""The Allure 3 HTML report of a run (the npm ``allure`` package, run with Node.js).

``install()`` installs the pinned package once: it copies the shipped ``allure/package.json``
and ``allure/package-lock.json`` (package data beside this module) into
``<cache>/allure`` (``MDLRI_CACHE_DIR``, else ``~/.cache/mdlri-conformance``) and runs
``npm ci`` there; this is the only step that needs the npm registry. A stamp file records
which lock was installed, so ``install()`` again is a no-op and a newer suite with another
pinned version asks for a reinstall.

``generate(run_dir)`` runs that installed binary (never ``npx``, never the network) on
``run_dir/allure-results`` with the shipped ``allure/allurerc.json``: one self-contained
``run_dir/allure-report/index.html`` (the awesome plugin's ``singleFile``, so it opens from
``file://``), results grouped by area and clause (``groupBy`` parentSuite / suite, the labels of
:mod:`mdlri_conformance.conformance.framework.verdicts.allure_labels`). The old
``allure-report`` is removed first, so a rebuild leaves nothing stale. The page's Google
Analytics scripts (always put in by the awesome plugin) are removed: the report makes no
network request.

Every failure is one line (:class:`AllureError`): npm's own error code and message, or the
last line Allure printed.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from .stack import stack_text

#: what ``install()`` copies into the cache (package data in ``reports/allure/``)
PACKAGE_FILES = ("package.json", "package-lock.json")
#: the shipped Allure configuration (package data in ``reports/allure/``)
CONFIG_FILE = "allurerc.json"
#: the cache sub-folder of the npm install
CACHE_SUBDIR = "allure"
#: records the sha256 of the installed package-lock.json
STAMP = ".mdlri-installed"
#: what to do when Allure is not installed (one line)
NOT_INSTALLED = ("run `mdlri-conformance report --install-allure` first "
                 "(needs the npm registry once)")
NPM_TIMEOUT_S = 900
GENERATE_TIMEOUT_S = 600

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: the Google Analytics block the awesome plugin's page template always includes (3.18.0:
#: ``analyticsEnable: true``, not switchable); removed so the report makes no request of its own
_GTAG = re.compile(r'<script async src="https://www\.googletagmanager\.com/gtag/js\?id=[\w-]+">'
                   r'</script>\s*<script>\s*window\.dataLayer[^<]{0,1000}</script>\s*')
_NPM_PREFIX = re.compile(r"^npm (?:error|ERR!)\s?")


class AllureError(Exception):
    """Why the Allure report cannot be made (one line)."""


def _shipped(name: str) -> bytes:
    return importlib.resources.files("mdlri_conformance.reports").joinpath(
        "allure", name).read_bytes()


def pinned_version() -> str:
    """The exact ``allure`` version the shipped package.json pins."""
    return str(json.loads(_shipped("package.json"))["dependencies"]["allure"])


def install_dir(cache: Path) -> Path:
    """``<cache>/allure``: where ``install()`` runs ``npm ci`` (``cache``: the suite's cache
    folder, which the command line passes in)."""
    return Path(cache) / CACHE_SUBDIR


def binary(where: Path) -> Path:
    """The installed Allure command line (``node_modules/.bin/allure``)."""
    return where / "node_modules" / ".bin" / "allure"


def _lock_digest() -> str:
    return hashlib.sha256(_shipped("package-lock.json")).hexdigest()


def installed(where: Path) -> bool:
    """Whether the pinned Allure is installed (the stamp matches the shipped lock)."""
    stamp = where / STAMP
    return (binary(where).exists() and stamp.is_file()
            and stamp.read_text().strip() == _lock_digest())


def install(cache: Path) -> Path:
    """Install the pinned Allure 3 package into the cache (``npm ci``); returns its binary.

    A no-op when the same lock is already installed."""
    where = install_dir(cache)
    if installed(where):
        return binary(where)
    npm = shutil.which("npm")
    if npm is None:
        raise AllureError("installing Allure needs Node.js and npm (npm not found on PATH)")
    try:
        where.mkdir(parents=True, exist_ok=True)
        (where / STAMP).unlink(missing_ok=True)
        for name in PACKAGE_FILES:
            (where / name).write_bytes(_shipped(name))
    except OSError as exc:
        raise AllureError(f"{where}: cannot write ({exc.strerror or exc})") from None
    print(f"installing allure {pinned_version()} into {where} (npm ci)", flush=True)
    try:
        proc = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
                              cwd=where, capture_output=True, text=True, env=_quiet_env(),
                              timeout=NPM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise AllureError(f"npm ci in {where} did not finish in {NPM_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        raise AllureError(f"npm ci in {where} failed: {npm_error(proc.stderr + proc.stdout)}")
    if not binary(where).exists():
        raise AllureError(f"npm ci in {where} installed no {binary(where).name} command")
    (where / STAMP).write_text(_lock_digest() + "\n")
    return binary(where)


def npm_error(output: str) -> str:
    """npm's error in one line: ``CODE: first message line`` (e.g. ``E404: 404 Not Found -
    GET https://...``, ``ENOTCACHED: request to ... failed: cache mode is 'only-if-cached'``)."""
    code, detail = "", ""
    for raw in _ANSI.sub("", output).splitlines():
        if not _NPM_PREFIX.match(raw):
            continue
        line = _NPM_PREFIX.sub("", raw).strip()
        if line.startswith("code "):
            code = code or line[len("code "):].strip()
        elif (line and not detail and not line.startswith(("syscall ", "errno "))
              and not line.startswith("A complete log") and line not in ("404",)):
            detail = line
    if not code and not detail:
        return _last_line(output)
    return f"{code}: {detail}" if code and detail else code or detail


def _last_line(output: str) -> str:
    lines = [ln.strip() for ln in _ANSI.sub("", output).splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


def _quiet_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"NO_COLOR": "1", "FORCE_COLOR": "0", "ALLURE_NO_ANALYTICS": "true",
                "npm_config_update_notifier": "false",
                "npm_config_fund": "false", "npm_config_audit": "false"})
    return env


def _report_name(run_dir: Path) -> str:
    try:
        summary = json.loads((run_dir / "summary.json").read_text())
        backend = stack_text(summary) if summary.get("backend") else None
    except (OSError, ValueError, AttributeError):
        backend = None
    return f"Model RI conformance: {backend}" if backend else "Model RI conformance"


def remove_old_report(out: Path) -> None:
    """Remove a previous ``allure-report`` (folder, file or link) so nothing stale stays."""
    try:
        if out.is_symlink() or out.is_file():
            out.unlink()
        elif out.exists():
            shutil.rmtree(out)
    except OSError as exc:
        raise AllureError(f"{out}: cannot remove the old report ({exc.strerror or exc})") from None


def generate(run_dir: Path, cache: Path) -> Path:
    """Build ``run_dir/allure-report`` from ``run_dir/allure-results``; returns its index."""
    run_dir = Path(run_dir).resolve()
    results = run_dir / "allure-results"
    if not results.is_dir():
        raise AllureError(f"{run_dir}: no allure-results (run with mdlri-conformance run --allure)")
    where = install_dir(cache)
    if not binary(where).exists() or not (where / STAMP).is_file():
        raise AllureError(NOT_INSTALLED)
    if not installed(where):
        raise AllureError(f"the Allure in {where} is not the pinned {pinned_version()}: "
                          + NOT_INSTALLED.replace(" first", " again"))
    if shutil.which("node") is None:
        raise AllureError("the Allure HTML report needs Node.js (node not found on PATH); "
                          f"the static report is {run_dir / 'index.html'}")
    out = run_dir / "allure-report"
    remove_old_report(out)
    with importlib.resources.as_file(importlib.resources.files("mdlri_conformance.reports")
                                     .joinpath("allure", CONFIG_FILE)) as config:
        cmd = [str(binary(where)), "generate", str(results), "--config", str(config),
               "--output", str(out), "--name", _report_name(run_dir)]
        try:
            proc = subprocess.run(cmd, cwd=run_dir, capture_output=True, text=True,
                                  env=_quiet_env(), timeout=GENERATE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise AllureError(f"allure generate did not finish in {GENERATE_TIMEOUT_S} s") from None
        except OSError as exc:
            raise AllureError(f"cannot run {cmd[0]} ({exc.strerror or exc})") from None
    if proc.returncode != 0:
        raise AllureError(f"allure generate failed: {_last_line(proc.stderr or proc.stdout)}")
    index = out / "index.html"
    if not index.is_file():
        raise AllureError(f"allure generate wrote no {index}")
    strip_analytics(index)
    return index


def strip_analytics(index: Path) -> bool:
    """Remove the report page's Google Analytics scripts; whether there were any."""
    html = index.read_text(encoding="utf-8")
    clean, n = _GTAG.subn("", html)
    if n:
        index.write_text(clean, encoding="utf-8")
    return bool(n)
