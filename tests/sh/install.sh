#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make install as a user runs it, into temporary prefixes, and the installed
# tree used as a user would:
#   - make install PREFIX=TMP/prefix with the build directory of this run
#     (nothing may be rebuilt): the static and shared library with its
#     SONAME links, every public header, uiw.pc, the tools (uiw-run
#     among them), libuiw-rdma.so, the man pages (sections 1, 3, 7) and
#     the documentation;
#   - the installed uiw-run finds the installed libuiw-rdma.so: ibv_devices
#     (when ibverbs-utils is installed) lists uiw0;
#   - uiw.pc names that prefix; every installed header compiles on its own
#     with only pkg-config's flags; every exported function is declared in
#     an installed header and has a man page that mentions it;
#   - a small program (both headers: version, CRC32C, a context, an RDMA
#     RPC server transport) and the API example client and server installed
#     in the documentation, built with pkg-config against the installed tree
#     dynamically and with libuiw.a (pkg-config --static), run: the examples
#     move data over 127.0.0.1, a dynamic server with a static client and
#     the other way round;
#   - man -M finds each page; every page renders without a groff or man
#     warning and has a NAME line that lexgrog (whatis) reads;
#   - make install PREFIX=/opt/... DESTDIR=TMP/stage writes only under the
#     stage, and its uiw.pc names the prefix, not the stage;
#   - make uninstall leaves no file behind.
# Exit 0 pass, 77 skip, anything else fail.  Every wait is bounded (make and
# each program run under timeout(1)); the temporary tree is removed on exit.
# Env: UIW_BIN (the run's build directory is its parent), UIW_SAN (the
# sanitizers of that build: the programs are built with them too).

set -u
ME=install
. "$(dirname "$0")/common.inc"

BIN=${UIW_BIN:-build/bin}
O=$(dirname "$BIN")
SAN=${UIW_SAN:-}
for c in cc make pkg-config man groff lexgrog nm objdump timeout stdbuf; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "install.sh: skipped: $c is not installed (make deps-test installs it)"
		exit 77
	fi
done
if [ ! -f Makefile ] || [ ! -d "$O/obj" ]; then
	echo "install.sh: run from the top folder after a build ($O/obj is missing)"
	exit 1
fi
# bounds in seconds: one make, one program run
if [ -n "$SAN" ]; then T=60; else T=30; fi
CCSAN=""
[ -n "$SAN" ] && CCSAN="-fsanitize=$SAN"

# a section's verdict: ok only when none of its checks failed
F0=0
begin() { F0=$FAILS; }
done_ok() { [ "$FAILS" = "$F0" ] && pass "$@"; }

# make as a user would start it: not as part of the make check that runs us
mk() {
	timeout $((T * 4)) env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make --no-print-directory O="$O" SAN="$SAN" "$@"
}

P=$TMP/prefix
if ! mk install PREFIX="$P" >"$TMP/install.log" 2>&1; then
	tail -n 20 "$TMP/install.log"
	fail "make install PREFIX=$P failed"
	end_checks
fi
pass "make install PREFIX=TMP/prefix"
if grep -E '^  (CC|LD|AR|MD2MAN|RPCGEN) ' "$TMP/install.log" >"$TMP/rebuilt"; then
	fail "make install rebuilt what the build had made: $(head -n 3 "$TMP/rebuilt" | tr '\n' ' ')"
else
	pass "make install rebuilt nothing"
fi

# ---- files
begin
VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
SOVER=$(sed -n 's/^SOVERSION *:= *//p' Makefile)
for f in lib/libuiw.a "lib/libuiw.so.$VERSION" include/uiw_verbs.h include/rpc_rdma.h \
	lib/pkgconfig/uiw.pc share/man/man7/uiwarp.7 share/man/man3/uiw_verbs.3 \
	share/man/man3/rpc_rdma.3 share/doc/uiwarp/API.md share/doc/uiwarp/RPC-API.md; do
	[ -f "$P/$f" ] || fail "$f is not installed"
done
[ "$(readlink "$P/lib/libuiw.so.$SOVER")" = "libuiw.so.$VERSION" ] ||
	fail "lib/libuiw.so.$SOVER is not a link to libuiw.so.$VERSION"
[ "$(readlink "$P/lib/libuiw.so")" = "libuiw.so.$SOVER" ] ||
	fail "lib/libuiw.so is not a link to libuiw.so.$SOVER"
