#!/bin/bash
# OOM kill of a traced process: tests/targets/oom_hog allocates in 4 MiB
# steps inside a memory cgroup limited to LIMIT_MIB (no swap), profiled in
# launch mode. report.json must carry the oom/mark_victim event for that pid
# (comm, RSS fields consistent with the limit) and target.exit_status 137
# (SIGKILL).
#
# The launched command is a shell that moves itself into the cgroup and then
# execs the target, so the target is limited from its first page and keeps
# the pid ebpf-prof launched. cgroup v2 is used when its memory controller is
# available, else the v1 memory hierarchy; neither: skip (77). Under CI=true a
# memory controller that is present but unusable is a failure, not a skip.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

LIMIT_MIB=64
CG=
CG_KIND=

skip_or_fail()
{
	if [ "${CI:-}" = true ] && [ -n "$CG_KIND" ]; then
		ep_fail "cgroup $CG_KIND memory controller present but $* (CI=true: not skipping)"
	fi
	echo "SKIP: $*"
	exit 77
}

# The cgroup goes even when the test fails; the killed target is reaped by
# ebpf-prof before this runs, but its memory may take a moment to uncharge.
cleanup_cg()
{
	local rc=$? i
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		for ((i = 0; i < 50; i++)); do
			rmdir "$CG" 2>/dev/null && break
			sleep 0.1
		done
		[ -d "$CG" ] && echo "[$EP_TEST_NAME] could not remove $CG" >&2
	fi
	(exit "$rc")
	ep_cleanup
}
trap cleanup_cg EXIT

# Where a v2 hierarchy with the memory controller is mounted, if any.
v2_root=
while read -r _ mnt type _; do
	if [ "$type" = cgroup2 ] && grep -qw memory "$mnt/cgroup.controllers" 2>/dev/null; then
		v2_root=$mnt
		break
	fi
done </proc/mounts
if [ -n "$v2_root" ]; then
	CG_KIND=v2
	grep -qw memory "$v2_root/cgroup.subtree_control" ||
		echo +memory >"$v2_root/cgroup.subtree_control" 2>/dev/null ||
		skip_or_fail "cannot enable it in $v2_root/cgroup.subtree_control"
	CG="$v2_root/ep-oom-test-$$"
	mkdir "$CG" || { CG=; skip_or_fail "cannot create a cgroup under $v2_root"; }
	echo $((LIMIT_MIB << 20)) >"$CG/memory.max" || skip_or_fail "cannot set memory.max"
	# No swap: the hog must hit the limit, not page out.
	[ -e "$CG/memory.swap.max" ] && { echo 0 >"$CG/memory.swap.max" || skip_or_fail "cannot set memory.swap.max"; }
else
	v1_root=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	[ -n "$v1_root" ] || skip_or_fail "no cgroup memory controller (neither v2 nor v1)"
	CG_KIND=v1
	CG="$v1_root/ep-oom-test-$$"
	mkdir "$CG" || { CG=; skip_or_fail "cannot create a cgroup under $v1_root"; }
	echo $((LIMIT_MIB << 20)) >"$CG/memory.limit_in_bytes" || skip_or_fail "cannot set memory.limit_in_bytes"
	# With swap accounting the memory+swap limit must be set too (after
	# the memory limit: it may never be below it).
	if [ -e "$CG/memory.memsw.limit_in_bytes" ]; then
		echo $((LIMIT_MIB << 20)) >"$CG/memory.memsw.limit_in_bytes" ||
			skip_or_fail "cannot set memory.memsw.limit_in_bytes"
	fi
fi
ep_log "cgroup $CG_KIND: $CG, limit ${LIMIT_MIB} MiB"

