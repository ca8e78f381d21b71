#!/usr/bin/env bash
# One device call: gpu/conv/diag_wgrad.py (DIAG_S=0: not), then bench.py's compile of every config, the batch-32 forward rows
# and the training rows (forward + dgrad + wgrad against eager and torch.compile). CHECK_K: the float64 checks
# (tests/templates/kernel_checks.py -k "$CHECK_K", CHECK_S seconds) beside the compile, before anything is timed.
#     run:  bash gpu/conv/run_b32_train_h200.sh      (DIAG_S, FWD_S (0: no forward rows), TRAIN_S, CONV_TRAIN_BATCHES,
#                                                     CHECK_K, CHECK_S)
set -uo pipefail
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT/run"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --upgrade --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
if [ "${DIAG_S:-150}" -gt 0 ]; then
  (timeout ${DIAG_S:-150} python3 gpu/conv/diag_wgrad.py > "$OUT/diag_wgrad.log" 2>&1; echo "rc=$?" >> "$OUT/diag_wgrad.log") &
fi
if [ -n "${CHECK_K:-}" ]; then
  (TRITONIFY_TEST_DEVICE=cuda TRITONIFY_COMPILE_BACKEND=aot_eager timeout ${CHECK_S:-300} python3 -m pytest -q \
     -p no:cacheprovider -o addopts="" -rf tests/templates/kernel_checks.py -k "$CHECK_K" > "$OUT/checks.log" 2>&1
   echo "rc=$?" >> "$OUT/checks.log") &
fi
timeout ${PRECOMPILE_S:-240} python3 gpu/conv/bench.py "$OUT/run" --precompile-only --workers ${WORKERS:-12} \
  > "$OUT/precompile.log" 2>&1
wait
[ -f "$OUT/diag_wgrad.log" ] && cut -c1-1500 "$OUT/diag_wgrad.log"
[ -f "$OUT/checks.log" ] && { grep -E "^(FAILED|ERROR)" "$OUT/checks.log" | cut -c1-300; tail -n 2 "$OUT/checks.log"; }
grep -h '"precompile"' "$OUT/precompile.log" | tail -1 | cut -c1-300
if [ "${FWD_S:-200}" -gt 0 ]; then
  CONV_FWD_BATCHES=32 timeout ${FWD_S:-200} python3 gpu/conv/bench.py "$OUT/run" --no-precompile \
    --budget $(( ${FWD_S:-200} - 10 )) --sections fwd --rep-ms 10 > "$OUT/bench_fwd.log" 2>&1
  echo "fwd rc=$?"
fi
timeout ${TRAIN_S:-200} python3 gpu/conv/bench.py "$OUT/run" --no-precompile \
  --budget $(( ${TRAIN_S:-200} - 10 )) --sections train --rep-ms 10 > "$OUT/bench_train.log" 2>&1
echo "train rc=$?"; python3 gpu/conv/report.py "$OUT/run/conv.jsonl" > "$OUT/report.md" 2>&1
grep -E '^\| (s|rgb)' "$OUT/report.md" | head -60
