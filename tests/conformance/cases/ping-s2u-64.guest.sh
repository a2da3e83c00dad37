# ping-s2u-64 (guest): uiw-server.guest.sh with rping -S 64, 100 pings.
# shellcheck shell=sh disable=SC1091,SC2034
COUNT=100
RPING_OPTS="-S 64"
. /share/_vm/cases/uiw-server.guest.sh