soname=$(objdump -p "$P/lib/libuiw.so.$VERSION" | awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libuiw.so.$SOVER" ] || fail "SONAME is '$soname', not libuiw.so.$SOVER"
ntools=0
for t in "$BIN"/uiw-*; do
	[ -x "$t" ] || continue
	ntools=$((ntools + 1))
	n=$(basename "$t")
	if [ "$n" = uiw-run ]; then
		# the installed script names where make install put the library
		grep -q "^UIW_RDMA_INSTALLED=$P/lib/uiwarp/libuiw-rdma.so\$" "$P/bin/$n" ||
			fail "bin/uiw-run is not installed, or does not name $P/lib/uiwarp/libuiw-rdma.so"
	else
		cmp -s "$t" "$P/bin/$n" || fail "bin/$n is not installed (or differs from the build's)"
	fi
	[ -f "$P/share/man/man1/$n.1" ] || fail "share/man/man1/$n.1 is not installed"
done
[ "$ntools" -ge 5 ] || fail "only $ntools tools in $BIN"
[ -f "$P/bin/uiw-run" ] || fail "bin/uiw-run is not installed"
cmp -s "$O/libuiw-rdma.so" "$P/lib/uiwarp/libuiw-rdma.so" ||
	fail "lib/uiwarp/libuiw-rdma.so is not installed (or differs from the build's)"
done_ok "library, SONAME links, headers, uiw.pc, $ntools tools, man pages and docs in place"

# ---- uiw-run with the installed library (not the build tree's)
if [ -z "$SAN" ] && command -v ibv_devices >/dev/null 2>&1; then
	if timeout "$T" "$P/bin/uiw-run" ibv_devices >"$TMP/devices" 2>&1 &&
		grep -q '^ *uiw0' "$TMP/devices"; then
		pass "installed uiw-run ibv_devices lists uiw0"
	else
		fail "installed uiw-run ibv_devices: $(head -n 3 "$TMP/devices")"
	fi
fi

# ---- uiw.pc
begin
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
pc_prefix=$(pkg-config --variable=prefix uiw)
[ "$pc_prefix" = "$P" ] || fail "uiw.pc: prefix=$pc_prefix, installed under $P"
CFL=$(pkg-config --cflags uiw) || fail "pkg-config --cflags uiw failed"
LIBS=$(pkg-config --libs uiw) || fail "pkg-config --libs uiw failed"
SLIBS=$(pkg-config --static --libs uiw) || fail "pkg-config --static --libs uiw failed"
case " $CFL " in *" -I$P/include "*) ;; *) fail "pkg-config --cflags: '$CFL' lacks -I$P/include" ;; esac
case " $LIBS " in *" -L$P/lib "*) ;; *) fail "pkg-config --libs: '$LIBS' lacks -L$P/lib" ;; esac
[ "$(pkg-config --modversion uiw)" = "$VERSION" ] || fail "uiw.pc version is not $VERSION"
done_ok "uiw.pc: prefix $P, cflags '$CFL', static libs '$SLIBS'"

# ---- headers: each on its own, with pkg-config's flags only (the source
# tree is not on the include path: the compiler runs in TMP)
begin
nh=0
for h in "$P"/include/*.h; do
	nh=$((nh + 1))
	printf '#include <%s>\nint uiw_header_test;\n' "$(basename "$h")" >"$TMP/hdr.c"
	# shellcheck disable=SC2086
	if ! (cd "$TMP" && cc -std=c11 -Wall -Wextra -Werror -fsyntax-only $CFL hdr.c) \
		>"$TMP/hdr.log" 2>&1; then
		fail "$(basename "$h") does not compile on its own: $(head -n 3 "$TMP/hdr.log")"
	fi
done
done_ok "$nh installed headers compile on their own"
begin
nsym=0
for s in $(nm -D --defined-only "$P/lib/libuiw.so.$VERSION" |
	awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }'); do
	nsym=$((nsym + 1))
	grep -qw "$s" "$P"/include/*.h || fail "exported $s is declared in no installed header"
	# its man page: found by man, and mentions it
	if ! MANWIDTH=200 timeout "$T" man -M "$P/share/man" 3 "$s" 2>/dev/null | grep -qw "$s"; then
		fail "man 3 $s: no page, or the page does not mention $s"
	fi
done
[ "$nsym" -ge 40 ] || fail "only $nsym exported functions"
done_ok "$nsym exported functions: declared in installed headers, each with a man page"

# ---- programs against the installed tree
cat >"$TMP/version.c" <<'EOF'
/* both public headers, the verbs and the RPC part of libuiw */
#include <stdio.h>
#include <string.h>
#include <rpc/rpc.h>
#include <rpc_rdma.h>
#include <uiw_verbs.h>

