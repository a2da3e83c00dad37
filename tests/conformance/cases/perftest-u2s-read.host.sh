# shellcheck shell=bash disable=SC2034,SC2154
# perftest-u2s-read: perftest-u2s-write with read_bw: host uiw-perf read_bw
# --perftest -> ib_read_bw -R in the VM.
# shellcheck disable=SC1091
. "$here/cases/perftest-u2s-write.host.sh"
desc="host uiw-perf read_bw --perftest -> ib_read_bw -R in the VM via hostfwd, 64 KiB x 50"
ports="7502"
PORT=7502
PT_TEST="read"
ITERS=50 # siw sends the Read Responses: slow under TCG
