#!/usr/bin/env bash
# The measuring run in two device calls on one warm machine. PHASE=a: every conv2d config's float64
# checks (6 pytest shards, the 1x1 GEMM kernel's included) and the other conv2d checks while bench.py
# compiles every tile config, then the forward rows (CONV_FWD_BATCHES, default 128 then 32; CONV_SHAPES
# picks layers) until END_S (default 580) runs out; the records are
# kept in /tmp/conv_a for phase b. PHASE=b (the next call, the machine still warm): the forward rows
# phase a did not reach, then the training rows at CONV_TRAIN_BATCHES (default 128) with torch.compile.
# Files back: conv.jsonl (this phase's records; phase b's include phase a's), logs.tgz, report.md.
#   run:  PHASE=a bash gpu/conv/run_final_h200.sh; then PHASE=b bash gpu/conv/run_final_h200.sh
set -uo pipefail
END=$((SECONDS + ${END_S:-580}))
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT" /tmp/conv_a
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 CONV_TRAIN_PARTS=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
A=/tmp/conv_a
if [ "${PHASE:-a}" = a ]; then
  rm -f $A/*
  checks() {
    TRITONIFY_CONV_CONFIG_SHARD=$3 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager \
      TRITONIFY_TEST_DEVICE=cuda timeout 170 \
      python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf tests/templates/kernel_checks.py -k "$2" > "$A/$1.log" 2>&1
    echo "rc=$?" >> "$A/$1.log"
  }
  for i in 0 1 2 3 4 5; do checks "checks_configs_$i" "conv2d_every_autotune_config" "$i/6" & done
  checks checks_other "conv2d and not conv2d_every_autotune_config and not conv2d_forward_dgrad_wgrad" "" &
  checks checks_other_fwd_bwd "conv2d_forward_dgrad_wgrad" "" &
  timeout 170 python3 gpu/conv/bench.py "$A" --precompile-only --workers 6 > "$A/precompile.log" 2>&1
  wait
  for f in $A/checks_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done
  left=$((END - SECONDS - 15))
  CONV_FWD_BATCHES=${CONV_FWD_BATCHES:-128,32} timeout $((left + 10)) python3 gpu/conv/bench.py "$A" --no-precompile --budget "$left" --sections fwd --rep-ms 10 > "$A/bench.log" 2>&1
  echo "fwd rc=$? (budget $left s)"
  left=$((END - SECONDS - 15))
  if [ "$left" -gt 60 ]; then  # time left: the training rows whose compile timings the last run lacked
    CONV_SHAPES=${TRAIN_LEFT:-s3.3x3,s4.3x3,s1.1x1a,s3.1x1b} CONV_TRAIN_BATCHES=128 timeout $((left + 10)) \
      python3 gpu/conv/bench.py "$A" --no-precompile --budget "$left" --sections train --rep-ms 10 >> "$A/bench.log" 2>&1
    echo "train rc=$? (budget $left s)"
  fi
else
  missing=$(python3 - <<'PY'
import json, sys
sys.path.insert(0, "gpu/conv")
import bench
done = {(r["shape"], r["batch"]) for r in map(json.loads, open("/tmp/conv_a/conv.jsonl")) if r.get("kind") == "fwd"}
print(",".join(s[0] for s in bench.SHAPES if (s[0], 128) not in done))
PY
)
  echo "forward rows left at batch 128: $missing"
  if [ -n "$missing" ]; then
    CONV_SHAPES=$missing CONV_FWD_BATCHES=128 timeout 200 python3 gpu/conv/bench.py "$A" --no-precompile --budget 150 --sections fwd --rep-ms 10 >> "$A/bench.log" 2>&1
  fi
  left=$((END - SECONDS - 15))
  CONV_TRAIN_BATCHES=${CONV_TRAIN_BATCHES:-128} timeout $((left + 10)) python3 gpu/conv/bench.py "$A" --no-precompile --budget "$left" --sections train --rep-ms 10 >> "$A/bench.log" 2>&1
  echo "train rc=$? (budget $left s)"
fi
cp $A/conv.jsonl "$OUT/conv.jsonl"
python3 gpu/conv/report.py "$A/conv.jsonl" > "$OUT/report.md" 2>&1; tail -n 70 "$OUT/report.md"
(cd $A && tar czf "$OUT/logs.tgz" *.log)
