# shellcheck shell=bash disable=SC2034,SC2154
# param-crc: the param siw.ko loaded with mpa_crc_required=1; a siw-to-siw
# rping must still work, now with CRC32C on every FPDU.
desc="param siw.ko with mpa_crc_required=1: siw-to-siw rping -V -C 10 with CRCs"
ports=""

needs() {
	return 0
}

host_check() {
	if mpa_check "$OUT/param-crc.pcap" 1 1 00010001; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
