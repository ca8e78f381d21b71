#!/usr/bin/env bash
# One device call after the autotune timing's stream fix (kernels/templates/conv2d.py, _autotune_bench): the fix's
# own test with the fix taken out (it must fail) and in (it must pass), gpu/conv/diag_box_backward.py both ways; then every conv2d check at once, as the
# 11:45Z run that saw the non-finite dweight ran them beside other work on the GPU: every config's float64 checks
# (6 shards), the Gluon box kernels' (4 shards, autotuning as users run it), the other conv2d checks and forward +
# dgrad + wgrad over the cases; then, where PROBE_DZ is set, gpu/conv/probe_dz.py.
#     run:  bash gpu/conv/run_checks_h200.sh
set -uo pipefail
OUT=${OUT:-/tmp/conv}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
python3 -m pip install -q --no-index --no-deps --no-build-isolation --target /tmp/site . || exit 4
RACE=test_conv2d_autotune_timing_sees_the_work_queued_before_it
# the fix taken out: a copy of the installed package without the stream drain
rm -rf /tmp/site_nofix && cp -r /tmp/site /tmp/site_nofix
sed -i '/^    torch.cuda.current_stream().synchronize()$/d' /tmp/site_nofix/tritonify/kernels/templates/conv2d.py
grep -c "current_stream().synchronize()" /tmp/site/tritonify/kernels/templates/conv2d.py /tmp/site_nofix/tritonify/kernels/templates/conv2d.py
for site in site_nofix site; do
  PYTHONPATH=/tmp/$site:$PWD TRITONIFY_TEST_DEVICE=cuda timeout 120 python3 -m pytest -q -p no:cacheprovider -o addopts="" \
    -rf tests/templates/kernel_checks.py -k $RACE > "$OUT/race_$site.log" 2>&1
  echo "race test on $site: rc=$? $(tail -n 1 "$OUT/race_$site.log")"
done
for site in site_nofix site; do  # the box checks' backward replayed: the first wgrad of a key against a second one
  PYTHONPATH=/tmp/$site:$PWD CONFIGS=2 timeout 150 python3 gpu/conv/diag_box_backward.py on > "$OUT/diag_box_backward_$site.log" 2>&1
  echo "diag on $site: rc=$? $(grep -c '"same": false' "$OUT/diag_box_backward_$site.log") of $(grep -c '"same"' "$OUT/diag_box_backward_$site.log") wgrads differ from their repeat"
done
export PYTHONPATH=/tmp/site:$PWD
checks() {  # log name, -k expression, extra environment
  env $3 TRITONIFY_TEST_DEVICE=cuda TRITONIFY_COMPILE_BACKEND=aot_eager timeout ${CHECK_S:-420} \
    python3 -m pytest -q -p no:cacheprovider -p tests.templates.check_shards -o addopts="" -rf \
    tests/templates/kernel_checks.py -k "$2" > "$OUT/$1.log" 2>&1
  echo "rc=$?" >> "$OUT/$1.log"
}
for i in 0 1 2 3 4 5; do
  checks "checks_configs_$i" "conv2d_every_autotune_config" "TRITONIFY_CONV_CONFIG_SHARD=$i/6 TRITONIFY_TEMPLATE_CHECKS_ONE_CONFIG=1" &
done
for i in 0 1 2 3; do checks "checks_box_$i" "box_kernel or box_candidates" "TRITONIFY_CHECK_SHARD=$i/4" & done
checks checks_other "conv2d and not conv2d_every_autotune_config and not conv2d_forward_dgrad_wgrad and not box_kernel and not box_candidates" "" &
checks checks_other_fwd_bwd "conv2d_forward_dgrad_wgrad" "" &
wait
for f in "$OUT"/checks_*.log; do echo "$(basename "$f"): $(tail -n 2 "$f" | tr '\n' ' ')"; done
grep -h "^FAILED\|Error" "$OUT"/checks_*.log | head -20
if [ -n "${PROBE_DZ:-}" ]; then
  timeout ${PROBE_DZ} python3 gpu/conv/probe_dz.py "$OUT" > "$OUT/probe_dz.log" 2>&1
  echo "probe_dz rc=$?"; grep '^{' "$OUT/probe_dz.log"
fi
