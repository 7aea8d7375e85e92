#!/usr/bin/env bash
# The install path of a release engineer: build the sdist and the wheel, install the wheel into a
# fresh venv outside the checkout, and from an empty temporary directory run the main job,
# `example fallback` on the simulator and on the emulator, `report`, and the suite through
# `pytest --pyargs`; check the report files exist. Usage: .ci/wheel_check.sh [PYTHON]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
py="${1:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$py" -m pip install --quiet build
"$py" -m build --outdir "$work/dist" "$repo" > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
echo "built: $(cd "$work/dist" && ls)"
"$py" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet "$work"/dist/*.whl
mkdir "$work/cwd"
cd "$work/cwd"
export PATH="$work/venv/bin:$PATH" MDLRI_CACHE_DIR="$work/cache"

echo "== wheel contents (data files)"
python -m zipfile -l "$work"/dist/*.whl | awk '{print $1}' | grep -vE '\.py$|/$|dist-info|^File$'

echo "== main job"
mdlri-conformance run --backend sim -n 2 --report-dir run | tail -3
for f in run.json collected.json results.jsonl summary.json summary.md index.html clauses.html junit.xml; do
    test -s "run/$f" || { echo "missing run/$f"; exit 1; }
done
python - <<'PY'
import json
s = json.load(open("run/summary.json"))
assert s["coverage"]["reasoned"] > 0, "coverage lost the untestable reasons (untestable.toml)"
assert s["verdict"]["verdict"] == "PASS", s["verdict"]
PY

echo "== example fallback (sim, emulator)"
mdlri-conformance example fallback | tail -1
mdlri-conformance example fallback --backend acl --acl-lib emulator | tail -1

echo "== report"
rm run/index.html run/summary.md
mdlri-conformance report run | tail -2
test -s run/index.html && test -s run/summary.md

echo "== pytest --pyargs"
python -m pytest --pyargs mdlri_conformance.conformance.specs --backend sim -q -n 2 \
    -k "capture" --report-dir=pyargs | tail -1
test -s pyargs/summary.json

echo "== shipped expectations (package data, by name)"
mdlri-conformance run -k capture --expectations sim --report-dir e | tail -1
test -s e/summary.json

echo "== shards and merge"
for k in 1 2; do mdlri-conformance run -k capture --shard $k/2 --report-dir s$k | tail -1; done
mdlri-conformance merge s1 s2 --out merged | tail -1
python - <<'PY'
import json
s = json.load(open("s1/shard.json"))
assert s["durations"]["source"] == "package durations.json", s["durations"]
m = json.load(open("merged/summary.json"))
assert m["verdict"]["verdict"] == "PASS" and m["completeness"]["complete"], m["verdict"]
PY
test -s merged/junit.xml
echo "wheel check: ok"
