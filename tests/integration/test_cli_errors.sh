#!/bin/bash
# CLI contract: usage errors exit 2, runtime errors exit 1 with a message
# naming the problem, --help/--version exit 0. The usage part needs no root;
# the runtime part (real pids, output dirs) runs only as root.
. "$(dirname "$0")/lib.sh"
ep_init

# expect_rc WANT DESCRIPTION ARGS...: run ebpf-prof, check its exit code.
expect_rc()
{
	local want=$1 what=$2
	shift 2
	ep_prof_run 30 "$@"
	[ "$PROF_RC" -eq "$want" ] ||
		ep_fail "$what: 'ebpf-prof $*' exited $PROF_RC, want $want (stderr: $(head -c 300 "$PROF_ERR"))"
}

expect_rc 0 "--help" --help
grep -q -- '--pid' "$PROF_OUT" || ep_fail "--help output does not mention --pid"
grep -q -- "--force" "$PROF_OUT" || ep_fail "--help output does not mention --force"
grep -q -- '--freq\|-F' "$PROF_OUT" || ep_fail "--help output does not mention -F/--freq"
expect_rc 0 "--version" --version
grep -Eq '[0-9]+\.[0-9]+\.[0-9]+' "$PROF_OUT" || ep_fail "--version prints no x.y.z version: $(head -c 200 "$PROF_OUT")"

# Usage errors: each must be caught by the parser (exit 2) and say something.
expect_rc 2 "unknown option" --no-such-option --pid 1
expect_rc 2 "-F 0" --pid 1 -F 0
expect_rc 2 "-F not a number" --pid 1 -F abc
expect_rc 2 "-F negative" --pid 1 -F -5
expect_rc 2 "-F without value" --pid 1 -F
expect_rc 2 "--pid not a number" --pid abc
expect_rc 2 "--pid empty list item" --pid 1,,2
expect_rc 2 "nothing to profile"
expect_rc 2 "--pid and a command" --pid 1 -- /bin/true
expect_rc 2 "-d not a number" --pid 1 -d soon
[ -s "$PROF_ERR" ] || ep_fail "usage error printed nothing on stderr"
# Only "-- COMMAND" launches: a word that is not a subcommand is a usage
# error, never a program run under the profiler ("diff" used to run
# /usr/bin/diff).
expect_rc 2 "mistyped subcommand" dif a b
grep -q "'dif' is not a command" "$PROF_ERR" || ep_fail "dif: $(head -c 300 "$PROF_ERR")"
expect_rc 2 "a program without --" -F 99 /bin/true
grep -q -- "goes after --" "$PROF_ERR" || ep_fail "no --: $(head -c 300 "$PROF_ERR")"
expect_rc 2 "diff with one directory" diff only-one
expect_rc 2 "diff with a bad --threshold" diff --threshold -3 a b
# py:NAME: the forms Python prints are the only ones taken.
for bad in 'py:a-b' 'py:StandIn.' 'py::run' 'py:mod:' 'py:a:b:c' 'py:f.<locals>'; do
	expect_rc 2 "--cycle $bad" --pid 1 --cycle "$bad"
	grep -qF -- "--cycle '$bad': " "$PROF_ERR" || ep_fail "--cycle $bad: no reason naming it: $(head -c 300 "$PROF_ERR")"
done
expect_rc 0 "diff --help" diff --help
grep -q "Exit status: 0 no regression, 3 regressions" "$PROF_OUT" || ep_fail "diff --help: $(head -c 300 "$PROF_OUT")"
expect_rc 1 "diff of directories without report.json" diff "$EP_WORK" "$EP_WORK" --json --no-html
grep -q "no report.json" "$PROF_ERR" || ep_fail "diff without report.json: $(head -c 300 "$PROF_ERR")"
[ ! -s "$PROF_OUT" ] || ep_fail "diff printed a document on error: $(head -c 300 "$PROF_OUT")"

if ! ep_is_root; then
	ep_log "ok (usage part only; runtime checks need root)"
	exit 0
fi
ep_require_root

# A pid in the valid range that names no process: a runtime error.
FREE_PID=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -e "/proc/$FREE_PID" ]; do FREE_PID=$((FREE_PID - 1)); done
expect_rc 1 "nonexistent pid $FREE_PID" --pid "$FREE_PID" -d 1 -o "$EP_WORK/nopid"
grep -qi 'no such process' "$PROF_ERR" || ep_fail "--pid $FREE_PID: stderr lacks 'no such process': $(head -c 300 "$PROF_ERR")"
[ ! -e "$EP_WORK/nopid/report.json" ] || ep_fail "--pid $FREE_PID still wrote a report"

