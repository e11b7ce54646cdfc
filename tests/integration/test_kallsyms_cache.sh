#!/bin/bash
# Kernel symbols from this boot's cache plus the ksym iterator
# (user/symbolize/ksym_cache.h) must be the table a full read of
# /proc/kallsyms gives: with EBPF_PROF_KSYM_CHECK=1 the collector loads both
# and logs how many entries differ (a [bpf] symbol in one only aside: other
# tools load programs between the two reads) and how many [bpf] symbols,
# ours at least, are alike in both. A run without a cache file reads the
# file whole and writes it (mode 0600); a file others could write, or one
# that is not a table, is not used (read whole, and replaced); without the
# iterator the file is read whole and the file left alone.
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

CACHE=/var/cache/ebpf-prof
BOOT=$(cat /proc/sys/kernel/random/boot_id)
FILE="$CACHE/kallsyms-$BOOT"
export EBPF_PROF_KSYM_CHECK=1
ep_start_target kernel_heavy 120
PID=$TARGET_PID

run() { # name
	ep_prof_run 60 -v --pid "$PID" -F 499 -d 1 -o "$EP_WORK/$1"
	[ "$PROF_RC" -eq 0 ] || ep_fail "$1: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
	ep_check_outputs "$EP_WORK/$1"
}

rm -f "$CACHE"/kallsyms-*
run whole
grep -q "kallsyms: read whole (boot cache: No such file" "$PROF_ERR" || ep_fail "first run did not read kallsyms whole: $(grep kallsyms "$PROF_ERR")"
[ -f "$FILE" ] || ep_fail "no $FILE after a full read"
[ "$(stat -c '%a %u' "$FILE")" = "600 0" ] || ep_fail "$FILE: mode/owner $(stat -c '%a %u' "$FILE")"

run cached
grep -q "kallsyms: core kernel from this boot's cache" "$PROF_ERR" || ep_fail "second run did not use the cache: $(grep kallsyms "$PROF_ERR")"
grep -qE "kallsyms check: 0 entries unlike /proc/kallsyms, [1-9][0-9]* \[bpf\] symbols alike" "$PROF_ERR" ||
	ep_fail "cache + iterator differ from /proc/kallsyms: $(grep 'kallsyms check' "$PROF_ERR")"
# Program info names every BPF function as the kernel does (the lazy path
# below relies on it): all those loaded throughout the check (kallsyms read
# before and after the program info; programs that come and go meanwhile,
# ours or other tools', are left out). Ours alone are more than 20.
line=$(grep -oE "[0-9]+ named alike by program info of [0-9]+ loaded throughout" "$PROF_ERR")
set -- $line
[ -n "$line" ] && [ "$1" = "$8" ] && [ "$8" -ge 20 ] ||
	ep_fail "program info names differ from kallsyms: '$line'"

# Without the check: the core kernel alone at start; the samples inside the
# probe's BPF programs (a probed function in a tight loop) are named from
# the programs' info, as /proc/kallsyms names them.
unset EBPF_PROF_KSYM_CHECK
ep_start_target probe_loop 60
ep_prof_run 60 -v --pid "$TARGET_PID" -F 999 -d 2 --probes none --probe probe_loop:hot_fn \
	-o "$EP_WORK/lazy"
[ "$PROF_RC" -eq 0 ] || ep_fail "lazy: ebpf-prof exited $PROF_RC (stderr: $(tail -n 5 "$PROF_ERR"))"
grep -q "kallsyms: core kernel from this boot's cache; BPF programs from their info" "$PROF_ERR" ||
	ep_fail "lazy: not the core-only load: $(grep kallsyms "$PROF_ERR")"
grep -qE "kallsyms: [1-9][0-9]* BPF functions from program info" "$PROF_ERR" ||
	ep_fail "lazy: BPF program info not read: $(grep kallsyms "$PROF_ERR")"
ep_log "lazy: $(grep -c 'kallsyms: modules and the rest' "$PROF_ERR") iterator reads"
ep_py "$EP_WORK/lazy" <<'PY'
import re
bpf = {x: n for fr, n in F for x in fr if is_kernel(x) and "[bpf]" in x}
tot = sum(n for _, n in F)
nb = sum(n for fr, n in F if any(is_kernel(x) and "[bpf]" in x for x in fr))
check(nb >= 5, "only %d of %d samples in BPF programs: %r" % (nb, tot, sorted(bpf)[:5]))
for x in bpf:
    check(re.match(r"bpf_prog_[0-9a-f]{16}_(probe_entry|probe_return|[A-Za-z_0-9]+) \[bpf\]", x), "bad BPF frame name %r" % x)
check(any("_probe_entry [bpf]" in x or "_probe_return [bpf]" in x for x in bpf), "no probe program frame: %r" % sorted(bpf))
unk = [x for fr, _ in F for x in fr if is_kernel(x) and x.startswith("[unknown]")]
check(not unk, "unnamed kernel frames: %r" % unk[:5])
PY
export EBPF_PROF_KSYM_CHECK=1
for d in whole cached; do
	ep_py "$EP_WORK/$d" <<'PY'
names = {x for fr, _ in F for x in fr if is_kernel(x)}
check(names, "no kernel frames")
check(any(not x.startswith("[unknown]") for x in names), "all kernel frames are unknown: %r" % sorted(names)[:5])
PY
done

# No iterator (a kernel before 6.0, made here by failing the part): read
# whole, the good file left as it is.
M0=$(stat -c %Y.%i "$FILE")
EBPF_PROF_FAULT_BPF=ksym_ run noiter
grep -q "kallsyms: read whole (boot cache: Operation not supported)" "$PROF_ERR" || ep_fail "without the iterator: $(grep kallsyms "$PROF_ERR")"
[ "$(stat -c %Y.%i "$FILE")" = "$M0" ] || ep_fail "the file was written again without the iterator"

# Writable by the group: not believed, read whole, replaced by ours.
chmod 0660 "$FILE"
run untrusted
grep -q "kallsyms: read whole (boot cache: Operation not permitted)" "$PROF_ERR" || ep_fail "a group-writable cache file was used: $(grep kallsyms "$PROF_ERR")"
[ "$(stat -c '%a' "$FILE")" = "600" ] || ep_fail "the untrusted file was not replaced: mode $(stat -c '%a' "$FILE")"

# Not a table (cut short): read whole.
truncate -s 100 "$FILE"
run truncated
grep -q "kallsyms: read whole (boot cache: Invalid argument)" "$PROF_ERR" || ep_fail "a cut cache file was used: $(grep kallsyms "$PROF_ERR")"
run again
grep -q "kallsyms check: 0 entries unlike /proc/kallsyms" "$PROF_ERR" || ep_fail "after the rewrite: $(grep kallsyms "$PROF_ERR")"
ep_log "ok"
