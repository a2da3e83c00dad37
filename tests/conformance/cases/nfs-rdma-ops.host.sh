# shellcheck shell=bash disable=SC2034,SC2154
# nfs-rdma-ops: uiw-nfscp on the host against the Linux nfsd over siw in the
# VM, the NFSv3 procedures besides READ/WRITE that the RPC-over-RDMA issue
# names: FSINFO over RDMA and over TCP (equal answers), READDIRPLUS of a
# directory of 2000 entries over RDMA in as few calls as the server allows
# (maxcount 1 MiB; nfsd caps a reply at its rtmax, 256 KiB in the VM: two
# calls, each reply by Reply chunk as RDMA_NOMSG) and in pages of
# 8 KiB (cookies and cookie verifier), the names compared with the TCP
# listing and the guest's ls; a 200 KiB download whose READs offer no
# Reply chunk (CLSET_RDMA_REPLY_MAX): data by Write chunk, replies inline.
# host_check runs tshark's rpcordma dissector over the guest's capture.
desc="host uiw-nfscp --rdma -> Linux nfsd over siw: FSINFO, READDIRPLUS of 2000 entries (Reply chunk; paged), READ without Reply chunk; tshark rpcordma decode"
ports="20048 2049 20049"

needs() {
	[ -x "$UIW_BIN/uiw-nfscp" ] || { echo "no $UIW_BIN/uiw-nfscp (make _build)"; return 1; }
	command -v tshark >/dev/null || { echo "no tshark on the host"; return 1; }
}

# ops NAME TRANSPORT ARGS...: uiw-nfscp; output in OUT/NAME.log; status returned
ops() {
	local name=$1 tr=$2 m=VM_FWD_20048 p rc=0
	shift 2
	if [ "$tr" = rdma ]; then p=VM_FWD_20049; else p=VM_FWD_2049; fi
	timeout -k 5 120 "$UIW_BIN/uiw-nfscp" "--$tr" -m "${!m}" -p "${!p}" "$@" >"$OUT/$name.log" 2>"$OUT/$name.err" || rc=$?
	hlog "$name: uiw-nfscp --$tr $*: exit $rc: $(grep -E '^uiw-nfscp: (fsinfo|listed|rdma|downloaded|checksums)' "$OUT/$name.log" | tr '\n' ' ') $(tail -n 2 "$OUT/$name.err" | tr '\n' ' ')"
	return "$rc"
}

# names LOG: the entry names of a --list output, sorted, without . and ..
names() {
	awk '$1 != "uiw-nfscp:" && NF >= 4 {print $4}' "$1" | grep -vx '\.\|\.\.' | sort
}

host_run() {
	local why="" f1 f2 line octets largest
	if ! hawait "$CASE.ready" 300 >/dev/null; then
		host_fail "the guest's NFS server did not come up"
		return
	fi
	if ! ops fsinfo-rdma rdma --fsinfo 127.0.0.1:/export; then
		why="FSINFO over RDMA: $(tail -n 1 "$OUT/fsinfo-rdma.err")"
	elif ! ops fsinfo-tcp tcp --fsinfo 127.0.0.1:/export; then
		why="FSINFO over TCP: $(tail -n 1 "$OUT/fsinfo-tcp.err")"
	else
		f1=$(grep '^uiw-nfscp: fsinfo ' "$OUT/fsinfo-rdma.log")
		f2=$(grep '^uiw-nfscp: fsinfo ' "$OUT/fsinfo-tcp.log")
		if [ -z "$f1" ] || [ "$f1" != "$f2" ]; then
			why="FSINFO differs: rdma '$f1', tcp '$f2'"
		elif ! printf '%s' "$f1" | grep -q 'rtmax [1-9][0-9]* .*wtmax [1-9][0-9]* .*dtpref [1-9]'; then
			why="FSINFO without sizes: $f1"
		fi
	fi
	sleep 2 # siw: pause between connections to the same listener
	if [ -z "$why" ] && ! ops list-one rdma --list --maxcount 1M --info 127.0.0.1:/export/dir; then
		why="READDIRPLUS over RDMA: $(tail -n 1 "$OUT/list-one.err")"
	elif [ -z "$why" ]; then
		line=$(grep '^uiw-nfscp: listed ' "$OUT/list-one.log")
		octets=$(printf '%s' "$line" | sed -n 's/.*; \([0-9]*\) octets by Reply chunk.*/\1/p')
		largest=$(printf '%s' "$line" | sed -n 's/.*largest reply \([0-9]*\).*/\1/p')
		case $line in
		*"listed 2002 entries (2 directories, 2000 regular files, 0 without a handle) in "[12]" READDIRPLUS call"*) ;;
		*) why="READDIRPLUS with maxcount 1M: $line" ;;
		esac
		if [ -z "$why" ] && [ "${largest:-0}" -le 65536 ]; then
			why="the 2000-entry reply did not come by Reply chunk (largest $largest): $line"
		elif [ -z "$why" ] && ! names "$OUT/list-one.log" | cmp -s - "$OUT/dir.guest.txt"; then
			why="READDIRPLUS names differ from the guest's ls"
		fi
		hlog "READDIRPLUS: reply $octets octets by Reply chunk"
	fi
	sleep 2
	if [ -z "$why" ] && ! ops list-paged rdma --list --maxcount 8K 127.0.0.1:/export/dir; then
		why="READDIRPLUS in 8 KiB pages over RDMA: $(tail -n 1 "$OUT/list-paged.err")"
	elif [ -z "$why" ]; then
		case $(grep '^uiw-nfscp: listed ' "$OUT/list-paged.log") in
		*"listed 2002 entries (2 directories, 2000 regular files, 0 without a handle) in "*" READDIRPLUS calls of maxcount 8192"*) ;;
		*) why="paged READDIRPLUS: $(grep '^uiw-nfscp: listed ' "$OUT/list-paged.log")" ;;
		esac
		[ -n "$why" ] || names "$OUT/list-paged.log" | cmp -s - "$OUT/dir.guest.txt" ||
			why="paged READDIRPLUS names differ from the guest's ls"
	fi
	if [ -z "$why" ] && ! ops list-tcp tcp --list --maxcount 64K 127.0.0.1:/export/dir; then
		why="READDIRPLUS over TCP: $(tail -n 1 "$OUT/list-tcp.err")"
	elif [ -z "$why" ] && ! names "$OUT/list-tcp.log" | cmp -s - "$OUT/dir.guest.txt"; then
		why="READDIRPLUS over TCP: names differ from the guest's ls"
	fi
	sleep 2
	rm -f "$OUT/small"
	if [ -z "$why" ] && ! ops read rdma -q --info --rsize 64K 127.0.0.1:/export/ops.small "$OUT/small"; then
		why="download over RDMA: $(tail -n 1 "$OUT/read.err")"
	elif [ -z "$why" ]; then
		line=$(grep '^uiw-nfscp: rdma:' "$OUT/read.log")
		if [ "$(sha256sum "$OUT/small" | cut -d' ' -f1)" != "$(cat "$OUT/small.sha256")" ]; then
			why="download over RDMA: checksum differs from the guest's"
		else
			case $line in
			*"Write chunk 204800, Reply chunk 0; "*" calls, 0 Reply chunks offered"*) ;;
			*) why="READ: data not by Write chunk only, or a Reply chunk offered: $line" ;;
			esac
		fi
	fi
	rm -f "$OUT/small"
	host_end "$why"
}

host_check() {
	if RPCORDMA_PROCS="3 6 17 19" rpcordma_check "$OUT/$CASE.pcap"; then
		check_pass
	else
		check_fail "$RPCORDMA_WHY"
	fi
}
