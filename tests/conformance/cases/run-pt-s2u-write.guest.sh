# run-pt-s2u-write (guest): perftest-s2u-write.guest.sh with ib_write_bw -R, 50 messages.
# shellcheck shell=sh disable=SC1091,SC2034
PT_TEST="write"
ITERS=50
. /share/_vm/cases/perftest-s2u-write.guest.sh
