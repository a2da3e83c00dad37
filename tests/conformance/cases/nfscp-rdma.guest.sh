# nfscp-rdma (guest): the same as nfscp-tcp's guest side (the host side
# runs uiw-nfscp --rdma to nfsd's RDMA listener over siw).
# shellcheck shell=sh disable=SC1091
. /share/_vm/cases/nfscp-tcp.guest.sh
