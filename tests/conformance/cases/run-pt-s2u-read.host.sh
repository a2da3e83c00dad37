# shellcheck shell=bash disable=SC2034,SC2154
# run-pt-s2u-read: run-pt-s2u-write with ib_read_bw (perftest-s2u-read's counts).
# shellcheck disable=SC1091
. "$here/cases/run-pt-s2u-write.host.sh"
desc="ib_read_bw -R in the VM -> host uiw-run ib_read_bw -R at 10.0.2.2, 64 KiB x 200"
PT_TEST="read"
ITERS=200
SERVER=ib_read_bw
