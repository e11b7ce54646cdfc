#!/bin/bash
# The live view in a real terminal (tmux): the target's hottest function
# shows within a few refreshes, keys switch panes/sort/help/stack, a resize
# re-lays the screen out, q ends the run cleanly with every output written
# and the terminal settings as they were.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
ep_need_cmd tmux tmux || exit 0

SOCK="ep-top-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'rc=$?; T kill-server >/dev/null 2>&1; (exit $rc); ep_cleanup' EXIT

ep_start_target cpu_tree 120
OUT="$EP_WORK/out"
ERR="$EP_WORK/top.err"
RC="$EP_WORK/top.rc"
# The pane stays open after ebpf-prof exits so the terminal state can be
# compared; stty -g before and after is the restore check.
T new-session -d -x 120 -y 40 -s top \
	"stty -g > $EP_WORK/stty.before; TERM=xterm-256color $EP_BIN top --pid $TARGET_PID -F 199 --interval 0.3 -o $OUT 2> $ERR; echo \$? > $RC; stty -g > $EP_WORK/stty.after; exec sleep 600" ||
	ep_fail "cannot start tmux"

screen() { T capture-pane -p -t top; }
# wait_screen ERE TIMEOUT_S WHAT: poll the pane until a line matches.
wait_screen()
{
	local deadline=$(($(ep_now_ms) + $2 * 1000))
	while [ "$(ep_now_ms)" -lt "$deadline" ]; do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
	done
	echo "--- screen:" >&2
	screen >&2
	echo "--- stderr:" >&2
	cat "$ERR" >&2
	ep_fail "$3: /$1/ not on screen within $2 s"
}

# Attach (BTF parse, BPF load) takes a few seconds; then a few 0.3 s
# refreshes must be enough for the function that burns most CPU to lead.
wait_screen '^ebpf-prof top  pid '"$TARGET_PID"' ' 30 "title line"
wait_screen '^ *[0-9.]+% +[0-9.]+%  burn_a ' 10 "burn_a in the function table"
[ "$(T display -p -t top '#{alternate_on}')" = 1 ] || ep_fail "the view is not on the alternate screen"
# The hottest line comes first: burn_a is the first row under the header.
first=$(screen | grep -A1 -E '^ +SELF% ' | sed -n 2p)
case "$first" in *burn_a*) ;; *) ep_fail "first function row is not burn_a: '$first'" ;; esac

T send-keys -t top p
wait_screen '^ebpf-prof top .*\[paused\]' 5 "pause marker"
# Paused: the elapsed clock in the title stands still across refreshes.
t1=$(screen | sed -n 1p)
sleep 1 # two 0.3 s refreshes would have changed the clock if not paused
t2=$(screen | sed -n 1p)
[ "$t1" = "$t2" ] || ep_fail "title changed while paused: '$t1' -> '$t2'"
T send-keys -t top p
T send-keys -t top s
wait_screen '^ +self% +TOTAL% ' 5 "sort by total"
T send-keys -t top s
wait_screen '^ +SELF% +total% ' 5 "sort back to self"
T send-keys -t top k
wait_screen '^ebpf-prof top .*\[user frames\]' 5 "kernel frames off"
screen | grep -q 'kernel.kallsyms' && ep_fail "kernel frames listed with kernel frames off"
T send-keys -t top k
wait_screen '^ebpf-prof top  pid [0-9]+ \(cpu_tree\), [0-9]+ threads  [0-9:]+  [0-9]+ samples/s  lost [0-9]+$' 5 "kernel frames back on"
T send-keys -t top Enter
wait_screen '^stack \(leaf first\)' 5 "stack of the selected line"
wait_screen '^  main$' 5 "main in the stack"
T send-keys -t top Enter
T send-keys -t top t
wait_screen '^ +cpu% +pid +tid  comm' 5 "threads pane"
wait_screen "^ *[0-9.]+% +$TARGET_PID +$TARGET_PID  cpu_tree" 5 "the target thread"
# The lone thread uses what the header says the target uses (it showed its
# share of the samples, 100%, under a header of 80%).
snap=$(screen)
hdr=$(sed -n 's/^cpu \([0-9]*\)%.*/\1/p' <<<"$snap" | head -n1)
thr=$(sed -n "s/^ *\([0-9.]*\)% \+$TARGET_PID \+$TARGET_PID  cpu_tree.*/\1/p" <<<"$snap" | head -n1)
[ -n "$hdr" ] && [ -n "$thr" ] || ep_fail "no header cpu or thread cpu% on screen: $snap"
python3 -c "import sys; sys.exit(0 if abs(float('$thr') - float('$hdr')) <= 1 else 1)" ||
	ep_fail "thread cpu $thr% vs header cpu $hdr%"
T send-keys -t top c
wait_screen 'no cycle data' 5 "no cycle pane without cycle data"
T send-keys -t top f
wait_screen '^ +SELF% +total%  function' 5 "functions pane again"
T send-keys -t top '?'
wait_screen '^keys:' 5 "help"
T send-keys -t top '?'
wait_screen '^ +SELF% ' 5 "help closed"

