# shellcheck shell=bash disable=SC2034,SC2154
# fio-siw-read: fio-siw-send with --verb=read (a control: no Send, no receive to
# run out of).
# shellcheck disable=SC1091
. "$here/cases/fio-siw-send.host.sh"
desc="fio --ioengine=rdma --verb=read in the VM, siw to siw, 2 MiB verified: both jobs end with err= 0"
