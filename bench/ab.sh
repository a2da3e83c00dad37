#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/ab.sh: two builds of uiwarp side by side, interleaved, with raw TCP
# in the same minutes: the proof a change of the engine needs (is B faster
# than A, and by how much of TCP?).  See --help.
set -u

usage() {
	cat <<'EOF'
Usage: sh bench/ab.sh [-r REPS] [-D SECS] [-s SIZE] [-t TESTS] [-a ENV] [-b ENV] BUILD_A BUILD_B

Runs uiw-perf of two builds (directories with bin/uiw-perf, e.g. an older
commit built with `make O=build-old` and the tree's build/) in turn, each
configuration A then B (B then A on even repetitions), REPS times, over
127.0.0.1 with kernel-chosen ports, and raw TCP (`uiw-perf tcp_bw`, writes
of 65483 octets, one loopback segment) once per repetition.  Prints one
line per run on standard error and, at the end, per configuration: the
median MB/s of A and of B (min..max), B/A, and each over the median raw
TCP; CPU seconds per GiB (client and server together) and the receiver's
user-space copies per payload octet where build B reports them (builds
before engine v3 do not).

  -r REPS    repetitions (default 3)
  -D SECS    seconds per run (default 2)
  -s SIZE    message size (default 65536)
  -t TESTS   comma-separated configurations (default
             write_c1,write_c0,send_c1,read_c1,write_mk); known:
             write_c0 write_c1 write_mk send_c0 send_c1 read_c0 read_c1
             write_imm (c0/c1: CRC off/on; mk: markers, CRC on);
             latency (2-octet messages, half round trip, t_typical):
             lat_send_pt lat_write_pt (progress-thread context, the
             application busy-polls its CQ: the model of a libibverbs
             program under uiw-run), lat_send_ev (progress thread, the
             application waits in uiw_get_cq_event()), lat_send_poll
             (polled context); with raw TCP's tcp_lat busy-poll and
             blocking in the same repetitions
  -a ENV     environment of build A's runs, NAME=VALUE[,NAME=VALUE...]
  -b ENV     the same for build B (one build twice with two
             environments: -a UIW_APP_TURNS=0 measures what the
             application's own engine turns bring)

Quiet machine only: other load makes the ratios mean little.
EOF
}

case "${1:-}" in --help | -h) usage; exit 0 ;; esac
REPS=3
SECS=2
SIZE=65536
TESTS=write_c1,write_c0,send_c1,read_c1,write_mk
ENV_A=
ENV_B=
while getopts "r:D:s:t:a:b:h" o; do
	case $o in
	r) REPS=$OPTARG ;;
	D) SECS=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	t) TESTS=$OPTARG ;;
	a) ENV_A=$(echo "$OPTARG" | tr , ' ') ;;
	b) ENV_B=$(echo "$OPTARG" | tr , ' ') ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -ne 2 ]; then usage >&2; exit 2; fi
A=$1
B=$2
for d in "$A" "$B"; do
	if [ ! -x "$d/bin/uiw-perf" ]; then
		echo "ab.sh: $d/bin/uiw-perf is not built" >&2
		exit 2
	fi
done
command -v python3 >/dev/null 2>&1 || { echo "ab.sh: needs python3" >&2; exit 2; }
TMP=$(mktemp -d /tmp/uiw-ab.XXXXXX)
trap 'rm -rf "$TMP"; kill $SPID 2>/dev/null' EXIT INT TERM
SPID=

