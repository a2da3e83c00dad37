# shellcheck shell=bash disable=SC2034,SC2154
# fio-siw-send: fio's rdma engine, --verb=send, server (--iodepth=1) and
# client (--iodepth=16) both in the VM, stock siw to stock siw: siw's own
# outcome (the guest script says what is checked).
desc="fio --ioengine=rdma --verb=send in the VM, siw to siw: TERMINATE 1/2/2, both jobs left blocked in ibv_get_cq_event"
ports=""

needs() {
	return 0
}
