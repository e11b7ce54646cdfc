#!/bin/bash
# --metrics (docs/metrics.md) during a real recording, read by the tools
# our users run:
#  - cycle_experiment (8 cycles: llama_decode, SQLite, a sleep) and a
#    second target that outlives it (cpu_tree), so the run goes on after
#    the experiment is done and its counters are final;
#  - curl: scrapes parse with `promtool check metrics`, the counters only
#    grow between scrapes, the endpoint serves /metrics only and answers
#    only on the address given;
#  - Debian's prometheus on 127.0.0.1 scraping every second: its HTTP API
#    returns, after the experiment, exactly the final figures of
#    report.json (cycles, llama_decode calls, the experiment's samples),
#    scraped through the OpenMetrics format it asks for; and the cycles
#    and llama_decode calls are those the experiment says it ran (one
#    "cycle" line each, one llama_decode call in each).
. "$(dirname "$0")/lib.sh"
ep_require_root
ep_init

need()
{
	command -v "$1" >/dev/null && return 0
	[ "${CI:-}" = true ] && ep_fail "$1 not found: apt-get install $2 (tools/install-deps.sh)"
	echo "SKIP: $1 not found (apt-get install $2)"
	exit 77
}
need curl curl
need promtool prometheus
need prometheus prometheus

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
MPORT=$(free_port)
PPORT=$(free_port)
URL="http://127.0.0.1:$MPORT/metrics"

# Prometheus first: its start-up (~1-2 s) overlaps ours.
cat >"$EP_WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ebpf-prof
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF
T0=$(ep_now_ms)
prometheus --config.file="$EP_WORK/prometheus.yml" --storage.tsdb.path="$EP_WORK/tsdb" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn \
	>"$EP_WORK/prometheus.out" 2>"$EP_WORK/prometheus.err" </dev/null &
PROM_PID=$!
EP_PIDS+=("$PROM_PID")

ep_start_target cpu_tree 120
KEEP_PID=$TARGET_PID
ep_start_target cycle_experiment 8 5
EXP_PID=$TARGET_PID
EXP_OUT=$TARGET_OUT
ep_prof_bg -v -F 499 --pid "$EXP_PID,$KEEP_PID" -o "$EP_WORK/out" --no-gpu \
	--metrics "127.0.0.1:$MPORT"
ep_wait_line "$PROF_ERR" "metrics: serving http://127.0.0.1:$MPORT/metrics" 30 "$PROF_PID" ||
	ep_fail "no metrics endpoint: $(tail -n 3 "$PROF_ERR")"
ep_wait_line "$PROF_ERR" "cycles: pid $EXP_PID: cycle marker" 30 "$PROF_PID" ||
	ep_fail "cycle marker not attached: $(tail -n 3 "$PROF_ERR")"

# Bound to the address given only: another local address of this machine
# (127.0.0.2 is loopback too, but not the one we bound) gets no answer.
curl -s -m 2 -o /dev/null "http://127.0.0.2:$MPORT/metrics" &&
	ep_fail "the endpoint answers on 127.0.0.2, it was bound to 127.0.0.1"
ss -Hltn "sport = :$MPORT" >"$EP_WORK/listen.txt"
grep -q "127.0.0.1:$MPORT" "$EP_WORK/listen.txt" && [ "$(wc -l <"$EP_WORK/listen.txt")" -eq 1 ] ||
	ep_fail "listening sockets on port $MPORT: $(cat "$EP_WORK/listen.txt")"
for path in / /metrics/ /debug /../etc/passwd; do
	code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' --path-as-is "http://127.0.0.1:$MPORT$path")
	[ "$code" = 404 ] || ep_fail "GET $path answered $code, want 404"
done
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST --data x=1 "$URL")
[ "$code" = 405 ] || ep_fail "POST /metrics answered $code, want 405"

# Requests are parsed by a process of its own (docs/metrics.md): not root,
# no capability, no way to gain one (no_new_privs), a seccomp filter, and
# none of the recorder's descriptors (BPF objects, perf events, outputs).
HTTP_PID=$(pgrep -P "$PROF_PID" -x ebpf-prof-http) ||
	ep_fail "no ebpf-prof-http process under ebpf-prof ($PROF_PID): $(ps -o pid,comm --ppid "$PROF_PID")"