OUT="$EP_WORK/out"
HOG_OUT="$EP_WORK/hog.out"
# Not ep_prof_run: it reads 137 as a timeout kill, and 137 is this test's
# expected status (ebpf-prof itself exits 0 here; the target's status is in
# the report). A real timeout is told apart by the elapsed time.
t0=$(ep_now_ms)
PROF_RC=0
timeout -k 5 60 "$EP_BIN" -o "$OUT" -- /bin/sh -c 'echo $$ >"$1/cgroup.procs" || exit 99; out=$2; shift 2; exec "$@" >"$out"' \
	sh "$CG" "$HOG_OUT" "$EP_TARGETS_DIR/oom_hog" $((16 * LIMIT_MIB)) \
	>"$EP_WORK/prof.out" 2>"$EP_WORK/prof.err" </dev/null || PROF_RC=$?
elapsed=$(($(ep_now_ms) - t0))
[ "$elapsed" -lt 55000 ] || ep_fail "ebpf-prof did not finish within 60 s (stderr: $(tail -n 5 "$EP_WORK/prof.err"))"
[ "$PROF_RC" -eq 0 ] || ep_fail "ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$EP_WORK/prof.err"))"
grep -q '^ready ' "$HOG_OUT" || ep_fail "oom_hog did not start (its output: $(head -c 300 "$HOG_OUT"))"
grep -q '^not killed' "$HOG_OUT" && ep_fail "oom_hog was not killed: the cgroup limit did not apply"
grep -q 'OOM-killed' "$EP_WORK/prof.err" || ep_fail "no OOM warning on stderr: $(tail -n 5 "$EP_WORK/prof.err")"
ep_check_outputs "$OUT"

HOG_OUT="$HOG_OUT" LIMIT_MIB=$LIMIT_MIB ep_py "$OUT" <<'PY'
out = open(os.environ["HOG_OUT"]).read()
limit_kb = int(os.environ["LIMIT_MIB"]) * 1024
hog_pid = int(re.search(r"^ready (\d+)$", out, re.M).group(1))
# The last step the hog finished: what it had touched when it was killed
# (the step in progress is partly charged too).
steps = [int(x) for x in re.findall(r"^touched_mib (\d+)$", out, re.M)]
touched_kb = (steps[-1] if steps else 0) * 1024
t = R["target"]
check(t["pids"] == [hog_pid], "target pids %r, hog printed pid %d (launch mode keeps the pid across exec)" % (t["pids"], hog_pid))
check(t.get("exit_status") == 137, "target.exit_status %r, want 137 (SIGKILL)" % t.get("exit_status"))
m = R.get("memory")
if not check(isinstance(m, dict), "report.memory missing"):
    sys.exit(1)
check(m["sources"]["oom"] == "oom/mark_victim", "memory.sources.oom %r" % m["sources"]["oom"])
k = [o for o in m["oom_kills"] if o["pid"] == hog_pid]
if check(len(k) == 1, "oom_kills for pid %d: %r (all: %r)" % (hog_pid, k, m["oom_kills"])):
    o = k[0]
    for f in ("t_s", "pid", "comm", "total_vm_kb", "anon_rss_kb", "file_rss_kb", "shmem_rss_kb"):
        check(f in o, "oom_kills entry lacks %s: %r" % (f, o))
    check(o["comm"] == "oom_hog", "comm %r, want oom_hog (the name after exec)" % o["comm"])
    # Anonymous RSS at the kill: at least what the hog had finished touching
    # minus its binary and libc pages, and never above the limit (all of it
    # charged to the cgroup).
    check(touched_kb - 8 * 1024 <= o["anon_rss_kb"] <= limit_kb,
          "anon_rss_kb %r vs %d KiB touched, limit %d KiB" % (o["anon_rss_kb"], touched_kb, limit_kb))
    check(o["total_vm_kb"] >= o["anon_rss_kb"], "total_vm_kb %r < anon_rss_kb %r" % (o["total_vm_kb"], o["anon_rss_kb"]))
    check(0 <= o["t_s"] <= R["time"]["duration_ns"] / 1e9 + 1, "t_s %r outside the run of %r ns" % (o["t_s"], R["time"]["duration_ns"]))
check(m["oom_kills_dropped"] == 0, "oom_kills_dropped %r" % m["oom_kills_dropped"])
PY
ep_log "ok"
