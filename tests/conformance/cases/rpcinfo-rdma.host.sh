# shellcheck shell=bash disable=SC2034,SC2154
# rpcinfo-rdma: uiw-rpcinfo -T rdma on the host against the Linux nfsd's
# RDMA listener over siw in the VM (guest port 20049, hostfwd): NULL to NFS
# v3 over RPC-over-RDMA, the negotiated settings (CLGET_RDMA_INFO), every
# version from nfsd's PROG_MISMATCH range.
desc="host uiw-rpcinfo -T rdma -> Linux nfsd over siw in the VM: NULL to NFS v3 over RPC-over-RDMA, negotiated settings"
ports="20049"

needs() {
	[ -x "$UIW_BIN/uiw-rpcinfo" ] || { echo "no $UIW_BIN/uiw-rpcinfo (make _build)"; return 1; }
}

ri() {
	local name=$1 want=$2 rc=0
	shift 2
	timeout -k 5 60 "$UIW_BIN/uiw-rpcinfo" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
	hlog "$name: uiw-rpcinfo $*: exit $rc: $(tr '\n' ' ' <"$OUT/$name.log")"
	[ "$rc" = "$want" ]
}

host_run() {
	local why="" r=VM_FWD_20049
	if ! hawait "$CASE.ready" 300 >/dev/null; then
		host_fail "the guest's NFS server did not come up"
		return
	fi
	if ! ri nfs3 0 -T rdma -p "${!r}" 127.0.0.1 nfs 3 ||
		! grep -qx 'program 100003 version 3 ready and waiting' "$OUT/nfs3.log"; then
		why="NFS v3 over RDMA: $(tr '\n' ' ' <"$OUT/nfs3.log")"
	elif ! grep -q '^rdma: inline send [0-9]*, inline receive [0-9]*, credits [1-9]' "$OUT/nfs3.log"; then
		why="no negotiated settings (CLGET_RDMA_INFO): $(tr '\n' ' ' <"$OUT/nfs3.log")"
	else
		# siw: pause between connections to the same listener
		sleep 2
		if ! ri nfs-all 0 -T rdma -p "${!r}" 127.0.0.1 nfs ||
			! grep -qx 'program 100003 version 3 ready and waiting' "$OUT/nfs-all.log"; then
			why="NFS over RDMA, every version: $(tr '\n' ' ' <"$OUT/nfs-all.log")"
		fi
	fi
	host_end "$why"
}

host_check() {
	check_pass
}