ST="/proc/$HTTP_PID/status"
awk '/^Uid:/ { exit !($2 && $3 && $4 && $5) }' "$ST" || ep_fail "the HTTP process runs as root: $(grep '^Uid' "$ST")"
for c in CapInh CapPrm CapEff CapBnd CapAmb; do
	grep -Eq "^$c:[[:space:]]+0+$" "$ST" || ep_fail "the HTTP process has capabilities: $(grep "^$c" "$ST")"
done
grep -Eq '^NoNewPrivs:[[:space:]]+1$' "$ST" || ep_fail "the HTTP process: $(grep '^NoNewPrivs' "$ST")"
grep -Eq '^Seccomp:[[:space:]]+2$' "$ST" || ep_fail "the HTTP process has no seccomp filter: $(grep '^Seccomp' "$ST")"
NFD=$(find "/proc/$HTTP_PID/fd" -mindepth 1 -maxdepth 1 | wc -l)
[ "$NFD" -eq 6 ] || ep_fail "the HTTP process holds $NFD descriptors, want 6: $(ls -l "/proc/$HTTP_PID/fd")"
! find "/proc/$HTTP_PID/fd" -mindepth 1 -lname 'anon_inode:*bpf*' -o -mindepth 1 -lname 'anon_inode:\[perf_event\]' | grep -q . ||
	ep_fail "the HTTP process holds BPF or perf descriptors: $(ls -l "/proc/$HTTP_PID/fd")"
ep_log "HTTP process $HTTP_PID: $(grep '^Uid' "$ST" | tr -s '\t ' ' '), no capabilities, seccomp, $NFD fds"

# Slowloris: 8 connections each sending a header line per second and never
# ending their request. Scrapes meanwhile are answered within 1 s, and the
# server ends each slow connection at its 2 s request deadline.
PORT=$MPORT READY="$EP_WORK/slow.ready" python3 - >"$EP_WORK/slow.txt" 2>&1 <<'PY' &
import os, socket, time
port = int(os.environ["PORT"])
conns = []
for i in range(8):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    s.setblocking(False)
    conns.append([s, time.monotonic(), None])
open(os.environ["READY"], "w").write("connected\n")
t0 = time.monotonic()
while time.monotonic() - t0 < 8 and any(c[2] is None for c in conns):
    for c in conns:
        if c[2] is not None:
            continue
        try:
            if c[0].recv(4096) == b"":
                c[2] = time.monotonic() - c[1]
                continue
        except BlockingIOError:
            pass
        except OSError:
            c[2] = time.monotonic() - c[1]
            continue
        try:
            c[0].send(b"X-Slow: a\r\n")
        except OSError:
            pass
    time.sleep(1)
print(" ".join("%.2f" % c[2] if c[2] is not None else "open" for c in conns))
PY
SLOW_PID=$!
EP_PIDS+=("$SLOW_PID")
ep_wait_line "$EP_WORK/slow.ready" connected 10 "$SLOW_PID" || ep_fail "slowloris client: $(cat "$EP_WORK/slow.txt")"
for i in 1 2 3 4; do
	t=$(curl -sf -m 1 -o /dev/null -w '%{time_total}' "$URL") ||
		ep_fail "scrape $i with 8 slow connections open: no answer within 1 s"
	ep_log "scrape $i with 8 slow connections open: ${t} s"
	sleep 0.5
done
wait "$SLOW_PID" || ep_fail "slowloris client failed: $(cat "$EP_WORK/slow.txt")"
read -r -a CLOSED <"$EP_WORK/slow.txt"
[ "${#CLOSED[@]}" -eq 8 ] || ep_fail "slowloris: $(cat "$EP_WORK/slow.txt")"
for c in "${CLOSED[@]}"; do
	[ "$c" != open ] && awk -v c="$c" 'BEGIN { exit !(c < 4.0) }' ||
		ep_fail "slow connections closed after ${CLOSED[*]} s, want each by its 2 s deadline (+ the 1 s pace)"
