#!/usr/bin/env python3
"""Open a run's HTML pages in headless Chromium and check that they render (CI).

usage: python .ci/check_pages.py RUN_DIR [--allure] [--screenshots DIR] [--chromium PATH]

``RUN_DIR/index.html``, the suite's static report (give a run with divergences, e.g.
``mdlri-conformance run --fault seq-per-stream -k "listing or seq"``):

* the gate headline (``#verdict``) shows the verdict of ``summary.json``;
* the "Outcomes by area" table lists the areas of ``summary.json``;
* at least one divergence's SVG is rendered with a non-zero size and drawn shapes;
* the divergences that fail the gate (``divergences.json``) come first, and the headline
  links to each of them (up to ten): clicking the first link brings its entry into view;
* every clause id links to ``clauses.html#ID``, and ``clauses.html`` has each of those ids;
* no console errors, uncaught exceptions or failed loads.

With ``--allure``, also ``RUN_DIR/allure-report/index.html`` (the single-file Allure 3 report
of ``mdlri-conformance report RUN_DIR --allure-html``), opened from ``file://``:

* the app renders its results tree, and the tree's top-level groups are the run's areas;
* a failing result, reached through the tree (area, clause, spec), shows its "expected vs
  observed" attachment with both values, and its clause link: an http(s) link
  (``MDLRI_CLAUSE_URL``) must be clickable; the default relative one (Allure 3 shows it as
  text) must lead, from the report, to ``RUN_DIR/clauses.html#ID``, which is opened and must
  have that clause;
* in ``allure-results``, each status is the suite's outcome: a CHANGED result is "broken"
  (or "failed" when gated), never "skipped" nor "XFAIL CHANGED"; every spec that fails the
  gate (``results.jsonl``) has a "failed" result;
* no console errors (the report must make no request of its own).

Chromium (Debian's ``chromium``; ``--chromium`` or ``$CHROMIUM`` for another) is driven through
the DevTools protocol over ``--remote-debugging-pipe``: no network port, no Python packages
beyond the standard library. A PNG screenshot of each page goes to ``--screenshots`` (default
``/tmp``). Exit status: 0 when every check passes; 1 with one line per problem; 2 when the run
directory or the browser is missing.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--remote-debugging-pipe"]
WIDTH, HEIGHT = 1400, 1000
#: how long a page may take to load and render
PAGE_TIMEOUT_S = 45.0
#: console errors listed per page (then a count)
MAX_ERRORS = 8
#: the attachment every failing spec carries (conformance/framework/verdicts/allure_labels.py)
ATTACHMENT = "expected vs observed"


class CdpError(Exception):
    """The browser answered a command with an error, closed, or did not answer in time."""


class Browser:
    """A headless Chromium and its DevTools protocol over a pipe (fd 3: commands in,
    fd 4: replies and events out, each message JSON ended by a NUL byte)."""

    def __init__(self, exe: str, profile: Path) -> None:
        to_chrome_r, self._out = os.pipe()
        self._in, from_chrome_w = os.pipe()
        # the child's ends, moved above 9 so bash's "3<&R 4>&W" cannot clobber them (dash
        # takes one-digit fds only)
        child_r = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        child_w = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        for fd in (to_chrome_r, from_chrome_w):
            os.close(fd)
        cmd = ["bash", "-c", f'exec "$0" "$@" 3<&{child_r} 4>&{child_w} {child_r}<&- {child_w}>&-',
               exe, *FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
               "about:blank"]
        # its stderr (dbus noise) goes to a file: a pipe nobody reads would fill and block it
        self._log = profile / "chromium-stderr.log"
        with self._log.open("wb") as log:
            self.proc = subprocess.Popen(cmd, pass_fds=(child_r, child_w),
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=log)
        os.close(child_r)
        os.close(child_w)
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def _send(self, msg: dict[str, Any]) -> None:
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._out, data):]

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("the browser did not answer in time")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    raise CdpError(f"the browser closed (exit {self.proc.poll()}): "
                                   f"{self.stderr_tail()}")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Send one command and wait for its answer (events meanwhile go to ``events``)."""
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self._send(msg)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def pump(self, seconds: float) -> None:
        """Collect events for ``seconds`` (late console errors)."""
        try:
            deadline = time.monotonic() + seconds
            while True:
                ev = self._read(deadline)
                if "method" in ev:
                    self.events.append(ev)
        except CdpError:
            pass

    def stderr_tail(self) -> str:
        """The browser's last line of stderr that is not dbus noise."""
        try:
            lines = self._log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        lines = [ln for ln in lines if "dbus" not in ln.lower()]
        return lines[-1] if lines else ""

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._in, self._out):
            os.close(fd)


