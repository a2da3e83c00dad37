# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-u2s-write: perftest-u2s-write with perftest's own, unmodified
# ib_write_bw -R as the client on the host under uiw-run (libuiw-rdma)
# against ib_write_bw -R over siw in the VM.
# shellcheck disable=SC1091
. "$here/cases/perftest-u2s-write.host.sh"
desc="host uiw-run ib_write_bw -R -> ib_write_bw -R in the VM via hostfwd, 64 KiB x 200"
ports="7521"
PORT=7521
PT_TEST="write"
ITERS=200
CLIENT=ib_write_bw

needs() {
	need_uiw_run "ib_${PT_TEST}_bw"
}

client_args() {
	CLIENT_ARGS=("$UIW_BIN/uiw-run" "ib_${PT_TEST}_bw" -R -F -n "$ITERS" -s "$SIZE" -p "$1" 127.0.0.1)
}
