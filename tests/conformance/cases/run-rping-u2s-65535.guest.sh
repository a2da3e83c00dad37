# run-rping-u2s-65535 (guest): uiw-client.guest.sh on port 7222, 50 pings of 65535.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7222
COUNT=50
RPING_OPTS="-S 65535" # rping -s reads the client's buffer into one of its own -S size
. /share/_vm/cases/uiw-client.guest.sh
