# shellcheck shell=bash disable=SC2034,SC2154
# perftest-s2u-read: perftest-s2u-write with read_bw: ib_read_bw -R in the VM
# -> host uiw-perf read_bw --perftest.
# shellcheck disable=SC1091
. "$here/cases/perftest-s2u-write.host.sh"
desc="ib_read_bw -R in the VM -> host uiw-perf read_bw --perftest at 10.0.2.2, 64 KiB x 200"
PT_TEST="read"
ITERS=200