int main(void)
{
	struct uiw_context *ctx;
	SVCXPRT *x;
	unsigned int crc = uiw_crc32c("123456789", 9);

	if (uiw_open_context(&ctx, NULL) < 0 || uiw_close_context(ctx) < 0)
		return 2;
	x = svc_rdma_create("127.0.0.1", 0, NULL);
	if (!x) {
		fprintf(stderr, "svc_rdma_create: %s\n", svc_rdma_strerror());
		return 3;
	}
	printf("uiwarp %s crc32c %08x rpc port %s\n", uiw_version(), crc,
	       svc_rdma_port(x) > 0 ? "set" : "none");
	svc_destroy(x);
	return 0;
}
EOF
EX=$P/share/doc/uiwarp/examples
STATIC_LIBS=$(echo "$SLIBS" | sed 's/ -luiw / -Wl,-Bstatic -luiw -Wl,-Bdynamic /; s/^-luiw /-Wl,-Bstatic -luiw -Wl,-Bdynamic /')
build() { # NAME SOURCE dyn|static
	if [ "$3" = dyn ]; then
		l="$LIBS -Wl,-rpath,$P/lib"
	else
		l=$STATIC_LIBS
	fi
	# shellcheck disable=SC2086
	if ! (cd "$TMP" && timeout "$T" cc -std=gnu11 -Wall -Wextra -O1 $CCSAN $CFL -o "$1" "$2" $l) \
		>"$TMP/cc.log" 2>&1; then
		fail "$3 build of $(basename "$2") failed: $(head -n 5 "$TMP/cc.log" | tr '\n' ' ')"
		return 1
	fi
	needs=$(objdump -p "$TMP/$1" | awk '$1 == "NEEDED" { print $2 }' | tr '\n' ' ')
	case "$3 $needs" in
	"dyn "*"libuiw.so.$SOVER "*) ;;
	"static "*libuiw*) fail "$1 (static) still needs libuiw: $needs" ;;
	static*) ;;
	*) fail "$1 (dynamic) does not need libuiw.so.$SOVER: $needs" ;;
	esac
	return 0
}
for m in dyn static; do
	build "version_$m" version.c $m || continue
	out=$(timeout "$T" "$TMP/version_$m" 2>&1)
	rc=$?
	exp="uiwarp $VERSION crc32c e3069283 rpc port set"
	if [ $rc != 0 ] || [ "$out" != "$exp" ]; then
		fail "version_$m: exit $rc, '$out' (expected '$exp')"
	else
		pass "version_$m ($m libuiw): $out"
	fi
	if [ $m = dyn ]; then
		lib=$(ldd "$TMP/version_dyn" | awk '$1 == "libuiw.so.'"$SOVER"'" { print $3 }')
		[ "$lib" = "$P/lib/libuiw.so.$SOVER" ] || fail "version_dyn loads libuiw from '$lib'"
	fi
	build "api_server_$m" "$EX/api_server.c" $m
	build "api_client_$m" "$EX/api_client.c" $m
done

# the example pair over 127.0.0.1: SERVER-KIND CLIENT-KIND
pair() {
	log=$TMP/server_$1_$2.log
	: >"$log"
	# stdbuf: its port line is printed with printf; stdbuf's preloaded
	# library comes before the ASan runtime, which ASan accepts only so told
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		timeout "$T" stdbuf -oL "$TMP/api_server_$1" 0 >"$log" 2>&1 &
	spid=$!
	PIDS="$PIDS $spid"
	port=""
	n=0
	while [ -z "$port" ] && [ $n -lt $((T * 10)) ] && kill -0 "$spid" 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
		port=$(sed -n 's/^server: listening on port \([0-9][0-9]*\)$/\1/p' "$log")
	done
	if [ -z "$port" ]; then
		fail "api_server_$1 printed no port: $(head -n 3 "$log")"
		return
	fi
	if ! timeout "$T" "$TMP/api_client_$2" 127.0.0.1 "$port" >"$TMP/client.log" 2>&1; then
		fail "api_client_$2 against api_server_$1 failed: $(tail -n 3 "$TMP/client.log" | tr '\n' ' ')"
	fi
	wait "$spid"
	src=$?
	if [ $src != 0 ] || ! grep -q '^server: client disconnected$' "$log"; then
		fail "api_server_$1 (client $2): exit $src: $(tail -n 3 "$log" | tr '\n' ' ')"
	else
		pass "examples: server ($1 libuiw) and client ($2 libuiw) over 127.0.0.1"
	fi
}
if [ -x "$TMP/api_server_dyn" ] && [ -x "$TMP/api_client_static" ]; then pair dyn static; fi
if [ -x "$TMP/api_server_static" ] && [ -x "$TMP/api_client_dyn" ]; then pair static dyn; fi

