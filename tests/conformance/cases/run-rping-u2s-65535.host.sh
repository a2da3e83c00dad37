# shellcheck shell=bash disable=SC2034,SC2154
# run-rping-u2s-65535: run-rping-u2s with rping's largest buffer (-S 65535)
# and 50 pings.
# shellcheck disable=SC1091
. "$here/cases/run-rping-u2s.host.sh"
desc="host uiw-run rping -c -S 65535 -C 50 -v -V -> rping -s in the VM via hostfwd"
ports="7222"
PORT=7222
COUNT=50
UIW_OPTS=(-S 65535)
