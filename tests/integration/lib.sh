# shellcheck shell=bash
# Globals set here (TARGET_PID, PROF_RC, EP_EXIT_RC, ...) are the helpers'
# outputs, read by the sourcing test.
# shellcheck disable=SC2034
# Shared helpers for the integration tests: source it, then call ep_init.
#
# Contract with ctest (tests/CMakeLists.txt): EP_BIN is the ebpf-prof binary,
# EP_TARGETS_DIR holds the tests/targets programs. Exit 77 = skipped.
#
# Everything a test starts goes through ep_start_target / ep_prof_bg /
# ep_prof_run so the EXIT trap can stop it: no test leaves processes behind.
# Waiting is always "poll a condition with a deadline", never a fixed sleep
# that the test relies on to pass.

set -u -o pipefail

EP_TEST_NAME=$(basename "${0:-test}" .sh)
EP_PIDS=()
EP_WORK=""
EP_NCHECK=0
EP_SKIPPED=()

ep_log() { echo "[$EP_TEST_NAME] $*" >&2; }

ep_fail()
{
	echo "FAIL[$EP_TEST_NAME]: $*" >&2
	exit 1
}

# Root is needed for BPF. Outside CI a non-root run is a skip; in CI it is a
# failure, so a misconfigured runner cannot turn the suite green by skipping.
ep_require_root()
{
	if [ "$(id -u)" -ne 0 ]; then
		if [ "${CI:-}" = true ]; then
			echo "FAIL[$EP_TEST_NAME]: needs root to load BPF programs (CI=true, not skipping)" >&2
			exit 1
		fi
		echo "SKIP: needs root"
		exit 77
	fi
	if [ ! -e /sys/kernel/tracing/available_events ] && [ -d /sys/kernel/tracing ]; then
		mount -t tracefs nodev /sys/kernel/tracing ||
			ep_fail "tracefs is not mounted and 'mount -t tracefs nodev /sys/kernel/tracing' failed"
	fi
}

ep_is_root() { [ "$(id -u)" -eq 0 ]; }

# ep_skip_part WHAT: a prerequisite of (part of) this test is missing. Under
# CI=true that is a failure: tools/install-deps.sh installs it, or the
# machine must carry it. Elsewhere the test goes on with what it can check
# and ends as skipped (77, ep_cleanup), naming what it did not check, so a
# run without the prerequisite never reads as a pass.
ep_skip_part()
{
	[ "${CI:-}" = true ] && ep_fail "$* (CI=true: a missing prerequisite is a failure, not a skip)"
	ep_log "SKIP (not checked): $*"
	EP_SKIPPED+=("$*")
}

# ep_need_cmd CMD PACKAGE: the command is there, else ep_skip_part; returns
# 1 when it is missing (outside CI).
ep_need_cmd()
{
	command -v "$1" >/dev/null && return 0
	ep_skip_part "$1 not installed (Debian package $2, tools/install-deps.sh)"
	return 1
}

# ep_pyenv VERSION: sets EP_PY to pyenv's CPython VERSION (3.12: the newest
# 3.12.x under $PYENV_ROOT/versions, default /root/.pyenv; the builds carry
# a shared libpython), else ep_skip_part and returns 1. pyenv's builds are
# not Debian packages: the machine image carries them (tools/install-deps.sh
# says which are missing).
ep_pyenv()
{
	local v=$1 root=${PYENV_ROOT:-/root/.pyenv}
	EP_PY=$(ls -d "$root"/versions/"$v".*/bin/python"$v" 2>/dev/null | tail -n 1)
	[ -n "$EP_PY" ] && [ -x "$EP_PY" ] && return 0
	EP_PY=""
	ep_skip_part "no pyenv CPython $v under $root/versions"
	return 1
}