# ---- man pages
begin
np=0
for f in "$P"/share/man/man[137]/*; do
	[ -f "$f" ] || continue
	head -c 3 "$f" | grep -q '^\.so' && continue # a link page, rendered above
	np=$((np + 1))
	n=$(basename "$f")
	name=${n%.*}
	sec=${n##*.}
	where=$(man -M "$P/share/man" -w "$sec" "$name" 2>/dev/null)
	[ "$where" = "$f" ] || fail "man -M PREFIX/share/man $sec $name finds '$where', not $f"
	LC_ALL=C.UTF-8 MANWIDTH=80 timeout "$T" man --warnings -l -Tutf8 "$f" >"$TMP/man.out" 2>"$TMP/man.err" ||
		fail "man -l $n failed"
	[ -s "$TMP/man.err" ] && fail "man --warnings -l $n: $(head -n 3 "$TMP/man.err" | tr '\n' ' ')"
	timeout "$T" groff -man -Tutf8 -ww -z "$f" >"$TMP/groff.err" 2>&1
	[ -s "$TMP/groff.err" ] && fail "groff -ww $n: $(head -n 3 "$TMP/groff.err" | tr '\n' ' ')"
	grep -Eq "^ *$name +(-|−) " "$TMP/man.out" || fail "$n renders no NAME line '$name - ...'"
	lexgrog "$f" 2>&1 | grep -q ": \"$name - ..*\"$" || fail "lexgrog $n: $(lexgrog "$f" 2>&1)"
done
[ "$np" -ge 7 ] || fail "only $np man pages"
done_ok "$np man pages: found by man -M, render without warnings, NAME read by lexgrog"

# ---- DESTDIR: staged, the prefix recorded as given
PFX=/opt/uiwarp-install-test-$$
S=$TMP/stage
if [ -e "$PFX" ]; then
	fail "$PFX exists already"
elif ! mk install PREFIX="$PFX" DESTDIR="$S" >"$TMP/install2.log" 2>&1; then
	tail -n 20 "$TMP/install2.log"
	fail "make install PREFIX=$PFX DESTDIR=TMP/stage failed"
else
	[ -e "$PFX" ] && { fail "make install with DESTDIR wrote $PFX"; rm -rf "$PFX"; }
	pc=$S$PFX/lib/pkgconfig/uiw.pc
	if [ ! -f "$pc" ]; then
		fail "DESTDIR: no $PFX/lib/pkgconfig/uiw.pc under the stage"
	else
		grep -qx "prefix=$PFX" "$pc" || fail "DESTDIR: uiw.pc says $(grep '^prefix=' "$pc"), not prefix=$PFX"
		grep -q "$S" "$pc" && fail "DESTDIR: uiw.pc names the stage directory"
	fi
	[ "$(readlink "$S$PFX/lib/libuiw.so")" = "libuiw.so.$SOVER" ] ||
		fail "DESTDIR: lib/libuiw.so is not the relative link libuiw.so.$SOVER"
	# the staged tree is usable with only uiw.pc's prefix line changed
	# (libdir and includedir follow ${prefix})
	mkdir -p "$TMP/pc" && sed "s|^prefix=.*|prefix=$S$PFX|" "$pc" >"$TMP/pc/uiw.pc"
	if PKG_CONFIG_PATH=$TMP/pc sh -c 'cd "$1" && cc -std=gnu11 $2 -o version_staged \
		version.c $(pkg-config --cflags --libs uiw)' \
		sh "$TMP" "$CCSAN" >"$TMP/cc.log" 2>&1 &&
		out=$(LD_LIBRARY_PATH=$S$PFX/lib timeout "$T" "$TMP/version_staged") &&
		[ "$out" = "uiwarp $VERSION crc32c e3069283 rpc port set" ]; then
		pass "make install DESTDIR=TMP/stage PREFIX=$PFX: staged, uiw.pc names $PFX"
	else
		fail "DESTDIR: building or running against the staged tree: $(head -n 3 "$TMP/cc.log")"
	fi
fi

# ---- uninstall
if ! mk uninstall PREFIX="$P" >"$TMP/uninstall.log" 2>&1; then
	fail "make uninstall failed: $(tail -n 3 "$TMP/uninstall.log")"
else
	left=$(find "$P" ! -type d | head -n 5)
	[ -z "$left" ] && pass "make uninstall removed every file" ||
		fail "make uninstall left $(echo "$left" | tr '\n' ' ')"
fi

end_checks
