# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-u2s-send: run-pt-u2s-write with ib_send_bw on port 7523.
# shellcheck disable=SC1091
. "$here/cases/run-pt-u2s-write.host.sh"
desc="host uiw-run ib_send_bw -R -> ib_send_bw -R in the VM via hostfwd, 64 KiB x 200"
ports="7523"
PORT=7523
PT_TEST="send"
ITERS=200
CLIENT=ib_send_bw
