#!/bin/sh
# SPDX-License-Identifier: MIT
#
# tests/progs/mpa_frame: the conformance cases' independent MPA framing of a
# capture (tests/conformance/lib.sh mpa_check).  It must pass the siw
# captures of tests/data/captures as they are, and fail each way a capture
# can be wrong, on copies changed here one packet at a time:
#   - an octet of an FPDU flipped (CRC negotiated): crc_bad=1;
#   - the same on a connection without CRCs: still clean, crc=off;
#   - a segment in the middle removed: gaps;
#   - a retransmission carrying other octets: differ;
#   - the last segment one octet short: leftover;
#   - the Request's key changed: nonmpa;
#   - an FPDU whose ULPDU Length is under a DDP header: short.
# Exit 0 pass, 1 fail.

set -u
ME=mpa_frame
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
FR=${UIW_TESTBIN:-$TOP/build/tests}/mpa_frame
CAP=$TOP/tests/data/captures
[ -x "$FR" ] || { echo "$ME.sh: FAIL: no $FR (make _build)"; exit 1; }

# key=value of mpa_frame's summary line
field() { sed -n "s/.*[ :]$1=\([^ ]*\).*/\1/p" "$2"; }

"$FR" --help >"$TMP/help" 2>&1 && grep -q '^usage: ' "$TMP/help" ||
	fail "--help does not print a usage"
"$FR" "$TMP/none.pcap" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q 'none.pcap' "$TMP/out" || fail "a missing file is not exit 2 with its name"

n=0
for f in "$CAP"/*.pcap; do
	b=$(basename "$f" .pcap)
	if ! "$FR" -q "$f" >"$TMP/$b.out" 2>&1; then
		fail "$b: $(cat "$TMP/$b.out")"
		continue
	fi
	fp=$(field fpdus "$TMP/$b.out")
	crc=$(field crc "$TMP/$b.out")
	good=$(field crc_good "$TMP/$b.out")
	if [ "${fp:-0}" -lt 2 ]; then
		fail "$b: $fp FPDUs"
	elif [ "$crc" = on ] && [ "$good" != "$fp" ]; then
		fail "$b: $good good CRCs of $fp FPDUs"
	fi
	n=$((n + 1))
done
[ "$n" -ge 10 ] && pass "all $n captures of tests/data/captures frame clean" || fail "only $n captures framed"

# mutate IN OUT WHAT: a copy of a classic pcap with one change, made on the
# Nth TCP segment that carries data and is not an MPA Request/Reply
mutate() {
	python3 - "$@" <<'EOF'
import struct, sys
src, dst, what = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(src, 'rb').read()
assert data[:4] == b'\xd4\xc3\xb2\xa1', 'little-endian classic pcap expected'
hdr, off, recs = data[:24], 24, []
while off + 16 <= len(data):
    incl = struct.unpack_from('<I', data, off + 8)[0]
    recs.append(bytearray(data[off:off + 16 + incl]))
    off += 16 + incl

def tcp(r):  # (offset of the TCP payload, its length) in an Ethernet/IPv4 record
    p = 16 + 14
    if r[p - 2:p] != b'\x08\x00' or r[p + 9] != 6:
        return None
    ihl = (r[p] & 15) * 4
    tot = struct.unpack_from('>H', r, p + 2)[0]
    t = p + ihl
    thl = (r[t + 12] >> 4) * 4
    return t + thl, tot - ihl - thl

fpdu = [i for i, r in enumerate(recs)
        if tcp(r) and tcp(r)[1] >= 24 and not r[tcp(r)[0]:tcp(r)[0] + 6] == b'MPA ID']
req = [i for i, r in enumerate(recs) if tcp(r) and r[tcp(r)[0]:tcp(r)[0] + 16] == b'MPA ID Req Frame']
if what == 'flip':
    r = recs[fpdu[0]]; o, n = tcp(r); r[o + n // 2] ^= 0x01
elif what == 'drop':
    del recs[fpdu[len(fpdu) // 2]]
elif what == 'retrans':
    r = bytearray(recs[fpdu[0]]); o, n = tcp(r); r[o + 10] ^= 0xff
    recs.insert(fpdu[0] + 1, r)
elif what == 'cut':
    i = fpdu[-1]; r = recs[i]; o, n = tcp(r)
    del r[o + n - 1]
    struct.pack_into('<II', r, 8, len(r) - 16, len(r) - 16)
    ip = 16 + 14
    struct.pack_into('>H', r, ip + 2, struct.unpack_from('>H', r, ip + 2)[0] - 1)
elif what == 'key':
    r = recs[req[0]]; o, n = tcp(r); r[o] = ord('X')
elif what == 'short':
    r = recs[fpdu[0]]; o, n = tcp(r); struct.pack_into('>H', r, o, 0)
else:
    sys.exit('unknown mutation ' + what)
open(dst, 'wb').write(hdr + b''.join(recs))
EOF
}

# expect NAME CAPTURE MUTATION RC FIELD=VALUE...: the mutated copy's exit
# status and summary fields
expect() {
	name=$1 cap=$2 mut=$3 rc=$4
	shift 4
	if ! mutate "$CAP/$cap.pcap" "$TMP/$name.pcap" "$mut" 2>"$TMP/$name.err"; then
		fail "$name: could not make the copy: $(cat "$TMP/$name.err")"
		return
	fi
	"$FR" "$TMP/$name.pcap" >"$TMP/$name.out" 2>&1
	got=$?
	if [ "$got" != "$rc" ]; then
		fail "$name: exit $got, expected $rc: $(tail -n 1 "$TMP/$name.out")"
		return
	fi
	for kv in "$@"; do
		v=$(field "${kv%%=*}" "$TMP/$name.out")
		case $kv in
		*'=>0') [ "${v:-0}" -gt 0 ] || { fail "$name: ${kv%%=*}=$v, expected more than 0"; return; } ;;
		*) [ "$v" = "${kv#*=}" ] || { fail "$name: ${kv%%=*}=$v, expected ${kv#*=}"; return; } ;;
		esac
	done
	pass "$name: exit $rc, $*"
}

expect flipped s2u-crc-siw flip 1 crc=on crc_bad=1 leftover=0 gaps=0
expect flipped-nocrc u2s-crc-siw flip 0 crc=off crc_bad=0
expect dropped s2u-crc-siw drop 1 gaps='>0'
expect retransmitted s2u-crc-siw retrans 1 differ=1 crc_bad=0
expect cut-short u2s-send-inv cut 1 leftover='>0' crc_bad=0
expect not-mpa s2u-crc-siw key 1 nonmpa='>0'
expect short-ulpdu u2s-send-inv short 1 short='>0'
end_checks
