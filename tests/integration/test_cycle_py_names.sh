#!/bin/bash
# --cycle py:NAME with the names Python prints (docs/cycles.md, "Naming the
# function"): on a target with two methods named run (DB.run, 3 calls per
# iteration, and StandIn.run, 1), py:StandIn.run gives one cycle per
# StandIn.run call and watches that function only; py:module:Class.method
# and py:module.Class.method the same for the one named; the bare py:run
# takes both, says so in a warning naming them (and in report.json's
# cycles_meta.py_watch.functions), one cycle per call of either. On
# Debian's python3.11 and pyenv CPython 3.8, 3.10 (code objects without a
# qualified name: it comes from the class body's code), 3.12 and 3.13. A
# missing pyenv version: the others run and the test ends as skipped (77);
# a failure under CI=true.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

TARGET="$(cd "$(dirname "$0")" && pwd)/py_samename.py"
N=10

# run_one PY LABEL SPEC EXPECT(StandIn|DB|both)
run_one()
{
	local py=$1 label=$2 spec=$3 expect=$4 tag out own narm=1
	tag=$label.$(echo "$spec" | tr -c 'A-Za-z0-9_\n' _)
	out="$EP_WORK/$tag" own="$EP_WORK/$tag.own"
	[ "$expect" = both ] && narm=2
	TARGET_OUT="$EP_WORK/$tag.target"
	"$py" "$TARGET" $N "$own" >"$TARGET_OUT" 2>"$TARGET_OUT.err" </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 20 "$TARGET_PID" || ep_fail "$tag: target not ready: $(cat "$TARGET_OUT.err")"
	ep_prof_bg -v --pid "$TARGET_PID" -o "$out" --no-gpu --probes none --cycle "py:$spec"
	# Every function the name matches is armed before the first call.
	local t=0
	until [ "$(grep -c "cycles: pid $TARGET_PID: cycle boundary py:$spec: watchpoint on its code object" "$PROF_ERR")" -ge "$narm" ]; do
		t=$((t + 1))
		if [ $t -gt 300 ] || ! kill -0 "$PROF_PID" 2>/dev/null; then
			ep_fail "$tag: $narm function(s) not armed before the first call: $(grep cycles: "$PROF_ERR" | tail -n 3)"
		fi
		sleep 0.1
	done
	kill -USR1 "$TARGET_PID"
	ep_wait_exit "$PROF_PID" 60 || ep_fail "$tag: ebpf-prof did not stop after the target exited"
	[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "$tag: ebpf-prof exited $EP_EXIT_RC ($(tail -n 3 "$PROF_ERR"))"
	grep -qx done "$own" || ep_fail "$tag: target did not finish: $(tail -n 3 "$TARGET_OUT.err")"
	if [ "$expect" = both ]; then
		grep -q "cycles: py:$spec names 2 functions: DB.run (py_samename.py:[0-9]*), StandIn.run (py_samename.py:[0-9]*)\|cycles: py:$spec names 2 functions: StandIn.run (py_samename.py:[0-9]*), DB.run (py_samename.py:[0-9]*)" "$PROF_ERR" ||
			ep_fail "$tag: no warning naming DB.run and StandIn.run: $(grep cycles: "$PROF_ERR" | tail -n 3)"
	elif grep -q "names [0-9]* functions" "$PROF_ERR"; then
		ep_fail "$tag: a warning of several functions for one: $(grep 'names [0-9]* functions' "$PROF_ERR")"
	fi
	OWN="$own" EXPECT=$expect TARGET="$TARGET" ep_py "$out" <<'PY' || exit 1
own = dict(l.split() for l in open(os.environ["OWN"]) if l.strip() != "done")
own = {k: int(v) for k, v in own.items()}
expect = os.environ["EXPECT"]
check(own["StandIn.run"] > 0 and own["DB.run"] == 3 * own["StandIn.run"], "target counts %r" % own)
want = {"StandIn": own["StandIn.run"], "DB": own["DB.run"], "both": own["DB.run"] + own["StandIn.run"]}[expect]
m = R.get("cycles_meta", {})
w = m.get("py_watch") or {}
check(m.get("py_mechanism") == "watchpoint", "mechanism %r" % m.get("py_mechanism"))
C = R.get("cycles", [])
check(len(C) == want and not any(c["partial"] for c in C),
      "%d cycles (%d partial) for %d calls of %s" % (len(C), sum(c["partial"] for c in C), want, expect))
# The functions the name matched, each with its file and its def's line.
defs = {}
for i, l in enumerate(open(os.environ["TARGET"]), 1):
    mm = re.match(r"class (\w+)", l)
    if mm:
        cls = mm.group(1)
    if l.startswith("    def run("):
        defs[cls + ".run"] = i
names = {"StandIn": ["StandIn.run"], "DB": ["DB.run"], "both": ["DB.run", "StandIn.run"]}[expect]
got = sorted((f["name"], os.path.basename(f["file"]), f["line"]) for f in w.get("functions", []))
check(got == [(n, "py_samename.py", defs[n]) for n in names], "functions %r, want %r at %r" % (got, names, defs))
check(w.get("objects") == len(names), "objects watched %r" % w.get("objects"))
PY
	ep_log "ok: $label py:$spec ($expect)"
}

all_forms()
{
	run_one "$1" "$2" StandIn.run StandIn
	run_one "$1" "$2" run both
	run_one "$1" "$2" py_samename:DB.run DB
	run_one "$1" "$2" py_samename.StandIn.run StandIn
}

all_forms /usr/bin/python3.11 debian3.11
n=0
for v in 3.8 3.10 3.12 3.13; do
	ep_pyenv "$v" || continue
	case $v in
	3.8 | 3.10) all_forms "$EP_PY" "pyenv$v" ;;
	*)
		run_one "$EP_PY" "pyenv$v" StandIn.run StandIn
		run_one "$EP_PY" "pyenv$v" run both
		;;
	esac
	n=$((n + 1))
done
ep_log "ok (Debian's 3.11 and $n pyenv versions)"