class Page:
    """One tab, attached in flat mode, with console and exception capture."""

    def __init__(self, browser: Browser) -> None:
        self.b = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget",
                                    {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})

    def call(self, method: str, params: dict[str, Any] | None = None,
             timeout: float = 30.0) -> dict[str, Any]:
        return self.b.call(method, params, self.session, timeout)

    def open(self, url: str) -> str | None:
        """Navigate and wait for the load event; the navigation error, if any."""
        before = len(self.b.events)
        nav = self.call("Page.navigate", {"url": url})
        if nav.get("errorText"):
            return f"{url}: {nav['errorText']}"
        deadline = time.monotonic() + PAGE_TIMEOUT_S
        while time.monotonic() < deadline:
            if any(e["method"] == "Page.loadEventFired" and e.get("sessionId") == self.session
                   for e in self.b.events[before:]):
                return None
            self.b.pump(0.2)
        return f"{url}: no load event in {PAGE_TIMEOUT_S:.0f} s"

    def eval(self, expression: str) -> Any:
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True})
        if "exceptionDetails" in res:
            raise CdpError(f"evaluate: {_exception_text(res['exceptionDetails'])}")
        return res.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float = PAGE_TIMEOUT_S) -> Any:
        """Evaluate until the value is truthy (an app that renders after load)."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            self.b.pump(0.25)
        return value

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads seen so far, one line each."""
        out = []
        for ev in self.b.events:
            if ev.get("sessionId") != self.session:
                continue
            p = ev.get("params", {})
            if ev["method"] == "Runtime.exceptionThrown":
                out.append(f"uncaught exception: {_exception_text(p['exceptionDetails'])}")
            elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error",
                                                                                   "assert"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in
                                p.get("args", []))
                out.append(f"console.{p['type']}: {_one_line(text)}")
            elif ev["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                e = p["entry"]
                out.append(f"console ({e.get('source')}): {_one_line(e.get('text', ''))}"
                           + (f" [{e['url']}]" if e.get("url") else ""))
        out = list(dict.fromkeys(out))
        if len(out) > MAX_ERRORS:
            out = out[:MAX_ERRORS] + [f"... and {len(out) - MAX_ERRORS} more console error(s)"]
        return out


def _one_line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:300]


def _exception_text(details: dict[str, Any]) -> str:
    exc = details.get("exception") or {}
    return _one_line(exc.get("description") or details.get("text") or "exception")


# ---------------------------------------------------------------------------------------------
# the checks

INDEX_PROBE = r"""(() => {
  const v = document.getElementById('verdict');
  const h = [...document.querySelectorAll('h2')]
      .find(e => e.textContent.trim().startsWith('Outcomes by area'));
  let t = h ? h.nextElementSibling : null;
  while (t && t.tagName !== 'TABLE') t = t.nextElementSibling;
  const rows = t ? [...t.querySelectorAll('tr')].slice(1) : [];
  const svgs = [...document.querySelectorAll('div.div svg')];
  const drawn = svgs.filter(s => {
    const r = s.getBoundingClientRect();
    return r.width > 0 && r.height > 0 &&
        s.querySelectorAll('rect,line,path,text,circle,polyline,polygon').length > 0;
  });
  return {
    verdict: v ? v.innerText.trim() : null,
    verdictHeight: v ? v.getBoundingClientRect().height : 0,
    areas: rows.map(r => r.cells[0] ? r.cells[0].innerText.trim() : ''),
    tableHeight: t ? t.getBoundingClientRect().height : 0,
    divergences: document.querySelectorAll('div.div').length,
    svgs: svgs.length,
    drawn: drawn.length,
  };
})()"""


