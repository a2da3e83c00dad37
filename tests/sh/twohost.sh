#!/bin/sh
# SPDX-License-Identifier: MIT
#
# twohost.sh - the README's "RDMA between two hosts" recipe, run as written.
#
# The command lines are taken from README.md itself (the block that follows
# "RDMA between two hosts:"): every "hostA$ CMD" runs in one network
# namespace (192.0.2.1/24), every "hostB$ CMD" in a second one (192.0.2.2/24),
# joined by a veth pair.  "hostA" in a command becomes 192.0.2.1 and
# "build/bin/" the directory of the tools under test; nothing else is
# changed, so the ports are the tools' defaults (the namespaces are private to
# this test).  The block alternates servers (hostA) and their clients (hostB):
# each server is started, its port waited for (ss in its namespace), then its
# client runs, bounded, and must exit 0 with the output its flags promise.  A
# server that is still running after its client (uiw-ping -P) is stopped with
# SIGTERM; one that exits on its own (uiw-perf) must exit 0.
#
# Environment: UIW_BIN (directory of the tools, default build/bin).
# Exit status: 0 pass, 77 skip (the reason on stdout), anything else fail.
# Needs root, ip (iproute2), ss and timeout (coreutils).

set -u

me=twohost.sh
say() { echo "$me: $*"; }
skip() {
	say "SKIP: $*"
	exit 77
}
fails=0
fail() {
	say "FAIL: $*"
	fails=$((fails + 1))
}
pass() { say "ok: $*"; }

bin=${UIW_BIN:-build/bin}
readme=${UIW_README:-README.md}
ns_a=uiw-2h-a-$$
ns_b=uiw-2h-b-$$
if_a=uiw2a$$
if_b=uiw2b$$
addr_a=192.0.2.1
addr_b=192.0.2.2
tmp=
pids=
made_a=
made_b=

