# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-u2s-read: perftest-u2s-read with perftest's own, unmodified
# ib_read_bw -R as the client on the host under uiw-run (libuiw-rdma)
# against ib_read_bw -R over siw in the VM.
# shellcheck disable=SC1091
. "$here/cases/perftest-u2s-write.host.sh"
desc="host uiw-run ib_read_bw -R -> ib_read_bw -R in the VM via hostfwd, 64 KiB x 50"
ports="7522"
PORT=7522
PT_TEST="read"
ITERS=50
CLIENT=ib_read_bw

needs() {
	need_uiw_run "ib_${PT_TEST}_bw"
}

client_args() {
	CLIENT_ARGS=("$UIW_BIN/uiw-run" "ib_${PT_TEST}_bw" -R -F -n "$ITERS" -s "$SIZE" -p "$1" 127.0.0.1)
}
