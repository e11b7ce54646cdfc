#!/bin/bash
# Result directories root writes into and `report`/`diff` trust later
# (README.md, "Output"):
#  - the default name (ebpf-prof-PID-TIME) in a world-writable directory,
#    pre-created by nobody with mode 777 for every second to come: the run
#    writes to a fresh name, the planted directories stay empty;
#  - -o DIR owned by nobody, or writable by every user: refused, nothing
#    written;
#  - -o DIR holding an earlier run's files: refused, the files untouched;
#    with --force (and --rotate 1 --keep 2) written into, and no file the
#    run did not write is deleted;
#  - under sudo (SUDO_UID/SUDO_GID): the results are the user's, and a
#    directory of the user's is accepted.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

as_nobody()
{
	python3 -c 'import os, sys
os.setgroups([]); os.setgid(65534); os.setuid(65534)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

ep_start_target cpu_tree 120

# 1. Predictable default name in a shared directory.
SHARED="$EP_WORK/shared"
chmod o+x "$EP_WORK" # for nobody, to reach it
mkdir "$SHARED"
chmod 1777 "$SHARED"
# The name is taken after the BPF programs are loaded: seconds later on a
# loaded machine. Every second of the next 5 minutes is planted.
PLANT_S=300
as_nobody python3 - "$SHARED" "$TARGET_PID" "$PLANT_S" <<'PY' || ep_fail "nobody cannot plant directories"
import os, sys, time
d, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
now = int(time.time())
for i in range(n):
    p = os.path.join(d, "ebpf-prof-%s-%s" % (pid, time.strftime("%Y%m%d-%H%M%S", time.localtime(now + i))))
    os.mkdir(p)
    os.chmod(p, 0o777)
PY
cd "$SHARED" || ep_fail "cd $SHARED"
ep_prof_run $PLANT_S --pid "$TARGET_PID" -F 99 -d 1
cd "$EP_WORK" || ep_fail "cd $EP_WORK"
[ "$PROF_RC" -eq 0 ] || ep_fail "default name: exit $PROF_RC: $(tail -n 3 "$PROF_ERR")"
FRESH=$(find "$SHARED" -mindepth 2 -maxdepth 2 -name report.json -printf '%h\n')
[ "$(printf '%s\n' "$FRESH" | grep -c .)" -eq 1 ] || ep_fail "default name: report.json in: $FRESH"
case "$FRESH" in
*-2) ;;
*) ep_fail "default name: results in $FRESH, want a fresh -2 name next to the planted one" ;;
esac
[ "$(stat -c %u "$FRESH")" -eq 0 ] || ep_fail "default name: $FRESH is not root's"
for d in "$SHARED"/ebpf-prof-*; do
	[ "$d" = "$FRESH" ] && continue
	[ -z "$(ls -A "$d")" ] || ep_fail "root wrote into $d, which nobody created: $(ls -A "$d")"
	[ "$(stat -c %u "$d")" -eq 65534 ] || ep_fail "$d changed owner"
done
grep -q "exists already: writing to .*$(basename "$FRESH")" "$PROF_ERR" ||
	ep_fail "default name: the fresh name is not said: $(tail -n 3 "$PROF_ERR")"
ep_check_outputs "$FRESH"
ep_log "default name planted by nobody: results in $(basename "$FRESH")"

# 2. -o DIR of another user; 3. -o DIR anyone can write.
mkdir "$EP_WORK/foreign" && chown 65534:65534 "$EP_WORK/foreign"
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 1 -o "$EP_WORK/foreign"
[ "$PROF_RC" -eq 1 ] || ep_fail "-o a directory of nobody's: exit $PROF_RC"
grep -q "output directory $EP_WORK/foreign belongs to uid 65534" "$PROF_ERR" ||
	ep_fail "-o foreign: $(tail -n 3 "$PROF_ERR")"
