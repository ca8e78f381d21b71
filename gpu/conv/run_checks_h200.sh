#!/usr/bin/env bash
# The conv2d checks on the H200 in one device call, every group at once as the 11:45Z run (which saw a non-finite
# dweight) ran them beside other work on the GPU: every config's float64 checks (6 shards: configs), the Gluon box
# kernels' (4 shards, autotuning as users run it: box), the other conv2d checks (other) and forward + dgrad + wgrad
# over the cases (fwd_bwd); CHECK_GROUPS picks (default all four). STREAMS=1 first: whether a side stream's copy waits
# for a sleeping default stream here, and the autotune timing's test with its stream drain taken out and in.
# PROBE_DZ=seconds: gpu/conv/probe_dz.py after. The logs come back as checks.tgz beside a summary.
#     run:  bash gpu/conv/run_checks_h200.sh      (CHECK_GROUPS, CONFIG_SHARDS, FWD_BWD_SHARDS, CHECK_S, STREAMS, PROBE_DZ, PROBE_DZ_ARGS)
set -uo pipefail
OUT=${OUT:-/tmp/conv}; LOGS=/tmp/conv_logs; mkdir -p "$OUT" "$LOGS"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --upgrade --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
GROUPS_=${CHECK_GROUPS:-configs,box,other,fwd_bwd}
if [ -n "${STREAMS:-}" ]; then
  python3 - <<'PY'
import torch
flag, first = torch.zeros(1, device="cuda"), torch.zeros(1, device="cuda")
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
torch.cuda.synchronize()
start.record(); torch.cuda._sleep(400_000_000); end.record(); flag.fill_(1.0)
side = torch.cuda.Stream()
with torch.cuda.stream(side):
    first.copy_(flag)
torch.cuda.synchronize()
print(f"streams: sleep {start.elapsed_time(end):.1f} ms on the default stream; the side stream's copy saw {first.item()}"
      " (0: it ran during the sleep, 1: it waited)")
PY
  RACE=test_conv2d_autotune_timing_sees_the_work_queued_before_it
  rm -rf /tmp/site_nofix && cp -r /tmp/site /tmp/site_nofix
  sed -i '/^    torch.cuda.current_stream().synchronize()$/d' /tmp/site_nofix/tritonify/kernels/templates/conv2d.py
  for site in site_nofix site; do
    PYTHONPATH=/tmp/$site:$PWD TRITONIFY_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider -o addopts="" \
      -rf tests/templates/kernel_checks.py -k $RACE > "$LOGS/race_$site.log" 2>&1
    echo "race test on $site: rc=$? $(tail -n 1 "$LOGS/race_$site.log")"
  done
fi
export PYTHONPATH=/tmp/site:$PWD
checks() {  # log name, -k expression, extra environment
  env $3 TRITONIFY_TEST_DEVICE=cuda TRITONIFY_COMPILE_BACKEND=aot_eager timeout ${CHECK_S:-420} \
    python3 -m pytest -q -p no:cacheprovider -p tests.templates.check_shards -o addopts="" -rf \
    tests/templates/kernel_checks.py -k "$2" > "$LOGS/$1.log" 2>&1
  echo "rc=$?" >> "$LOGS/$1.log"
}
for group in ${GROUPS_//,/ }; do
  case $group in
    configs) for i in 0 1 2 3 4 5; do
               [ -z "${CONFIG_SHARDS:-}" ] || [[ ",$CONFIG_SHARDS," == *",$i,"* ]] || continue
               checks "checks_configs_$i" "conv2d_every_autotune_config" \
                 "TRITONIFY_CONV_CONFIG_SHARD=$i/6 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1" &
             done ;;
    box) for i in 0 1 2 3; do checks "checks_box_$i" "box_kernel or box_candidates" "TRITONIFY_CHECK_SHARD=$i/4" & done ;;
    other) checks checks_other "conv2d and not conv2d_every_autotune_config and not conv2d_forward_dgrad_wgrad and not box_kernel and not box_candidates" \
             "TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1" & ;;  # as the earlier runs: the configs group checks every config
    fwd_bwd) for i in ${FWD_BWD_SHARDS:-0 1 2}; do checks "checks_fwd_bwd_$i" "conv2d_forward_dgrad_wgrad" "TRITONIFY_CHECK_SHARD=$i/3" & done ;;
  esac
done
wait
for f in "$LOGS"/checks_*.log; do echo "$(basename "$f"): $(tail -n 2 "$f" | tr '\n' ' ')"; done
grep -h "^FAILED\|Error" "$LOGS"/checks_*.log | head -20
if [ -n "${PROBE_DZ:-}" ]; then
  timeout ${PROBE_DZ} python3 gpu/conv/probe_dz.py "$LOGS" ${PROBE_DZ_ARGS:-} > "$LOGS/probe_dz.log" 2>&1
  echo "probe_dz rc=$?"; grep '^{' "$LOGS/probe_dz.log"
fi
tar -czf "$OUT/checks.tgz" -C "$LOGS" .
