#!/bin/sh
# SPDX-License-Identifier: MIT
#
# siw-params.sh DIR - turn Linux siw's compile-time MPA/TCP knobs into module
# parameters, keeping every default.  DIR is an extracted copy of
# drivers/infiniband/sw/siw (Linux 6.1); it is edited in place.  Used by
# vm-build.sh for the "param" build of siw.ko.
#
# In 6.1 siw_main.c defines the knobs as `const bool NAME;` (or
# `const bool NAME = true;`) and siw.h declares them `extern const bool NAME;`.
# `mpa_version` is already a plain `u_char`.  This script drops the `const`
# from the knobs below (definition and declaration) and appends a
# module_param() line for each one to siw_main.c.  Initialisers are left as
# they are, so the defaults are the stock build's:
#   mpa_crc_required N, mpa_crc_strict N, peer_to_peer N, mpa_version 2,
#   try_gso N, siw_tcp_nagle N, zcopy_tx Y, loopback_enabled Y
# The parameters are writable (0644) in /sys/module/siw/parameters/: a new
# value applies to connections set up after it is written; zcopy_tx and
# loopback_enabled apply to QPs and links created afterwards.
#
# Every edit is checked: the script fails (exit 1) when a knob is not found
# exactly once, so a different kernel version cannot be patched silently
# wrong.  Running it twice on the same DIR is refused (exit 1).
#
# POSIX sh; needs sed and grep.
set -eu

dir=${1:?usage: siw-params.sh SIW_SOURCE_DIR}
main=$dir/siw_main.c
hdr=$dir/siw.h
bools="mpa_crc_required mpa_crc_strict peer_to_peer try_gso siw_tcp_nagle zcopy_tx loopback_enabled"
marker="uiwarp conformance: siw knobs as module parameters"

die() {
	echo "siw-params.sh: $*" >&2
	exit 1
}

if [ ! -f "$main" ] || [ ! -f "$hdr" ]; then
	die "$dir: no siw_main.c/siw.h"
fi
if grep -q "$marker" "$main"; then
	die "$main: already patched"
fi

# count LINE-REGEX FILE: how many lines match
count() {
	grep -c -- "$1" "$2" || true
}

for n in $bools; do
	def="^const bool $n\( = [a-z]*\)\{0,1\};"
	ext="^extern const bool $n;"
	[ "$(count "$def" "$main")" = 1 ] || die "$main: definition of $n not found once"
	[ "$(count "$ext" "$hdr")" = 1 ] || die "$hdr: declaration of $n not found once"
	sed -i "s/^const bool $n\(\( = [a-z]*\)\{0,1\}\);/bool $n\1;/" "$main"
	sed -i "s/^extern const bool $n;/extern bool $n;/" "$hdr"
	[ "$(count "^bool $n\( = [a-z]*\)\{0,1\};" "$main")" = 1 ] || die "$main: $n not rewritten"
	[ "$(count "^extern bool $n;" "$hdr")" = 1 ] || die "$hdr: $n not rewritten"
done
[ "$(count '^u_char mpa_version = MPA_REVISION_2;' "$main")" = 1 ] ||
	die "$main: mpa_version definition not found once"

cat >>"$main" <<'EOF'

/* ---- uiwarp conformance: siw knobs as module parameters ---------------- */
/* Added by tests/conformance/siw-params.sh; defaults unchanged. */
module_param(mpa_crc_required, bool, 0644);
MODULE_PARM_DESC(mpa_crc_required, "MPA: ask for CRC32C as initiator, insist on it as responder (default N)");
module_param(mpa_crc_strict, bool, 0644);
MODULE_PARM_DESC(mpa_crc_strict, "MPA: refuse a peer that asks for CRC when it is not required (default N)");
module_param(peer_to_peer, bool, 0644);
MODULE_PARM_DESC(peer_to_peer, "MPA: RFC 6581 peer-to-peer mode with an RTR, as initiator (default N)");
module_param(mpa_version, byte, 0644);
MODULE_PARM_DESC(mpa_version, "MPA: revision an initiator requests, 1 or 2 (default 2)");
module_param(try_gso, bool, 0644);
MODULE_PARM_DESC(try_gso, "offer and use FPDUs larger than one MSS (siw private flag; default N)");
module_param(siw_tcp_nagle, bool, 0644);
MODULE_PARM_DESC(siw_tcp_nagle, "leave Nagle on (TCP_NODELAY off) for siw sockets (default N)");
module_param(zcopy_tx, bool, 0644);
MODULE_PARM_DESC(zcopy_tx, "transmit large payloads from user pages directly (default Y)");
module_param(loopback_enabled, bool, 0644);
MODULE_PARM_DESC(loopback_enabled, "allow siw links on loopback devices (default Y)");
EOF
