# shellcheck shell=bash disable=SC2034,SC2154
# run-rping-u2s: uiw-client with the unmodified rping -c of rdmacm-utils on
# the host under uiw-run (libuiw-rdma: libibverbs/librdmacm over uiwarp)
# against the kernel's rping -s over siw in the VM, through a hostfwd port.
# libuiw-rdma asks for CRC (uiwarp's default) and for RFC 6581
# peer-to-peer mode as an initiator, so siw sets A in its Reply and the
# first FPDU is a zero-length RDMA Write (the RTR).
# shellcheck disable=SC1091
. "$here/cases/uiw-client.host.sh"
desc="host uiw-run rping -c -C 10 -v -V -> rping -s in the VM via hostfwd"
ports="7221"
PORT=7221
COUNT=10
UIW_OPTS=()
CLIENT=rping
CLIENT_CMD=("$UIW_BIN/uiw-run" rping)

needs() {
	need_uiw_run rping
}
