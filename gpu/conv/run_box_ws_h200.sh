#!/usr/bin/env bash
# One device call after the warp-specialized box kernel, the box kernel's split K and its 1x1 layers: the box
# kernels' float64 checks (every config and split, in CHECK_SHARDS shards, hang-guarded) while bench.py compiles
# every config of every kernel for the layers, then the forward rows (CONV_FWD_BATCHES, default 128; each
# row records what the layer's box choice timed), then, where PROBE_S is set, gpu/conv/probe_gluon.py.
#     run:  bash gpu/conv/run_box_ws_h200.sh        (CONV_SHAPES, CONV_FWD_BATCHES, FWD_S, SECTIONS pick)
set -uo pipefail
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT/run"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
SHARDS=${CHECK_SHARDS:-4}
if [ "$SHARDS" -gt 0 ]; then
  for i in $(seq 0 $((SHARDS - 1))); do
    (TRITONIFY_TEST_DEVICE=cuda TRITONIFY_CHECK_SHARD=$i/$SHARDS timeout ${CHECK_S:-300} python3 -m pytest -q \
       -p no:cacheprovider -p tests.templates.check_shards -o addopts="" -rf tests/templates/kernel_checks.py \
       -k "${CHECK_K:-box_kernel or box_candidates}" > "$OUT/checks_box_$i.log" 2>&1
     echo "rc=$?" >> "$OUT/checks_box_$i.log") &
  done
fi
timeout ${PRECOMPILE_S:-300} python3 gpu/conv/bench.py "$OUT/run" --precompile-only --workers ${WORKERS:-12} \
  > "$OUT/precompile.log" 2>&1
wait
for i in $(seq 0 $((SHARDS - 1))); do echo "checks $i: $(tail -n 3 "$OUT/checks_box_$i.log" | tr '\n' ' ')"; done
grep -h '"precompile"' "$OUT/precompile.log" | tail -1 | cut -c1-800
if [ "${FWD_S:-300}" -gt 0 ]; then
  CONV_FWD_BATCHES=${CONV_FWD_BATCHES:-128} timeout ${FWD_S:-300} python3 gpu/conv/bench.py "$OUT/run" --no-precompile \
    --budget $(( ${FWD_S:-300} - 15 )) --sections ${SECTIONS:-fwd} --rep-ms 10 > "$OUT/bench.log" 2>&1
  echo "bench rc=$?"; python3 gpu/conv/report.py "$OUT/run/conv.jsonl" > "$OUT/report.md" 2>&1
  grep -E '^\| (s|rgb)' "$OUT/report.md" | head -45
fi
if [ -n "${PROBE_S:-}" ]; then
  PROBE_S=$PROBE_S timeout $((PROBE_S + 60)) python3 gpu/conv/probe_gluon.py "$OUT" > "$OUT/probe.log" 2>&1
  echo "probe rc=$?"; grep '^ROW' "$OUT/probe.log" | cut -c1-400
fi
