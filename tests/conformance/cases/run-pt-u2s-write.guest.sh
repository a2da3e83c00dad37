# run-pt-u2s-write (guest): perftest-u2s-write.guest.sh with ib_write_bw -R on port 7521.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7521
PT_TEST="write"
ITERS=200
. /share/_vm/cases/perftest-u2s-write.guest.sh