# Resize: the key line moves to the new last row, no line is wider.
T resize-window -t top -x 70 -y 16
deadline=$(($(ep_now_ms) + 5000))
while :; do
	s=$(screen)
	last=$(printf '%s\n' "$s" | sed -n 16p)
	wide=$(printf '%s\n' "$s" | awk 'length($0) > 70' | wc -l)
	case "$last" in "q quit"*) [ "$wide" -eq 0 ] && break ;; esac
	[ "$(ep_now_ms)" -lt "$deadline" ] || { printf '%s\n' "$s" >&2; ep_fail "screen not re-laid out for 70x16"; }
	sleep 0.1
done
wait_screen 'burn_a' 5 "burn_a after the resize"

T send-keys -t top q
deadline=$(($(ep_now_ms) + 30000))
until [ -s "$RC" ]; do
	[ "$(ep_now_ms)" -lt "$deadline" ] || ep_fail "ebpf-prof did not exit within 30 s of q"
	sleep 0.1
done
[ "$(cat "$RC")" = 0 ] || ep_fail "ebpf-prof top exited $(cat "$RC") on q (stderr: $(tail -n 5 "$ERR"))"
cmp -s "$EP_WORK/stty.before" "$EP_WORK/stty.after" || ep_fail "terminal settings not restored after q"
# Back on the normal screen (the view runs on the alternate one).
[ "$(T display -p -t top '#{alternate_on}')" = 0 ] || ep_fail "still on the alternate screen after q"
ep_pid_alive "$TARGET_PID" || ep_fail "the target died when the live view quit"
ep_check_outputs "$OUT"
ep_py "$OUT" <<'PY'
check(R["stop_reason"] == "user", "stop_reason %r, want 'user' after q" % R["stop_reason"])
check(folded_total(lambda fr: "burn_a" in fr) > 0, "no burn_a in folded stacks")
check("alerts" not in R, "alerts section without --alert")
PY

# Ctrl-C in the live view: the terminal's SIGINT goes through the recorder's
# normal stop (stop_reason "signal"), outputs written, terminal restored.
T kill-session -t top
OUT2="$EP_WORK/out2"
rm -f "$RC" "$EP_WORK/stty.after"
T new-session -d -x 100 -y 30 -s top \
	"stty -g > $EP_WORK/stty.before; TERM=xterm-256color $EP_BIN top --pid $TARGET_PID -F 199 --interval 0.3 -o $OUT2 2> $ERR; echo \$? > $RC; stty -g > $EP_WORK/stty.after; exec sleep 600" ||
	ep_fail "cannot start tmux"
wait_screen '^ *[0-9.]+% +[0-9.]+%  burn_a ' 30 "burn_a (second run)"
T send-keys -t top C-c
deadline=$(($(ep_now_ms) + 30000))
until [ -s "$RC" ]; do
	[ "$(ep_now_ms)" -lt "$deadline" ] || ep_fail "ebpf-prof did not exit within 30 s of Ctrl-C"
	sleep 0.1
done
[ "$(cat "$RC")" = 0 ] || ep_fail "ebpf-prof top exited $(cat "$RC") on Ctrl-C"
cmp -s "$EP_WORK/stty.before" "$EP_WORK/stty.after" || ep_fail "terminal settings not restored after Ctrl-C"
[ "$(T display -p -t top '#{alternate_on}')" = 0 ] || ep_fail "still on the alternate screen after Ctrl-C"
ep_check_outputs "$OUT2"
ep_py "$OUT2" <<'PY'
check(R["stop_reason"] == "signal", "stop_reason %r, want 'signal' after Ctrl-C" % R["stop_reason"])
PY

# A crash signal: the handler puts the terminal back and leaves the
# alternate screen before the signal kills the process.
T kill-session -t top
rm -f "$RC" "$EP_WORK/stty.after"
T new-session -d -x 100 -y 30 -s top \
	"stty -g > $EP_WORK/stty.before; TERM=xterm-256color $EP_BIN top --pid $TARGET_PID -F 199 --interval 0.3 -o $EP_WORK/out3 2> $ERR; echo \$? > $RC; stty -g > $EP_WORK/stty.after; exec sleep 600" ||
	ep_fail "cannot start tmux"
wait_screen '^ *[0-9.]+% +[0-9.]+%  burn_a ' 30 "burn_a (third run)"
PANE_SH=$(T display -p -t top '#{pane_pid}')
PROF=$(pgrep -P "$PANE_SH" -x ebpf-prof | head -n1)
[ -n "$PROF" ] || ep_fail "cannot find ebpf-prof under the pane's shell $PANE_SH"
kill -SEGV "$PROF"
deadline=$(($(ep_now_ms) + 30000))
until [ -s "$RC" ]; do
	[ "$(ep_now_ms)" -lt "$deadline" ] || ep_fail "ebpf-prof did not die within 30 s of SIGSEGV"
	sleep 0.1
done
[ "$(cat "$RC")" -ge 128 ] || ep_fail "ebpf-prof exited $(cat "$RC") on SIGSEGV, want death by signal"
cmp -s "$EP_WORK/stty.before" "$EP_WORK/stty.after" || ep_fail "terminal settings not restored after SIGSEGV"
[ "$(T display -p -t top '#{alternate_on}')" = 0 ] || ep_fail "still on the alternate screen after SIGSEGV"
ep_log "ok"
