# ping-u2s-64 (guest): uiw-client.guest.sh on port 7210, 100 pings.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7210
COUNT=100
. /share/_vm/cases/uiw-client.guest.sh
