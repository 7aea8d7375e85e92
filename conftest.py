"""Top-level conftest: the suite's pytest plugin lives in conformance/plugin.py."""

pytest_plugins = ["conformance.plugin"]
