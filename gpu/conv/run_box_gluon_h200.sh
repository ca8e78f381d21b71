#!/usr/bin/env bash
# One device call after the Gluon box path: its float64 checks (every config, forward and backward, three
# launches bit-identical) while bench.py compiles every config, then the forward rows of the layers it can
# take (the 3x3 layers) and the RGB stem at batch 128 and 32.   run:  bash gpu/conv/run_box_gluon_h200.sh
set -uo pipefail
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT/run"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
LAYERS=${CONV_SHAPES:-s2.3x3/2,s2.3x3,s3.3x3/2,s3.3x3,s4.3x3/2,s4.3x3,s1.3x3,rgb.3x3}
(TRITONIFY_TEST_DEVICE=cuda timeout 150 python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf \
   tests/templates/kernel_checks.py -k "box_kernel" > "$OUT/checks_box.log" 2>&1; echo "rc=$?" >> "$OUT/checks_box.log") &
CONV_SHAPES=$LAYERS timeout 150 python3 gpu/conv/bench.py "$OUT/run" --precompile-only --workers 10 > "$OUT/precompile.log" 2>&1
wait
echo "checks: $(tail -n 3 "$OUT/checks_box.log" | tr '\n' ' ')"
CONV_SHAPES=$LAYERS CONV_FWD_BATCHES=128,32 timeout ${FWD_S:-300} python3 gpu/conv/bench.py "$OUT/run" --no-precompile \
  --budget $(( ${FWD_S:-300} - 15 )) --sections fwd --rep-ms 10 > "$OUT/bench.log" 2>&1
echo "fwd rc=$?"; python3 gpu/conv/report.py "$OUT/run/conv.jsonl" > "$OUT/report.md" 2>&1; grep -E '^\| (s|rgb)' "$OUT/report.md" | head -20
