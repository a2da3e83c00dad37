# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-s2u-send: run-pt-s2u-write with ib_send_bw (perftest-s2u-send's counts).
# shellcheck disable=SC1091
. "$here/cases/run-pt-s2u-write.host.sh"
desc="ib_send_bw -R in the VM -> host uiw-run ib_send_bw -R at 10.0.2.2, 64 KiB x 50"
PT_TEST="send"
ITERS=50
SERVER=ib_send_bw
