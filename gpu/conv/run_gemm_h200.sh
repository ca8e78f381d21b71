#!/usr/bin/env bash
# A short device call after a change to the 1x1 layers' GEMM kernel: its every-config float64 checks
# (4 pytest shards) while bench.py compiles its configs at the 1x1 layers, then gpu/conv/probe_gemm.py
# (each config alone against float64, timed beside the implicit GEMM, cuDNN and torch.mm) and
# gpu/conv/probe_box.py (PROBE_WEIGHT_DESCRIPTOR=1: the box configs with the weight's descriptor too).
#   run:  bash gpu/conv/run_gemm_h200.sh
set -uo pipefail
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
export PYTHONPATH=/tmp/site:$PWD
ONEBYONE=s1.1x1a,s1.1x1b,s2.1x1a,s2.1x1b,s2.down/2,s3.1x1a,s3.1x1b,s3.down/2,s4.1x1a,s4.1x1b,s4.down/2
for i in 0 1 2 3; do
  (TRITONIFY_CONV_CONFIG_SHARD=$i/4 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1 TRITONIFY_TEST_DEVICE=cuda timeout 150 \
     python3 -m pytest -q -p no:cacheprovider -o addopts="" -rf tests/templates/kernel_checks.py \
     -k "conv2d_every_autotune_config and gemm" > "$OUT/checks_gemm_$i.log" 2>&1; echo "rc=$?" >> "$OUT/checks_gemm_$i.log") &
done
CONV_SHAPES=$ONEBYONE CONV_PRECOMPILE_KINDS=gemm,fwd timeout 150 python3 gpu/conv/bench.py "$OUT" --precompile-only --workers 10 > "$OUT/precompile.log" 2>&1
wait
for f in "$OUT"/checks_gemm_*.log; do echo "$f: $(tail -n 2 "$f" | tr '\n' ' ')"; done
CONV_SHAPES=$ONEBYONE timeout ${PROBE_S:-200} python3 gpu/conv/probe_gemm.py "$OUT" > "$OUT/probe_gemm.log" 2>&1; echo "probe_gemm rc=$?"
PROBE_WEIGHT_DESCRIPTOR=1 PROBE_BATCHES=32,128 PROBE_LAUNCHES=3 CONV_SHAPES=s1.3x3,s2.3x3,s3.3x3,s4.3x3,s3.3x3/2,s4.3x3/2 \
  timeout ${BOX_S:-120} python3 gpu/conv/probe_box.py "$OUT" > "$OUT/probe_box.log" 2>&1; echo "probe_box rc=$?"
python3 - "$OUT" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1] + "/probe_gemm.jsonl")]
best = collections.defaultdict(dict)
for r in rows:
    k = (r["layer"], r["batch"])
    if r["what"] == "gemm":
        if "us" in r and not r.get("wrong"):
            if "gemm" not in best[k] or r["us"] < best[k]["gemm"][0]:
                best[k]["gemm"] = (r["us"], r["config"][:90])
        if r.get("wrong") or r.get("error"):
            print("WRONG/ERR", k, r.get("config"), r.get("max_rel_err"), r.get("launches_differ"), r.get("error"))
    else:
        best[k][r["what"]] = (r.get("us"),)
for k, v in best.items():
    print(k, {w: t for w, t in v.items()})
PY
grep -h '"kind": "probe_box"' "$OUT/probe_box.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(r['layer'], r['batch'], r['config'][:70], 'err', round(r.get('max_rel_err') or -1,4), round(r.get('max_rel_err_2') or -1,4), 'differ', r.get('launches_differ'), 'us', r.get('us'), r.get('error','')[:80])"