def check_index(page: Page, run: Path, shots: Path) -> list[str]:
    """The static report: gate headline, area table, a divergence SVG, no console errors."""
    problems: list[str] = []
    index = run / "index.html"
    err = page.open(index.as_uri())
    if err:
        return [f"index.html: {err}"]
    summary = _summary(run)
    got = page.eval(INDEX_PROBE)  # a static page: complete at its load event
    page.screenshot(shots / "check_pages-index.png")
    want = (summary.get("verdict") or {}).get("verdict")
    if not got["verdict"] or got["verdictHeight"] <= 0:
        problems.append("index.html: the gate headline (#verdict) is not shown")
    elif want and f"Gate: {want}" not in got["verdict"]:
        problems.append(f"index.html: the gate headline reads {got['verdict']!r}, "
                        f"summary.json says {want}")
    areas = list(summary.get("areas") or {})
    if not got["areas"] or got["tableHeight"] <= 0:
        problems.append("index.html: the 'Outcomes by area' table has no rows")
    elif areas and sorted(got["areas"]) != sorted(areas):
        problems.append(f"index.html: the area table lists {got['areas']}, summary.json "
                        f"has {areas}")
    if not got["divergences"]:
        problems.append("index.html: no divergence in this run (check a failing run, e.g. "
                        "--fault seq-per-stream)")
    elif not got["drawn"]:
        problems.append(f"index.html: none of the {got['svgs']} divergence SVG(s) is drawn "
                        f"({got['divergences']} divergences; the generated specs' divergences "
                        f"carry one: select them too, e.g. -k 'listing or seq')")
    else:
        page.eval("document.querySelector('div.div svg').scrollIntoView({block: 'center'})")
        page.b.pump(0.3)
        page.screenshot(shots / "check_pages-index-svg.png")
    page.b.pump(0.5)
    problems += [f"index.html: {e}" for e in page.errors()]
    return problems + check_gate_links(page, run, shots)


GATE_PROBE = r"""(() => {
  const links = [...document.querySelectorAll('.verdict ol.gate-failures a[href^="#div-"]')];
  const entries = [...document.querySelectorAll('div.div')];
  return {
    links: links.map(a => a.getAttribute('href').slice(1)),
    targets: links.map(a => {
      const t = document.getElementById(a.getAttribute('href').slice(1));
      return t ? t.classList.contains('fails-gate') : null;
    }),
    order: entries.map(e => e.classList.contains('fails-gate')),
    clauses: [...new Set([...document.querySelectorAll('a[href^="clauses.html#"]')]
        .map(a => a.getAttribute('href').split('#')[1]))],
  };
})()"""

#: click the headline's first gate-failure link; where its target is then (px from the top)
FOLLOW_FIRST = r"""(() => {
  const a = document.querySelector('.verdict ol.gate-failures a[href^="#div-"]');
  a.click();
  const t = document.getElementById(a.getAttribute('href').slice(1));
  return {hash: location.hash, top: t.getBoundingClientRect().top};
})()"""

MISSING_IDS = r"""((ids) => ids.filter(id => !document.getElementById(id)))"""


