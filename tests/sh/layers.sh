#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Each layer includes only itself and the layers below it (issue 18):
#   common < mpa < ddp < rdmap < verbs-shim < rpcrdma < tools, and
#   rdma-compat on verbs-shim; tests/ and bench/ may include anything.
# The build enforces it (the Makefile's INC_<folder>: a source gets the -I
# of its own folder and those below, so an upward #include does not
# compile); this test says the same about every #include "..." line of
# every tracked source and header, headers a folder's own sources never
# include among them, and names the offending line.  Also checked:
#   - rpcrdma/'s sans-I/O codec (rpcrdma.h, rpcrdma_*) includes neither
#     its libtirpc transports (rpc_*) nor verbs-shim/ nor I/O headers;
#   - the Makefile gives one source of each layer exactly the -I of the
#     layers it may see (make -n);
#   - the checker itself reports a planted upward include.
# Exit 0 pass, 1 fail.

set -u
ME=layers
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
LAYERS="common mpa ddp rdmap verbs-shim rdma-compat rpcrdma tools"

# the folders a folder may include from; empty: anything (not a layer)
may_see() {
	case $1 in
	common) echo "common" ;;
	mpa) echo "common mpa" ;;
	ddp) echo "common mpa ddp" ;;
	rdmap) echo "common mpa ddp rdmap" ;;
	verbs-shim) echo "common mpa ddp rdmap verbs-shim" ;;
	rdma-compat) echo "common mpa ddp rdmap verbs-shim rdma-compat" ;;
	rpcrdma) echo "common mpa ddp rdmap verbs-shim rpcrdma" ;;
	tools) echo "common mpa ddp rdmap verbs-shim rpcrdma tools" ;;
	*) echo "" ;;
	esac
}

# the top-level folder holding what FILE's #include "INC" finds, as the
# compiler looks: FILE's own directory, then the layers bottom up; an
# rpcgen header (NAME.h of rpcrdma/*/NAME.x) is rpcrdma's
where() {
	_d=$(dirname "$1")
	if [ -f "$2/$_d/$3" ]; then
		(cd "$2/$_d" && cd "$(dirname "$3")" && pwd) | sed "s|^$2/||; s|/.*||"
		return
	fi
	for _l in $LAYERS; do
		[ -f "$2/$_l/$3" ] && { echo "$_l"; return; }
	done
	for _x in "$2"/rpcrdma/*/"${3%.h}.x"; do
		[ -f "$_x" ] && { echo rpcrdma; return; }
	done
	echo "?"
}

# print one line per upward (or unresolved) include under the tree ROOT
check_tree() {
	_root=$1
	(cd "$_root" && { git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' | sed 's|^\./||'; }) |
		while IFS= read -r f; do
			top=${f%%/*}
			ok=$(may_see "$top")
			[ -n "$ok" ] || continue
			grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$_root/$f" |
				while IFS= read -r line; do
					n=${line%%:*}
					inc=$(echo "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
					at=$(where "$f" "$_root" "$inc")
					case " $ok " in
					*" $at "*) ;;
					*)
						if [ "$at" = "?" ]; then
							echo "$f:$n: #include \"$inc\" is in no layer folder"
						else
							echo "$f:$n: #include \"$inc\" is in $at/, which $top/ may not see (it sees: $ok)"
						fi
						;;
					esac
				done
		done
}

# 1. the tree
check_tree "$TOP" >"$TMP/up"
if [ -s "$TMP/up" ]; then
	while IFS= read -r l; do fail "$l"; done <"$TMP/up"
else
	pass "no source or header of a layer includes a layer above it"
fi

# 2. inside rpcrdma/, the codec (rpcrdma.h, rpcrdma_*.[ch]) is sans-I/O:
# it includes common/ and itself only, never the libtirpc transports
# (rpc_*.h) or the verbs, and no header of threads, sockets or io_uring
F0=$FAILS
for f in $(cd "$TOP" && git ls-files 'rpcrdma/rpcrdma*.[ch]'); do
	grep -n '^[[:space:]]*#[[:space:]]*include' "$TOP/$f" | while IFS= read -r line; do
		n=${line%%:*}
		case $line in
		*'"'*)
			inc=$(echo "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
			at=$(where "$f" "$TOP" "$inc")
			case $at:$(basename "$inc") in
			common:* | rpcrdma:rpcrdma*.h) ;;
			*) echo "$f:$n: the sans-I/O codec includes \"$inc\" ($at/)" ;;
			esac
			;;
		*'<liburing.h>'* | *'<pthread.h>'* | *'<sys/socket.h>'* | *'<poll.h>'* | *'<sys/epoll.h>'* | *'<unistd.h>'*)
			echo "$f:$n: the sans-I/O codec includes an I/O header: ${line#*:}"
			;;
		esac
	done
done >"$TMP/codec"
while IFS= read -r l; do fail "$l"; done <"$TMP/codec"
[ "$FAILS" = "$F0" ] && pass "rpcrdma/'s codec (rpcrdma*) includes neither the transports nor I/O headers"

# 3. the checker finds a planted upward include
mkdir -p "$TMP/t/mpa" "$TMP/t/rdmap"
printf '#include "rdmap.h"\n' >"$TMP/t/mpa/bad.c"
printf '/* empty */\n' >"$TMP/t/rdmap/rdmap.h"
if check_tree "$TMP/t" | grep -q '^mpa/bad.c:1: .*rdmap/'; then
	pass "a planted mpa/ -> rdmap/ include is reported"
else
	fail "the checker missed a planted mpa/ -> rdmap/ include"
fi

# 4. the Makefile's include paths: one source per layer, compiled with -I
# of exactly the layers it may see (and nothing of tests/ or bench/)
if command -v make >/dev/null 2>&1; then
	F0=$FAILS
	for l in $LAYERS; do
		src=$(cd "$TOP" && git ls-files "$l/*.c" | head -n 1)
		[ -n "$src" ] || continue
		cmd=$(cd "$TOP" && make -s -n -B V=1 O="$TMP/o" "$TMP/o/obj/${src%.c}.o" 2>&1 | grep -F -- "-c -o $TMP/o/obj/${src%.c}.o")
		[ -n "$cmd" ] || { fail "make -n printed no compile command for $src"; continue; }
		got=$(for w in $cmd; do
			case $w in -I"$TMP"/* | -I/*) ;; -I*) echo "${w#-I}" ;; esac
		done | sort -u | tr '\n' ' ')
		want=$(for w in $(may_see "$l"); do echo "$w"; done | sort -u | tr '\n' ' ')
		[ "$got" = "$want" ] || fail "$src is compiled with -I $got; its layer may see $want"
	done
	[ "$FAILS" = "$F0" ] && pass "the build gives each layer's sources only the -I of the layers below"
fi
end_checks