ep_init()
{
	[ -n "${EP_BIN:-}" ] || ep_fail "EP_BIN is not set (run through ctest, or export EP_BIN=/path/to/ebpf-prof)"
	[ -x "$EP_BIN" ] || ep_fail "EP_BIN=$EP_BIN is not an executable"
	[ -n "${EP_TARGETS_DIR:-}" ] || ep_fail "EP_TARGETS_DIR is not set"
	[ -d "$EP_TARGETS_DIR" ] || ep_fail "EP_TARGETS_DIR=$EP_TARGETS_DIR is not a directory"
	command -v python3 >/dev/null || ep_fail "python3 is needed for the JSON assertions"
	EP_WORK=$(mktemp -d "${TMPDIR:-/tmp}/ep-$EP_TEST_NAME.XXXXXX") || ep_fail "mktemp -d failed"
	trap ep_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

ep_pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# Stops a process we started (and its direct children, e.g. the command
# ebpf-prof launched): SIGTERM, then SIGKILL if it is still there after 3 s.
ep_stop_pid()
{
	local pid=$1 kids i
	ep_pid_alive "$pid" || return 0
	kids=$(ps -o pid= --ppid "$pid" 2>/dev/null || true)
	# shellcheck disable=SC2086 # $kids is a list of pids
	kill -TERM "$pid" $kids 2>/dev/null || true
	# One a test froze (ep_freeze) gets the signal too.
	kill -CONT "$pid" 2>/dev/null || true
	for ((i = 0; i < 60; i++)); do
		ep_pid_alive "$pid" || break
		sleep 0.05
	done
	# shellcheck disable=SC2086
	ep_pid_alive "$pid" && kill -KILL "$pid" $kids 2>/dev/null
	wait "$pid" 2>/dev/null || true
}

ep_cleanup()
{
	local rc=$? pid
	if [ "$rc" -eq 0 ] && [ ${#EP_SKIPPED[@]} -gt 0 ]; then
		local what
		what=$(printf '%s; ' "${EP_SKIPPED[@]}")
		echo "SKIP: passed, but not checked: ${what%; }"
		rc=77
	fi
	for pid in "${EP_PIDS[@]}"; do
		ep_stop_pid "$pid"
	done
	if [ -n "${EP_PERF_RATE_SAVED:-}" ]; then
		echo "$EP_PERF_RATE_SAVED" >/proc/sys/kernel/perf_event_max_sample_rate ||
			echo "[$EP_TEST_NAME] could not restore perf_event_max_sample_rate=$EP_PERF_RATE_SAVED" >&2
	fi
	if [ -n "$EP_WORK" ] && [ -d "$EP_WORK" ]; then
		if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
			rm -rf "$EP_WORK"
		else
			echo "[$EP_TEST_NAME] exit $rc; files kept in $EP_WORK" >&2
			local f
			for f in "$EP_WORK"/*.err; do
				[ -s "$f" ] || continue
				echo "--- $f (last 20 lines)" >&2
				tail -n 20 "$f" >&2
			done
		fi
	fi
	exit "$rc"
}

# ep_now_ms: monotonic milliseconds (CLOCK_BOOTTIME via /proc/uptime is enough
# for the second-scale durations the tests bound).
# Time the hypervisor has stolen from this machine's CPUs since boot, in
# ns (/proc/stat's steal column, USER_HZ ticks). A thread's CPU clock leaves
# it out (paravirt steal accounting), our on-CPU time, read from the
# monotonic clock between its switches, does not: tests that compare the
# two allow what was stolen during the run.
ep_steal_ns()
{
	awk -v hz="$(getconf CLK_TCK)" '$1 == "cpu" {printf "%.0f\n", $9 * 1e9 / hz; exit}' /proc/stat
}

ep_now_ms()
{
	local up
	read -r up _ </proc/uptime
	echo $((${up/./} * 10))
}

# ep_wait_line FILE ERE TIMEOUT_S [PID]: poll FILE until a line matches.
# With PID, give up early (and say so) if that process has died.
ep_wait_line()
{
	local file=$1 re=$2 timeout=$3 pid=${4:-} deadline
	deadline=$(($(ep_now_ms) + timeout * 1000))
	while [ "$(ep_now_ms)" -lt "$deadline" ]; do
		grep -Eq -- "$re" "$file" 2>/dev/null && return 0
		if [ -n "$pid" ] && ! ep_pid_alive "$pid"; then
			grep -Eq -- "$re" "$file" 2>/dev/null && return 0
			echo "process $pid exited before printing /$re/ in $file" >&2
			return 1
		fi
		sleep 0.02
	done
	echo "timed out after ${timeout}s waiting for /$re/ in $file" >&2
	return 1
}

# ep_wait_exit PID TIMEOUT_S: wait for a child of this shell to exit; sets
# EP_EXIT_RC. Returns 1 on timeout (process left running for the caller).
ep_wait_exit()
{
	local pid=$1 timeout=$2 deadline
	deadline=$(($(ep_now_ms) + timeout * 1000))
	while ep_pid_alive "$pid"; do
		[ "$(ep_now_ms)" -lt "$deadline" ] || return 1
		sleep 0.02
	done
	EP_EXIT_RC=0
	wait "$pid" || EP_EXIT_RC=$?
	return 0
}

# ep_start_target NAME ARGS...: start tests/targets/NAME in the background and
# wait for its "ready <pid>" line. Sets TARGET_PID and TARGET_OUT (its stdout).
ep_start_target()
{
	local name=$1 bin="$EP_TARGETS_DIR/$1"
	shift
	[ -x "$bin" ] || ep_fail "target $bin not built"
	TARGET_OUT="$EP_WORK/$name.${#EP_PIDS[@]}.out"
	"$bin" "$@" >"$TARGET_OUT" 2>"$EP_WORK/$name.${#EP_PIDS[@]}.err" </dev/null &
	TARGET_PID=$!
	EP_PIDS+=("$TARGET_PID")
	ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 10 "$TARGET_PID" ||
		ep_fail "target $name did not become ready"
	grep -qx "ready $TARGET_PID" "$TARGET_OUT" ||
		ep_fail "target $name printed '$(head -n1 "$TARGET_OUT")', expected 'ready $TARGET_PID'"
}

# ep_prof_run TIMEOUT_S ARGS...: run ebpf-prof in the foreground, bounded.
# Sets PROF_RC, PROF_OUT, PROF_ERR, PROF_MS (wall time in ms).
ep_prof_run()
{
	local timeout=$1 t0
	shift
	PROF_OUT="$EP_WORK/prof.${#EP_PIDS[@]}.$RANDOM.out"
	PROF_ERR="${PROF_OUT%.out}.err"
	t0=$(ep_now_ms)
	PROF_RC=0
	# EP_PROF_WRAP: a command run in front (setpriv ...), word-split.
	# shellcheck disable=SC2086
	timeout -k 5 "$timeout" ${EP_PROF_WRAP:-} "$EP_BIN" "$@" >"$PROF_OUT" 2>"$PROF_ERR" </dev/null || PROF_RC=$?
	PROF_MS=$(($(ep_now_ms) - t0))
	if [ "$PROF_RC" -eq 124 ] || [ "$PROF_RC" -eq 137 ]; then
		ep_fail "ebpf-prof $* did not finish within ${timeout}s (stderr: $(tail -n 5 "$PROF_ERR"))"
	fi
}

# ep_perf_rate_unthrottled: the kernel lets the perf interrupt run at
# 100 kHz (kernel.perf_event_max_sample_rate 100000, its boot default) for
# this test, whatever an earlier perf run or the kernel's own throttling
# left there, so that high -F is tested where nothing but ebpf-prof limits
# it. The old value is put back at exit (ep_cleanup).
ep_perf_rate_unthrottled()
{
	local f=/proc/sys/kernel/perf_event_max_sample_rate
	[ -w "$f" ] || ep_fail "$f is not writable"
	[ -n "${EP_PERF_RATE_SAVED:-}" ] || EP_PERF_RATE_SAVED=$(cat "$f")
	echo 100000 >"$f" || ep_fail "cannot set $f to 100000"
	[ "$(cat "$f")" -eq 100000 ] || ep_fail "$f is $(cat "$f") after writing 100000"
}

# ep_prof_run_nice0 TIMEOUT_S ARGS...: like ep_prof_run, for timings under
# load: this shell polls and times, so it must not be starved itself and
# runs at nice -20 meanwhile, and so does timeout, which reaps ebpf-prof;
# ebpf-prof alone starts at nice 0 (nice -n 20 from -20), as a user would
# start it. Targets are started before, at nice 0. Also sets ATTACH_MS
# (until the perf events are open).
ep_prof_run_nice0()
{
	local timeout=$1 t0 pid epid
	shift
	renice -n -20 $$ >/dev/null || ep_fail "cannot renice the test shell"
	PROF_OUT="$EP_WORK/prof.$RANDOM.out"
	PROF_ERR="${PROF_OUT%.out}.err"
	t0=$(ep_now_ms)
	timeout -k 5 "$timeout" nice -n 20 "$EP_BIN" "$@" >"$PROF_OUT" 2>"$PROF_ERR" </dev/null &
	pid=$!
	EP_PIDS+=("$pid")
	ATTACH_MS=
	epid=
	while ep_pid_alive "$pid"; do
		# timeout forks nice, which execs ebpf-prof: watch that child's
		# descriptors.
		[ -n "$epid" ] || epid=$(pgrep -P "$pid" | head -n1)
		if [ -z "$ATTACH_MS" ] && [ -n "$epid" ] &&
			find "/proc/$epid/fd" -maxdepth 1 -type l -lname 'anon_inode:\[perf_event\]' 2>/dev/null | grep -q .; then
			ATTACH_MS=$(($(ep_now_ms) - t0))
		fi
		sleep 0.02
	done
	PROF_RC=0
	wait "$pid" || PROF_RC=$?
	PROF_MS=$(($(ep_now_ms) - t0))
	renice -n 0 $$ >/dev/null
	if [ "$PROF_RC" -eq 124 ] || [ "$PROF_RC" -eq 137 ]; then
		ep_fail "ebpf-prof $* did not finish within ${timeout}s"
	fi
}

# ep_prof_bg ARGS...: start ebpf-prof in the background. Non-interactive bash
# starts background jobs with SIGINT ignored; a user's Ctrl-C reaches a
# process whose SIGINT is at default, so restore that before exec (and undo
# python's own SIG_IGN of SIGPIPE/SIGXFSZ, which exec would pass on).
# Sets PROF_PID, PROF_OUT, PROF_ERR.
ep_prof_bg()
{
	PROF_OUT="$EP_WORK/prof.bg.${#EP_PIDS[@]}.out"
	PROF_ERR="${PROF_OUT%.out}.err"
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGQUIT, signal.SIG_DFL)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$EP_BIN" "$@" >"$PROF_OUT" 2>"$PROF_ERR" </dev/null &
	PROF_PID=$!
	EP_PIDS+=("$PROF_PID")
}

# ep_wait_attached PROF_PID TIMEOUT_S: the sampler is up once ebpf-prof holds
# perf_event fds (one per CPU). Fails early if ebpf-prof died.
ep_wait_attached()
{
	local pid=$1 timeout=$2 deadline
	deadline=$(($(ep_now_ms) + timeout * 1000))
	while [ "$(ep_now_ms)" -lt "$deadline" ]; do
		ep_pid_alive "$pid" || ep_fail "ebpf-prof exited before attaching (stderr: $(tail -n 5 "$PROF_ERR"))"
		if find "/proc/$pid/fd" -maxdepth 1 -type l -lname 'anon_inode:\[perf_event\]' 2>/dev/null |
			grep -q .; then
			return 0
		fi
		sleep 0.02
	done
	ep_fail "ebpf-prof (pid $pid) opened no perf_event fd within ${timeout}s"
}

# ep_freeze PID: SIGSTOP, then wait until every thread of PID is stopped, so
# that the kernel's account of its CPU time (ep_kernel_ran) is final until
# ep_thaw. A profiler attached meanwhile takes no sample of it: a frozen
# window's edges are exact.
ep_freeze()
{
	local pid=$1 deadline
	kill -STOP "$pid" || ep_fail "cannot stop $pid"
	deadline=$(($(ep_now_ms) + 20000))
	# One awk over every thread's stat: the state follows "(comm) ".
	until [ "$(awk '{s = $0; sub(/.*\) /, "", s); if (s !~ /^[Tt] /) n++} END {print n + 0}' \
		/proc/"$pid"/task/*/stat 2>/dev/null)" = 0 ]; do
		[ "$(ep_now_ms)" -lt "$deadline" ] || ep_fail "threads of $pid not all stopped within 20 s"
		sleep 0.01
	done
	ep_pid_alive "$pid" || ep_fail "process $pid is gone"
}

ep_thaw() { kill -CONT "$1" || ep_fail "cannot continue $1"; }

# ep_kernel_ran PID: "RUN_NS SLICES THREADS": what the kernel says PID's
# threads ran (/proc/PID/task/*/schedstat: time on a CPU, which leaves out
# what the hypervisor stole, and how many times they were switched in) and
# how many threads it has.
ep_kernel_ran()
{
	cat /proc/"$1"/task/*/schedstat 2>/dev/null |
		awk '{ns += $1; sl += $3; n++} END {printf "%.0f %.0f %d\n", ns, sl, n}'
}

# cpu_tree's own measurement of its split (tests/targets/cpu_tree.c): it
# prints "split cycles=N cpu_ns=C a_ns=A b_ns=B" (totals so far) after the
# cycle under way when sent SIGUSR1. ep_split_ask PID FILE sends it (a
# frozen target answers once thawed), ep_split_read FILE waits for the
# answer and sets SPLIT_A, SPLIT_B, SPLIT_CPU. Two answers around a run,
# subtracted, are the target's own figures for it, within a cycle (~0.3 ms
# of CPU) at either end.
ep_split_ask()
{
	EP_SPLIT_SEEN=$(grep -c '^split ' "$2")
	kill -USR1 "$1" || ep_fail "cannot signal $1"
}

ep_split_read()
{
	local file=$1 line deadline
	deadline=$(($(ep_now_ms) + 30000))
	until [ "$(grep -c '^split ' "$file")" -gt "$EP_SPLIT_SEEN" ]; do
		[ "$(ep_now_ms)" -lt "$deadline" ] || ep_fail "no split line from the target in 30 s"
		sleep 0.02
	done
	line=$(grep '^split ' "$file" | sed -n "$((EP_SPLIT_SEEN + 1))p")
	SPLIT_A=$(sed -n 's/.* a_ns=\([0-9]*\).*/\1/p' <<<"$line")
	SPLIT_B=$(sed -n 's/.* b_ns=\([0-9]*\).*/\1/p' <<<"$line")
	SPLIT_CPU=$(sed -n 's/.* cpu_ns=\([0-9]*\).*/\1/p' <<<"$line")
	[ -n "$SPLIT_A" ] && [ -n "$SPLIT_B" ] && [ -n "$SPLIT_CPU" ] || ep_fail "bad split line: $line"
}

# CPU time (user+sys) of a process in clock ticks (getconf CLK_TCK per second).
ep_cpu_ticks()
{
	local stat rest
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	rest=${stat##*) }
	# fields after "(comm) ": state is field 3, utime 14, stime 15
	# shellcheck disable=SC2086 # split into fields on purpose
	set -- $rest
	echo $((${12} + ${13}))
}

# ep_wait_cpu PID SECONDS TIMEOUT_S: poll until PID has burnt SECONDS more
# CPU time, so a profile taken meanwhile must hold samples from that span.
ep_wait_cpu()
{
	local pid=$1 need deadline start now hz
	hz=$(getconf CLK_TCK)
	need=$(python3 -c "print(int(float('$2') * $hz))")
	start=$(ep_cpu_ticks "$pid") || ep_fail "process $pid is gone"
	deadline=$(($(ep_now_ms) + $3 * 1000))
	while [ "$(ep_now_ms)" -lt "$deadline" ]; do
		now=$(ep_cpu_ticks "$pid") || ep_fail "process $pid exited while waiting for CPU time"
		[ $((now - start)) -ge "$need" ] && return 0
		sleep 0.02
	done
	ep_fail "process $pid did not use $2 s of CPU within $3 s"
}

# ep_py DIR < python-snippet: run assertions on an output dir. The snippet
# sees R (report.json), S (speedscope), F (folded: list of (frames, count)),
# D (the dir) and check(cond, msg); ENV variables via os.environ. Missing or
# unparsable files fail here with a message. Exits 1 if any check failed.
ep_py()
{
	local dir=$1 script
	EP_NCHECK=$((EP_NCHECK + 1))
	script="$EP_WORK/check.$EP_NCHECK.py"
	{
		cat <<'PY'
import json, os, re, sys
D = sys.argv[1]
NAME = sys.argv[2]
FAILS = []

def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("  check failed: %s" % msg, file=sys.stderr)
    return bool(cond)

def info(msg):
    print("[%s] %s" % (NAME, msg), file=sys.stderr)

def die(msg):
    print("FAIL[%s]: %s" % (NAME, msg), file=sys.stderr)
    sys.exit(1)

def load_json(name):
    path = os.path.join(D, name)
    if not os.path.isfile(path):
        die("%s missing" % path)
    try:
        with open(path, "rb") as f:
            return json.loads(f.read().decode("utf-8"))
    except Exception as e:
        die("%s does not parse as JSON: %s" % (path, e))

def load_folded(name="stacks.folded"):
    path = os.path.join(D, name)
    if not os.path.isfile(path):
        die("%s missing" % path)
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        die("%s is not UTF-8: %s" % (path, e))
    if "\r" in text:
        die("%s has CR characters" % path)
    if text and not text.endswith("\n"):
        die("%s: last line not terminated by LF" % path)
    out = []
    for n, line in enumerate(text.split("\n")[:-1] if text else [], 1):
        m = re.fullmatch(r"(.+) ([1-9][0-9]*)", line)
        if not m:
            die("%s:%d does not match 'frame;...;leaf <positive count>': %r" % (path, n, line))
        frames = m.group(1).split(";")
        if any(fr == "" for fr in frames):
            die("%s:%d has an empty frame: %r" % (path, n, line))
        out.append((frames, int(m.group(2))))
    return out

R = load_json("report.json")
S = load_json("profile.speedscope.json")
F = load_folded()

def folded_total(pred=lambda fr: True):
    return sum(c for fr, c in F if pred(fr))

def has_seq(frames, seq):
    """seq appears as consecutive frames (root-first) in frames."""
    k = len(seq)
    return any(frames[i:i + k] == seq for i in range(len(frames) - k + 1))

def is_kernel(fr):
    return fr.endswith("_[k]")

def check_ticks_taken(run_ns, slices, steal_ns, hz, what, late=0.01):
    """The sampler's ticks on the target against what the kernel says it
    ran (ep_kernel_ran over a frozen window, ep_freeze). On each CPU the
    cpu-clock timer fires every 1e9 // hz ns and takes the thread that is
    on it: a target that ran run_ns got run_ns / period ticks.
    From below: each of the `slices` stretches it ran (schedstat's
    switch-ins) holds a whole number of ticks, at most 1 off, 1/4 variance,
    independent phases: 4 sigma = 2 sqrt(slices); and a tick that comes
    more than a period late (interrupts off that long: the sampler's own
    stack walk, another interrupt) is one sample for the periods it missed
    (hrtimer_forward): `late` of them allowed, 1% by default (at 999 Hz a
    1 ms delay), more at shorter periods.
    From above: ticks that fell in time the hypervisor stole from the CPU
    while the target was on it (its run time leaves that out): at most the
    machine's steal in the window, steal_ns (/proc/stat, 10 ms ticks per
    CPU read: + 2 per CPU), and the same rounding.
    Every tick taken is a sample in report.json or a counted loss:
    ringbuf_full, unread_at_stop, collector (the overload guard's
    rate_limited are ticks never taken)."""
    bc = R["dropped"]["by_cause"]
    taken = R["samples"]["total"] + bc["ringbuf_full"] + bc["unread_at_stop"] + bc["collector"]
    period = 10**9 // hz
    ncpu = os.cpu_count() or 1
    slack = 2 * slices ** 0.5
    lo = run_ns / period * (1 - late) - slack
    hi = (run_ns + steal_ns + 2 * ncpu * 10**7) / period + slack
    info("%s: %d ticks taken (%d samples + losses %r) at %d Hz; the kernel says %.3f s ran in %d "
         "stretches, %.3f s stolen: want %.0f..%.0f"
         % (what, taken, R["samples"]["total"], {k: v for k, v in bc.items() if v}, hz,
            run_ns / 1e9, slices, steal_ns / 1e9, lo, hi))
    check(lo <= taken <= hi, "%s: %d samples + counted losses, the kernel says %.3f s ran at %d Hz: "
          "want %.0f..%.0f" % (what, taken, run_ns / 1e9, hz, lo, hi))

def check_split(a, b, own_a, own_b, what):
    """cpu_tree's burn_a share among burn_a + burn_b samples against the
    target's own measurement over the same run (its thread CPU time in each,
    tests/targets/cpu_tree.c). Each of the n samples lands in burn_a with
    the probability p the target measured: the share's sampling error is
    binomial, sigma = sqrt(p (1 - p) / n) (0.008 at 1500 samples, 0.017 at
    400). Allowed: 4 sigma (this check runs in several tests of each suite
    run, twice per CI run: at 3 sigma one in ~370 would fail by chance, at 4
    one in ~16000), plus 0.005 for the target's own clock reads, half of
    each counted on either side (a bias of ~0.002)."""
    n = a + b
    if not check(n > 0 and own_a + own_b > 0, "%s: %d burn samples, own %d + %d ns" % (what, n, own_a, own_b)):
        return
    p = own_a / (own_a + own_b)
    share = a / n
    tol = 4 * (p * (1 - p) / n) ** 0.5 + 0.005
    info("%s: burn_a share %.3f (a=%d b=%d), the target's own %.3f (%.3f s / %.3f s of CPU): allowed +-%.3f"
         % (what, share, a, b, p, own_a / 1e9, own_b / 1e9, tol))
    check(abs(share - p) <= tol, "%s: burn_a share %.3f (a=%d b=%d), the target measured %.3f; allowed +-%.3f"
          % (what, share, a, b, p, tol))

def validate_all():
    """Format-level checks every output must pass, whatever was profiled."""
    # report.json
    check(R.get("schema") == "ebpf-prof/1", "report.schema is %r, want 'ebpf-prof/1'" % R.get("schema"))
    t = R.get("target") or {}
    check(isinstance(t.get("pids"), list) and t["pids"] and all(isinstance(p, int) and p > 0 for p in t["pids"]),
          "report.target.pids must be a non-empty list of pids: %r" % t.get("pids"))
    procs = t.get("processes")
    if check(isinstance(procs, list) and procs, "report.target.processes must be a non-empty list"):
        for p in procs:
            check(all(k in p for k in ("pid", "comm", "cmdline", "exited")),
                  "process entry lacks pid/comm/cmdline/exited: %r" % p)
            check(isinstance(p.get("exited"), bool), "process.exited must be a bool: %r" % p)
    check("exit_status" in t, "report.target.exit_status missing")
    # The final report.json: every file it lists is there (it was written
    # first, then again with the whole list: docs/report-schema.md).
    o = R.get("output") or {}
    check(o.get("complete") is True, "report.output.complete is %r: not the final report.json" % o.get("complete"))
    for f in o.get("files") or []:
        check(os.path.isfile(os.path.join(D, f)), "report.output.files lists %s, which is not in %s" % (f, D))
    check(R.get("stop_reason") in ("duration", "signal", "targets-exited"),
          "report.stop_reason %r not in duration/signal/targets-exited" % R.get("stop_reason"))
    s = R.get("samples") or {}
    for k in ("total", "user", "kernel"):
        check(isinstance(s.get(k), int) and s[k] >= 0, "report.samples.%s must be an int >= 0: %r" % (k, s.get(k)))
    tot = s.get("total", 0) if isinstance(s.get("total"), int) else 0
    check(isinstance(s.get("kernel"), int) and s["kernel"] <= tot, "samples.kernel > samples.total: %r" % s)
    check(isinstance(s.get("user"), int) and s["user"] <= tot, "samples.user > samples.total: %r" % s)
    d = R.get("dropped") or {}
    check(isinstance(d.get("total"), int) and d["total"] >= 0, "report.dropped.total must be an int >= 0")
    bc = d.get("by_cause")
    if check(isinstance(bc, dict), "report.dropped.by_cause must be an object"):
        if all(isinstance(v, int) for v in bc.values()):
            check(sum(bc.values()) == d.get("total"),
                  "dropped.by_cause sums to %d, dropped.total is %r" % (sum(bc.values()), d.get("total")))
    tf = R.get("top_functions")
    if check(isinstance(tf, list), "report.top_functions must be a list"):
        for f in tf:
            if not check(all(k in f for k in ("name", "module", "self", "total", "self_pct", "total_pct")),
                         "top_functions entry lacks a key: %r" % f):
                continue
            check(0 <= f["self"] <= f["total"] <= tot, "top_functions %r: need 0 <= self <= total <= samples.total" % f["name"])
            check(0 <= f["self_pct"] <= f["total_pct"] <= 100.0001, "top_functions %r: bad percentages" % f["name"])
        check(bool(tf) or tot == 0, "top_functions empty although there are samples")
    mods = R.get("modules")
    if check(isinstance(mods, list), "report.modules must be a list"):
        for m in mods:
            check(isinstance(m.get("path"), str) and m["path"].startswith("/"), "modules entry without a file path: %r" % m)
            b = m.get("build_id")
            check(b is None or (isinstance(b, str) and 2 <= len(b) <= 128 and len(b) % 2 == 0
                                and all(c in "0123456789abcdef" for c in b)), "modules build_id not lowercase hex: %r" % m)
            check(isinstance(m.get("samples"), int) and 0 < m["samples"] <= tot, "modules samples out of range: %r" % m)
        check([m.get("samples") for m in mods] == sorted((m.get("samples") for m in mods), reverse=True),
              "modules not heaviest first")
    th = R.get("threads")
    if check(isinstance(th, list), "report.threads must be a list"):
        for x in th:
            check(all(k in x for k in ("pid", "tid", "comm", "samples")), "threads entry lacks a key: %r" % x)
        check(sum(x.get("samples", 0) for x in th) == tot,
              "threads[].samples sum to %d, samples.total is %d" % (sum(x.get("samples", 0) for x in th), tot))
    # speedscope
    check(S.get("$schema") == "https://www.speedscope.app/file-format-schema.json",
          "speedscope $schema is %r" % S.get("$schema"))
    check(str(S.get("exporter", "")).startswith("ebpf-prof@"), "speedscope exporter %r" % S.get("exporter"))
    frames = (S.get("shared") or {}).get("frames")
    if not check(isinstance(frames, list), "speedscope shared.frames must be a list"):
        frames = []
    for i, fr in enumerate(frames):
        check(isinstance(fr, dict) and isinstance(fr.get("name"), str) and fr["name"],
              "speedscope frame %d has no name: %r" % (i, fr))
    profs = S.get("profiles")
    check(isinstance(profs, list) and profs, "speedscope profiles must be a non-empty list")
    wsum_all = 0
    units = set()
    for p in profs or []:
        nm = p.get("name")
        check(p.get("type") == "sampled", "profile %r type %r, want sampled" % (nm, p.get("type")))
        check(p.get("unit") in ("none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"),
              "profile %r unit %r" % (nm, p.get("unit")))
        units.add(p.get("unit"))
        smp, w = p.get("samples"), p.get("weights")
        if not check(isinstance(smp, list) and isinstance(w, list), "profile %r lacks samples/weights" % nm):
            continue
        check(len(smp) == len(w), "profile %r: %d samples but %d weights" % (nm, len(smp), len(w)))
        for st in smp:
            if not check(isinstance(st, list) and all(isinstance(i, int) and 0 <= i < len(frames) for i in st),
                         "profile %r: frame index out of range [0,%d) in %r" % (nm, len(frames), st)):
                break
        check(all(isinstance(x, (int, float)) and x > 0 for x in w), "profile %r: weights must be > 0" % nm)
        sv, ev = p.get("startValue"), p.get("endValue")
        if check(isinstance(sv, (int, float)) and isinstance(ev, (int, float)), "profile %r start/endValue" % nm):
            check(abs((ev - sv) - sum(w)) <= 1e-6 * max(1, sum(w)),
                  "profile %r: endValue-startValue = %r but sum(weights) = %r" % (nm, ev - sv, sum(w)))
        if smp:
            check(re.fullmatch(r".+ \((pid \d+, )?tid \d+\)", str(nm)) is not None,
                  "profile name %r is not 'comm (tid N)'" % nm)
        wsum_all += sum(w)
    if units == {"none"}:
        check(wsum_all == tot, "speedscope weights sum to %r, samples.total is %d" % (wsum_all, tot))
    # folded
    check(folded_total() == tot, "stacks.folded counts sum to %d, samples.total is %d" % (folded_total(), tot))
    texts = [";".join(fr) for fr, _ in F]
    check(len(texts) == len(set(texts)), "stacks.folded repeats a stack (duplicates must be summed)")
    for fr, _ in F:
        k = [i for i, x in enumerate(fr) if is_kernel(x)]
        if k and not check(k == list(range(k[0], len(fr))),
                           "kernel frames must be the leaf end of the stack: %r" % ";".join(fr)):
            break

PY
		cat
		cat <<'PY'

if FAILS:
    print("FAIL[%s]: %d check(s) failed on %s (first: %s)" % (NAME, len(FAILS), D, FAILS[0]), file=sys.stderr)
    sys.exit(1)
PY
	} >"$script"
	python3 "$script" "$dir" "$EP_TEST_NAME" || exit 1
}

# ep_check_outputs DIR: files exist, parse, and pass the format checks.
ep_check_outputs()
{
	echo 'validate_all()' | ep_py "$1"
	# The reader of `report` and `diff` (report_read.h) accepts it.
	"$EP_BIN" diff --no-html --json "$1" "$1" >/dev/null 2>"$EP_WORK/reader.err" ||
		ep_fail "$1/report.json refused by the report/diff reader: $(head -n 3 "$EP_WORK/reader.err")"
}
