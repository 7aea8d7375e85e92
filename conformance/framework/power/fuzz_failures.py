"""What a deep campaign keeps of each failure HypoFuzz found and shrank.

For every shrunk failing example of a target: its choice sequence is run once more through
the spec to confirm it still fails (``replays``), and kept as

* ``failures/<spec>-<n>.txt``: the exception and its traceback, and Hypothesis's
  ``@reproduce_failure(...)`` line (for a state machine: put it on the machine class);
* ``cases/deep-<spec>-<sha>.json`` when the spec draws a value that serializes itself
  (``to_json``), e.g. a generated task-graph case: the same file format as the kept cases
  that the generated tier replays;
* ``choices_hex`` in ``fuzz.json`` (Hypothesis's choice-sequence bytes).

A failure raised as :class:`.outcomes.Unsupported` (a 207000 / 207019 answer) is kind
``unsupported``, never ``failure``: it is no verdict on the backend.
"""

from __future__ import annotations

import hashlib
import re
import traceback
from pathlib import Path
from typing import Any, Iterable

from ..outcomes import Unsupported


def execute(fuzz: Any, choices: Any) -> Any:
    """Run one choice sequence through ``fuzz``'s spec (fixtures entered); the frozen
    ``ConjectureData``."""
    from hypothesis.internal.conjecture.data import ConjectureData
    data = ConjectureData.for_choices(tuple(choices))
    fuzz._execute_once(data, observability_callback=None)
    data.freeze()
    return data


def _slug(nodeid: str) -> str:
    name = nodeid.split("::")[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")[:80] or "spec"


def _drawn_case(fuzz: Any, choices: Any) -> Any:
    """The drawn argument of a ``@given`` spec that serializes itself (``to_json``), or
    None (a state machine draws steps, not one value)."""
    from hypothesis import strategies as st
    from hypothesis.internal.conjecture.data import ConjectureData
    given = getattr(getattr(fuzz.wrapped_test, "hypothesis", None), "_given_kwargs", None)
    if not given:
        return None
    from hypothesis.control import BuildContext
    data = ConjectureData.for_choices(tuple(choices))
    try:
        with BuildContext(data, wrapped_test=fuzz.wrapped_test):
            values = data.draw(st.fixed_dictionaries(given))
    except Exception:  # noqa: BLE001 - the sequence does not redraw: no case file
        return None
    return next((v for v in values.values() if callable(getattr(v, "to_json", None))), None)


def record(fuzz: Any, nodeid: str, out: Path,
           found: Iterable[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Confirm and keep each failing choice sequence ``found`` for ``fuzz``'s spec under
    ``out`` (fixtures entered)."""
    import hypothesis
    from hypothesis.core import encode_failure
    from hypothesis.database import choices_to_bytes
    from hypothesis.internal.conjecture.data import Status
    kept: list[dict[str, Any]] = []
    for n, choices in enumerate(found, 1):
        data = execute(fuzz, choices)
        exc = getattr(data, "expected_exception", None)
        tb = getattr(data, "expected_traceback", None) or (
            "".join(traceback.format_exception(exc)) if exc is not None else "")
        unsupported = isinstance(exc, Unsupported)
        blob = encode_failure(choices)
        reproduce = f"@reproduce_failure({hypothesis.__version__!r}, {blob!r})"
        entry: dict[str, Any] = {
            "kind": "unsupported" if unsupported else "failure",
            "exception": type(exc).__name__ if exc is not None else "",
            "message": _first_line(exc),
            "replays": data.status == Status.INTERESTING,
            "reproduce": reproduce,
            "choices_hex": choices_to_bytes(choices).hex(),
        }
        slug = _slug(nodeid)
        failures_dir = out / "failures"
        failures_dir.mkdir(parents=True, exist_ok=True)
        text_file = failures_dir / f"{slug}-{n}.txt"
        text_file.write_text(f"{nodeid}\n{reproduce}\n\n{tb}", encoding="utf-8")
        entry["file"] = str(text_file.relative_to(out))
        case = _drawn_case(fuzz, choices) if not unsupported else None
        if case is not None:
            text = case.to_json()
            sha = hashlib.sha256(text.encode()).hexdigest()[:10]
            case_file = out / "cases" / f"deep-{slug}-{sha}.json"
            case_file.parent.mkdir(parents=True, exist_ok=True)
            case_file.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
            entry["case"] = str(case_file.relative_to(out))
        kept.append(entry)
    return kept


def _first_line(exc: BaseException | None) -> str:
    if exc is None:
        return ""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    line = lines[0] if lines else type(exc).__name__
    return line if len(line) <= 300 else line[:297] + "..."
