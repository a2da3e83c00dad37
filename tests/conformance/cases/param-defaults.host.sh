# shellcheck shell=bash disable=SC2034,SC2154
# param-defaults: the "param" siw.ko (siw-params.sh) loads without
# parameters, shows the stock defaults in /sys/module/siw/parameters, and
# behaves as the stock build on the wire.
desc="param siw.ko loads with the stock defaults; siw-to-siw rping -V -C 10 as stock"
ports=""

needs() {
	return 0
}

host_check() {
	if mpa_check "$OUT/param-defaults.pcap" 0 0 00010001; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
