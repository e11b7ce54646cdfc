#!/bin/bash
# What a profiled program running as nobody names cannot turn the root
# profiler against the system (docs/security.md). The program (target
# hostile_files) dlopens a library from its own directory, passes three
# model paths to a function named llama_model_load_from_file (probed by the
# llama preset, whose GGUF header the collector reads for report.json):
#  - a GGUF file it then replaces with a FIFO (an open() of it as root
#    blocked for good, the run never ended: SIGTERM went unread);
#  - a GGUF file in a directory only root may enter (its general.name and
#    training context reached report.json);
#  - a sparse 64 GiB GGUF declaring two arrays of 2^32 elements (the
#    parser read 64 GiB of zeros: 80 s);
# and replaces its library's path with a FIFO too (the pprof export's open
# of it blocked). Twice: attached with --pid, stopped by SIGTERM while the
# program lives; and launched, the program exiting before the outputs are
# written (its paths are then read in our root). Each run must end within
# 2 s with complete outputs, a problem line per model saying why it was
# not read, and no byte of the private file anywhere in them; a fourth
# model, a readable file of the program's own, is read.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
command -v setpriv >/dev/null || ep_fail "setpriv (util-linux) is needed to run the target as nobody"

SECRET=EP-SECRET-NAME-5b1d
SECRET_CTX=987654321
chmod 0755 "$EP_WORK"

# gguf.py PATH NAME CTX [huge]: a small GGUF header (architecture, name,
# training context); huge: two u64 arrays of 2^32 elements after it, the
# file sparse at 64 GiB.
cat >"$EP_WORK/gguf.py" <<'PY'
import struct, sys
path, name, ctx = sys.argv[1], sys.argv[2], int(sys.argv[3])
huge = sys.argv[4:] == ["huge"]
def s(x):
    b = x.encode()
    return struct.pack("<Q", len(b)) + b
kv = [s("general.architecture") + struct.pack("<I", 8) + s("llama"),
      s("general.name") + struct.pack("<I", 8) + s(name),
      s("llama.context_length") + struct.pack("<II", 4, ctx)]
with open(path, "wb") as f:
    f.write(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv) + (2 if huge else 0)))
    for k in kv:
        f.write(k)
    if huge:
        f.write(s("a.first") + struct.pack("<IIQ", 9, 10, 1 << 32))
        f.seek(8 << 32, 1)
        f.write(s("a.second") + struct.pack("<IIQ", 9, 10, 1 << 32))
        f.truncate(64 << 30)
PY

# setup DIR: a directory of nobody's with the library and two models, and
# a root-only directory with the private model.
setup()
{
	local d=$1
	mkdir -p "$d/user" "$d/private"
	cp "$EP_TARGETS_DIR/hostile_files_lib" "$d/user/libhostile.so"
	python3 "$EP_WORK/gguf.py" "$d/user/model-fifo.gguf" EP-FIFO-MODEL 4096 || ep_fail "cannot write a GGUF file"
	python3 "$EP_WORK/gguf.py" "$d/user/huge.gguf" EP-HUGE-MODEL 4096 huge || ep_fail "cannot write the sparse GGUF file"
	python3 "$EP_WORK/gguf.py" "$d/user/model-ok.gguf" EP-OK-MODEL 2048 || ep_fail "cannot write a GGUF file"
	python3 "$EP_WORK/gguf.py" "$d/private/secret.gguf" "$SECRET" "$SECRET_CTX" || ep_fail "cannot write a GGUF file"
	chown -R nobody:nogroup "$d/user"
	chmod 0755 "$d" "$d/user"
	chmod 0700 "$d/private"
	chmod 0644 "$d/private/secret.gguf"
	setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$d/private/secret.gguf" >/dev/null 2>&1 &&
		ep_fail "nobody can read $d/private/secret.gguf: the test proves nothing"
	MODELS=("fifo:$d/user/model-fifo.gguf" "$d/private/secret.gguf" "$d/user/huge.gguf" "$d/user/model-ok.gguf")
	LIB="$d/user/libhostile.so"
}

