# perftest-u2s-read (guest): perftest-u2s-write.guest.sh with ib_read_bw -R on port 7502.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7502
PT_TEST="read"
ITERS=50 # siw sends the Read Responses: slow under TCG
. /share/_vm/cases/perftest-u2s-write.guest.sh
