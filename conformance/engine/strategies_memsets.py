"""Hypothesis strategies for captured memsets of any byte count and offset (RT-45).

aclrtMemsetAsync sets exactly ``count`` bytes from ``devPtr``, whatever the count's parity and
the pointer's byte offset; captured, it does so at every execution (CAP-01, EXE-02). The
general strategies draw such memsets among everything else (:class:`graphs.Memset` with a
span); :func:`memset_span_cases` makes sure a case holds some: it draws a positive case and
appends 1-3 memsets of a drawn byte span (odd counts as often as even ones, any offset, a
value other than the sentinel byte) on the origin stream, each into a fresh sentinel buffer,
so they race with nothing and a byte set too many or too few is read back at the Sync.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from . import graphs
from .graphs import Case, Memset
from .strategies import N, cases, plans_for

#: memset byte values: zero, one and a mixed pattern, never the sentinel byte 0xFF
MEMSET_VALUES = (0, 1, 0x5A)


@st.composite
def memset_span(draw: st.DrawFn, nbytes: int) -> tuple[int, int]:
    """(offset, count) inside ``nbytes`` bytes: an odd or even count (each half the time) of
    at least one byte, at any offset it fits."""
    offset = draw(st.integers(0, nbytes - 1))
    room = nbytes - offset
    odd = draw(st.booleans())
    counts = range(1, room + 1, 2) if odd or room < 2 else range(2, room + 1, 2)
    return offset, draw(st.sampled_from(counts))


@st.composite
def memset_span_cases(draw: st.DrawFn, **kw: Any) -> Case:
    """A positive case whose origin stream ends with 1-3 memsets of drawn byte spans into
    fresh buffers, then its drawn plan (RT-45, CAP-01, EXE-02)."""
    case = draw(cases(**kw))
    for _ in range(draw(st.integers(1, 3))):
        b = len(case.buffers)
        case.buffers.append([graphs.SENTINEL] * N)
        offset, count = draw(memset_span(4 * N))
        case.ops.append(Memset(0, b, draw(st.sampled_from(MEMSET_VALUES)), offset, count))
    case.plan = draw(plans_for(case))
    case.name = "memset-spans"
    return case
