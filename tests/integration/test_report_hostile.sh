#!/bin/bash
# `ebpf-prof report DIR` with a report.json that is not a regular file
# (a FIFO once hung it forever): refused at once.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

for kind in fifo chardev dir; do
	D="$EP_WORK/$kind"
	mkdir -p "$D"
	case $kind in
	fifo) mkfifo "$D/report.json" ;;
	chardev) mknod "$D/report.json" c 1 5 ;; # /dev/zero: endless
	dir) mkdir "$D/report.json" ;;
	esac
	rc=0
	t0=$(ep_now_ms)
	timeout -k 2 10 "$EP_BIN" report "$D" >"$EP_WORK/$kind.out" 2>"$EP_WORK/$kind.err" </dev/null || rc=$?
	ms=$(($(ep_now_ms) - t0))
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || ep_fail "report.json as a $kind: still running after 10 s"
	[ "$rc" -ne 0 ] || ep_fail "report.json as a $kind: accepted"
	[ "$rc" -lt 128 ] || ep_fail "report.json as a $kind: crashed (rc $rc)"
	grep -q "not a regular file" "$EP_WORK/$kind.err" ||
		ep_fail "report.json as a $kind: message $(cat "$EP_WORK/$kind.err")"
	ep_log "report.json as a $kind: refused in ${ms} ms"
done
ep_log "ok"
