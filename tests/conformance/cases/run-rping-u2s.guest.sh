# run-rping-u2s (guest): uiw-client.guest.sh on port 7221, 10 pings.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7221
COUNT=10
. /share/_vm/cases/uiw-client.guest.sh
