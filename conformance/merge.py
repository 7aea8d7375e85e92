"""``mdlri-conformance merge RUN_DIR... --out DIR``: one run from the shards of a run.

(Being written.)
"""

from __future__ import annotations

from typing import Any


def add_parser(sub: Any) -> None:
    """The ``merge`` subcommand."""
    mp = sub.add_parser("merge", help="merge the run directories of a sharded run",
                        description="Build one results.jsonl, summary, HTML, JUnit and Allure "
                                    "from the shards of a run.")
    mp.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    mp.add_argument("--out", required=True, help="the merged run directory (new)")
    mp.set_defaults(func=_cmd_merge)


def _cmd_merge(ns: Any) -> int:
    import sys
    print("mdlri-conformance merge: error: not available yet", file=sys.stderr)
    return 2
