#!/bin/bash
# llama preset against the real llama.cpp shared libraries from the npm
# package @node-llama-cpp/linux-x64 (fetched once into the build directory,
# or taken from EP_LLAMA_LIB_DIR; see llama_lib.sh), without a model: the
# target computes ggml graphs and calls llama_model_load_from_file on a
# missing file. test_probes_llama_model.sh runs a real (generated) model.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

. "$(dirname "$0")/llama_lib.sh"
DIR=$LLAMA_DIR

ep_start_target llama_real "$DIR"
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out" --no-gpu
ep_wait_attached "$PROF_PID" 20
ep_wait_line "$PROF_ERR" "sampling " 20 "$PROF_PID" || ep_fail "ebpf-prof did not start"
grep -q "probes: pid $TARGET_PID: llama" "$PROF_ERR" && ep_fail "llama probed before any llama library was mapped"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^loaded$' 20 "$TARGET_PID" || ep_fail "target could not load the libraries"
# Late loading: libllama and the per-ISA CPU backend appear after attach.
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: ggml_graph_compute in .*libggml-cpu-x64.so" 10 "$PROF_PID" ||
	ep_fail "ggml_graph_compute not probed in the CPU variant"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: llama_model_load_from_file in .*libllama.v0.5.0.so" 10 "$PROF_PID" ||
	ep_fail "llama_model_load_from_file not probed"
kill -USR1 "$TARGET_PID"
ep_wait_exit "$PROF_PID" 60 || ep_fail "ebpf-prof did not stop"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC"
grep -qx "bad 0" "$TARGET_OUT" || ep_fail "target run failed: $(cat "$TARGET_OUT")"
ep_check_outputs "$EP_WORK/out"
ep_py "$EP_WORK/out" <<'PY'
P = {}
for p in R["probes"]["list"]:
    P.setdefault(p["symbol"], []).append(p)
g = P.get("ggml_graph_compute", [])
if check(len(g) == 1, "ggml_graph_compute probes %r" % g):
    check(g[0]["library"].endswith("libggml-cpu-x64.so"), "library %r" % g[0]["library"])
    check(g[0]["count"] == 20 and g[0]["errors"] == 0, "graph compute %r" % g[0])
    check(g[0]["group"] == "llama", "group %r" % g[0]["group"])
m = P.get("llama_model_load_from_file", [])
if check(len(m) == 1, "llama_model_load_from_file probes %r" % m):
    check(m[0]["count"] == 4 and m[0]["errors"] == 4, "model load: NULL returns are errors: %r" % m[0])
for s in ("llama_decode", "llama_tokenize", "llama_sampler_sample"):
    check(s in P and P[s][0]["count"] == 0, "%s attached but not called: %r" % (s, P.get(s)))
check("tokens" not in R["probes"], "tokens reported without a sampler call")
check(R["probes"]["dropped"]["total"] == 0, "drops %r" % R["probes"]["dropped"])
PY
echo "PASS: test_probes_llama"
