# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-s2u-write: perftest-s2u-write with perftest's own, unmodified
# ib_write_bw -R as the server on the host under uiw-run (libuiw-rdma),
# ib_write_bw -R over siw in the VM its client (siw is the MPA initiator).
# perftest's server cannot be told to take port 0 and say which: it gets a
# port the kernel found free, and the guest is told once the host listens.
# shellcheck disable=SC1091
. "$here/cases/perftest-s2u-write.host.sh"
desc="ib_write_bw -R in the VM -> host uiw-run ib_write_bw -R at 10.0.2.2, 64 KiB x 50"
PT_TEST="write"
ITERS=50
SERVER=ib_write_bw

needs() {
	need_uiw_run "ib_${PT_TEST}_bw"
}

server_start() {
	host_server_free_port "$1" 120 "$UIW_BIN/uiw-run" "ib_${PT_TEST}_bw" -R -F -n "$ITERS" -s "$SIZE"
}
