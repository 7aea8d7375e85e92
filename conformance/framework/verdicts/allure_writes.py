"""allure-pytest's own writes on a report directory that cannot take them (a full disk).

allure-pytest writes each result, container and attachment from the process that ran the spec
(an xdist worker); an ``OSError`` there escapes its hook wrapper and ends the worker in an
``INTERNALERROR`` traceback, with no verdict line. :class:`LostWrites`, a wrapper around
allure-commons' four writing hooks, catches it instead: the spec's row still reaches the
recording process, which finds the row without a result at the end of the run and writes one
itself (:func:`.allure_labels.write_missing`). When that write fails too, the run ends
INCOMPLETE in one line like any other failed write (:mod:`.write_guard`); when it succeeds,
the report is whole. Half-written ``*.tmp`` files are removed when a write fails, and again at
the end of a run that could not write (:func:`remove_partial`, :mod:`.write_guard`).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest


class LostWrites:
    """The allure-commons plugin that keeps a failed write from ending the process."""

    #: allure-commons' hooks that write a file
    HOOKS = ("report_result", "report_container", "report_attached_file",
             "report_attached_data")

    def __init__(self, results_dir: Path) -> None:
        import allure_commons

        self.results_dir = results_dir
        #: the first write that failed in this process
        self.error: OSError | None = None
        wrapper = allure_commons.hookimpl(wrapper=True)(LostWrites._guard)
        for hook in self.HOOKS:
            setattr(self, hook, wrapper.__get__(self))

    def _guard(self) -> Generator[None, Any, Any]:
        try:
            return (yield)
        except OSError as exc:
            if self.error is None:
                self.error = exc
            # any write in flight on this disk fails too: no half-written file is kept
            remove_partial(self.results_dir)
            return None


def install(config: pytest.Config) -> None:
    """Wrap allure-commons' writing hooks in this process (allure-pytest is active)."""
    import allure_commons

    guard = LostWrites(Path(config.option.allure_report_dir))
    allure_commons.plugin_manager.register(guard)
    config.add_cleanup(lambda: allure_commons.plugin_manager.unregister(plugin=guard))


def remove_partial(results_dir: Path) -> None:
    """The ``*.tmp`` files a failed write left in the Allure results folder."""
    for tmp in Path(results_dir).glob("*.tmp"):
        tmp.unlink(missing_ok=True)


__all__ = ["LostWrites", "install", "remove_partial"]
