"""With ``-n N`` and no ``--dist`` the suite's plugin makes xdist steal work; an explicit
``--dist`` (or ``-d``) and ``-n 0`` are left as given (conformance.framework.options)."""

from __future__ import annotations

from typing import Any

import pytest

REPO_SPECS = "conformance/specs"


class _Seen:
    """Records the controller's xdist options after every plugin's cmdline_main."""

    def __init__(self) -> None:
        self.dist: Any = None
        self.numprocesses: Any = None

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        if not hasattr(config, "workerinput"):
            self.dist = config.option.dist
            self.numprocesses = config.option.numprocesses


@pytest.mark.parametrize("extra,dist", [
    ([], "worksteal"),
    (["--dist", "load"], "load"),
    (["-d"], "load"),
    (["-n", "0"], "no"),
])
def test_default_dist(extra: list[str], dist: str, monkeypatch: pytest.MonkeyPatch,
                      tmp_path: Any) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    seen = _Seen()
    pytest.main([REPO_SPECS, "-n", "2", "-q", "--co", "-p", "no:randomly",
                 "-p", "no:cacheprovider", "--report-dir", str(tmp_path),
                 "-k", "nothing_is_named_so", *extra],
                plugins=[seen])
    assert seen.dist == dist