args_of() {
	case $1 in
	write_c0) echo "write_bw --crc off" ;;
	write_c1) echo "write_bw --crc on" ;;
	write_mk) echo "write_bw --crc on --markers on" ;;
	send_c0) echo "send_bw --crc off" ;;
	send_c1) echo "send_bw --crc on" ;;
	read_c0) echo "read_bw --crc off" ;;
	read_c1) echo "read_bw --crc on" ;;
	write_imm) echo "write_imm_bw --crc on" ;;
	lat_send_pt) echo "send_lat --poll --progress thread" ;;
	lat_write_pt) echo "write_lat --poll --progress thread" ;;
	lat_send_ev) echo "send_lat -e" ;;
	lat_send_poll) echo "send_lat --poll" ;;
	tcp) echo "tcp_bw" ;;
	tcp_lat_poll) echo "tcp_lat --poll" ;;
	tcp_lat_block) echo "tcp_lat -e" ;;
	*) return 1 ;;
	esac
}

# run LABEL BUILD CONFIG SIZE: one server/client pair; appends a JSON line
# {label, cfg, rep, client, server} to $TMP/runs
run() {
	label=$1 bin=$2/bin/uiw-perf cfg=$3 size=$4
	case $label in A) env=$ENV_A ;; B) env=$ENV_B ;; *) env= ;; esac
	case $cfg in lat_* | tcp_lat*) size=2 ;; esac
	# shellcheck disable=SC2046
	set -- $(args_of "$cfg")
	: >"$TMP/s"
	# shellcheck disable=SC2086
	env $env "$bin" "$@" -s "$size" -D "$SECS" -p 0 --json >"$TMP/s" 2>"$TMP/s.err" &
	SPID=$!
	port=
	i=0
	while [ $i -lt 100 ] && [ -z "$port" ]; do
		port=$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$TMP/s" | head -1)
		[ -n "$port" ] || sleep 0.05
		i=$((i + 1))
	done
	if [ -z "$port" ]; then
		echo "ab.sh: $label $cfg: the server did not listen: $(head -c 200 "$TMP/s.err")" >&2
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
		return 1
	fi
	# shellcheck disable=SC2086
	timeout $((SECS * 4 + 30)) env $env "$bin" "$@" -s "$size" -D "$SECS" -p "$port" --json 127.0.0.1 \
		>"$TMP/c" 2>"$TMP/c.err"
	crc=$?
	timeout 30 sh -c "wait $SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
	SPID=
	python3 - "$TMP" "$label" "$cfg" "$rep" "$crc" <<'EOF' >>"$TMP/runs"
import json, sys
tmp, label, cfg, rep, crc = sys.argv[1:]
def last(path):
    r = {}
    for l in open(path):
        l = l.strip()
        if l.startswith("{") and ("bw_avg_MBps" in l or "t_typical_us" in l):
            r = json.loads(l)
    return r
c, s = last(tmp + "/c"), last(tmp + "/s")
print(json.dumps({"label": label, "cfg": cfg, "rep": int(rep), "ok": crc == "0" and bool(c),
                  "client": c, "server": s}))
EOF
	tail -1 "$TMP/runs" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
c = r["client"]
fig = ("%8.2f us" % c["t_typical_us"]) if "t_typical_us" in c else ("%8.0f MB/s" % c.get("bw_avg_MBps", 0))
print("rep %d %-3s %-13s %s%s" % (r["rep"], r["label"], r["cfg"], fig,
      "" if r["ok"] else "  (failed)"), file=sys.stderr)'
}

rep=1
while [ $rep -le "$REPS" ]; do
	for cfg in $(echo "$TESTS" | tr , ' '); do
		args_of "$cfg" >/dev/null || { echo "ab.sh: unknown configuration $cfg" >&2; exit 2; }
		if [ $((rep % 2)) = 1 ]; then
			run A "$A" "$cfg" "$SIZE"
			run B "$B" "$cfg" "$SIZE"
		else
			run B "$B" "$cfg" "$SIZE"
			run A "$A" "$cfg" "$SIZE"
		fi
	done
	case ,$TESTS, in *,write_* | *,send_c* | *,read_* | *,write_imm*) run T "$B" tcp 65483 ;; esac
	case ,$TESTS, in *,lat_*)
		run T "$B" tcp_lat_poll 2
		run T "$B" tcp_lat_block 2
		;;
	esac
	rep=$((rep + 1))