def check_gate_links(page: Page, run: Path, shots: Path) -> list[str]:
    """index.html (open in ``page``): what fails the gate first, linked from the headline;
    every clause link's target in clauses.html."""
    problems: list[str] = []
    got = page.eval(GATE_PROBE)
    try:
        divs = json.loads((run / "divergences.json").read_text())
    except (OSError, ValueError):
        divs = []
    failing = sum(1 for d in divs if d.get("fails_gate"))
    order = got["order"]
    if order != sorted(order, reverse=True) or sum(order) != failing:
        problems.append(f"index.html: the {failing} divergence(s) that fail the gate are not "
                        f"listed first (entries in page order, fails-gate: {order[:20]})")
    if len(got["links"]) != min(failing, 10) or not all(got["targets"]):
        problems.append(f"index.html: the headline links {len(got['links'])} gate failure(s) "
                        f"({got['targets']}), divergences.json has {failing}")
    elif failing:
        went = page.eval(FOLLOW_FIRST)
        page.b.pump(0.3)
        page.screenshot(shots / "check_pages-index-gate.png")
        if went["hash"] != "#" + got["links"][0] or not 0 <= went["top"] < HEIGHT / 2:
            problems.append(f"index.html: the headline's first link did not bring its entry "
                            f"into view ({went})")
    if not got["clauses"]:
        return problems + ["index.html: no clause id links to clauses.html"]
    err = page.open((run / "clauses.html").as_uri())
    if err:
        return problems + [f"clauses.html: {err}"]
    missing = page.eval(f"({MISSING_IDS})({json.dumps(got['clauses'])})")
    if missing:
        problems.append(f"index.html: {len(missing)} clause link(s) lead to no row of "
                        f"clauses.html ({missing[:5]})")
    return problems


def check_allure_statuses(run: Path) -> list[str]:
    """allure-results: CHANGED is a change ("broken", "failed" when gated), never "skipped" or
    "XFAIL CHANGED"; every spec that fails the gate has a "failed" result."""
    problems: list[str] = []
    by_node: dict[str, list[str]] = {}
    for f in sorted((run / "allure-results").glob("*-result.json")):
        try:
            r = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        labels = {lab["name"]: lab["value"] for lab in r.get("labels", [])}
        message = (r.get("statusDetails") or {}).get("message") or ""
        if labels.get("outcome") == "CHANGED" and r.get("status") not in ("broken", "failed"):
            problems.append(f"allure-results: {r.get('name')}: CHANGED shown as "
                            f"{r.get('status')!r}")
        if message.startswith("XFAIL CHANGED"):
            problems.append(f"allure-results: {r.get('name')}: message reads 'XFAIL CHANGED'")
        by_node.setdefault(labels.get("nodeid", ""), []).append(r.get("status", ""))
    try:
        rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()
                if line.strip()]
    except (OSError, ValueError):
        rows = []
    # conformance/framework/verdicts/summary.py
    gate = {"FAIL", "ERROR", "XPASS", "TIMEOUT", "CRASH"}
    for row in rows:
        if (row.get("outcome") in gate or row.get("gated")) and \
                "failed" not in by_node.get(row.get("nodeid", ""), []):
            problems.append(f"allure-results: {row.get('nodeid')} fails the gate "
                            f"({row.get('outcome')}) but has no failed result "
                            f"({by_node.get(row.get('nodeid', ''))})")
    return problems[:MAX_ERRORS]


TREE_PROBE = r"""(() => {
  const titles = [...document.querySelectorAll('[data-testid="tree-section-title"]')]
      .map(e => e.innerText.trim());
  return titles.length ? titles : null;
})()"""

#: click the (first, still closed) tree group or leaf titled NAME; whether there was one
CLICK = r"""((kind, name) => {
  const sel = kind === 'leaf' ? '[data-testid="tree-leaf-title"]'
                              : '[data-testid="tree-section-title"]';
  const el = [...document.querySelectorAll(sel)].find(e => e.innerText.trim() === name);
  if (!el) return false;
  el.click();
  return true;
})"""

#: whether a tree group or leaf titled NAME is shown
SHOWN = r"""((kind, name) => {
  const sel = kind === 'leaf' ? '[data-testid="tree-leaf-title"]'
                              : '[data-testid="tree-section-title"]';
  return [...document.querySelectorAll(sel)].some(e => e.innerText.trim() === name);
})"""

RESULT_PROBE = r"""((name, attachment, cid) => {
  const title = document.querySelector('[data-testid="test-result-info-title"]');
  if (!title || title.innerText.trim() !== name) return null;
  const atts = [...document.querySelectorAll('[data-testid="test-result-attachment"]')];
  const att = atts.find(a => a.innerText.includes(attachment));
  const links = [...document.querySelectorAll('[data-testid="test-result-meta-link"]')];
  const link = links.find(l => l.innerText.trim() === cid);
  const a = link ? link.querySelector('a') : null;
  return {attachment: !!att, attachmentText: att ? att.innerText : '',
          link: !!link, href: a ? a.href : null};
})"""

