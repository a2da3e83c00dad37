# shellcheck shell=bash disable=SC2034,SC2154
# nfscp-tcp: uiw-nfscp on the host against the Linux NFS server in the VM
# (nfs_up): MOUNT v3 over TCP to rpc.mountd (guest port 20048), NFSv3 over
# TCP (guest port 2049), through the hostfwd ports.  Downloads the 64 MiB
# /export/big with one connection and with four (--inflight 4), uploads a
# 64 MiB local file (CREATE, WRITE UNSTABLE, COMMIT, read back); every
# SHA-256 is compared with the guest's sha256sum of the file.
# nfscp-rdma sources this file and sets NFSCP_TRANSPORT=rdma.
desc="host uiw-nfscp --tcp <-> Linux nfsd in the VM: 64 MiB download (1 and 4 in flight), 64 MiB upload, SHA-256 vs the guest's"
ports="20048 2049"
NFSCP_TRANSPORT=tcp
NFSCP_GUEST_PORT=2049
NFSCP_OPTS=()

needs() {
	[ -x "$UIW_BIN/uiw-nfscp" ] || { echo "no $UIW_BIN/uiw-nfscp (make _build)"; return 1; }
	command -v sha256sum >/dev/null || { echo "no sha256sum on the host"; return 1; }
}

# nfscp_run NAME ARGS...: uiw-nfscp with the case's transport and ports;
# output in OUT/NAME.log; the status is returned
nfscp_run() {
	local name=$1 mfwd=VM_FWD_20048 nfwd=VM_FWD_$NFSCP_GUEST_PORT rc=0
	shift
	hlog "$name: uiw-nfscp --$NFSCP_TRANSPORT -q -m ${!mfwd} -p ${!nfwd} ${NFSCP_OPTS[*]} $*"
	timeout -k 5 120 "$UIW_BIN/uiw-nfscp" "--$NFSCP_TRANSPORT" -q -m "${!mfwd}" -p "${!nfwd}" "${NFSCP_OPTS[@]}" "$@" \
		>"$OUT/$name.log" 2>&1 || rc=$?
	[ "$rc" != 124 ] || echo "uiw-nfscp: killed: no end within 120 s" >>"$OUT/$name.log"
	hlog "$name: exit $rc: $(grep -E 'loaded|readback|rdma:' "$OUT/$name.log" | tr '\n' ' ')"
	return "$rc"
}

# chunk_octets LOG KIND: octets the first connection moved by KIND (Read,
# Write, Reply) chunk, from the --info line (0 without one)
chunk_octets() {
	sed -n "s/.* $2 chunk \([0-9]*\).*/\1/p" "$1" | head -n 1 | grep . || echo 0
}

# sum_of LOG WHAT: the tool's "sha256 WHAT" line's value
sum_of() {
	awk -v w="$2" '$2 == "sha256" && $3 == w {print $4}' "$1"
}

# nfscp_more UPLOADED: prints why it failed, nothing if all went well
nfscp_more() {
	local up=$1 rc=0 small=$OUT/$CASE.small want got
	if nfscp_run noent 127.0.0.1:/export/no-such-file "$OUT/noent"; then
		echo "a missing file was downloaded"
		return
	elif ! grep -q 'NFS3ERR_NOENT' "$OUT/noent.log"; then
		echo "a missing file: no NFS3ERR_NOENT: $(tail -n 1 "$OUT/noent.log")"
		return
	fi
	head -c 100000 /dev/urandom >"$small"
	want=$(sha256sum "$small" | cut -d' ' -f1)
	# over the 64 MiB file: CREATE UNCHECKED truncates (GETATTR checks the size)
	if ! nfscp_run truncate --inflight 3 --wsize 16K --rsize 24K "$small" "127.0.0.1:$up"; then
		echo "upload over a larger file: $(tail -n 1 "$OUT/truncate.log")"
		return
	fi
	# to the export's root: /export/<basename>
	if ! nfscp_run todir "$small" 127.0.0.1:/export; then
		echo "upload into a directory: $(tail -n 1 "$OUT/todir.log")"
		return
	fi
	mkdir -p "$OUT/dl"
	if ! nfscp_run fromdir --inflight 2 --rsize 4K "127.0.0.1:/export/$CASE.small" "$OUT/dl"; then
		echo "download into a directory: $(tail -n 1 "$OUT/fromdir.log")"
		return
	fi
	got=$(sha256sum "$OUT/dl/$CASE.small" 2>/dev/null | cut -d' ' -f1)
	if [ "$got" != "$want" ]; then
		echo "download into a directory: ${got:-no file}, uploaded $want"
		return
	fi
	rm -rf "$OUT/dl"
	if command -v script >/dev/null; then
		local mfwd=VM_FWD_20048 nfwd=VM_FWD_$NFSCP_GUEST_PORT
		script -qec "timeout -k 5 60 $UIW_BIN/uiw-nfscp --$NFSCP_TRANSPORT -m ${!mfwd} -p ${!nfwd} --rsize 8K 127.0.0.1:/export/$CASE.small $OUT/tty.out" \
			"$OUT/tty.log" >/dev/null 2>&1 </dev/null || rc=$?
		rm -f "$OUT/tty.out"
		if [ "$rc" != 0 ] || ! grep -q '100.0%.*MB/s ETA 00:00' "$OUT/tty.log"; then
			echo "on a terminal: exit $rc, no progress bar: $(tail -c 300 "$OUT/tty.log" | tr '\r\n' '  ')"
			return
		fi
	fi
	rm -f "$small"
}

