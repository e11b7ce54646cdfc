#!/bin/bash
# A recording run on a (fake) Jetson: the sysfs sampler runs beside the CPU
# sampler, report.json gets a gpu section, trace.json the counter tracks, and
# the GPU throttling signals reach the throttling detector. Off a Jetson the
# module stays off and writes nothing.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
FX="$EP_SHARED_DIR/fixtures/jetson"

# Throttled AGX Orin: GPU 99.2 % busy at 612 of 1300.5 MHz, gpu-thermal over
# its 99 C passive trip, gpu-throttle-alert raised (fixtures README).
OUT="$EP_WORK/throttled"
ep_prof_run 60 -F 99 --gpu-interval 20 --sysfs-root "$FX/jp6-agx-orin-throttled" -o "$OUT" \
  -- "$EP_TARGETS_DIR/cpu_tree" 1
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
g = R.get("gpu")
if check(g is not None, "report.json has no gpu section"):
    # 1 s at 20 ms: dozens of samples; >= 10 leaves room for a loaded machine.
    check(g["samples"] >= 10, "gpu.samples %r, want >= 10" % g["samples"])
    load = g["metrics"].get("gpu_load_pct") or {}
    check(abs(load.get("mean", -1) - 99.2) < 1e-6, "gpu load mean %r, want 99.2" % load)
    check(g["energy_j"] is not None and g["energy_j"] > 0, "energy_j %r" % g["energy_j"])
th = R.get("throttling") or {}
check(th.get("verdict") == "throttled", "throttling.verdict %r, want throttled" % th.get("verdict"))
check("jetson" in th.get("inputs", []), "jetson not among throttling inputs %r" % th.get("inputs"))
srcs = {s for e in th.get("episodes", []) for s in e.get("sources", [])}
check("jetson:gpu" in srcs, "GPU busy-below-max signal missing from episode sources %r" % sorted(srcs))
check("jetson:gpu-throttle-alert" in srcs, "gpu-throttle-alert missing from %r" % sorted(srcs))
T = load_json("trace.json")
names = {e.get("name") for e in T["traceEvents"] if e.get("ph") == "C"}
check("GPU load %" in names, "trace.json lacks the GPU load counter track: %r" % sorted(names)[:20])
PY

# Same board, healthy: the GPU data is there, nothing is throttled.
OUT="$EP_WORK/healthy"
ep_prof_run 60 -F 99 --gpu-interval 20 --sysfs-root "$FX/jp6-agx-orin" -o "$OUT" \
  -- "$EP_TARGETS_DIR/cpu_tree" 1
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC"
ep_py "$OUT" <<'PY'
check(R.get("gpu") is not None, "no gpu section on the healthy Orin")
th = R.get("throttling") or {}
srcs = {s for e in th.get("episodes", []) for s in e.get("sources", [])}
check(not any(s.startswith("jetson:") for s in srcs), "healthy Orin blamed: %r" % sorted(srcs))
PY

# Not a Jetson: no gpu section; --no-gpu likewise on a Jetson tree.
for args in "--sysfs-root $FX/not-a-jetson" "--no-gpu --sysfs-root $FX/jp6-agx-orin"; do
  OUT="$EP_WORK/off.$RANDOM"
  # shellcheck disable=SC2086
  ep_prof_run 60 -F 99 $args -o "$OUT" -- "$EP_TARGETS_DIR/cpu_tree" 1
  [ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof $args exited $PROF_RC"
  ep_py "$OUT" <<'PY'
check("gpu" not in R, "gpu section present although the module should be off")
PY
done
ep_log "PASS"
