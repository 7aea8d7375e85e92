"""Lean observations while a deep campaign fuzzes: the example's text and arguments are not
rendered.

HypoFuzz's provider learns how an example went from Hypothesis's observation of it (its
status, its choices, its ``event()`` features), so observability is on for every fuzzed
example, and Hypothesis then renders two things HypoFuzz never reads for its guidance: the
example as text (``representation``: a pretty-printed call, a generated case printed field
by field, about a fifth of an example's time on the simulator) and its arguments as JSON
(``arguments``, which HypoFuzz itself empties before it keeps an observation). Both only
feed HypoFuzz's dashboard, which a campaign does not serve.

:func:`lean` replaces the two renderers for the fuzzing loop only (the printer of
``hypothesis.core`` and the ``to_jsonable`` that ``ConjectureData.draw`` imports at each
draw) and puts them back after. A failure's record is made after the loop
(:mod:`.fuzz_failures`: its exception, traceback, ``@reproduce_failure`` line and case
file), with the real renderers, so nothing a campaign keeps changes.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

#: what an observation's text says in its place
NOT_RENDERED = "<not rendered during a deep campaign>"


def _printer_class(base: type) -> type:
    class LeanPrinter(base):  # type: ignore[misc, valid-type]
        """Hypothesis's printer with the call rendered as one fixed line."""

        def repr_call(self, *args: Any, **kwargs: Any) -> None:
            self.text(NOT_RENDERED)

    return LeanPrinter


def _not_jsonable(value: Any, *args: Any, **kwargs: Any) -> str:
    return NOT_RENDERED


@contextlib.contextmanager
def lean() -> Iterator[None]:
    """Within: observations carry no rendered example or arguments."""
    import hypothesis.core as core
    import hypothesis.strategies._internal.utils as utils
    printer, jsonable = core.RepresentationPrinter, utils.to_jsonable
    core.RepresentationPrinter = _printer_class(printer)  # type: ignore[misc]
    utils.to_jsonable = _not_jsonable  # type: ignore[assignment]
    try:
        yield
    finally:
        core.RepresentationPrinter = printer  # type: ignore[misc]
        utils.to_jsonable = jsonable  # type: ignore[assignment]
