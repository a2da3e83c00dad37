# shellcheck shell=bash disable=SC2034,SC2154
# run-rping-s2u-65535: run-rping-s2u with rping's largest buffer (-S 65535)
# and 50 pings.
# shellcheck disable=SC1091
. "$here/cases/run-rping-s2u.host.sh"
desc="rping -c -S 65535 -C 50 -v -V in the VM -> host uiw-run rping -s -S 65535 at 10.0.2.2"
COUNT=50
UIW_OPTS=(-S 65535)
