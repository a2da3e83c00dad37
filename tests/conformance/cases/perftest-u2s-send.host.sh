# shellcheck shell=bash disable=SC2034,SC2154
# perftest-u2s-send: perftest-u2s-write with send_bw: host uiw-perf send_bw
# --perftest -> ib_send_bw -R in the VM.
# shellcheck disable=SC1091
. "$here/cases/perftest-u2s-write.host.sh"
desc="host uiw-perf send_bw --perftest -> ib_send_bw -R in the VM via hostfwd, 64 KiB x 200"
ports="7503"
PORT=7503
PT_TEST="send"
