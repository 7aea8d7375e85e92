"""A report directory on a disk that fills up mid-run, without a small filesystem: loaded with
``-p tests.full_disk`` (after ``--`` of ``mdlri-conformance run``), it makes every file the
recording process opens for writing under ``--report-dir`` raise ``OSError(ENOSPC)`` once
``$MDLRI_TEST_DISK_BYTES`` bytes have been written there in all (what a full tmpfs does).
A test's writer made to fail; never part of a real run."""

from __future__ import annotations

import builtins
import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest

BYTES_ENV = "MDLRI_TEST_DISK_BYTES"


class _Disk:
    """What has been written under the directory, and the budget."""

    def __init__(self, root: Path, budget: int) -> None:
        self.root = root
        self.left = budget

    def take(self, n: int) -> None:
        if n > self.left:
            self.left = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.left -= n


class _File:
    """A file object whose writes count against the disk."""

    def __init__(self, f: Any, disk: _Disk) -> None:
        self._f = f
        self._disk = disk

    def write(self, data: Any) -> int:
        size = len(data.encode("utf-8") if isinstance(data, str) else data)
        self._disk.take(size)
        return self._f.write(data)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __enter__(self) -> "_File":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._f.close()

    def __iter__(self) -> Any:
        return iter(self._f)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)


def pytest_configure(config: pytest.Config) -> None:
    budget = os.environ.get(BYTES_ENV)
    report_dir = config.getoption("--report-dir", None)
    if budget is None or not report_dir or hasattr(config, "workerinput"):
        return
    disk = _Disk(Path(report_dir).resolve(), int(budget))
    real_open = builtins.open

    def full_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        f = real_open(file, mode, *args, **kwargs)
        # "r+": overwriting a file's own bytes in place needs no new blocks (rundir.finish)
        if isinstance(file, (str, os.PathLike)) and any(c in mode for c in "wax") \
                and not mode.startswith("r"):
            path = Path(os.fsdecode(file)).resolve()
            if disk.root == path or disk.root in path.parents:
                return _File(f, disk)
        return f

    builtins.open = full_open  # type: ignore[assignment]
    io.open = full_open  # type: ignore[assignment]  # pathlib opens through io.open

    def restore() -> None:
        builtins.open = real_open  # type: ignore[assignment]
        io.open = real_open  # type: ignore[assignment]

    config.add_cleanup(restore)
