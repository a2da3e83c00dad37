# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-u2s-send: perftest-u2s-send with perftest's own, unmodified
# ib_send_bw -R as the client on the host under uiw-run (libuiw-rdma)
# against ib_send_bw -R over siw in the VM.
# shellcheck disable=SC1091
. "$here/cases/perftest-u2s-write.host.sh"
desc="host uiw-run ib_send_bw -R -> ib_send_bw -R in the VM via hostfwd, 64 KiB x 200"
ports="7523"
PORT=7523
PT_TEST="send"
ITERS=200
CLIENT=ib_send_bw

needs() {
	need_uiw_run "ib_${PT_TEST}_bw"
}

client_args() {
	CLIENT_ARGS=("$UIW_BIN/uiw-run" "ib_${PT_TEST}_bw" -R -F -n "$ITERS" -s "$SIZE" -p "$1" 127.0.0.1)
}