[ -z "$(ls -A "$EP_WORK/foreign")" ] || ep_fail "-o foreign: written into: $(ls -A "$EP_WORK/foreign")"
mkdir "$EP_WORK/open" && chmod 0777 "$EP_WORK/open"
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 1 -o "$EP_WORK/open" --force
[ "$PROF_RC" -eq 1 ] || ep_fail "-o a directory of mode 777: exit $PROF_RC"
grep -q "output directory $EP_WORK/open can be written by every user (mode 0777)" "$PROF_ERR" ||
	ep_fail "-o open: $(tail -n 3 "$PROF_ERR")"
[ -z "$(ls -A "$EP_WORK/open")" ] || ep_fail "-o open: written into: $(ls -A "$EP_WORK/open")"

# 4. An earlier run's files: refused without --force.
OLD="$EP_WORK/old"
mkdir "$OLD"
for f in report.json interval-000001.pb.gz interval-000099.pb.gz notes.txt; do
	echo "earlier $f" >"$OLD/$f"
done
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 1 -o "$OLD"
[ "$PROF_RC" -eq 1 ] || ep_fail "-o a directory with files: exit $PROF_RC"
grep -q "output directory $OLD exists and is not empty.*--force" "$PROF_ERR" ||
	ep_fail "-o not empty: $(tail -n 3 "$PROF_ERR")"
for f in report.json interval-000001.pb.gz interval-000099.pb.gz notes.txt; do
	[ "$(cat "$OLD/$f")" = "earlier $f" ] || ep_fail "-o not empty (refused): $f changed"
done
[ "$(find "$OLD" -mindepth 1 | wc -l)" -eq 4 ] || ep_fail "-o not empty (refused): $(ls -A "$OLD")"

# ... with --force: written into; intervals rotated out are the run's own,
# the files it did not write stay.
ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 3.5 --rotate 1 --keep 2 -o "$OLD" --force
[ "$PROF_RC" -eq 0 ] || ep_fail "--force: exit $PROF_RC: $(tail -n 3 "$PROF_ERR")"
grep -q -- "--force: writing into $OLD, which holds 4 entries already" "$PROF_ERR" ||
	ep_fail "--force: no warning: $(grep -m2 force "$PROF_ERR")"
for f in interval-000099.pb.gz notes.txt; do
	[ "$(cat "$OLD/$f" 2>/dev/null)" = "earlier $f" ] || ep_fail "--force: $f, not written by the run, was changed or deleted"
done
ep_check_outputs "$OLD"
OLD=$OLD ep_py "$OLD" <<'PY'
import glob
ivs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(D, "interval-*.pb.gz")))
files = R["output"]["files"]
mine = sorted(f for f in files if f.startswith("interval-") and f.endswith(".pb.gz"))
check(len(mine) == 2, "--keep 2: the report lists %r" % mine)
check(sorted(set(mine) | {"interval-000099.pb.gz"}) == ivs,
      "intervals on disk %r, want the run's %r and the earlier interval-000099" % (ivs, mine))
check("notes.txt" not in files and "interval-000099.pb.gz" not in files,
      "the report lists files the run did not write: %r" % files)
PY

# 5. sudo: the results are handed to the user; the user's own directory is
# accepted.
SUDO_UID=65534 SUDO_GID=65534 ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 1 -o "$EP_WORK/sudo/run"
[ "$PROF_RC" -eq 0 ] || ep_fail "sudo: exit $PROF_RC: $(tail -n 3 "$PROF_ERR")"
for f in "$EP_WORK/sudo" "$EP_WORK/sudo/run" "$EP_WORK/sudo/run/report.json" "$EP_WORK/sudo/run/profile.pb.gz"; do
	[ "$(stat -c %u:%g "$f")" = 65534:65534 ] || ep_fail "sudo: $f is $(stat -c %u:%g "$f"), want 65534:65534"
done
SUDO_UID=65534 SUDO_GID=65534 ep_prof_run 60 --pid "$TARGET_PID" -F 99 -d 1 -o "$EP_WORK/foreign"
[ "$PROF_RC" -eq 0 ] || ep_fail "sudo: the user's own empty directory refused: $(tail -n 3 "$PROF_ERR")"
[ "$(stat -c %u "$EP_WORK/foreign/report.json")" -eq 65534 ] || ep_fail "sudo: report.json not the user's"
ep_stop_pid "$TARGET_PID"
ep_log "ok"
