#!/bin/bash
# The issue's live-view run, in a real terminal (tmux): `ebpf-prof top
# --cycle-every libllama:llama_tokenize` on the users' workload (Python
# driving the real llama.cpp libraries, SQLite, a sleep; llama_cycles.py).
# Reported from a terminal: inference 0 ms in every cycle, probe events
# dropped as nesting_too_deep, lost returns, 3 tokens, a 23 s statement;
# piped, right. Here the terminal run must match the target's own figures
# cycle by cycle, as the piped and batch paths do (one attribution path).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
ep_need_cmd tmux tmux || exit 0
. "$(dirname "$0")/llama_lib.sh"
SRC="${EP_SOURCE_DIR:-$(dirname "$0")/../..}"
export PYTHONDONTWRITEBYTECODE=1
N=40

SOCK="ep-lltop-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'rc=$?; T kill-server >/dev/null 2>&1; (exit $rc); ep_cleanup' EXIT

python3 "$SRC/tests/integration/tiny_llama_gguf.py" "$EP_WORK/tiny.gguf" || ep_fail "cannot write the model"
TARGET_OUT="$EP_WORK/target.out"
python3 "$SRC/tests/integration/llama_cycles.py" "$LLAMA_DIR" "$EP_WORK/tiny.gguf" "$EP_WORK/db.sqlite" $N \
	>"$TARGET_OUT" 2>"$EP_WORK/target.err" </dev/null &
TARGET_PID=$!
EP_PIDS+=("$TARGET_PID")
ep_wait_line "$TARGET_OUT" '^ready [0-9]+$' 30 "$TARGET_PID" || ep_fail "target not ready: $(tail -3 "$EP_WORK/target.err")"

OUT="$EP_WORK/out"
ERR="$EP_WORK/top.err"
RC="$EP_WORK/top.rc"
T new-session -d -x 140 -y 45 -s top \
	"TERM=xterm-256color $EP_BIN top -v --pid $TARGET_PID --no-gpu --interval 0.3 --cycle-every libllama:llama_tokenize -o $OUT 2> $ERR; echo \$? > $RC; exec sleep 600" ||
	ep_fail "cannot start tmux"
ep_wait_line "$ERR" "cycles: pid $TARGET_PID: cycle boundary" 30 || ep_fail "cycle boundary not attached: $(tail -3 "$ERR")"
# The whole loop runs with the terminal view on (cycle pane shown).
T send-keys -t top c
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^done$' 120 "$TARGET_PID" || ep_fail "target did not finish: $(tail -3 "$EP_WORK/target.err")"
ep_wait_line "$RC" '^[0-9]+$' 60 || ep_fail "ebpf-prof top did not end when the target exited"
[ "$(cat "$RC")" = 0 ] || ep_fail "ebpf-prof top exited $(cat "$RC"): $(tail -5 "$ERR")"
TARGET_OUT=$TARGET_OUT N=$N ep_py "$OUT" <<'PY'
MS = 1000000
own = {}
for l in open(os.environ["TARGET_OUT"]):
    f = l.split()
    if f and f[0] == "cycle":
        own[int(f[1])] = [int(x) for x in f[2:]]
n = int(os.environ["N"])
check(len(own) == n, "target printed %d cycles" % len(own))
dr = R["probes"]["dropped"]["by_cause"]
check(dr["nesting_too_deep"] == 0 and dr["lost_return"] == 0 and dr["ringbuf_full"] == 0,
      "probe events dropped: %r" % dr)
C = [c for c in R["cycles"] if not c["partial"]]
check(len(C) == n - 1, "%d complete cycles, want %d (the last is partial)" % (len(C), n - 1))
check(R["cycles"][-1]["partial"], "the last cycle is not partial")
sums = [0, 0]
for c in C:
    # The target's cycle that starts at this one's start (its tokenize call).
    o = min(own.values(), key=lambda v: abs(v[0] - c["start_ns"]))
    # After the target's clock read before llama_tokenize, by the ctypes
    # call (and on a busy host a wait for a CPU): well under a cycle.
    check(-0.2 * MS <= c["start_ns"] - o[0] <= 20 * MS, "cycle %d start %d ns off the target's" % (c["index"], c["start_ns"] - o[0]))
    # llama_tokenize is inference too (the llama preset), timed apart.
    infer, sql = o[1] + o[3], o[2]
    # Inference: decode, sample and the llama.cpp calls around them, inside
    # the target's own timing of them and of the tokenize (+0.2 ms);
    # per cycle a fifth of it at least (the reported bug was 0; the Python
    # between the calls, and its waits for a CPU on a busy host, are not
    # inference), over all cycles half of it less the waits.
    check(0.2 * infer <= c["inference_ns"] <= infer + 0.2 * MS,
          "cycle %d inference %.3f ms, the target's %.3f ms" % (c["index"], c["inference_ns"] / MS, infer / MS))
    sums[0] += c["inference_ns"]
    sums[1] += infer - c["off_cpu_by_reason"]["preempted"] - c["off_cpu_by_reason"]["runqueue"]
    check(c["tokens"] == 16, "cycle %d tokens %d" % (c["index"], c["tokens"]))
    check(c["sql_ns"] <= sql + 0.2 * MS, "cycle %d SQL %.3f ms, the target's %.3f ms" % (c["index"], c["sql_ns"] / MS, sql / MS))
check(sums[0] >= 0.5 * sums[1], "inference %.1f ms over all cycles, the target's less its waits %.1f ms" % (sums[0] / MS, sums[1] / MS))
# No statement longer than the whole run.
dur = R["time"]["end_monotonic_ns"] - R["time"]["start_monotonic_ns"]
for s in R["sql"]["statements"]:
    check(s["p99_ns"] <= dur, "statement %r p99 %.1f s in a %.1f s run" % (s["text"], s["p99_ns"] / 1e9, dur / 1e9))
check(R["probes"]["tokens"]["count"] >= 16 * (n - 1), "tokens %r" % R["probes"]["tokens"])
PY

echo "PASS: test_cycles_top_llama_tmux"
