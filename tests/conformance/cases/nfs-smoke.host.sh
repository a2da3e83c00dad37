# shellcheck shell=bash disable=SC2034,SC2154
# nfs-smoke: the Linux NFS server in the VM (nfsd over siw, RDMA port
# 20049), checked by the guest's own NFS/RDMA client; the host calls
# rpc.mountd (MOUNT v3 NULL and EXPORT, onc_call.py) over TCP through hostfwd, the path
# uiw-nfscp takes for the file handle.
desc="nfsd over siw in the VM: guest NFSv3/RDMA mount, 16 MiB write, 64 MiB read, 2000-entry READDIR; host MOUNT over TCP"
ports="20048 20049"

needs() {
	command -v python3 >/dev/null || { echo "no python3 on the host"; return 1; }
}

host_run() {
	local fwd=VM_FWD_20048 why=""
	if ! hawait "$CASE.ready" 300 >/dev/null; then
		host_fail "the guest's NFS/RDMA checks did not finish"
		return
	fi
	# MOUNT v3 NULL and EXPORT straight to mountd's port (rpcinfo would ask
	# the host's rpcbind first)
	if ! timeout 30 python3 "$here/onc_call.py" 127.0.0.1 "${!fwd}" 100005 3 0 >"$OUT/mount-null.log" 2>&1; then
		why="MOUNT NULL over TCP: $(tail -n 1 "$OUT/mount-null.log")"
	elif ! timeout 30 python3 "$here/onc_call.py" 127.0.0.1 "${!fwd}" 100005 3 5 >"$OUT/mount-export.log" 2>&1; then
		why="MOUNT EXPORT over TCP: $(tail -n 1 "$OUT/mount-export.log")"
	elif ! grep -q '^export /export' "$OUT/mount-export.log"; then
		why="MOUNT EXPORT does not list /export: $(tr '\n' ' ' <"$OUT/mount-export.log")"
	fi
	host_end "$why"
}

host_check() {
	# siw to siw inside the VM, 80 MiB of NFS traffic: not captured (the
	# host's RPC-over-RDMA cases capture and check their own traffic)
	check_pass
}
