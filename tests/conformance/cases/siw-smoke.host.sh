# shellcheck shell=bash disable=SC2034,SC2154
# siw-smoke: rping -s and rping -c both in the VM, stock siw to stock siw.
desc="rping client and server both in the VM over siw0 (stock siw to siw), -V -C 10"
ports=""

needs() {
	return 0
}

# the capture shows what the project's siw VM notes recorded for siw:
# revision 2 Request and Reply without CRC, IRD = ORD = 1
host_check() {
	if mpa_check "$OUT/siw-smoke.pcap" 0 0 00010001; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
