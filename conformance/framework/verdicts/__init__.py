"""Verdicts and what a run writes for people: the gate's verdict and exit codes (``verdict``),
the summary and its console lines (``summary``), the known divergences and required
capabilities of an expectations file (``known``), the report files (``artefacts``: summary.json,
the HTML and Markdown pages through ``reports/``), JUnit XML (``junit``) and Allure results
(``allure_labels``, ``allure_status``, ``allure_writes``). They judge what a run recorded: of
the run they read only its records (registry, items, keys, run directory, outcomes, state and
leak checks, crash dumps, the backend name's resolution), never its hooks, processes or probes,
and never the fleet or the power tools."""