# Output dir that is a symlink: refuse, name it, write nothing through it
# (root writing through an attacker-planted link is the hazard).
ep_start_target cpu_tree 120
mkdir "$EP_WORK/real"
ln -s "$EP_WORK/real" "$EP_WORK/link"
expect_rc 1 "-o symlink to a dir" --pid "$TARGET_PID" -d 1 -o "$EP_WORK/link"
grep -qF "$EP_WORK/link" "$PROF_ERR" || ep_fail "-o symlink: error does not name $EP_WORK/link: $(head -c 300 "$PROF_ERR")"
[ -z "$(ls -A "$EP_WORK/real")" ] || ep_fail "-o symlink: files were written through the link: $(ls -A "$EP_WORK/real")"

# Dangling symlink: must not create the directory it points to.
ln -s "$EP_WORK/not-there" "$EP_WORK/dangling"
expect_rc 1 "-o dangling symlink" --pid "$TARGET_PID" -d 1 -o "$EP_WORK/dangling"
[ ! -e "$EP_WORK/not-there" ] || ep_fail "-o dangling symlink: created $EP_WORK/not-there through the link"

# A symlinked output *file* inside a real output dir: not followed either.
# A directory that is not empty is refused without --force; with it, the
# planted link is replaced, never written through.
mkdir "$EP_WORK/out-planted"
ln -s "$EP_WORK/victim" "$EP_WORK/out-planted/report.json"
expect_rc 1 "-o a directory that is not empty" --pid "$TARGET_PID" -d 1 -o "$EP_WORK/out-planted"
grep -q "exists and is not empty.*--force" "$PROF_ERR" || ep_fail "-o not empty: $(head -c 300 "$PROF_ERR")"
ep_prof_run 30 --pid "$TARGET_PID" -d 1 -o "$EP_WORK/out-planted" --force
[ "$PROF_RC" -eq 0 ] || ep_fail "--force into $EP_WORK/out-planted: exit $PROF_RC: $(tail -n 3 "$PROF_ERR")"
[ ! -e "$EP_WORK/victim" ] || ep_fail "a planted report.json symlink was followed (exit $PROF_RC)"
[ -f "$EP_WORK/out-planted/report.json" ] && [ ! -L "$EP_WORK/out-planted/report.json" ] ||
	ep_fail "--force: report.json is not a regular file in place of the link"
# The contract's own example: a pid above pid_max is also "no such process"
# (exit 1), not a usage error: the user gave a well-formed number.
expect_rc 1 "nonexistent pid 999999999" --pid 999999999 -d 1 -o "$EP_WORK/nopid2"
grep -qi 'no such process' "$PROF_ERR" || ep_fail "--pid 999999999: stderr lacks 'no such process': $(head -c 300 "$PROF_ERR")"
# Root without CAP_BPF (a container, capsh --drop): a permission message
# naming the capability, not "rerun with -v for the verifier log"
# Dropped from the bounding set, root's exec loses it.
if command -v setpriv >/dev/null; then
	EP_PROF_WRAP="setpriv --bounding-set -bpf,-sys_admin" \
		expect_rc 1 "root without CAP_BPF" --pid "$TARGET_PID" -d 1 -o "$EP_WORK/nocap"
	grep -q "permission denied: running as root but without CAP_BPF" "$PROF_ERR" ||
		ep_fail "root without CAP_BPF: $(head -c 300 "$PROF_ERR")"
	! grep -q "verifier log" "$PROF_ERR" || ep_fail "root without CAP_BPF: verifier hint: $(head -c 300 "$PROF_ERR")"
	[ ! -e "$EP_WORK/nocap" ] || ep_fail "root without CAP_BPF created its output directory"
fi

# A kernel thread has no user space: a usage error naming it, not a run
# that ends with "0 samples" and no reason.
KT=$(ps -eo pid=,comm= | awk '$2 == "kthreadd" { print $1; exit }')
if [ -n "$KT" ]; then
	expect_rc 2 "kernel thread $KT" --pid "$KT" -d 1 -o "$EP_WORK/kthread"
	grep -q "$KT (kthreadd) is a kernel thread" "$PROF_ERR" ||
		ep_fail "--pid $KT: $(head -c 300 "$PROF_ERR")"
	[ ! -e "$EP_WORK/kthread" ] || ep_fail "--pid $KT created its output directory"
else
	ep_log "no kthreadd in this pid namespace: kernel-thread check not run"
fi
ep_log "ok"
