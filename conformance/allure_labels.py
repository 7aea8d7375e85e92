"""Allure labels and attachments for the specs (active only when allure-pytest is).

Each spec is labelled with its area (feature), clause ids (story, ``clause`` label, link),
level and backend; a divergence's case and expected vs observed values are attached. The
plugin registers this module as a pytest plugin (its fixture is autouse) and calls
:func:`attach`.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from . import registry
from .items import area_of, clause_ids, is_spec


@pytest.fixture(autouse=True)
def mdlri_allure_labels(request: pytest.FixtureRequest) -> None:
    """Label each spec with area, clause ids, level and backend for the Allure report."""
    item = request.node
    if not is_spec(item) or not request.config.pluginmanager.hasplugin("allure_pytest"):
        return
    import allure
    ids = clause_ids(item)
    if not ids or registry.unknown(ids):
        return
    allure.dynamic.feature(area_of(item, ids))
    for cid in ids:
        allure.dynamic.story(cid)
        allure.dynamic.label("clause", cid)
    link = os.environ.get("MDLRI_CLAUSE_URL", "clauses.html#{id}")
    for cid in ids:
        allure.dynamic.link(link.format(id=cid), name=cid)
    allure.dynamic.label("level", registry.level_of(ids))
    allure.dynamic.label("backend", request.config.getoption("--backend"))
    allure.dynamic.description("\n".join(f"{c}: {registry.get(c).title} ({registry.get(c).src})"
                                         for c in ids))


def attach(item: pytest.Item, details: dict[str, Any]) -> None:
    """Attach the divergence (case JSON, expected vs observed) to the Allure result."""
    if not item.config.pluginmanager.hasplugin("allure_pytest"):
        return
    import allure
    if details.get("case"):
        allure.attach(json.dumps(details["case"], indent=1), name="case.json",
                      attachment_type=allure.attachment_type.JSON)
    allure.attach(f"expected: {details.get('expected')}\nobserved: {details.get('observed')}\n"
                  f"replay: {details.get('replay', '')}\n", name="expected vs observed",
                  attachment_type=allure.attachment_type.TEXT)
