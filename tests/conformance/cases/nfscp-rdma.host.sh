# shellcheck shell=bash disable=SC2034,SC2154,SC1091
# nfscp-rdma: nfscp-tcp over RPC-over-RDMA: uiw-nfscp --rdma (uiwarp) to
# the Linux nfsd's RDMA listener over siw (guest port 20049) through the
# hostfwd port; MOUNT still goes over TCP to rpc.mountd.  READ data comes
# by Write chunk into uiw-nfscp's buffers (CLSET_RDMA_RESULT_BUF), WRITE
# data goes by Read chunk; both are checked with --info's counters.
. "$here/cases/nfscp-tcp.host.sh"
desc="host uiw-nfscp --rdma <-> Linux nfsd over siw in the VM: 64 MiB download (1 and 4 in flight), 64 MiB upload, SHA-256 vs the guest's"
ports="20048 20049"
NFSCP_TRANSPORT=rdma
NFSCP_GUEST_PORT=20049
NFSCP_OPTS=(--info) # the chunk counters: READ by Write chunk, WRITE by Read chunk
