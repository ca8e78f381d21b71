#!/usr/bin/env bash
# One device call: gpu/conv/probe_box.py (the A_BOX configs alone on multi-image boxes, with the
# compiled IR dumped) while bench.py compiles the training layers' configs, then the training rows
# (bench.py --sections train), with their float64 errors in each record.
#   run:  bash gpu/conv/run_probe_train_h200.sh [TRAIN_BUDGET_S]
set -uo pipefail
BUDGET=${1:-300}
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 CONV_TRAIN_PARTS=${CONV_TRAIN_PARTS:-1}
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
(TRITON_KERNEL_DUMP=1 TRITON_DUMP_DIR=/tmp/dump TRITON_CACHE_DIR=/tmp/probe_cache timeout 250 \
   python3 gpu/conv/probe_box.py "$OUT" > "$OUT/probe_box.log" 2>&1; echo "probe rc=$?" >> "$OUT/probe_box.log") &
CONV_SHAPES=s1.3x3,s2.3x3/2,s3.3x3,s4.3x3,s1.1x1a,s3.1x1b timeout 200 python3 gpu/conv/bench.py "$OUT" --precompile-only --workers 10 > "$OUT/precompile.log" 2>&1
wait
tail -n 3 "$OUT/probe_box.log"; tail -n 2 "$OUT/precompile.log"
(cd /tmp/dump 2>/dev/null && find . \( -name '*.ttgir' -o -name '*.ptx' -o -name '*.json' \) | grep -v '^$' | tar czf "$OUT/dump.tgz" -T - ) || true
python3 gpu/conv/bench.py "$OUT" --no-precompile --budget "$BUDGET" --sections train --rep-ms "${REP_MS:-10}" > "$OUT/bench.log" 2>&1
echo "bench rc=$?"; tail -n 3 "$OUT/bench.log"
python3 gpu/conv/report.py "$OUT/conv.jsonl" | tail -n 20 || true
