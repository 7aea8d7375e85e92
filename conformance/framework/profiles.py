"""The Hypothesis settings profiles of ``--profile`` and the example database."""

from __future__ import annotations


def load_hypothesis_profile(profile: str, db_path: str | None = None) -> None:
    """ci: derandomized and bounded; dev: quick; deep: nightly; hw: few examples, no deadline.

    The example database is a directory database: each example is its own file written
    atomically, so several xdist workers can share one directory safely.
    """
    from hypothesis import HealthCheck, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
    if db_path and db_path.lower() == "none":
        database = None
    else:
        database = DirectoryBasedExampleDatabase(db_path or ".hypothesis/examples")
    # Hypothesis loads its own "ci" profile at import when it sees a CI variable, and a
    # profile registered without a parent inherits the one loaded then: every profile here
    # starts from Hypothesis's "default", so dev/deep/hw stay random on a CI runner too.
    common = dict(parent=settings.get_profile("default"), deadline=None,
                  suppress_health_check=[HealthCheck.too_slow], database=database)
    # derandomized runs replay the same examples every time; Hypothesis uses no database then
    settings.register_profile("ci", derandomize=True, max_examples=60, print_blob=True,
                              **{**common, "database": None})
    settings.register_profile("dev", derandomize=False, max_examples=20, **common)
    settings.register_profile("deep", derandomize=False, max_examples=2000, **common)
    settings.register_profile("hw", derandomize=False, max_examples=25, **common)
    settings.load_profile(profile)
