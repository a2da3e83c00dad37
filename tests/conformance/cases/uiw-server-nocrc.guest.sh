# uiw-server-nocrc (guest): uiw-server.guest.sh, 2 rounds.
# shellcheck shell=sh disable=SC1091,SC2034
ROUNDS=2
. /share/_vm/cases/uiw-server.guest.sh
