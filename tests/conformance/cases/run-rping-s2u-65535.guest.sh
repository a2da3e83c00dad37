# run-rping-s2u-65535 (guest): uiw-server.guest.sh with rping -S 65535, 50 pings.
# shellcheck shell=sh disable=SC1091,SC2034
COUNT=50
RPING_OPTS="-S 65535"
. /share/_vm/cases/uiw-server.guest.sh
