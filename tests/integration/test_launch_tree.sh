#!/usr/bin/env bash
# Launch mode follows the whole process tree it starts with the guarantees
# it gives the command itself: every process is held at its fork, its exec
# and its link-map changes until probed, so the program's calls are all
# counted and its SQL statements read however it is started:
#  - through `sh -c '... > log 2>&1'` (dash: vfork + exec), `env X=1`,
#    `bash script.sh` running it as a child (fork + exec, not exec), a
#    launcher that fork+execs (fork_tree run, as npx / uv run) and
#    `python3 -m` of a module that runs it with subprocess: sqlite_counts
#    --now, every count and statement as when launched directly (its own
#    calls known: prepare_v2 2, prepare_v3 1, step 753, reset 500,
#    finalize 3, exec 8), none "prepared before attach";
#  - a child that dlopens a probed library right after its exec
#    (dlopen_late --now through sh -c) or right after a fork without exec
#    (fork_tree dlopen): every call from the first;
#  - a child forked without exec that calls into a library its parent had
#    mapped and probed (fork_tree calls): its calls too (per-pid uprobes
#    do not follow a fork);
#  - a statically linked program exec'd through sh -c (no ld.so, so no
#    link-map hold: held at its exec): every call of its own function.
# Before, through sh -c: 0 of the 12 prepares of a Python experiment, its
# statements "(prepared before attach: text unknown)".
# Needs root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
T=$EP_TARGETS_DIR
out="$EP_WORK/out"
N=40

sqlite_check()
{
	WHAT=$1 ep_py "$out" <<'PY'
what = os.environ["WHAT"]
P = {p["symbol"]: p for p in R["probes"]["list"]}
own = lambda s: P[s]["count"] - P[s]["nested_sql"] if s in P else None
want = {"sqlite3_prepare_v2": 2, "sqlite3_prepare_v3": 1, "sqlite3_step": 753,
        "sqlite3_reset": 500, "sqlite3_finalize": 3, "sqlite3_exec": 8}
for s, n in want.items():
    check(own(s) == n, "%s: %s own calls %r, the program made %d" % (what, s, own(s), n))
SQL = {s["text"]: s for s in R["sql"]["statements"]}
for text, n in (("INSERT INTO t VALUES(?1, ?2)", 500), ("SELECT a, b FROM t WHERE a % 2 = 0", 1),
                ("SELECT count(*) FROM t", 1), ("CREATE TABLE t(a INTEGER, b TEXT)", 1),
                ("UPDATE t SET b = 'x' WHERE a < 10", 7)):
    s = SQL.get(text)
    check(s is not None and s["count"] == n, "%s: statement %r: %r, want %d runs" % (what, text, s, n))
check(not [t for t in SQL if "before attach" in t], "%s: statements without text: %r" % (what, sorted(SQL)))
check(R["probes"]["dropped"]["total"] == 0, "%s: drops %r" % (what, R["probes"]["dropped"]))
PY
}

mkdir -p "$EP_WORK/py"
cat >"$EP_WORK/py/ep_runner.py" <<'PY'
import subprocess, sys
sys.exit(subprocess.call(sys.argv[1:]))
PY
# A child of bash, not exec'd: a command follows it.
# shellcheck disable=SC2016
printf '%s\n' "\"$T/sqlite_counts\" --now > \"$EP_WORK/log\" 2>&1" 'rc=$?' 'exit $rc' >"$EP_WORK/script.sh"

for how in sh env bash launcher python; do
	rm -rf "$out" "$EP_WORK/log"
	case $how in
	sh) cmd=(sh -c "\"$T/sqlite_counts\" --now > \"$EP_WORK/log\" 2>&1") ;;
	env) cmd=(env EP_TEST_X=1 sh -c "\"$T/sqlite_counts\" --now > \"$EP_WORK/log\" 2>&1") ;;
	bash) cmd=(bash "$EP_WORK/script.sh") ;;
	launcher) cmd=("$T/fork_tree" run sh -c "exec \"$T/sqlite_counts\" --now > \"$EP_WORK/log\" 2>&1") ;;
	python) cmd=(env PYTHONPATH="$EP_WORK/py" python3 -m ep_runner sh -c "exec \"$T/sqlite_counts\" --now > \"$EP_WORK/log\" 2>&1") ;;
	esac
	ep_prof_run 60 -F 99 -v -o "$out" --probes sqlite -- "${cmd[@]}"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$how: recording failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	grep -qx "done" "$EP_WORK/log" || ep_fail "$how: the program did not finish: $(tail -n 3 "$EP_WORK/log")"
	grep -q "held until probed at" "$PROF_ERR" || ep_fail "$how: no hold reported: $(grep probes: "$PROF_ERR" | tail -n 3)"
	sqlite_check "$how"
done

for how in sh-dlopen fork-dlopen fork-calls sh-static; do
	rm -rf "$out" "$EP_WORK/log"
	n=$N probe=dlopen_late_lib:late_work sym=late_work
	case $how in
	sh-dlopen) cmd=(sh -c "\"$T/dlopen_late\" \"$T/dlopen_late_lib\" --now $N > \"$EP_WORK/log\" 2>&1") ;;
	fork-dlopen) cmd=("$T/fork_tree" dlopen "$T/dlopen_late_lib" "$N") ;;
	fork-calls) cmd=("$T/fork_tree" calls "$T/dlopen_late_lib" "$N") n=$((2 * N)) ;;
	sh-static) cmd=(sh -c "\"$T/static_calls\" $N > \"$EP_WORK/log\" 2>&1") probe=static_calls:static_work sym=static_work ;;
	esac
	ep_prof_run 60 -F 99 -v -o "$out" --probes none --probe "$probe" -- "${cmd[@]}"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$how: recording failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
	grep -qsx "calls $n" "$PROF_OUT" "$EP_WORK/log" || ep_fail "$how: the program did not make its $n calls: $(cat "$PROF_OUT")"
	HOW=$how N=$n SYM=$sym ep_py "$out" <<'PY'
how, n, sym = os.environ["HOW"], int(os.environ["N"]), os.environ["SYM"]
P = {p["symbol"]: p for p in R["probes"]["list"]}
lw = P.get(sym, {})
check(lw.get("count") == n and lw.get("completed") == n, "%s: %s %r, the program made %d calls" % (how, sym, lw, n))
PY
done
echo "PASS: test_launch_tree"
