#!/bin/bash
# The seed's Time-to-Context on the blind dev-set vault (issue 31): 20 real SessionStart hook runs,
# then `ccmemory stats --json`. Run under: flock /tmp/ccm-bench.lock bash bench/ttc_bench.sh
set -e
W=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$W/.venv/bin/python}
T=$(mktemp -d)
cp -r $W/bench/memories/blind/ccmemory $T/.ccmemory
cd $T && git init -q -b main && git add -A && git -c user.email=b@x -c user.name=b commit -qm seed
export PYTHONPATH=$W
$PY -m ccmemory reindex --no-embed --json >/dev/null
echo "load before: $(cut -d' ' -f1 /proc/loadavg)"
for i in $(seq 1 20); do
  echo "{\"session_id\":\"ttc-$i\",\"cwd\":\"$T\",\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}" | $PY -m ccmemory hook SessionStart >/dev/null
done
echo "load after: $(cut -d' ' -f1 /proc/loadavg)"
$PY -m ccmemory stats --json | $PY -c 'import json,sys; d=json.load(sys.stdin)["seed_metrics"]["time_to_context"]; print({k: d[k] for k in ("display","value","p95","sessions","meets_target")})'
$PY -c 'import json,sys; ms=sorted(json.loads(l)["ms"] for l in open(sys.argv[1])); print("ms min/median/max", ms[0], ms[len(ms)//2], ms[-1])' $T/.ccmemory/local/surfaced.jsonl
rm -rf $T