#: expand the attachment named NAME (click its header) and scroll it into view
OPEN_ATTACHMENT = r"""((name) => {
  const att = [...document.querySelectorAll('[data-testid="test-result-attachment"]')]
      .find(a => a.innerText.includes(name));
  if (!att) return false;
  att.querySelector('[data-testid="test-result-attachment-header"] button').click();
  att.scrollIntoView({block: 'start'});
  return true;
})"""

#: the expanded attachment's text beyond its header, or null while it is not shown
ATTACHMENT_TEXT = r"""((name) => {
  const att = [...document.querySelectorAll('[data-testid="test-result-attachment"]')]
      .find(a => a.innerText.includes(name));
  if (!att) return null;
  const head = att.querySelector('[data-testid="test-result-attachment-header"]');
  const text = att.innerText.replace(head ? head.innerText : '', '').trim();
  return text.includes('observed') ? text : null;
})"""


def check_allure(page: Page, run: Path, shots: Path) -> list[str]:
    """The single-file Allure report: grouped by area; a failing result with its attachment
    and clause link, whose target is the run's clauses.html at that clause."""
    report = run / "allure-report" / "index.html"
    if not report.is_file():
        return [f"{report}: missing (mdlri-conformance report {run} --allure-html)"]
    extra = sorted(p.name for p in report.parent.iterdir() if p.is_dir())
    problems = [f"allure-report: not a single file (folders {extra})"] if extra else []
    problems += check_allure_statuses(run)
    err = page.open(report.as_uri())
    if err:
        return problems + [f"allure-report: {err}"]
    titles = page.wait_for(TREE_PROBE)
    page.screenshot(shots / "check_pages-allure.png")
    areas = set(_summary(run).get("areas") or {})
    if not titles:
        return problems + ["allure-report: no results tree rendered"] + \
            [f"allure-report: {e}" for e in page.errors()]
    # Allure opens the path to the first failed result, so the clause groups of that area
    # are shown too: every group shown is an area or a clause group of the results
    groups = areas | _result_labels(run, "suite")
    if not areas or not set(titles) & areas or set(titles) - groups:
        problems.append(f"allure-report: the tree is not grouped by area, then clause (groups "
                        f"{sorted(set(titles) - groups)[:5]} are neither areas of summary.json "
                        "nor clause groups of allure-results)")
    problems += _check_result(page, run, report, shots)
    page.b.pump(0.5)
    problems += [f"allure-report: {e}" for e in page.errors()]
    return problems


def failing_result(run: Path) -> dict[str, Any] | None:
    """A non-passed Allure result with area / clause groups and the expected-vs-observed
    attachment (from allure-results), else any non-passed one."""
    found = None
    for f in sorted((run / "allure-results").glob("*-result.json")):
        try:
            r = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if r.get("status") == "passed":
            continue
        labels = {lab["name"]: lab["value"] for lab in r.get("labels", [])}
        if "parentSuite" not in labels or "suite" not in labels or not r.get("links"):
            continue
        r["_labels"] = labels
        if any(a.get("name") == ATTACHMENT for a in r.get("attachments", [])):
            return r
        found = found or r
    return found


