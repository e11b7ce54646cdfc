#!/bin/bash
# Python frames in a C program that embeds CPython: a
# program of our own links libpython (Debian's libpython3.11.so; pyenv's
# 3.13 too where installed), starts the interpreter from its main() and
# runs py_tree.py's 50/30/20 call tree. The samples must carry the Python
# frames with the embedding program's own native frames as their root
# (main -> run_file -> PyRun_SimpleFileExFlags -> <module> -> ... ->
# leaf_hot), and the shares must match the program's own CPU times.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

HERE="$(cd "$(dirname "$0")" && pwd)"
PY_TREE="$HERE/py_tree.py"
PYENV_ROOT=${PYENV_ROOT:-/root/.pyenv}
cc=$(command -v cc || command -v gcc) || ep_fail "no C compiler"

# run_embed NAME CFLAGS_AND_LIBS...: build py_embed against that libpython
# and profile it (launch mode).
run_embed()
{
	local name=$1 bin="$EP_WORK/py_embed.$1" out="$EP_WORK/embed.$1"
	shift
	"$cc" -O1 -g -fno-omit-frame-pointer -o "$bin" "$HERE/py_embed.c" "$@" ||
		ep_fail "$name: building py_embed failed"
	export PY_TREE_OUT="$EP_WORK/spent.$name"
	ep_prof_run 90 -v -F 999 --no-sched --probes none -o "$out" -- "$bin" "$PY_TREE" 2.5 tree
	[ "$PROF_RC" -eq 0 ] || ep_fail "$name: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	# The interpreter is the library the program links, not a python binary.
	grep -Eq "python: pid [0-9]+ runs CPython 3\.[0-9]+ \(.*libpython3\.[0-9]+\.so[^)]*\): walking its frames" "$PROF_ERR" ||
		ep_fail "$name: the interpreter was not found in the program's libpython: $(grep python: "$PROF_ERR" | head -n 3)"
	ep_check_outputs "$out"
	NAME_=$name ep_py "$out" <<'PY' || exit 1
name = os.environ["NAME_"]
def pyname(fr, fn):
    return fr.startswith(fn + " (py_tree.py:")
tot = folded_total()
in_main = lambda fr: "PyRun_SimpleFileExFlags" in fr
running = folded_total(in_main)
anypy = folded_total(lambda fr: in_main(fr) and any("(py_tree.py:" in f for f in fr))
spent = [float(x) for x in open(os.environ["PY_TREE_OUT"]).read().split()]
truth = [100.0 * x / sum(spent) for x in spent]
leaf = folded_total(lambda fr: any(pyname(f, "leaf_hot") for f in fr))
side = folded_total(lambda fr: any(pyname(f, "side") for f in fr))
tail = folded_total(lambda fr: any(pyname(f, "tail") for f in fr))
work = leaf + side + tail
info("%s: %d samples, %d of %d in the file with Python frames; leaf_hot/side/tail %d/%d/%d, own %.1f/%.1f/%.1f%%"
     % (name, tot, anypy, running, leaf, side, tail, truth[0], truth[1], truth[2]))
check(tot >= 1500, "only %d samples for 2.5 s of CPU time" % tot)
check(running > 0 and anypy >= 0.98 * running, "only %d of %d samples in the file have Python frames" % (anypy, running))
PYR = R.get("python") or {}
check(PYR.get("mode") == "mixed" and PYR.get("with_python", 0) >= anypy, "report.json python %r" % PYR)
if check(work > 0, "no samples in the tree's functions"):
    for fn, n, want in (("leaf_hot", leaf, truth[0]), ("side", side, truth[1]), ("tail", tail, truth[2])):
        share = 100.0 * n / work
        check(abs(share - want) <= 4, "%s holds %.1f%% of the samples, it took %.1f%% +- 4 of the CPU" % (fn, share, want))
# The embedding program's frames are the root (main, run_file: consecutive),
# the interpreter's C frames above them, then the Python ones, in order.
def in_order(names, seq):
    k = 0
    for n in names:
        if k < len(seq) and n == seq[k]:
            k += 1
    return k == len(seq)
def embedded(fr):
    names = [f.split(" (")[0] for f in fr]
    return (has_seq(names, ["main", "run_file", "PyRun_SimpleFileExFlags"]) and
            in_order(names, ["run_file", "<module>", "main", "outer", "middle", "leaf_hot"]))
good = folded_total(embedded)
info("%d of %d leaf_hot samples read main;run_file;PyRun_SimpleFileExFlags;...;<module>;main;outer;middle;leaf_hot" % (good, leaf))
check(leaf > 0 and good >= 0.98 * leaf, "only %d of %d leaf_hot samples have the embedding program below the Python frames" % (good, leaf))
PY
	ep_log "ok: $name"
}

flags=$(pkg-config --cflags --libs python-3.11-embed 2>/dev/null) ||
	ep_fail "no python-3.11-embed pkg-config (Debian's python3-dev, tools/install-deps.sh)"
# shellcheck disable=SC2086
run_embed debian3.11 $flags
pe=$(ls -d "$PYENV_ROOT"/versions/3.13.*/lib/pkgconfig 2>/dev/null | tail -n 1)
if [ -n "$pe" ] && flags=$(PKG_CONFIG_PATH="$pe" pkg-config --cflags --libs python-3.13-embed 2>/dev/null); then
	# shellcheck disable=SC2086
	run_embed pyenv3.13 $flags -Wl,-rpath,"$(dirname "$pe")"
else
	ep_skip_part "no pyenv CPython 3.13 with a shared libpython under $PYENV_ROOT/versions"
fi
ep_log "ok"
