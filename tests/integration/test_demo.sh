#!/usr/bin/env bash
# The README's demo (tools/demo.sh) end to end, in launch mode with no flag
# beyond the demo's own: the cycle marker defines cycles, the llama and
# sqlite presets time the inference stand-in and every SQLite call, and the
# command is held at its start-up until its libraries are probed, so the
# counts are exact: one cycle, one llama_decode and one INSERT execution per
# loop iteration the demo itself counted, one summary query every 25. Needs
# root.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init
out="$EP_WORK/out"
ep_prof_run 60 -F 199 -o "$out" -- "$EP_TARGETS_DIR/demo_experiment" 3
[ "$PROF_RC" -eq 0 ] || ep_fail "recording failed (rc $PROF_RC): $(tail -n 5 "$PROF_ERR")"
n=$(sed -n 's/^cycles: \([0-9][0-9]*\)$/\1/p' "$PROF_OUT")
[ -n "$n" ] && [ "$n" -gt 25 ] || ep_fail "the demo did not report its cycles (or too few): $(cat "$PROF_OUT")"
ep_log "the demo ran $n cycles"
DEMO_CYCLES=$n ep_py "$out" <<'PY'
n = int(os.environ["DEMO_CYCLES"])
cyc = R.get("cycles") or []
check(len(cyc) == n, "one cycle per demo loop: %d vs %d" % (len(cyc), n))
check((R.get("cycles_meta") or {}).get("boundaries") == "marker", "cycles from the marker")
probes = {p["symbol"]: p for p in R["probes"]["list"]}
check(probes.get("llama_decode", {}).get("count") == n,
      "llama_decode once per cycle: %r vs %d" % (probes.get("llama_decode", {}).get("count"), n))
sql = {s["text"]: s for s in R.get("sql", {}).get("statements", [])}
ins = sql.get("INSERT INTO log VALUES(?1, ?2)")
check(ins is not None, "INSERT statement named (prepared at start-up, before main's loop): %r" % list(sql))
if ins:
    check(ins["count"] == n and ins["prepares"] == 1, "INSERT: %d executions, 1 prepare: %r" % (n, ins))
check("(prepared before attach: text unknown)" not in sql, "no statement prepared before the probes")
q = [s for t, s in sql.items() if t.startswith("WITH recent AS")]
check(len(q) == 1 and q[0]["count"] == n // 25 and q[0]["rows"] == n // 25,
      "summary query every 25 cycles: %r, expected %d" % (q, n // 25))
inf = sum(c["inference_calls"] for c in cyc)
check(inf == n, "inference calls attributed to cycles: %d vs %d" % (inf, n))
check(all(c["sql_count"] >= 2 for c in cyc), "every cycle has its INSERT step and reset")
fs = R.get("findings") or []
check(fs and all(f.get("recommendation") for f in fs), "findings, each with a recommendation: %r" % fs)
check(R["dropped"]["total"] == 0, "no samples dropped: %r" % R["dropped"])
PY
exit 0
