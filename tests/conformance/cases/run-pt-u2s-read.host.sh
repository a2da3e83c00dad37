# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-u2s-read: run-pt-u2s-write with ib_read_bw on port 7522.
# shellcheck disable=SC1091
. "$here/cases/run-pt-u2s-write.host.sh"
desc="host uiw-run ib_read_bw -R -> ib_read_bw -R in the VM via hostfwd, 64 KiB x 50"
ports="7522"
PORT=7522
PT_TEST="read"
ITERS=50
CLIENT=ib_read_bw