# shellcheck disable=SC2317 # runs from the trap
reap() {
	kill -TERM "$1" 2>/dev/null || {
		wait "$1" 2>/dev/null
		return 0
	}
	i=0
	while kill -0 "$1" 2>/dev/null && [ "$i" -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# shellcheck disable=SC2317
cleanup() {
	rc=$?
	trap - EXIT INT TERM
	for p in $pids; do reap "$p"; done
	for ns in ${made_a:+"$ns_a"} ${made_b:+"$ns_b"}; do
		for p in $(timeout 10 ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		timeout 10 ip netns del "$ns" 2>/dev/null ||
			echo "$me: warning: could not delete namespace $ns" >&2
	done
	[ -n "$tmp" ] && rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

# ---- the recipe, from the README ----------------------------------------------

[ -r "$readme" ] || { say "FAIL: $readme not found (run from the top of the tree)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/uiw-twohost.XXXXXX") || exit 1
# the fenced block after the line "RDMA between two hosts:", host lines only
awk '/^RDMA between two hosts:/ { inb = 1; next }
	inb && /^```/ { if (++fence == 2) exit; next }
	inb && fence == 1 && /^host[AB]\$ / { print }' "$readme" |
	sed -e 's/[[:space:]]*#.*$//' >"$tmp/recipe"
n=$(wc -l <"$tmp/recipe")
if [ "$n" -lt 2 ] || [ $((n % 2)) -ne 0 ]; then
	say "FAIL: README.md: expected server/client line pairs in the two-host block, found:"
	cat "$tmp/recipe"
	exit 1
fi

for t in uiw-perf uiw-ping; do
	[ -x "$bin/$t" ] || { say "FAIL: $bin/$t not found (build first)"; exit 1; }
done
[ "$(id -u)" = 0 ] || skip "network namespaces need root (uid $(id -u))"
for c in ip ss timeout; do
	command -v "$c" >/dev/null 2>&1 || skip "$c not installed"
done
if ! out=$(timeout 10 ip netns add "$ns_a" 2>&1); then
	skip "cannot create a network namespace (ip netns add: $out)"
fi
made_a=1
if ! out=$(timeout 10 ip netns add "$ns_b" 2>&1); then
	skip "cannot create a second network namespace (ip netns add: $out)"
fi
made_b=1
if ! out=$(timeout 10 ip netns exec "$ns_a" true 2>&1); then
	skip "cannot enter a network namespace (ip netns exec: $out)"
fi
if ! out=$(timeout 10 ip link add "$if_a" type veth peer name "$if_b" 2>&1); then
	skip "cannot create a veth pair (ip link add: $out)"
fi
timeout 10 ip link set "$if_a" netns "$ns_a" &&
	timeout 10 ip link set "$if_b" netns "$ns_b" &&
	timeout 10 ip -n "$ns_a" addr add "$addr_a/24" dev "$if_a" &&
	timeout 10 ip -n "$ns_b" addr add "$addr_b/24" dev "$if_b" &&
	timeout 10 ip -n "$ns_a" link set "$if_a" up &&
	timeout 10 ip -n "$ns_b" link set "$if_b" up &&
	timeout 10 ip -n "$ns_a" link set lo up &&
	timeout 10 ip -n "$ns_b" link set lo up || {
	say "FAIL: could not configure the veth pair"
	exit 1
}
# the link is up once B reaches A (duplicate address detection, carrier)
i=0
until timeout 5 ip netns exec "$ns_b" ping -c 1 -W 1 "$addr_a" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -ge 10 ]; then
		command -v ping >/dev/null 2>&1 || break # no ping: go on, the tools will tell
		say "FAIL: $addr_b cannot reach $addr_a"
		exit 1
	fi
	sleep 0.2
done

# CMD: the recipe line's command with hostA and build/bin/ substituted
subst() {
	printf '%s\n' "$1" | sed -e "s/^host[AB]\\$ //" -e "s|build/bin/|$bin/|g" \
		-e "s/\\<hostA\\>/$addr_a/g" -e "s/\\<hostB\\>/$addr_b/g"
}

# port_of CMDLINE: the TCP port the server listens on (its -p, else its default)
port_of() {
	p=$(printf '%s\n' "$1" | sed -n 's/.* -p \([0-9][0-9]*\).*/\1/p')
	[ -n "$p" ] && { echo "$p"; return; }
	case "$1" in
	*uiw-perf*) echo 18515 ;;
	*uiw-ping*) echo 7174 ;;
	esac
}

k=0
while [ "$k" -lt "$n" ]; do
	srv_line=$(sed -n "$((k + 1))p" "$tmp/recipe")
	cli_line=$(sed -n "$((k + 2))p" "$tmp/recipe")
	k=$((k + 2))
	case "$srv_line" in hostA\$*) ;; *) fail "line '$srv_line': a hostA (server) line expected" && continue ;; esac
	case "$cli_line" in hostB\$*) ;; *) fail "line '$cli_line': a hostB (client) line expected" && continue ;; esac
	srv=$(subst "$srv_line")
	cli=$(subst "$cli_line")
	port=$(port_of "$srv")
	say "pair $((k / 2)): A: $srv"
	say "        B: $cli"
	# shellcheck disable=SC2086 # the recipe's words
	ip netns exec "$ns_a" timeout -k 5 60 $srv >"$tmp/srv$k.out" 2>&1 &
	spid=$!
	pids="$pids $spid"
	i=0
	until timeout 10 ip netns exec "$ns_a" ss -Hltn "( sport = :$port )" 2>/dev/null | grep -q .; do
		i=$((i + 1))
		if [ "$i" -ge 100 ] || ! kill -0 "$spid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	t0=$(date +%s)
	# shellcheck disable=SC2086
	ip netns exec "$ns_b" timeout -k 5 60 $cli >"$tmp/cli$k.out" 2>&1
	crc=$?
	t1=$(date +%s)
	# a server that serves one run exits by itself; a persistent one is stopped
	i=0
	while kill -0 "$spid" 2>/dev/null && [ "$i" -lt 50 ]; do
		case "$srv" in *" -P"*) break ;; esac
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$spid" 2>/dev/null; then
		kill -TERM "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
		src=stopped
	else
		wait "$spid"
		src=$?
	fi
	pids=$(echo "$pids" | sed "s/ $spid\$//")
	ok=1
	[ "$crc" = 0 ] || { fail "client exit status $crc after $((t1 - t0)) s: $cli"; ok=0; }
	case "$srv" in
	*" -P"*) ;;
	*) [ "$src" = 0 ] || { fail "server exit status $src: $srv"; ok=0; } ;;
	esac
	case "$cli" in
	*uiw-perf*)
		# one result line: the size, then figures
		grep -Eq '^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+' "$tmp/cli$k.out" ||
			{ fail "no uiw-perf result line in the client's output"; ok=0; }
		;;
	*uiw-ping*)
		cnt=$(printf '%s\n' "$cli" | sed -n 's/.* -C \([0-9][0-9]*\).*/\1/p')
		got=$(grep -c '^ping data: ' "$tmp/cli$k.out")
		[ "$got" = "${cnt:-1}" ] ||
			{ fail "uiw-ping client printed $got ping data lines, expected ${cnt:-?}"; ok=0; }
		;;
	esac
	if [ "$ok" = 1 ]; then
		pass "pair $((k / 2)) across namespaces: ${cli%% *} client exit 0 in $((t1 - t0)) s"
	else
		say "--- server output:"
		cat "$tmp/srv$k.out"
		say "--- client output:"
		cat "$tmp/cli$k.out"
	fi
done

if [ "$fails" -ne 0 ]; then
	say "$fails checks failed"
	exit 1
fi
say "all checks passed"
exit 0
