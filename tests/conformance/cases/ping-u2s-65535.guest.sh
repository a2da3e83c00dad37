# ping-u2s-65535 (guest): uiw-client.guest.sh on port 7211, 100 pings.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7211
COUNT=100
RPING_OPTS="-S 65535" # rping -s reads the client's buffer into one of its own -S size
. /share/_vm/cases/uiw-client.guest.sh
