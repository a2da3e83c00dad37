# shellcheck shell=bash disable=SC2034,SC2154
# ping-u2s-65535: uiw-client with uiw-ping -c -S 65535 -C 100 -V (CRC on) against
# rping -s in the VM: uiwarp initiator -> siw responder.
# shellcheck disable=SC1091
. "$here/cases/uiw-client.host.sh"
desc="host uiw-ping -c -S 65535 -C 100 -v -V -> rping -s in the VM via hostfwd"
ports="7211"
PORT=7211
COUNT=100
UIW_OPTS=(-S 65535)
