#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make deb-check: the Debian packages that make deb built (UIW_DEB_DIR),
# used as a user of them would, on this machine:
#   - each package holds what it should (dpkg-deb -c): libuiw0 the shared
#     library and its SONAME link only; libuiw-dev the headers, libuiw.so,
#     libuiw.a, uiw.pc, the section 3 pages; uiwarp-tools the four tools and
#     their section 1 pages and uiwarp(7);
#   - apt-get install of the three .deb files; then man finds the pages
#     (man -w), whatis reads their NAME lines, a program using both headers
#     builds with pkg-config against /usr dynamically and statically and runs;
#   - uiw-ping from the package between two network namespaces joined by a
#     veth pair: a server in one, a client with -C 5 -V in the other;
#   - apt-get purge of the three leaves none of their files.
# Needs root; refuses (fails) when one of the packages is installed already,
# so as never to remove what it did not install.  Exit 0 pass, 77 skip, else
# fail.  Every wait is bounded; namespaces, processes and the temporary
# directory go on exit, and the packages are purged whatever happened.

set -u
ME=deb-check
. "$(dirname "$0")/../sh/common.inc"

D=${UIW_DEB_DIR:-build/deb}
PKGS="libuiw0 libuiw-dev uiwarp-tools"
T=30
[ "$(id -u)" = 0 ] || { echo "deb-check.sh: skipped: installing packages needs root"; exit 77; }
for c in apt-get dpkg-deb cc pkg-config man whatis ip timeout; do
	command -v "$c" >/dev/null 2>&1 || { echo "deb-check.sh: skipped: $c is missing"; exit 77; }
done
debs=""
for p in $PKGS; do
	f=$(ls "$D"/${p}_*.deb 2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo "deb-check.sh: no $p package in $D (make deb first)"; exit 1; }
	debs="$debs $(cd "$(dirname "$f")" && pwd)/$(basename "$f")"
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		echo "deb-check.sh: $p is installed already: remove it first (not removed here)"
		exit 1
	fi
done

# ---- contents
contents() { dpkg-deb -c "$D/$1"_*.deb | awk '{ print $6 }' | sed 's|^\./|/|'; }
has() { # PACKAGE REGEX...
	p=$1
	shift
	contents "$p" >"$TMP/list"
	for re in "$@"; do
		grep -Eq "$re" "$TMP/list" || fail "$p lacks a file matching $re"
	done
}
F0=$FAILS
has libuiw0 '^/usr/lib/[^/]+/libuiw\.so\.0$' '^/usr/lib/[^/]+/libuiw\.so\.0\.[0-9]+\.[0-9]+$'
grep -Eq '/usr/(include|bin)|\.a$|/libuiw\.so$' "$TMP/list" && fail "libuiw0 holds development files or tools"
has libuiw-dev '^/usr/include/uiw_verbs\.h$' '^/usr/include/rpc_rdma\.h$' '^/usr/lib/[^/]+/libuiw\.so$' \
	'^/usr/lib/[^/]+/libuiw\.a$' '^/usr/lib/[^/]+/pkgconfig/uiw\.pc$' \
	'^/usr/share/man/man3/uiw_verbs\.3\.gz$' '^/usr/share/man/man3/rpc_rdma\.3\.gz$' \
	'^/usr/share/man/man3/uiw_post_send\.3\.gz$'
has uiwarp-tools '^/usr/bin/uiw-ping$' '^/usr/bin/uiw-perf$' '^/usr/bin/uiw-rpcinfo$' '^/usr/bin/uiw-nfscp$' \
	'^/usr/share/man/man1/uiw-ping\.1\.gz$' '^/usr/share/man/man1/uiw-perf\.1\.gz$' \
	'^/usr/share/man/man1/uiw-rpcinfo\.1\.gz$' '^/usr/share/man/man1/uiw-nfscp\.1\.gz$' \
	'^/usr/share/man/man7/uiwarp\.7\.gz$' '^/usr/bin/uiw-run$' '^/usr/lib/[^/]+/uiwarp/libuiw-rdma\.so$'
[ "$FAILS" = "$F0" ] && pass "package contents"

