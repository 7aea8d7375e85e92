"""What every ``mdlri-conformance`` command shares: the program name, the one-line usage
error (exit 2), one-line exception text, shipped data names, a run's summary."""

from __future__ import annotations

import argparse
import importlib.resources
import sys
from pathlib import Path
from typing import Callable

PROG = "mdlri-conformance"


def at_least_one(refusal: str) -> Callable[[str], int]:
    """An argparse type: a whole number of at least 1, else ``'TEXT': refusal``."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if n < 1:
            raise argparse.ArgumentTypeError(f"{text!r}: {refusal}")
        return n

    return parse


def usage_error(msg: str) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return 2


def one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def shipped(value: str, package: str, folder: str, suffix: str) -> Path:
    """``value`` as a path when it names a file, else the file of that name shipped in the
    package (``--expectations atlas-a2``, ``replay seed-fallback``), else ``value`` unchanged
    (its reader then says it cannot read it)."""
    path = Path(value)
    if path.exists():
        return path
    found = Path(str(importlib.resources.files(package))) / folder / (
        value if value.endswith(suffix) else value + suffix)
    return found if found.is_file() else path


def read_summary(report_dir: Path) -> dict | None:
    from ..framework import rundir
    data = rundir.read_json(report_dir / "summary.json")
    return data if isinstance(data, dict) else None
