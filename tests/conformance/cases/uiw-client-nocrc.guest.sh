# uiw-client-nocrc (guest): uiw-client.guest.sh on port 7202, 3 rounds.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7202
ROUNDS=3
. /share/_vm/cases/uiw-client.guest.sh
