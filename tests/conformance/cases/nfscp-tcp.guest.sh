# nfscp-tcp (guest, busybox sh): the Linux NFS server (nfs_up) for the
# host's uiw-nfscp: the SHA-256 of /export/big (made here when nfs-smoke
# did not run before), then, once the host has uploaded /export/up-$CASE,
# that file's SHA-256 as the server stores it.  nfscp-rdma sources this
# file: only the host side differs.
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
. /share/_vm/guest-lib.sh
nfs_up || fail "$WHY"
if [ ! -s /export/big ]; then
	dd if=/dev/urandom of=/export/big bs=1M count=64 2>/dev/null || fail "cannot write /export/big"
fi
sha256sum /export/big | cut -d' ' -f1 >"$OUT/big.sha256"
UP=/export/up-$CASE
rm -f "$UP"
sig "$CASE.ready"
if ! await "$CASE.uploaded" 170 >/dev/null; then
	rm -f "$UP"
	fail "no word from the host after its transfers"
fi
if [ -f "$UP" ]; then
	sha256sum "$UP" | cut -d' ' -f1 >"$OUT/up.guest.sha256"
	ls -ln "$UP" >"$OUT/up.ls"
else
	: >"$OUT/up.guest.sha256"
fi
sig "$CASE.checked"
await "$CASE.hostdone" 60 >/dev/null || log "no word from the host"
rm -f "$UP" "/export/$CASE.small"
log "big $(cat "$OUT/big.sha256"), uploaded file $(cat "$OUT/up.guest.sha256") $(cat "$OUT/up.ls" 2>/dev/null)"
pass
