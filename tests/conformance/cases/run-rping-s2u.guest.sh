# run-rping-s2u (guest): uiw-server.guest.sh, 10 pings.
# shellcheck shell=sh disable=SC1091,SC2034
COUNT=10
. /share/_vm/cases/uiw-server.guest.sh