# check_run OUT: complete outputs, one problem line per model, nothing of
# the private file.
check_run()
{
	local out=$1
	ep_check_outputs "$out"
	if grep -rqa -e "$SECRET" -e "$SECRET_CTX" "$out"; then
		ep_fail "a byte of the root-only model reached the outputs: $(grep -rla -e "$SECRET" -e "$SECRET_CTX" "$out")"
	fi
	grep -rqa EP-FIFO-MODEL "$out" && ep_fail "the model replaced by a FIFO was read anyway"
	ep_py "$out" <<'PY'
L = R.get("llama")
if check(L is not None, "no llama section"):
    models = L["models"]
    check(len(models) == 4, "models: %r" % models)
    for m in models:
        if m.get("path", "").endswith("/model-ok.gguf"):
            # Its own file, in its own directory: read with its rights.
            g = m.get("gguf") or {}
            check(g.get("name") == "EP-OK-MODEL" and g.get("n_ctx_train") == 2048,
                  "the program's own model was not read: %r" % m)
        else:
            check("gguf" not in m, "a GGUF header was read: %r" % m)
    probs = "\n".join(L["problems"])
    for want in ("model-fifo.gguf: cannot open: not a regular file",
                 "secret.gguf: cannot open: the profiled program may not read it",
                 "huge.gguf: header larger than 64 MiB"):
        check(want in probs, "no problem line %r in %r" % (want, probs))
# The library's path is a FIFO now: its frames are named all the same.
check(folded_total(lambda fr: "hostile_spin" in fr) > 0, "no hostile_spin in the stacks")
PY
}

# 1. Attached (--pid), stopped by SIGTERM with the program alive.
setup "$EP_WORK/a"
TARGET_OUT="$EP_WORK/hostile.a.out"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$EP_TARGETS_DIR/hostile_files" "$LIB" "${MODELS[@]}" \
	>"$TARGET_OUT" 2>"$EP_WORK/hostile.a.err" </dev/null &
TARGET_PID=$!
EP_PIDS+=("$TARGET_PID")
ep_wait_line "$TARGET_OUT" "^ready $TARGET_PID\$" 10 "$TARGET_PID" || ep_fail "target did not start"
ep_prof_bg -v --pid "$TARGET_PID" -o "$EP_WORK/out-a" --no-gpu --probes llama
ep_wait_attached "$PROF_PID" 30
ep_wait_line "$PROF_ERR" "sampling " 30 "$PROF_PID" || ep_fail "ebpf-prof did not start"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^loaded$' 10 "$TARGET_PID" || ep_fail "target could not load its library: $(cat "$EP_WORK/hostile.a.err")"
ep_wait_line "$PROF_ERR" "probes: pid $TARGET_PID: llama_model_load_from_file in .*libhostile.so" 10 "$PROF_PID" ||
	ep_fail "llama_model_load_from_file not probed"
kill -USR1 "$TARGET_PID"
ep_wait_line "$TARGET_OUT" '^swapped$' 10 "$TARGET_PID" || ep_fail "target did not swap its paths: $(cat "$EP_WORK/hostile.a.err")"
if [ ! -p "$LIB" ] || [ ! -p "$EP_WORK/a/user/model-fifo.gguf" ]; then
	ep_fail "the paths are not FIFOs"
fi
ep_wait_cpu "$TARGET_PID" 0.2 10
t0=$(ep_now_ms)
kill -TERM "$PROF_PID"
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not exit within 30 s of SIGTERM (a read of a FIFO?)"
ms=$(($(ep_now_ms) - t0))
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
[ "$ms" -le 2000 ] || ep_fail "ebpf-prof took $ms ms to stop after SIGTERM (max 2000)"
ep_log "attached: stopped $ms ms after SIGTERM"
ep_pid_alive "$TARGET_PID" || ep_fail "the target died"
check_run "$EP_WORK/out-a"
ep_stop_pid "$TARGET_PID"

# 2. Launched; the program exits 0.3 s after its swaps, before the outputs.
setup "$EP_WORK/b"
ep_prof_bg -v -o "$EP_WORK/out-b" --no-gpu --probes llama -- \
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$EP_TARGETS_DIR/hostile_files" --now "$LIB" "${MODELS[@]}"
ep_wait_line "$PROF_OUT" '^swapped$' 60 "$PROF_PID" || ep_fail "the launched target did not swap its paths (stderr: $(tail -n 5 "$PROF_ERR"))"
t0=$(ep_now_ms)
ep_wait_exit "$PROF_PID" 30 || ep_fail "ebpf-prof did not exit within 30 s of its target (a read of a FIFO?)"
ms=$(($(ep_now_ms) - t0))
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
# 300 ms of the target's own, then the stop.
[ "$ms" -le 2300 ] || ep_fail "ebpf-prof took $ms ms to end after its target's swaps (max 300 + 2000)"
ep_log "launched: ended $ms ms after the swaps"
check_run "$EP_WORK/out-b"
echo "PASS: test_hostile_files"
