# nfs-rdma-ops (guest, busybox sh): the Linux NFS server (nfs_up) for the
# host's uiw-nfscp --fsinfo/--list and a small READ over RPC-over-RDMA;
# /export/dir holds 2000 empty files (made here when nfs-smoke did not run
# before), /export/ops.small 200 KiB; the RDMA traffic on eth0 is captured
# for tshark's rpcordma dissector (host_check).
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
. /share/_vm/guest-lib.sh
nfs_up || fail "$WHY"
mkdir -p /export/dir
n=$(ls /export/dir | wc -l)
if [ "$n" != 2000 ]; then
	rm -rf /export/dir
	mkdir -p /export/dir
	i=0
	while [ "$i" -lt 2000 ]; do
		: >"/export/dir/entry-$i"
		i=$((i + 1))
	done
fi
dd if=/dev/urandom of=/export/ops.small bs=1024 count=200 2>/dev/null || fail "cannot write /export/ops.small"
sha256sum /export/ops.small | cut -d' ' -f1 >"$OUT/small.sha256"
ls /export/dir | sort >"$OUT/dir.guest.txt"
cap_start "$CASE" eth0 tcp port "$NFS_RDMA_PORT" || fail "tcpdump did not start"
sig "$CASE.ready"
await "$CASE.hostdone" 170 >/dev/null || log "no word from the host"
cap_stop
rm -f /export/ops.small
log "dir entries $(wc -l <"$OUT/dir.guest.txt"), small $(cat "$OUT/small.sha256")"
pass