done
ep_log "slow connections closed by the server after ${CLOSED[*]} s"

curl -sf -m 5 "$URL" >"$EP_WORK/scrape.0" || ep_fail "first scrape failed"
kill -USR1 "$EXP_PID"
ep_wait_exit "$EXP_PID" 60 || ep_fail "cycle_experiment did not finish"
grep -qx done "$EXP_OUT" || ep_fail "cycle_experiment did not finish its cycles"

# The modules refresh their figures once a second and the endpoint its
# snapshot every 250 ms: wait until a scrape shows every cycle closed and
# the llama_decode count settled (same in two scrapes 1.2 s apart).
deadline=$(($(ep_now_ms) + 20000))
prev=""
while :; do
	curl -sf -m 5 "$URL" >"$EP_WORK/scrape.1" || ep_fail "scrape failed"
	cur=$(grep -E '^ebpf_prof_(cycles_total|probe_calls_total\{probe="llama_decode")' "$EP_WORK/scrape.1" | sort)
	if grep -q '^ebpf_prof_cycles_total 8$' "$EP_WORK/scrape.1" && [ "$cur" = "$prev" ]; then
		break
	fi
	[ "$(ep_now_ms)" -lt "$deadline" ] || ep_fail "counters did not settle: $cur"
	prev=$cur
	sleep 1.2
done
promtool check metrics <"$EP_WORK/scrape.1" >"$EP_WORK/promtool.out" 2>&1 ||
	ep_fail "promtool check metrics: $(head -n 5 "$EP_WORK/promtool.out")"
curl -sf -m 5 -H 'Accept: application/openmetrics-text;version=1.0.0' "$URL" >"$EP_WORK/scrape.om" ||
	ep_fail "OpenMetrics scrape failed"
[ "$(tail -n 1 "$EP_WORK/scrape.om")" = "# EOF" ] || ep_fail "OpenMetrics scrape does not end with # EOF"

# Prometheus: ready, and has scraped the settled values at least once.
ep_wait_line_url()
{
	local deadline=$(($(ep_now_ms) + $2 * 1000))
	while [ "$(ep_now_ms)" -lt "$deadline" ]; do
		curl -sf -m 2 "$1" >"$EP_WORK/q.json" 2>/dev/null && grep -q "$3" "$EP_WORK/q.json" && return 0
		ep_pid_alive "$PROM_PID" || ep_fail "prometheus exited: $(tail -n 5 "$EP_WORK/prometheus.err")"
		sleep 0.2
	done
	return 1
}
ep_wait_line_url "http://127.0.0.1:$PPORT/-/ready" 60 "Ready" ||
	ep_fail "prometheus not ready: $(tail -n 5 "$EP_WORK/prometheus.err")"
ep_log "prometheus ready $(($(ep_now_ms) - T0)) ms after start"
Q="http://127.0.0.1:$PPORT/api/v1/query?query="
ep_wait_line_url "${Q}ebpf_prof_cycles_total" 30 '"value":\[[0-9.]*,"8"\]' ||
	ep_fail "prometheus never saw ebpf_prof_cycles_total 8: $(cat "$EP_WORK/q.json")"
# A second scrape stored: when prometheus got ready late (a loaded machine),
# its first scrape may be the one that saw 8.
ep_wait_line_url "${Q}count_over_time(ebpf_prof_cycles_total%5B5m%5D)" 30 \
	'"value":\[[0-9.]*,"\([2-9]\|[1-9][0-9][0-9]*\)"\]' ||
	ep_fail "prometheus never stored a second scrape: $(cat "$EP_WORK/q.json")"
for q in 'ebpf_prof_cycles_total' \
	"ebpf_prof_samples_total{pid=\"$EXP_PID\"}" \
	'ebpf_prof_probe_calls_total{probe="llama_decode"}' \
	'ebpf_prof_probe_duration_seconds_count{probe="llama_decode"}' \
	'ebpf_prof_cycle_duration_seconds_count' \
	'sum(ebpf_prof_cycle_component_seconds_total)' \
	'up{job="ebpf-prof"}' \
	'count_over_time(ebpf_prof_cycles_total[5m])' \
	'ebpf_prof_rss_bytes'; do
	enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$q")
	curl -sf -m 5 "$Q$enc" >>"$EP_WORK/prom.jsonl" || ep_fail "query $q failed"
	echo >>"$EP_WORK/prom.jsonl"
