#!/bin/sh
# SPDX-License-Identifier: MIT
#
# libuiw-rdma's ibv_wr_* (ibv_qp_ex), posting from many threads and
# ibv_reg_mr's checks of the memory: tests/progs/rdma_qpx under uiw-run,
# both ends of its connections in the one process over 127.0.0.1 (a port
# the kernel chooses):
#   - ibv_wr_start .. ibv_wr_complete of 1, 16, 17, 100 and 1000 Writes with
#     the heap churned between the builders: each completes once, its data
#     lands (more than 16 WRs used to leave the builders' SGE pointers in
#     memory a realloc had freed: EPERM, or AddressSanitizer's
#     heap-use-after-free);
#   - a batch failing part-way (an lkey of another PD or an SGE past its
#     region at several positions, more WRs than the send queue's room, a
#     builder iWARP has no operation for, inline data above the limit, a
#     Read with two SGEs, too many SGEs) posts nothing, and the next batch
#     works from another thread (the QP's lock was released);
#   - ibv_wr_abort posts nothing and releases the lock;
#   - 8 threads doing batches on one QP: every WR completes exactly once,
#     every payload lands; 8 threads posting chains of 20 Writes with
#     ibv_post_send, 8 posting chains of 60 receives with ibv_post_recv:
#     each WR once, each chain's WRs together in the queue;
#   - ibv_reg_mr/_iova/_iova2 of unmapped memory, of a range running into
#     an unmapped page, of read-only memory with LOCAL_WRITE or
#     REMOTE_WRITE, of PROT_NONE memory: NULL with EFAULT; read-only memory
#     with REMOTE_READ only, 1 GiB of MAP_NORESERVE memory: registered.
# Runs in sanitizer builds too: the program is built with the same
# sanitizer as the library it preloads, so the runtime is there (ASan is
# told not to insist on coming first: the library is preloaded before it).
# Exit 0 pass, 77 skip (timeout(1) missing), anything else fail.
# Env: UIW_BIN, UIW_TESTBIN, UIW_SAN.

set -u
ME=dropin_qpx
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

BIN=${UIW_BIN:-build/bin}
TESTBIN=${UIW_TESTBIN:-build/tests}
O=$(dirname "$BIN")
LIB=$O/libuiw-rdma.so
RUN=$BIN/uiw-run
T=300

if ! command -v timeout >/dev/null 2>&1; then
	echo "dropin_qpx.sh: skipped: timeout is not installed (coreutils)"
	exit 77
fi
for f in "$LIB" "$RUN" "$TESTBIN/rdma_qpx"; do
	[ -e "$f" ] || { echo "dropin_qpx.sh: $f is missing (make all)"; exit 1; }
done

asan_preload_env

timeout "$T" "$RUN" "$TESTBIN/rdma_qpx" >"$TMP/out" 2>"$TMP/err"
rc=$?
nok=$(grep -c '^ok:' "$TMP/out")
if [ "$rc" = 0 ] && ! grep -q '^FAIL' "$TMP/out" && grep -q '^ok: everything destroyed' "$TMP/out"; then
	pass "rdma_qpx: $nok checks passed${UIW_SAN:+ (SAN=$UIW_SAN)}"
	sed -n 's/^ok: \(ibv_reg_mr of 1 GiB.*\)/\1/p' "$TMP/out" | while read -r l; do pass "$l"; done
else
	[ "$rc" = 124 ] && echo "dropin_qpx.sh: rdma_qpx did not end within $T s"
	fail "rdma_qpx: exit $rc after $nok checks: $(grep -v '^ok:' "$TMP/out" | head -n 5)" \
		"$(grep -E 'ERROR|SUMMARY|runtime error|^ +#[0-9] ' "$TMP/err" | head -n 12)" \
		"$(grep -v '^uiw-rdma:' "$TMP/err" | head -c 600)"
fi
# the same refusals through the text of /proc/self/maps, the path of kernels
# without PROCMAP_QUERY (before 6.11)
UIW_REG_MAPS_TEXT=1 timeout "$T" "$RUN" "$TESTBIN/rdma_qpx" reg >"$TMP/out2" 2>"$TMP/err2"
rc=$?
if [ "$rc" = 0 ] && ! grep -q '^FAIL' "$TMP/out2" && grep -q '^ok: ibv_reg_mr' "$TMP/out2"; then
	pass "rdma_qpx reg through the text of /proc/self/maps: $(grep -c '^ok:' "$TMP/out2") checks passed"
else
	fail "rdma_qpx reg (UIW_REG_MAPS_TEXT=1): exit $rc: $(grep -v '^ok:' "$TMP/out2" | head -n 5)" \
		"$(grep -v '^uiw-rdma:' "$TMP/err2" | head -c 600)"
fi
end_checks
