# run-pt-u2s-read (guest): perftest-u2s-write.guest.sh with ib_read_bw -R on port 7522.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7522
PT_TEST="read"
ITERS=50
. /share/_vm/cases/perftest-u2s-write.guest.sh
