# shellcheck shell=bash disable=SC2034,SC2154
# run-rping-s2u: uiw-server with the unmodified rping -s of rdmacm-utils on
# the host under uiw-run (libuiw-rdma) against the kernel's rping -c over
# siw in the VM (siw is the MPA initiator, without peer-to-peer mode).
# rping -s cannot be told to take port 0 and say which: it gets a port the
# kernel found free, and the guest is told once the host listens on it.
# shellcheck disable=SC1091
. "$here/cases/uiw-server.host.sh"
desc="rping -c -C 10 -v -V in the VM -> host uiw-run rping -s at 10.0.2.2"
COUNT=10
UIW_OPTS=()
SERVER=rping

needs() {
	need_uiw_run rping
}

server_start() {
	host_server_free_port "$1" 150 "$UIW_BIN/uiw-run" rping -s -a 127.0.0.1 -v -V "${UIW_OPTS[@]}"
}
