#!/bin/bash
# Node.js (/usr/bin/node) on its own and with V8's perf map:
#  1. node's native frames are named (its executable or libnode: V8, libuv,
#     zlib), where they used to print as [unknown] node+0x... (non-PIE
#     executable whose segments are not contiguous in memory, and V8's copy
#     of its builtins), and the summary says how to get JS names;
#  2. with --perf-basic-prof, JS functions are named from /tmp/perf-PID.map.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
NODE=${EP_NODE:-/usr/bin/node}
if [ ! -x "$NODE" ]; then
	[ "${CI:-}" = true ] && ep_fail "$NODE missing (tools/install-deps.sh installs nodejs)"
	echo "SKIP: no $NODE"
	exit 77
fi

cat >"$EP_WORK/loop.js" <<'JS'
const fs = require('fs'), zlib = require('zlib');
function epJitInnerLoop(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i & 7); return s; }
function epJitOuterDriver() { let t = 0; for (let k = 0; k < 40; k++) t += epJitInnerLoop(20000); return t; }
const buf = Buffer.alloc(1 << 16, 'x');
const file = process.argv[2];
let pending = 0;
console.log('ready ' + process.pid);
// Native work on libuv's thread pool (zlib, fs) beside the JS hot loop.
function tick() {
	epJitOuterDriver();
	if (pending < 2) {
		pending += 2;
		zlib.deflate(buf, () => { pending--; });
		fs.writeFile(file, buf, () => { pending--; });
	}
	setImmediate(tick);
}
tick();
JS

# start_node NAME ARGS...: sets NODE_PID once it printed "ready PID".
start_node()
{
	local name=$1
	shift
	"$NODE" "$@" "$EP_WORK/loop.js" "$EP_WORK/$name.data" >"$EP_WORK/$name.out" 2>"$EP_WORK/$name.err" </dev/null &
	NODE_PID=$!
	EP_PIDS+=("$NODE_PID")
	ep_wait_line "$EP_WORK/$name.out" '^ready [0-9]+$' 20 "$NODE_PID" || ep_fail "node ($name) did not start"
	ep_wait_cpu "$NODE_PID" 0.3 20
}

# 1. No perf map.
start_node plain
rm -f "/tmp/perf-$NODE_PID.map"
OUT="$EP_WORK/plain"
ep_prof_run 60 --pid "$NODE_PID" -F 499 -d 3 --probes none -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_stop_pid "$NODE_PID"
ep_check_outputs "$OUT"
SUMMARY="$PROF_OUT" ep_py "$OUT" <<'PY'
import subprocess
def node_file(f):
    b = os.path.basename(f or "")
    return b == "node" or b.startswith("libnode.so")
frames = S["shared"]["frames"]
files = sorted({f.get("file") for f in frames if node_file(f.get("file"))})
check(files, "no frame from node's executable or libnode")
# Samples (all threads) and, of them, samples with an unnamed frame in node's code.
tot = native = unk = 0
for p in S["profiles"]:
    for st, w in zip(p["samples"], p["weights"]):
        fr = [frames[i] for i in st]
        tot += 1
        if any(node_file(f.get("file")) for f in fr):
            native += 1
            if any(node_file(f.get("file")) and f["name"].startswith("[unknown]") for f in fr):
                unk += 1
info("%d samples, %d with node frames, %d of them with an unnamed node frame (%s)" % (tot, native, unk, files))
check(native >= 50, "only %d samples with node frames" % native)
# Every stack runs through node's main loop or thread entry: names prove it.
names = {f["name"] for f in frames if node_file(f.get("file"))}
for want in ("uv_run", "node::Start(int, char**)"):
    check(want in names, "%s not among node's frame names" % want)
check(any(n.startswith("v8::internal::") for n in names), "no v8::internal:: frame named")
check(any(n.startswith("Builtins_") for n in names), "no V8 builtin (Builtins_*) named")
# The file must have symbols for "all named" to be expected.
has_symtab = all(b" .symtab" in subprocess.run(["readelf", "-SW", f], capture_output=True).stdout for f in files)
if has_symtab:
    check(unk <= 0.01 * native, "%d of %d samples with node frames have an unnamed one" % (unk, native))
else:
    info("node's code has no .symtab here: the unnamed share is not asserted")
summary = open(os.environ["SUMMARY"], errors="replace").read()
check("--perf-basic-prof" in summary and "hint:" in summary, "the summary does not say how to get JS names")
PY

# 2. --perf-basic-prof: the JS functions are named. Without inlining, so
# that the hot functions keep frames of their own (TurboFan may otherwise
# fold them into node's processImmediate, named too, but not ours).
start_node jit --perf-basic-prof --no-turbo-inlining --no-maglev-inlining
OUT="$EP_WORK/jit"
ep_prof_run 60 --pid "$NODE_PID" -F 499 -d 3 --probes none -o "$OUT"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
ep_stop_pid "$NODE_PID"
rm -f "/tmp/perf-$NODE_PID.map"
ep_check_outputs "$OUT"
SUMMARY="$PROF_OUT" ep_py "$OUT" <<'PY'
tot = folded_total()
js = folded_total(lambda fr: any(re.match(r"JS:[*~^+]?epJit(Outer|Inner)", f) for f in fr))
info("%d of %d samples in a named JS function epJit*" % (js, tot))
# The hot loop is most of the process's CPU time (the rest: zlib, fs, GC, compiler).
check(tot >= 100 and js >= 0.4 * tot, "only %d of %d samples name epJitOuterDriver/epJitInnerLoop" % (js, tot))
files = {f.get("file") for f in S["shared"]["frames"] if f["name"].startswith("JS:")}
check(files == {"[perf-map]"}, "JS frames come from %r, want the perf map" % files)
summary = open(os.environ["SUMMARY"], errors="replace").read()
check("--perf-basic-prof" not in summary, "the summary gives the perf map hint although a map was read")
PY
ep_log "ok"
