# shellcheck shell=bash disable=SC2034,SC2154
# ping-s2u-65535: uiw-server with rping -c -S 65535 -C 100 -V in the VM against
# uiw-ping -s on the host: siw initiator -> uiwarp responder.
# shellcheck disable=SC1091
. "$here/cases/uiw-server.host.sh"
desc="rping -c -S 65535 -C 100 -v -V in the VM -> host uiw-ping -s at 10.0.2.2"
COUNT=100
