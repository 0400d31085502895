#!/usr/bin/env bash
# The GPU checks of one device lease, in three lanes at once (timed sections never overlap:
# GRAPHMEND_TIMING_LOCK). Run from the repository root on the device machine, with the wheels of
# transformers 4.49.0, tokenizers 0.21.1, huggingface_hub 0.29.3 and libcst in .whl/ (see
# benchmarks/README.md, "On an H200"); every log and JSON lands in $OUT.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/server PYTHONUNBUFFERED=1 GRAPHMEND_TIMING_LOCK=/tmp/timing.lock
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LIMIT=${LANE_LIMIT:-420}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$OUT/machine.txt"
python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)" >>"$OUT/machine.txt" 2>&1

record_lane() {  # GM504 from a real run: record, check, fix, record again
  rm -rf /tmp/rc && cp -r benchmarks/record_cudagraphs /tmp/rc && cd /tmp/rc && : >pyproject.toml
  python3 -m graphmend record --output-format json -- python3 skips.py >record_before.json
  echo "record exit $?"
  python3 -m graphmend check skips.py --output-format json >check_before.json; echo "check exit $?"
  python3 -m graphmend fix --unsafe-fixes skips.py; echo "fix exit $?"
  python3 -m graphmend record --output-format json -- python3 skips.py >record_after.json
  echo "record exit $?"
  python3 -m graphmend check skips.py --output-format json >check_after.json; echo "check exit $?"
  python3 - <<'PY'
import json
for when in ("before", "after"):
    events = json.load(open(f"record_{when}.json"))
    events = events.get("events", events) if isinstance(events, dict) else events
    found = json.load(open(f"check_{when}.json"))
    gm504 = [(d["line"], d["message"]) for d in found if d["code"] == "GM504"]
    print(when, "events:", json.dumps(events)[:1500])
    print(when, "GM504:", gm504)
PY
  tar czf "$OUT/record_lane.tgz" record_*.json check_*.json skips.py .graphmend
}

LANES=${LANES:-record effect proof}
GE_ARGS=${GE_ARGS:---cases t5,biogpt --sizes tiny --modes default,reduce-overhead --pairs 2 --calls 300}
CGP_ARGS=${CGP_ARGS:---cases splinter,tvp,GM403-out-of-place,GM404-cond-select,biogpt --pairs 2 --calls 200}
[[ $LANES == *record* ]] && { ( record_lane ) >"$OUT/record.log" 2>&1 & }
[[ $LANES == *effect* ]] && { timeout "$LIMIT" python3 benchmarks/gpu_effect.py $GE_ARGS --json "$OUT/gpu_effect.json" \
  --keep /tmp/ge >"$OUT/gpu_effect.log" 2>&1 & }
[[ $LANES == *proof* ]] && { timeout "$LIMIT" python3 benchmarks/cudagraph_proof.py $CGP_ARGS --work /tmp/cgp \
  --json "$OUT/cudagraph_proof.json" >"$OUT/cudagraph_proof.log" 2>&1 & }
wait
tail -n 40 "$OUT"/*.log
