#!/bin/bash
# The workload of the Python users: tools/bench/py_llama_experiment.py
# (llama.cpp's prebuilt libraries through ctypes, the tiny model of
# tiny_llama_gguf.py, SQLite) launched under `ebpf-prof --alloc`, on
# Debian's static python3.11 and pyenv's 3.12 (shared libpython; missing:
# skipped, a failure under CI=true). llama_init_from_model allocates its
# context's buffers (~22 MB with this model) from one Python line:
#   - >= 98% of llama_init_from_model's bytes in alloc.folded sit under
#     `main (py_llama_experiment.py:LINE)`, LINE the line of that call, and
#     <module> above it (every one of those calls comes from that line);
#   - >= 80% of all allocation samples have Python frames (report.json
#     memory.alloc.python): the interpreter's start-up (its import of the
#     frozen modules before it can be walked, the parser of the script)
#     has none; 90-99% measured.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
# shellcheck source=llama_lib.sh
. "$(dirname "$0")/llama_lib.sh"

EXP="$EP_SOURCE_DIR/tools/bench/py_llama_experiment.py"
python3 "$(dirname "$0")/tiny_llama_gguf.py" "$EP_WORK/tiny.gguf" || ep_fail "cannot write the tiny model"
LINE=$(grep -n "llama.llama_init_from_model(model" "$EXP" | cut -d: -f1)
[ -n "$LINE" ] || ep_fail "no llama_init_from_model call in $EXP"

run()
{
	local py=$1 label=$2 out="$EP_WORK/$2"
	ep_prof_run 120 --no-gpu --alloc -o "$out" -- "$py" "$EXP" "$LLAMA_DIR" "$EP_WORK/tiny.gguf" "$EP_WORK/$label.db" 3
	[ "$PROF_RC" -eq 0 ] || ep_fail "$label: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	grep -q "^cycles [1-9]" "$PROF_OUT" || ep_fail "$label: the experiment did not finish: $(tail -n 3 "$PROF_OUT")"
	LINE=$LINE LABEL=$label ep_py "$out" <<'PY' || exit 1
line, label = int(os.environ["LINE"]), os.environ["LABEL"]
AF = load_folded("alloc.folded")
def under(fr):
    i = fr.index("llama_init_from_model")
    py = [f for f in fr[:i] if "(py_llama_experiment.py:" in f]
    return py[-1:] == ["main (py_llama_experiment.py:%d)" % line] and py[0].startswith("<module> (")
ini = sum(c for fr, c in AF if "llama_init_from_model" in fr)
good = sum(c for fr, c in AF if "llama_init_from_model" in fr and under(fr))
A = R["memory"]["alloc"]
P = A.get("python") or {}
share = P.get("samples_with_python", 0) / max(A["samples"], 1)
stacks = sum(1 for fr, c in AF if any("(py_llama_experiment.py:" in f for f in fr))
info("%s: llama_init_from_model %.1f MB, %.1f%% under main (py_llama_experiment.py:%d); %d of %d samples (%.1f%%) "
     "and %d of %d alloc.folded stacks with Python frames"
     % (label, ini / 1e6, 100.0 * good / max(ini, 1), line, P.get("samples_with_python", 0), A["samples"],
        100 * share, stacks, len(AF)))
check(ini >= 4e6, "%s: llama_init_from_model allocated only %d bytes" % (label, ini))
check(good >= 0.98 * ini, "%s: only %d of %d bytes of llama_init_from_model under main at line %d: %r"
      % (label, good, ini, line, [fr for fr, c in AF if "llama_init_from_model" in fr][:1]))
check(share >= 0.8, "%s: %.1f%% of the allocation samples with Python frames, want >= 80%%" % (label, 100 * share))
PY
}

if [ -x /usr/bin/python3.11 ]; then
	run /usr/bin/python3.11 debian3.11
else
	ep_skip_part "Debian's /usr/bin/python3.11 is missing (python3.11 package)"
fi
ep_pyenv 3.12 && run "$EP_PY" py3.12
ep_log "ok"