host_run() {
	local why="" want got n up=/export/up-$CASE
	if ! hawait "$CASE.ready" 300 >/dev/null; then
		host_fail "the guest's NFS server did not come up"
		return
	fi
	want=$(cat "$OUT/big.sha256")
	# 1. download, one call in flight, then four connections
	for n in 1 4; do
		[ -z "$why" ] || break
		rm -f "$OUT/big.$n"
		if ! nfscp_run "download-$n" --inflight "$n" "127.0.0.1:/export/big" "$OUT/big.$n"; then
			why="download (--inflight $n): $(tail -n 1 "$OUT/download-$n.log")"
		elif got=$(sha256sum "$OUT/big.$n" | cut -d' ' -f1) && [ "$got" != "$want" ]; then
			why="download (--inflight $n): local file $got, the server's $want"
		elif [ "$(sum_of "$OUT/download-$n.log" transfer)" != "$want" ]; then
			why="download (--inflight $n): transferred $(sum_of "$OUT/download-$n.log" transfer), the server's $want"
		elif [ "$NFSCP_TRANSPORT" = rdma ] && [ "$n" = 1 ] &&
			[ "$(chunk_octets "$OUT/download-1.log" Write)" -lt $((64 << 20)) ]; then
			why="download over RDMA: READ data did not come by Write chunk: $(grep 'rdma:' "$OUT/download-1.log")"
		elif [ "$NFSCP_TRANSPORT" = rdma ] && [ "$n" = 4 ] &&
			! grep -q 'at most 4 calls in flight' "$OUT/download-4.log"; then
			# --inflight 4 over RDMA: 4 calls in flight on one connection
			why="download over RDMA: no calls in flight at once: $(grep 'rdma:' "$OUT/download-4.log")"
		elif [ "$NFSCP_TRANSPORT" = rdma ] && [ "$n" = 1 ] &&
			[ "$(chunk_octets "$OUT/download-1.log" Reply)" != 0 ]; then
			# READs offer no Reply chunk (CLSET_RDMA_REPLY_MAX): nfsd
			# used to send every reply through the one offered
			why="download over RDMA: READ replies came by Reply chunk: $(grep 'rdma:' "$OUT/download-1.log")"
		fi
		rm -f "$OUT/big.$n"
	done
	# 2. upload 64 MiB (and read it back: uiw-nfscp checks that itself)
	head -c $((64 << 20)) /dev/urandom >"$OUT/up.local"
	want=$(sha256sum "$OUT/up.local" | cut -d' ' -f1)
	if [ -z "$why" ] && ! nfscp_run upload "$OUT/up.local" "127.0.0.1:$up"; then
		why="upload: $(tail -n 1 "$OUT/upload.log")"
	fi
	rm -f "$OUT/up.local"
	hsig "$CASE.uploaded" 0
	if ! hawait "$CASE.checked" 60 >/dev/null; then
		[ -n "$why" ] || why="the guest did not checksum the uploaded file"
	elif [ -z "$why" ]; then
		got=$(cat "$OUT/up.guest.sha256")
		if [ "$got" != "$want" ]; then
			why="upload: the server stores ${got:-nothing}, the local file was $want"
		elif [ "$(sum_of "$OUT/upload.log" readback)" != "$want" ]; then
			why="upload: read back $(sum_of "$OUT/upload.log" readback), the local file was $want"
		elif [ "$NFSCP_TRANSPORT" = rdma ] && [ "$(chunk_octets "$OUT/upload.log" Read)" -lt $((64 << 20)) ]; then
			why="upload over RDMA: WRITE data did not go by Read chunk: $(grep 'rdma:' "$OUT/upload.log")"
		fi
	fi
	# 3. smaller things: an error named, a truncating upload with several
	# connections and odd sizes, a directory as target on either side, and
	# the progress bar on a terminal
	[ -n "$why" ] || why=$(nfscp_more "$up")
	host_end "$why"
}

host_check() {
	check_pass
}
