#!/bin/bash
# A disk that fills up during the run (a small tmpfs, mounted here and
# unmounted by the trap): report.json is written before every other file,
# so it is kept, and the failures say "No space left on device", never
# "Input/output error".
#  - room left for report.json and a bit more: it is there, complete but
#    for its file list (output.complete false: the final rewrite did not
#    fit), and `ebpf-prof diff` reads it;
#  - room left for less than report.json: a shorter one is written,
#    without the large sections (output.compact, output.left_out).
# The room is sized from the report.json of the same run on a roomy disk.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

MNT="$EP_WORK/mnt"
mkdir -p "$MNT"
cleanup_mnt()
{
	local rc=$?
	mountpoint -q "$MNT" && umount "$MNT"
	(exit "$rc")
	ep_cleanup
}
trap cleanup_mnt EXIT

ep_start_target cpu_tree 120
ARGS=(--pid "$TARGET_PID" -F 499 -d 3)
ep_prof_run 60 "${ARGS[@]}" -o "$EP_WORK/roomy"
[ "$PROF_RC" -eq 0 ] || ep_fail "roomy run: exit $PROF_RC: $(tail -n 3 "$PROF_ERR")"
FULL=$(stat -c %s "$EP_WORK/roomy/report.json")
ep_log "report.json on a roomy disk: $FULL bytes"

# run NAME ROOM: a recording into a fresh 8 MiB tmpfs filled, once the run
# is under way, to leave ROOM bytes.
run()
{
	local name=$1 room=$2 avail
	mountpoint -q "$MNT" && umount "$MNT"
	mount -t tmpfs -o size=8m,mode=0755 tmpfs "$MNT" || ep_fail "cannot mount a tmpfs"
	ep_prof_bg "${ARGS[@]}" -o "$MNT/$name"
	ep_wait_attached "$PROF_PID" 30
	avail=$(df -B1 --output=avail "$MNT" | tail -n 1)
	dd if=/dev/zero of="$MNT/fill" bs=4096 count=$(((avail - room) / 4096)) status=none ||
		ep_fail "cannot fill $MNT"
	ep_log "$name: $(df -B1 --output=avail "$MNT" | tail -n 1) bytes left during the run"
	ep_wait_exit "$PROF_PID" 60 || ep_fail "$name: no exit within 60 s"
	[ "$EP_EXIT_RC" -eq 1 ] || ep_fail "$name: exit $EP_EXIT_RC with a full disk, want 1"
	grep -q "No space left on device" "$PROF_ERR" ||
		ep_fail "$name: ENOSPC not named: $(grep -m3 'cannot' "$PROF_ERR")"
	! grep -q "Input/output error" "$PROF_ERR" ||
		ep_fail "$name: a write failure reported as EIO: $(grep -m3 'Input/output' "$PROF_ERR")"
	[ -f "$MNT/$name/report.json" ] || ep_fail "$name: report.json lost: $(ls -A "$MNT/$name")"
	! ls -A "$MNT/$name" | grep -q '\.tmp\.' || ep_fail "$name: temporary files left: $(ls -A "$MNT/$name")"
	# The summary lists what is on disk and says what is not.
	grep -q "NOT WRITTEN" "$PROF_OUT" || ep_fail "$name: no file reported as not written: $(sed -n '/^output:/,$p' "$PROF_OUT")"
	! grep -q "NOT WRITTEN: report.json" "$PROF_OUT" || ep_fail "$name: report.json listed as not written"
	cp -r "$MNT/$name" "$EP_WORK/$name"
}

# Room for report.json (4 KiB pages) and half of it again: not for the
# report.html that embeds it nor for its final version.
run kept $((FULL * 3 / 2 + 8192))
# (The other files may be missing: plain python, not ep_py.)
python3 - "$EP_WORK/kept/report.json" <<'PY' || ep_fail "kept: report.json checks failed"
import json, sys
R = json.load(open(sys.argv[1]))
o = R["output"]
assert o.get("complete") is False, "output.complete %r: the final report.json fitted, the disk was not full enough" % o.get("complete")
assert not o.get("compact"), "the whole report.json fitted, yet it is compact"
assert "flame" in R and "cycles" in R and R["samples"]["total"] > 0, "sections missing from the kept report.json"
PY
"$EP_BIN" diff --no-html "$EP_WORK/roomy" "$EP_WORK/kept" >"$EP_WORK/diff.out" 2>&1 ||
	[ $? -eq 3 ] || ep_fail "diff cannot read the kept report.json: $(tail -n 3 "$EP_WORK/diff.out")"

# Room for less than report.json: the short one.
run compact $((FULL * 3 / 4))
python3 - "$EP_WORK/compact/report.json" <<'PY' || ep_fail "compact: report.json checks failed"
import json, sys
R = json.load(open(sys.argv[1]))
o = R["output"]
assert o.get("compact") is True, "output.compact %r: want the short report.json" % o.get("compact")
assert "flame" in o.get("left_out", []) and "flame" not in R, "left out: %r" % o.get("left_out")
assert R["samples"]["total"] > 0 and R.get("top_functions"), "the short report.json lost its summary"
PY
grep -q "report.json: No space left on device: writing it without its large sections" "$PROF_ERR" ||
	ep_fail "compact: not said: $(grep -m3 report.json "$PROF_ERR")"
"$EP_BIN" diff --no-html "$EP_WORK/roomy" "$EP_WORK/compact" >"$EP_WORK/diff2.out" 2>&1 ||
	[ $? -eq 3 ] || ep_fail "diff cannot read the short report.json: $(tail -n 3 "$EP_WORK/diff2.out")"
umount "$MNT"
ep_stop_pid "$TARGET_PID"
ep_log "ok"
