# rpcinfo-rdma (guest): the same as rpcinfo-tcp's guest side.
# shellcheck shell=sh disable=SC1091
. /share/_vm/cases/rpcinfo-tcp.guest.sh
