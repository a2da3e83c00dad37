# run-pt-s2u-read (guest): perftest-s2u-write.guest.sh with ib_read_bw -R, 200 messages.
# shellcheck shell=sh disable=SC1091,SC2034
PT_TEST="read"
ITERS=200
. /share/_vm/cases/perftest-s2u-write.guest.sh
