#!/usr/bin/env bash
# One device call after the filter-row loop (ROW_K) and for the Gluon probe: the forward's every-config
# float64 checks and the forward+dgrad+wgrad checks (4 pytest shards, the 7x7 stem case included), then
# gpu/conv/probe_gluon.py alone on the GPU, then the RGB stem's forward rows through bench.py.
#   run:  bash gpu/conv/run_gluon_h200.sh      (files back under $OUT)
set -uo pipefail
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
for i in 0 1 2 3; do
  (TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_COMPILE_BACKEND=aot_eager \
     TRITONIFY_TEST_DEVICE=cuda TRITONIFY_CHECK_SHARD=$i/4 timeout ${CHECKS_S:-130} \
     python3 -m pytest -q -p no:cacheprovider -p tests.templates.check_shards -o addopts="" -rf tests/templates/kernel_checks.py \
     -k "(conv2d_every_autotune_config and fwd) or conv2d_forward_dgrad_wgrad" > "$OUT/checks_fwd_$i.log" 2>&1
   echo "rc=$?" >> "$OUT/checks_fwd_$i.log") &
done
wait
for f in "$OUT"/checks_fwd_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done
PROBE_S=${PROBE_S:-240} timeout ${PROBE_TIMEOUT:-300} python3 gpu/conv/probe_gluon.py "$OUT" > "$OUT/probe_gluon.log" 2>&1
echo "probe_gluon rc=$?"; grep '^ROW' "$OUT/probe_gluon.log" | cut -c1-400
CONV_SHAPES=rgb.3x3 CONV_FWD_BATCHES=128,32 timeout ${STEM_S:-110} python3 gpu/conv/bench.py "$OUT/stem" --no-precompile \
  --budget $(( ${STEM_S:-110} - 10 )) --sections fwd --rep-ms 10 > "$OUT/stem.log" 2>&1
echo "stem rc=$?"; python3 gpu/conv/report.py "$OUT/stem/conv.jsonl" 2>&1 | grep -i 'rgb' | head
