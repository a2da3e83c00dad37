# shellcheck shell=bash disable=SC2034,SC2154
# perftest-s2u-send: perftest-s2u-write with send_bw: ib_send_bw -R in the VM
# -> host uiw-perf send_bw --perftest.
# shellcheck disable=SC1091
. "$here/cases/perftest-s2u-write.host.sh"
desc="ib_send_bw -R in the VM -> host uiw-perf send_bw --perftest at 10.0.2.2, 64 KiB x 50"
PT_TEST="send"
