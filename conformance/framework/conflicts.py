"""Options that contradict each other are refused in one line, neither silently winning.

Found by trying them (pytest 9, Hypothesis 6, pytest-xdist 3):

* ``--hypothesis-profile NAME``: Hypothesis loads it before the suite loads its own
  (``--profile``, default ci), so ``default`` is silently replaced by ci, and the suite's
  names (``dev`` ...) are not registered yet: an INTERNALERROR traceback. Refused always:
  ``--profile`` chooses the Hypothesis profile.
* ``--hypothesis-seed N`` under ``--profile ci``: ci is derandomized, and Hypothesis
  ignores the seed for a derandomized test (``get_random_for_wrapped_test``): the run looks
  seeded and is not. Refused with ci.
* ``--hypothesis-db DIR`` under ``--profile ci``: ci uses no example database, so the
  directory is silently unused. Refused with ci unless it is ``none`` or it is the value of
  ``$MDLRI_HYPOTHESIS_DB`` (an environment default, not a choice made for this run).

``mdlri-conformance run`` passes its own options to pytest and then the arguments after
``--``; pytest keeps the last of a repeated option, so one given again after ``--`` would
replace run's silently (``-- --report-dir X`` even made run read the verdict from the
wrong directory, ``-- --junitxml`` moved junit.xml out of the run, ``-- --alluredir``
without ``--allure`` was pytest's usage block). :func:`check_args` refuses, after ``--``:

* an option of ``run`` itself (``--backend``, ``--acl-lib``, ``--kernel-binary``,
  ``--devices``, ``--report-dir``, ``--against``, ``--expectations``, ``--profile``, ``-n`` /
  ``--numprocesses``, ``-k``, ``--fault``, ``--spec-timeout``, ``--shard``): give it before
  ``--``, where run checks it;
* ``--junitxml`` / ``--junit-xml``: run writes ``<report-dir>/junit.xml``;
* ``--alluredir``: ``--allure`` writes ``<report-dir>/allure-results``;
* the Hypothesis options above, with run's ``--profile``.

Not refused here because pytest already refuses them in one line (through run's check of
the arguments after ``--``): ``-p no:randomly`` with ``--randomly-seed`` (``unrecognized
arguments``), ``-p no:xdist`` with ``-n``.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import pytest

#: run's own options (first name: the one to use), as pytest spells them after ``--``
RUN_OPTIONS: dict[str, tuple[str, ...]] = {
    "--backend": ("--backend",), "--acl-lib": ("--acl-lib",),
    "--kernel-binary": ("--kernel-binary",), "--devices": ("--devices",),
    "--report-dir": ("--report-dir",), "--against": ("--against",),
    "--expectations": ("--expectations",), "--profile": ("--profile",),
    "-n": ("-n", "--numprocesses"), "-k": ("-k",), "--fault": ("--fault",),
    "--spec-timeout": ("--spec-timeout",), "--shard": ("--shard",),
}
#: what run sets itself without an option of that name, and what to use instead
RUN_SETS: dict[str, tuple[tuple[str, ...], str]] = {
    "--junitxml": (("--junitxml", "--junit-xml"),
                   "run writes <report-dir>/junit.xml itself; give --report-dir to move it"),
    "--alluredir": (("--alluredir",),
                    "give --allure (before --): it writes <report-dir>/allure-results"),
}
#: pytest's short options that take a value (a short option cluster ends at one of them)
_SHORT_WITH_VALUE = frozenset("nkmpocrW")
DB_ENV = "MDLRI_HYPOTHESIS_DB"


def hypothesis_conflict(profile: str, hypothesis_profile: str | None,
                        hypothesis_seed: str | None, hypothesis_db: str | None) -> str | None:
    """Why the suite's ``--profile`` and Hypothesis's own options contradict (one line),
    None when they do not."""
    if hypothesis_profile:
        return (f"--hypothesis-profile {hypothesis_profile}: the suite loads its own Hypothesis "
                "profile; choose it with --profile (ci, dev, deep, hw)")
    if hypothesis_seed is not None and profile == "ci":
        return (f"--hypothesis-seed {hypothesis_seed} has no effect under --profile ci "
                "(derandomized: every run replays the same examples); use --profile dev, "
                "deep or hw with a seed")
    if hypothesis_db and hypothesis_db.lower() != "none" and profile == "ci" \
            and hypothesis_db != os.environ.get(DB_ENV):
        return (f"--hypothesis-db {hypothesis_db} is unused under --profile ci (derandomized, "
                "no example database); use --profile dev, deep or hw with a database")
    return None


def check(config: pytest.Config) -> None:
    """Refuse contradicting pytest options (:func:`hypothesis_conflict`) with a one-line
    usage error. Call it before Hypothesis's ``pytest_configure`` loads a profile (the
    plugin's ``pytest_cmdline_main``, tryfirst)."""
    why = hypothesis_conflict(str(config.getoption("--profile", "ci")),
                              config.getoption("--hypothesis-profile", None),
                              config.getoption("--hypothesis-seed", None),
                              config.getoption("--hypothesis-db", None))
    if why:
        raise pytest.UsageError(why)


def given(args: Sequence[str], names: Sequence[str]) -> tuple[str, str | None] | None:
    """The first of ``names`` given in ``args`` (pytest's spellings: ``--opt value``,
    ``--opt=value``, ``-n 4``, ``-n4``, ``-xn4``) as (name, value); None when none is."""
    wanted_long = [n for n in names if n.startswith("--")]
    wanted_short = {n[1] for n in names if len(n) == 2 and n[0] == "-" and n[1] != "-"}
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        nxt = args[i + 1] if i + 1 < len(args) else None
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name in wanted_long:
                return name, value if eq else nxt
            continue
        if arg.startswith("-") and len(arg) > 1:
            for j, ch in enumerate(arg[1:], start=1):
                if ch in wanted_short:
                    return f"-{ch}", arg[j + 1:] or nxt
                if ch in _SHORT_WITH_VALUE:  # the rest, or the next argument, is its value
                    skip = j == len(arg) - 1
                    break
    return None


def check_args(ns: Any) -> str | None:
    """Why the pytest arguments after ``--`` of ``mdlri-conformance run`` contradict run's
    own (one line, without the program name), None when they do not."""
    args = list(getattr(ns, "pytest_args", None) or [])
    if not args:
        return None
    for use, names in RUN_OPTIONS.items():
        hit = given(args, names)
        if hit:
            return (f"{hit[0]} after --: it is an option of mdlri-conformance run itself; give "
                    f"it before -- ({use} ...), where run checks it, not again for pytest")
    for use, (names, instead) in RUN_SETS.items():
        hit = given(args, names)
        if hit:
            return f"{hit[0]} after --: {instead}"

    def value(name: str) -> str | None:
        hit = given(args, (name,))
        return None if hit is None else (hit[1] or "")

    why = hypothesis_conflict(str(getattr(ns, "profile", "ci")), value("--hypothesis-profile"),
                              value("--hypothesis-seed"), value("--hypothesis-db"))
    return f"{why} (after --)" if why else None


__all__ = ["RUN_OPTIONS", "RUN_SETS", "check", "check_args", "given", "hypothesis_conflict"]
