# rpcinfo-tcp (guest, busybox sh): the Linux NFS server (nfs_up) for the
# host's uiw-rpcinfo; records the versions nfsd serves.  rpcinfo-rdma
# sources this file.
# shellcheck shell=sh disable=SC1091,SC2034
. /share/_vm/guest-lib.sh
nfs_up || fail "$WHY"
cat /proc/fs/nfsd/versions >"$OUT/nfsd-versions.txt" 2>/dev/null
cat /proc/fs/nfsd/portlist >"$OUT/nfsd-portlist.txt" 2>/dev/null
sig "$CASE.ready"
await "$CASE.hostdone" 120 >/dev/null || log "no word from the host"
pass
