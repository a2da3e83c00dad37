# nfs-smoke (guest, busybox sh): the Linux NFS server over siw (nfs_up),
# then the guest's own NFS client mounts it over RDMA (siw to siw on
# 10.0.2.15, NFSv3, port 20049), writes and reads back a 16 MiB file and
# lists a directory of 2000 entries; the host meanwhile calls rpc.mountd
# over TCP through a hostfwd port.  Prepares /export for the host's
# RPC-over-RDMA cases: /export/big (64 MiB) and /export/dir (2000 files).
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
. /share/_vm/guest-lib.sh
nfs_up || fail "$WHY"
mkdir -p /export/dir /mnt/nfs
i=0
while [ "$i" -lt 2000 ]; do
	: >"/export/dir/entry-$i"
	i=$((i + 1))
done
dd if=/dev/urandom of=/export/big bs=1M count=64 2>/dev/null || fail "cannot write /export/big"
sha256sum /export/big | cut -d' ' -f1 >"$OUT/big.sha256"
/usr/sbin/mount.nfs "$GUEST_IP:/export" /mnt/nfs -o rdma,port=$NFS_RDMA_PORT,vers=3,nolock,mountproto=tcp \
	>"$OUT/mount.log" 2>&1 || fail "NFSv3 mount over RDMA failed: $(cat "$OUT/mount.log")"
grep ' /mnt/nfs ' /proc/mounts >"$OUT/mounts.txt"
grep -q 'proto=rdma' "$OUT/mounts.txt" || { umount /mnt/nfs; fail "the mount is not over RDMA: $(cat "$OUT/mounts.txt")"; }
dd if=/dev/urandom of=/tmp/w bs=1M count=16 2>/dev/null
cp /tmp/w /mnt/nfs/written || { umount /mnt/nfs; fail "write over NFS/RDMA failed"; }
sync
a=$(sha256sum /tmp/w | cut -d' ' -f1)
b=$(sha256sum /export/written | cut -d' ' -f1)
c=$(sha256sum /mnt/nfs/big | cut -d' ' -f1)
n=$(ls /mnt/nfs/dir | wc -l)
umount /mnt/nfs
rm -f /export/written
log "written $a, server has $b; big $(cat "$OUT/big.sha256"), read back $c; dir entries $n"
[ "$a" = "$b" ] || fail "16 MiB written over NFS/RDMA differ on the server"
[ "$c" = "$(cat "$OUT/big.sha256")" ] || fail "64 MiB read over NFS/RDMA differ"
[ "$n" = 2000 ] || fail "READDIR over NFS/RDMA listed $n of 2000 entries"
awk '$4 == "0A" {print $2}' /proc/net/tcp /proc/net/tcp6 >"$OUT/listening.txt"
sig "$CASE.ready"
await "$CASE.hostdone" 60 >/dev/null || log "no word from the host"
pass
