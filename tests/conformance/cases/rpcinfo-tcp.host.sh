# shellcheck shell=bash disable=SC2034,SC2154
# rpcinfo-tcp: uiw-rpcinfo -T tcp on the host against the Linux NFS server
# in the VM through the hostfwd ports: NULL to NFS v3 (2049) and MOUNT v3
# (20048), every version of NFS (from nfsd's PROG_MISMATCH range), and the
# errors: NFS version 2 (version mismatch) and an unregistered program.
desc="host uiw-rpcinfo -T tcp -> Linux nfsd/mountd in the VM: NULL to NFS v3, MOUNT v3, version range, errors"
ports="20048 2049"

needs() {
	[ -x "$UIW_BIN/uiw-rpcinfo" ] || { echo "no $UIW_BIN/uiw-rpcinfo (make _build)"; return 1; }
}

# ri NAME WANT_RC ARGS...: uiw-rpcinfo ARGS, output in OUT/NAME.log; 0 if
# its exit status is WANT_RC
ri() {
	local name=$1 want=$2 rc=0
	shift 2
	timeout -k 5 60 "$UIW_BIN/uiw-rpcinfo" "$@" >"$OUT/$name.log" 2>&1 || rc=$?
	hlog "$name: uiw-rpcinfo $*: exit $rc: $(tr '\n' ' ' <"$OUT/$name.log")"
	[ "$rc" = "$want" ]
}

host_run() {
	local why="" n=VM_FWD_2049 m=VM_FWD_20048
	if ! hawait "$CASE.ready" 300 >/dev/null; then
		host_fail "the guest's NFS server did not come up"
		return
	fi
	if ! ri nfs3 0 -T tcp -p "${!n}" 127.0.0.1 nfs 3 ||
		! grep -qx 'program 100003 version 3 ready and waiting' "$OUT/nfs3.log"; then
		why="NFS v3: $(tr '\n' ' ' <"$OUT/nfs3.log")"
	elif ! ri mount3 0 -T tcp -p "${!m}" 127.0.0.1 mount 3 ||
		! grep -qx 'program 100005 version 3 ready and waiting' "$OUT/mount3.log"; then
		why="MOUNT v3: $(tr '\n' ' ' <"$OUT/mount3.log")"
	elif ! ri nfs-all 0 -T tcp -p "${!n}" 127.0.0.1 100003 ||
		! grep -qx 'program 100003 version 3 ready and waiting' "$OUT/nfs-all.log"; then
		why="NFS, every version: $(tr '\n' ' ' <"$OUT/nfs-all.log")"
	elif ! grep -q '+2' "$OUT/nfsd-versions.txt" 2>/dev/null &&
		{ ! ri nfs2 1 -T tcp -p "${!n}" 127.0.0.1 nfs 2 ||
			! grep -q 'version mismatch: server supports [0-9]*\.\.[0-9]*' "$OUT/nfs2.log"; }; then
		why="NFS v2 (not served) did not give a version mismatch: $(tr '\n' ' ' <"$OUT/nfs2.log")"
	elif ! ri unreg 1 -T tcp -p "${!n}" 127.0.0.1 0x20750099 1 ||
		! grep -q 'program not registered' "$OUT/unreg.log"; then
		why="an unknown program did not give 'program not registered': $(tr '\n' ' ' <"$OUT/unreg.log")"
	fi
	host_end "$why"
}

host_check() {
	check_pass
}