# ---- install; purged on exit whatever happens
purge() {
	timeout 300 env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $PKGS >"$TMP/purge.log" 2>&1
}
installed=""
nsdel=""
finish() {
	for n in $nsdel; do
		for p in $(timeout 10 ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
		timeout 10 ip netns del "$n" 2>/dev/null
	done
	[ -n "$installed" ] && purge
	cleanup
}
trap finish EXIT
installed=1
# shellcheck disable=SC2086
if ! timeout 600 env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debs >"$TMP/apt.log" 2>&1; then
	tail -n 20 "$TMP/apt.log"
	fail "apt-get install of$debs failed"
	end_checks
fi
pass "apt-get install ./libuiw0 ./libuiw-dev ./uiwarp-tools"

# ---- man, whatis
F0=$FAILS
for pg in 1:uiw-ping 1:uiw-perf 1:uiw-rpcinfo 1:uiw-nfscp 3:uiw_verbs 3:rpc_rdma 3:uiw_post_send \
	3:svc_rdma_create 7:uiwarp; do
	s=${pg%%:*}
	n=${pg#*:}
	w=$(man -w "$s" "$n" 2>/dev/null)
	case $w in /usr/share/man/man$s/*) ;; *) fail "man -w $s $n: '$w'" ;; esac
	MANWIDTH=200 timeout "$T" man "$s" "$n" 2>/dev/null | grep -qw "$n" || fail "man $s $n does not show $n"
done
# whatis reads the index mandb made when the packages were installed
timeout "$T" mandb -q 2>/dev/null
for n in uiw-ping uiw_verbs uiwarp; do
	timeout "$T" whatis "$n" 2>/dev/null | grep -Eq "^$n \([137]\) +- " || fail "whatis $n: $(whatis "$n" 2>&1)"
done
[ "$FAILS" = "$F0" ] && pass "man finds the pages in /usr/share/man, whatis reads them"

# ---- a program against the installed packages, dynamic and static
cat >"$TMP/v.c" <<'EOF'
#include <stdio.h>
#include <rpc/rpc.h>
#include <rpc_rdma.h>
#include <uiw_verbs.h>

int main(void)
{
	struct uiw_context *ctx;
	SVCXPRT *x;

	if (uiw_open_context(&ctx, NULL) < 0 || uiw_close_context(ctx) < 0)
		return 2;
	x = svc_rdma_create("127.0.0.1", 0, NULL);
	if (!x)
		return 3;
	printf("uiwarp %s crc32c %08x\n", uiw_version(), uiw_crc32c("123456789", 9));
	svc_destroy(x);
	return 0;
}
EOF
V=$(pkg-config --modversion uiw)
exp="uiwarp $V crc32c e3069283"
F0=$FAILS
# shellcheck disable=SC2046
if (cd "$TMP" && cc -o v_dyn v.c $(pkg-config --cflags --libs uiw)) >"$TMP/cc.log" 2>&1; then
	out=$(timeout "$T" "$TMP/v_dyn")
	[ "$out" = "$exp" ] || fail "dynamic program: '$out', expected '$exp'"
	objdump -p "$TMP/v_dyn" | grep -q 'NEEDED.*libuiw\.so\.0' || fail "dynamic program does not need libuiw.so.0"
else
	fail "dynamic build against the package: $(head -n 3 "$TMP/cc.log")"
fi
# shellcheck disable=SC2046
if (cd "$TMP" && cc -o v_static v.c $(pkg-config --cflags uiw) \
	$(pkg-config --static --libs uiw | sed 's/-luiw/-Wl,-Bstatic -luiw -Wl,-Bdynamic/')) >"$TMP/cc.log" 2>&1; then
	out=$(timeout "$T" "$TMP/v_static")
	[ "$out" = "$exp" ] || fail "static program: '$out', expected '$exp'"
	objdump -p "$TMP/v_static" | grep -q 'NEEDED.*libuiw' && fail "static program needs libuiw.so"
else
	fail "static build against the package: $(head -n 3 "$TMP/cc.log")"
fi
[ "$FAILS" = "$F0" ] && pass "a program built with pkg-config against the packages, dynamic and static: $exp"

# ---- uiw-run from the package finds the packaged libuiw-rdma.so
if command -v ibv_devices >/dev/null 2>&1; then
	if timeout "$T" /usr/bin/uiw-run ibv_devices >"$TMP/devices" 2>&1 && grep -q uiw0 "$TMP/devices"; then
		pass "uiw-run (package) ibv_devices lists uiw0"
	else
		fail "uiw-run (package) ibv_devices: $(head -n 3 "$TMP/devices" | tr '\n' ' ')"
	fi
fi

# ---- uiw-ping from the package between two network namespaces
ns_s=uiw-deb-s-$$
ns_c=uiw-deb-c-$$
if ! timeout 10 ip netns add "$ns_s" 2>/dev/null; then
	echo "deb-check.sh: network namespaces unavailable: uiw-ping run skipped"
	[ "${UIW_REQUIRE_ALL:-0}" != 1 ] || fail "UIW_REQUIRE_ALL=1 requires the uiw-ping run"
else
	nsdel="$ns_s"
	timeout 10 ip netns add "$ns_c" && nsdel="$nsdel $ns_c"
	timeout 10 ip link add uiwds$$ type veth peer name uiwdc$$ &&
		timeout 10 ip link set uiwds$$ netns "$ns_s" &&
		timeout 10 ip link set uiwdc$$ netns "$ns_c" &&
		timeout 10 ip -n "$ns_s" addr add 192.0.2.1/24 dev uiwds$$ &&
		timeout 10 ip -n "$ns_c" addr add 192.0.2.2/24 dev uiwdc$$ &&
		timeout 10 ip -n "$ns_s" link set uiwds$$ up && timeout 10 ip -n "$ns_c" link set uiwdc$$ up &&
		timeout 10 ip -n "$ns_s" link set lo up && timeout 10 ip -n "$ns_c" link set lo up ||
		fail "could not set up the veth pair between $ns_s and $ns_c"
	timeout "$T" ip netns exec "$ns_s" /usr/bin/uiw-ping -s -a 192.0.2.1 -p 0 >"$TMP/srv.log" 2>&1 &
	PIDS="$PIDS $!"
	port=$(wait_for "$TMP/srv.log" 's/^uiw-ping: listening on [^ ]* port \([0-9][0-9]*\)$/\1/p' "$T")
	if [ -z "$port" ]; then
		fail "uiw-ping server printed no port: $(head -n 3 "$TMP/srv.log")"
	elif timeout "$T" ip netns exec "$ns_c" /usr/bin/uiw-ping -c -a 192.0.2.1 -p "$port" -C 5 -V \
		>"$TMP/cli.log" 2>&1; then
		pass "uiw-ping (package) between two network namespaces: 5 validated pings"
	else
		fail "uiw-ping client in $ns_c: $(tail -n 3 "$TMP/cli.log" | tr '\n' ' ')"
	fi
fi

# ---- purge
installed=""
if ! purge; then
	fail "apt-get purge failed: $(tail -n 3 "$TMP/purge.log")"
else
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" && fail "$p still installed"
	done
	for f in /usr/bin/uiw-ping /usr/include/uiw_verbs.h; do
		[ -e "$f" ] && fail "$f still there after the purge"
	done
	[ "$FAILS" = 0 ] && pass "apt-get purge removed the three packages"
fi

end_checks
