#!/bin/bash
# The output directory is checked before the run: a directory that
# cannot be written or a full filesystem is refused at once instead of after
# a whole recording; a file that fails at the end is reported as not
# written, never listed as an output; a failed start leaves no empty dir.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

ep_start_target cpu_tree 120
MNT="$EP_WORK/mnt"
mkdir -p "$MNT"
# Unmounted before lib.sh's cleanup removes the work directory.
cleanup_mnt()
{
	local rc=$?
	mountpoint -q "$MNT" && umount "$MNT"
	(exit "$rc")
	ep_cleanup
}
trap cleanup_mnt EXIT

# Not writable (an existing directory of a read-only kind): refused before
# the 30 s run, not after it. (--force: /proc is not empty.)
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 30 -o /proc --force
[ "$PROF_RC" -ne 0 ] || ep_fail "-o /proc succeeded"
[ "$PROF_MS" -lt 10000 ] || ep_fail "-o /proc failed only after ${PROF_MS} ms (the run was made)"
grep -q "output directory /proc is not writable" "$PROF_ERR" ||
	ep_fail "-o /proc: no 'not writable' message (stderr: $(tail -n 3 "$PROF_ERR"))"

mount -t tmpfs -o ro,size=8m,mode=0755 tmpfs "$MNT" || ep_fail "cannot mount a tmpfs"
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 30 -o "$MNT"
[ "$PROF_RC" -ne 0 ] && [ "$PROF_MS" -lt 10000 ] ||
	ep_fail "read-only fs: rc $PROF_RC after ${PROF_MS} ms, want a failure before the run"
grep -q "not writable: Read-only file system" "$PROF_ERR" ||
	ep_fail "read-only fs: message $(tail -n 3 "$PROF_ERR")"
umount "$MNT"

# Full: 1 MiB free is below the minimum. The directory ebpf-prof created
# for the run is removed again.
mount -t tmpfs -o size=1m tmpfs "$MNT" || ep_fail "cannot mount a tmpfs"
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 30 -o "$MNT/run"
[ "$PROF_RC" -ne 0 ] && [ "$PROF_MS" -lt 10000 ] ||
	ep_fail "full fs: rc $PROF_RC after ${PROF_MS} ms, want a failure before the run"
grep -q "free on its filesystem" "$PROF_ERR" || ep_fail "full fs: message $(tail -n 3 "$PROF_ERR")"
[ ! -e "$MNT/run" ] || ep_fail "full fs: empty output directory $MNT/run left behind"
umount "$MNT"

# Filled during the run: the check passes, the writes at the end fail. The
# summary must not list a file that is not there, and says which failed.
mount -t tmpfs -o size=8m tmpfs "$MNT" || ep_fail "cannot mount a tmpfs"
ep_prof_bg --pid "$TARGET_PID" -F 999 -d 3 -o "$MNT/run"
ep_wait_attached "$PROF_PID" 30
dd if=/dev/zero of="$MNT/fill" bs=64k 2>/dev/null # until ENOSPC
ep_wait_exit "$PROF_PID" 30 || ep_fail "no exit within 30 s"
[ "$EP_EXIT_RC" -ne 0 ] || ep_fail "full at the end: exit 0 though the files could not be written"
grep -q "report.json: No space left on device" "$PROF_ERR" ||
	ep_fail "full at the end: ENOSPC not named: $(grep -m3 'cannot write' "$PROF_ERR")"
! grep -q "Input/output error" "$PROF_ERR" ||
	ep_fail "full at the end: a write failure reported as EIO: $(grep -m3 'Input/output' "$PROF_ERR")"
grep -q "NOT WRITTEN: report.json" "$PROF_OUT" ||
	ep_fail "summary does not say report.json was not written: $(grep -A9 '^output:' "$PROF_OUT")"
while read -r f; do
	[ -e "$MNT/run/$f" ] || ep_fail "summary lists $f, which is not in $MNT/run"
done < <(sed -n '/^output:/,/^[a-z]/p' "$PROF_OUT" | grep -E '^ {10}[a-z]' | grep -v 'NOT WRITTEN' | awk '{print $1}')
umount "$MNT"

# SIGKILL before anything is written: the directory ebpf-prof created goes
# too (its helper process sees the recorder's end), and a directory that
# existed before stays.
for PRE in new existing; do
	D="$EP_WORK/killed-$PRE"
	[ "$PRE" = existing ] && mkdir "$D"
	ep_prof_bg --pid "$TARGET_PID" -F 99 -d 60 -o "$D"
	ep_wait_attached "$PROF_PID" 30
	[ -d "$D" ] || ep_fail "SIGKILL ($PRE): no output directory while recording"
	kill -KILL "$PROF_PID"
	ep_wait_exit "$PROF_PID" 30 || ep_fail "SIGKILL ($PRE): still running"
	# The kernel releases a killed recorder's BPF programs and perf events
	# before its pipe reaches the helper: ~0.5 s.
	deadline=$(($(ep_now_ms) + 10000))
	while [ "$PRE" = new ] && [ -e "$D" ] && [ "$(ep_now_ms)" -lt "$deadline" ]; do
		sleep 0.05
	done
	if [ "$PRE" = new ]; then
		[ ! -e "$D" ] || ep_fail "SIGKILL: empty output directory $D left behind"
	else
		# The helper is started only for a directory ebpf-prof created.
		[ -d "$D" ] || ep_fail "SIGKILL: the existing directory $D was removed"
	fi
done
# The helper never outlives the run (it would hold nothing, but it is a
# process the user did not ask for).
! pgrep -f -- "-o $EP_WORK/killed-" >/dev/null || ep_fail "a helper process is still running"
ep_stop_pid "$TARGET_PID"
ep_log "ok"