done

python3 - "$TMP/runs" "$A" "$B" "$SIZE" "${ENV_A:-}" "${ENV_B:-}" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
A, B, size = sys.argv[2], sys.argv[3], sys.argv[4]
def med(v):
    return statistics.median(v) if v else float("nan")
def bw(label, cfg):
    return [r["client"]["bw_avg_MBps"] for r in runs if r["label"] == label and r["cfg"] == cfg and r["ok"]]
def lat(label, cfg):
    return [r["client"]["t_typical_us"] for r in runs if r["label"] == label and r["cfg"] == cfg and r["ok"]]
tcp = med(bw("T", "tcp"))
lcfgs = [c for c in dict.fromkeys(r["cfg"] for r in runs if r["label"] != "T") if c.startswith("lat_")]
if lcfgs:
    tp, tb = med(lat("T", "tcp_lat_poll")), med(lat("T", "tcp_lat_block"))
    rng = lambda v: "%.2f (%.2f..%.2f)" % (med(v), min(v), max(v)) if v else "-"
    print("A = %s %s, B = %s %s; 2-octet half round trips, t_typical us (median of runs); raw TCP "
          "busy-poll %s, blocking %s" % (A, " ".join(sys.argv[5:6]), B, " ".join(sys.argv[6:7]),
                                           rng(lat("T", "tcp_lat_poll")), rng(lat("T", "tcp_lat_block"))))
    print("%-14s %-22s %-22s %-7s %-9s %-9s" % ("config", "A us (min..max)", "B us (min..max)", "B/A",
          "A/TCP", "B/TCP"))
    for cfg in lcfgs:
        a, b = lat("A", cfg), lat("B", cfg)
        t = tb if cfg == "lat_send_ev" else tp
        print("%-14s %-22s %-22s %-7.2f %-9.2f %-9.2f" % (cfg, rng(a), rng(b), med(b) / med(a),
              med(a) / t, med(b) / t))
    print("(A/TCP, B/TCP: over TCP busy-poll, lat_send_ev over TCP blocking)")
if not [c for c in dict.fromkeys(r["cfg"] for r in runs if r["label"] != "T") if not c.startswith("lat_")]:
    sys.exit(0)
print("A = %s, B = %s, %s-octet messages; raw TCP (65483-octet writes): %.0f MB/s (median of %d)"
      % (A, B, size, tcp, len(bw("T", "tcp"))))
print("%-10s %-22s %-22s %-7s %-7s %-7s %-13s %s" % ("config", "A MB/s (min..max)", "B MB/s (min..max)",
      "B/A", "A/TCP", "B/TCP", "CPU s/GiB A,B", "B rx copies/octet"))
for cfg in [c for c in dict.fromkeys(r["cfg"] for r in runs if r["label"] != "T") if not c.startswith("lat_")]:
    a, b = bw("A", cfg), bw("B", cfg)
    def cpu(label):
        v = [r["client"].get("cpu_s_per_GiB") for r in runs if r["label"] == label and r["cfg"] == cfg and r["ok"]]
        v = [x for x in v if x is not None]
        return "%.2f" % med(v) if v else "-"
    cp = []
    for r in runs:
        if r["label"] == "B" and r["cfg"] == cfg and r["ok"]:
            # the receiver's: the server's for Write/Send, the client's for Read
            side = r["client"] if cfg.startswith("read") else r["server"]
            if "copies_rx" in side:
                cp.append(side["copies_rx"])
    rng = lambda v: "%.0f (%.0f..%.0f)" % (med(v), min(v), max(v)) if v else "-"
    print("%-10s %-22s %-22s %-7.2f %-7.2f %-7.2f %-13s %s" % (cfg, rng(a), rng(b), med(b) / med(a),
          med(a) / tcp, med(b) / tcp, cpu("A") + "," + cpu("B"), "%.4f" % med(cp) if cp else "-"))
EOF