def _check_result(page: Page, run: Path, report: Path, shots: Path) -> list[str]:
    """Open a failing result through the tree (area, clause, spec); check its attachment
    and its clause link; follow the link to clauses.html."""
    res = failing_result(run)
    if res is None:
        return ["allure-results: no failing result with area / clause labels and links"]
    name, labels = res["name"], res["_labels"]
    path = [("group", labels["parentSuite"]), ("group", labels["suite"]), ("leaf", name)]
    for (kind, title), after in zip(path, [*path[1:], None]):
        if after is not None and page.eval(f"({SHOWN})({json.dumps(after[0])}, "
                                           f"{json.dumps(after[1])})"):
            continue  # already open (Allure opens the path to the first failed result)
        if not page.wait_for(f"({CLICK})({json.dumps(kind)}, {json.dumps(title)})", 10):
            return [f"allure-report: no tree {kind} {title!r} (area / clause / spec of "
                    f"{name})"]
        page.b.pump(0.3)
    link = res["links"][0]
    args = ", ".join(json.dumps(x) for x in (name, ATTACHMENT, link.get("name")))
    got = page.wait_for(f"({RESULT_PROBE})({args})", 15)
    page.screenshot(shots / "check_pages-allure-result.png")
    if not got:
        return [f"allure-report: the result page of {name} did not open"]
    problems = []
    if not got["attachment"]:
        problems.append(f"allure-report: {name}: no {ATTACHMENT!r} attachment shown")
    else:
        page.eval(f"({OPEN_ATTACHMENT})({json.dumps(ATTACHMENT)})")
        text = page.wait_for(f"({ATTACHMENT_TEXT})({json.dumps(ATTACHMENT)})", 10)
        page.screenshot(shots / "check_pages-allure-attachment.png")
        if not text or "expected" not in text or "observed" not in text:
            problems.append(f"allure-report: {name}: the {ATTACHMENT!r} attachment does not "
                            f"show expected and observed values ({_one_line(text or '')!r})")
    if not got["link"]:
        problems.append(f"allure-report: {name}: clause link {link.get('name')} not shown")
    url = link["url"]
    if url.startswith(("http://", "https://")):
        if got["href"] != url:  # Allure 3 makes only absolute http(s) links clickable
            problems.append(f"allure-report: {name}: clause link {url} is not clickable")
        return problems
    # a relative link (shown as text by Allure 3): its target, seen from the report
    target = urljoin(report.as_uri(), url)
    want = (run / "clauses.html").as_uri()
    if target.split("#")[0] != want:
        return problems + [f"allure-report: clause link {url} leads to {target}, not {want}"]
    cid = target.split("#", 1)[1] if "#" in target else ""
    err = page.open(target)
    if err:
        return problems + [f"clause link: {err}"]
    if not page.eval(f"!!document.getElementById({json.dumps(cid)})"):
        problems.append(f"clause link {target}: clauses.html has no element id {cid!r}")
    page.screenshot(shots / "check_pages-clause.png")
    return problems


def _result_labels(run: Path, label: str) -> set[str]:
    """The values of one label over every result in allure-results."""
    out = set()
    for f in (run / "allure-results").glob("*-result.json"):
        try:
            labels = json.loads(f.read_text()).get("labels", [])
        except (OSError, ValueError):
            continue
        out |= {lab["value"] for lab in labels if lab.get("name") == label}
    return out


def _summary(run: Path) -> dict[str, Any]:
    try:
        return json.loads((run / "summary.json").read_text())
    except (OSError, ValueError):
        return {}


def find_chromium(given: str | None) -> str | None:
    for name in (given, os.environ.get("CHROMIUM"), "chromium", "chromium-browser",
                 "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--allure", action="store_true", help="also check allure-report/index.html")
    ap.add_argument("--screenshots", type=Path, default=Path(tempfile.gettempdir()))
    ap.add_argument("--chromium", help="the browser (default: $CHROMIUM, then chromium)")
    ns = ap.parse_args(argv)
    run = ns.run_dir.resolve()
    if not (run / "index.html").is_file():
        print(f"check_pages: {run}: no index.html (not a run directory)", file=sys.stderr)
        return 2
    exe = find_chromium(ns.chromium)
    if exe is None:
        print("check_pages: no chromium (apt-get install -y chromium)", file=sys.stderr)
        return 2
    ns.screenshots.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="check-pages-") as profile:
        browser = Browser(exe, Path(profile))
        try:
            problems += check_index(Page(browser), run, ns.screenshots)
            if ns.allure:
                problems += check_allure(Page(browser), run, ns.screenshots)
        except CdpError as exc:
            problems.append(f"browser: {exc}")
        finally:
            browser.close()
    for line in problems:
        print(line)
    if not problems:
        pages = "index.html and allure-report" if ns.allure else "index.html"
        print(f"check_pages: {run}: ok ({pages}; screenshots in "
              f"{ns.screenshots}/check_pages-*.png)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