done
cp "$EP_WORK/scrape.1" "$EP_WORK/scrape.last"

kill -INT "$PROF_PID"
ep_wait_exit "$PROF_PID" 60 || ep_fail "ebpf-prof did not stop on SIGINT"
[ "$EP_EXIT_RC" -eq 0 ] || ep_fail "ebpf-prof exited $EP_EXIT_RC: $(tail -n 5 "$PROF_ERR")"

EXP_PID=$EXP_PID EXP_OUT=$EXP_OUT W=$EP_WORK ep_py "$EP_WORK/out" <<'PY'
exp = int(os.environ["EXP_PID"])
own_cycles = sum(1 for l in open(os.environ["EXP_OUT"]) if l.startswith("cycle "))
W = os.environ["W"]
res = [json.loads(l) for l in open(os.path.join(W, "prom.jsonl")) if l.strip()]
def val(i, labels=None):
    r = res[i]["data"]["result"]
    if labels:
        r = [x for x in r if all(x["metric"].get(k) == v for k, v in labels.items())]
    return [float(x["value"][1]) for x in r]
ncyc = len(R["cycles"])
probe = {p["label"]: p for p in R["probes"]["list"]}
exp_samples = sum(t["samples"] for t in R["threads"] if t["pid"] == exp)
info("report: %d cycles, llama_decode %d calls, %d samples of the experiment; prometheus: %r"
     % (ncyc, probe["llama_decode"]["count"], exp_samples, [val(i) for i in range(len(res))]))
check(ncyc == 8, "report.json has %d cycles, want 8" % ncyc)
check(val(0) == [ncyc], "prometheus ebpf_prof_cycles_total %r, report %d" % (val(0), ncyc))
# From outside: the cycles the experiment ran, one llama_decode call each.
check(own_cycles == 8 and val(0) == [own_cycles], "prometheus ebpf_prof_cycles_total %r, the experiment ran %d cycles" % (val(0), own_cycles))
check(val(2) == [own_cycles], "prometheus llama_decode calls %r, the experiment made %d" % (val(2), own_cycles))
# The experiment exited before these scrapes: its figures were final.
check(val(1) == [exp_samples], "prometheus samples of pid %d: %r, report %d" % (exp, val(1), exp_samples))
check(val(2) == [probe["llama_decode"]["count"]],
      "prometheus llama_decode calls %r, report %d" % (val(2), probe["llama_decode"]["count"]))
check(val(3) == [probe["llama_decode"]["completed"]],
      "prometheus llama_decode duration count %r, report completed %d" % (val(3), probe["llama_decode"]["completed"]))
check(val(4) == [ncyc], "cycle duration histogram count %r, want %d" % (val(4), ncyc))
walls = sum(c["wall_ns"] for c in R["cycles"]) / 1e9
comp = val(5)[0] if val(5) else 0
check(abs(comp - walls) <= 0.02 * walls, "components sum to %.3f s, cycles' walls %.3f s" % (comp, walls))
check(val(6) == [1], "up{job=ebpf-prof} %r" % val(6))
check(val(7) and val(7)[0] >= 2, "prometheus scraped %r times" % val(7))
check(len(val(8)) >= 1 and all(v > 0 for v in val(8)), "rss series: %r" % val(8))

# curl's scrapes: counters never go back.
def parse(path):
    out = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        k, v = line.rsplit(" ", 1)
        out[k] = float(v)
    return out
a, b = parse(os.path.join(W, "scrape.0")), parse(os.path.join(W, "scrape.last"))
for k, v in a.items():
    if "_total" in k or k.endswith("_count") or "_bucket" in k:
        check(k not in b or b[k] >= v, "%s went from %g to %g" % (k, v, b.get(k)))
PY
ep_log "ok"
