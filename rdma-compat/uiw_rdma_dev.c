/* SPDX-License-Identifier: MIT */
/*
 * libuiw-rdma: device discovery and query.  One device, uiw0: an iWARP RNIC
 * with one Ethernet port, always active, whose GIDs are the host's MAC (the
 * iWARP convention) and addresses, and whose limits are uiwarp's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <endian.h>

#include <infiniband/verbs.h>

#include "uiw_rdma.h"

/* exported names the headers turn into macros or inlines */
#undef ibv_query_port
#undef ibv_reg_mr

/* exported, declared only in rdma-core's private headers (driver.h) */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       unsigned int *type);

static pthread_once_t dev_once = PTHREAD_ONCE_INIT;
static struct uiw_rdma_device the_dev;

/* the port's MTU as an ibv_mtu: the largest IB MTU that fits the interface's */
static enum ibv_mtu mtu_enum(int mtu)
{
	if (mtu >= 4096)
		return IBV_MTU_4096;
	if (mtu >= 2048)
		return IBV_MTU_2048;
	if (mtu >= 1024)
		return IBV_MTU_1024;
	if (mtu >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

static void add_gid(struct uiw_rdma_device *d, const union ibv_gid *g)
{
	for (unsigned i = 0; i < d->ngids; i++)
		if (!memcmp(&d->gids[i], g, sizeof(*g)))
			return;
	if (d->ngids < UIW_RDMA_MAX_GIDS)
		d->gids[d->ngids++] = *g;
}

static int if_mtu(const char *name)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;

	if (s < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (!ioctl(s, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(s);
	return mtu;
}

/*
 * GID 0: the MAC of the first up, non-loopback Ethernet interface in the
 * first 6 octets, the rest 0 (what iWARP RNICs report: i40iw, nes, siw);
 * all zero without one.  Then each address of an up interface: IPv4 as
 * ::ffff:a.b.c.d, IPv6 as is.  The node GUID is the MAC as EUI-64.
 */
static void dev_init(void)
{
	struct uiw_rdma_device *d = &the_dev;
	struct ifaddrs *ifa0 = NULL, *ifa;
	union ibv_gid g;
	const char *mac_if = NULL;

	memset(d, 0, sizeof(*d));
	d->dev.node_type = IBV_NODE_RNIC;
	d->dev.transport_type = IBV_TRANSPORT_IWARP;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s", UIW_RDMA_DEV_NAME);
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "%s", UIW_RDMA_DEV_NAME);
	/* no sysfs: paths no file is under (ibv_read_sysfs_file fails) */
	snprintf(d->dev.dev_path, sizeof(d->dev.dev_path), "/nonexistent/uiwarp/%s",
		 UIW_RDMA_DEV_NAME);
	snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/nonexistent/uiwarp/%s",
		 UIW_RDMA_DEV_NAME);

	memset(&g, 0, sizeof(g));
	if (getifaddrs(&ifa0))
		ifa0 = NULL;
	for (ifa = ifa0; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_ll *ll = (const void *)ifa->ifa_addr;

		if (!ll || ll->sll_family != AF_PACKET || ll->sll_halen != 6 ||
		    !(ifa->ifa_flags & IFF_UP) || (ifa->ifa_flags & IFF_LOOPBACK))
			continue;
		memcpy(g.raw, ll->sll_addr, 6);
		mac_if = ifa->ifa_name;
		break;
	}
	add_gid(d, &g); /* GID 0, zero without a MAC */
	if (mac_if) {
		uint8_t e[8] = {g.raw[0] ^ 0x02, g.raw[1], g.raw[2], 0xff, 0xfe, g.raw[3], g.raw[4], g.raw[5]};
		uint64_t guid;

		memcpy(&guid, e, 8);
		d->guid_be = guid; /* e is in network order already */
		d->mtu = if_mtu(mac_if);
	} else {
		d->mtu = if_mtu("lo");
	}
	for (ifa = ifa0; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || !(ifa->ifa_flags & IFF_UP))
			continue;
		memset(&g, 0, sizeof(g));
		if (ifa->ifa_addr->sa_family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)ifa->ifa_addr;

			g.raw[10] = 0xff;
			g.raw[11] = 0xff;
			memcpy(&g.raw[12], &sin->sin_addr, 4);
		} else if (ifa->ifa_addr->sa_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 = (const void *)ifa->ifa_addr;

			memcpy(g.raw, &sin6->sin6_addr, 16);
		} else {
			continue;
		}
		add_gid(d, &g);
	}
	if (ifa0)
		freeifaddrs(ifa0);
}

struct uiw_rdma_device *uiw_rdma_device(void)
{
	pthread_once(&dev_once, dev_init);
	return &the_dev;
}

/* A number of milliseconds from the environment: @def when unset; a value
 * that is not a whole number up to @max is said on stderr and ignored. */
static unsigned env_ms(const char *name, unsigned def, unsigned max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n > max || v[0] == '-') {
		fprintf(stderr, "libuiw-rdma: %s=%s is not a number of ms from 0 to %u; using %u\n",
			name, v, max, def);
		return def;
	}
	return (unsigned)n;
}

static struct uiw_rdma_context *to_rctx(struct ibv_context *c)
{
	return uiw_rdma_ctx(c);
}

static int is_ours(struct ibv_device *device)
{
	return device == &uiw_rdma_device()->dev;
}

/* ---- device list ---------------------------------------------------------- */

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **l = calloc(2, sizeof(*l));

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l[0] = &uiw_rdma_device()->dev;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device ? device->name : NULL;
}

int ibv_get_device_index(struct ibv_device *device)
{
	return is_ours(device) ? 0 : -1;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	return is_ours(device) ? (__be64)uiw_rdma_device()->guid_be : 0;
}

/* ---- attributes ----------------------------------------------------------- */

static void fill_device_attr(struct uiw_rdma_context *rc, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "uiwarp %s", uiw_version());
	a->node_guid = rc->dev->guid_be;
	a->sys_image_guid = rc->dev->guid_be;
	/* uiw_reg_mr() takes any size_t length (the region must not wrap) */
	a->max_mr_size = SIZE_MAX;
	a->page_size_cap = (uint64_t)sysconf(_SC_PAGESIZE);
	/* counts uiwarp does not bound (only memory does): the field's maximum */
	a->max_qp = INT_MAX;
	a->max_qp_wr = INT_MAX;
	a->max_cq = INT_MAX;
	a->max_cqe = INT_MAX;
	a->max_pd = INT_MAX;
	a->max_srq = INT_MAX;
	a->max_srq_wr = INT_MAX;
	a->max_res_rd_atom = INT_MAX;
	a->device_cap_flags = 0;
	a->max_sge = UIW_RDMA_MAX_SGE;
	a->max_sge_rd = UIW_RDMA_MAX_SGE;
	a->max_srq_sge = UIW_RDMA_MAX_SGE;
	a->max_mr = UIW_RDMA_MAX_MR;
	a->max_qp_rd_atom = UIW_RDMA_MAX_IRD;
	a->max_qp_init_rd_atom = UIW_RDMA_MAX_IRD;
	/* RFC 7306 atomics run on the CPU's own atomic instructions: atomic
	 * against the host's CPUs too (GLOB); only when enabled */
	a->atomic_cap = uiw_rdma_rfc7306() ? IBV_ATOMIC_GLOB : IBV_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	if (!context || !device_attr)
		return EINVAL;
	fill_device_attr(to_rctx(context), device_attr);
	return 0;
}

/* verbs_context.query_device_ex: what ibv_query_device_ex() (inline) calls */
static int query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	fill_device_attr(to_rctx(context), &a.orig_attr);
	/* extended fields: none of the optional features (ODP, TSO, RSS, ...) */
	memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

static void fill_port_attr(struct uiw_rdma_context *rc, struct ibv_port_attr *p)
{
	memset(p, 0, sizeof(*p));
	p->state = IBV_PORT_ACTIVE;
	p->max_mtu = mtu_enum(rc->dev->mtu);
	p->active_mtu = p->max_mtu;
	p->gid_tbl_len = (int)rc->dev->ngids;
	p->port_cap_flags = IBV_PORT_CM_SUP;
	/* rdmap rejects a work request of more than 2^32 - 1 octets */
	p->max_msg_sz = UINT32_MAX;
	p->pkey_tbl_len = 1;
	/* no physical link: the narrowest width and speed values */
	p->active_width = 1;  /* 1X */
	p->active_speed = 1;  /* 2.5 Gb/s */
	p->phys_state = 5;    /* LinkUp */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
}

static int port_ok(struct ibv_context *context, uint8_t port_num)
{
	return context && port_num == 1;
}

/* the exported symbol (IBVERBS_1.1): the old, shorter struct */
int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	struct ibv_port_attr p;

	if (!port_ok(context, port_num) || !port_attr)
		return EINVAL;
	fill_port_attr(to_rctx(context), &p);
	/* the legacy layout ends before the fields added later */
	memcpy(port_attr, &p, offsetof(struct ibv_port_attr, flags));
	return 0;
}

/* verbs_context.query_port: what ibv_query_port() (the inline) calls */
static int query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
		      size_t port_attr_len)
{
	struct ibv_port_attr p;

	if (!port_ok(context, port_num) || !port_attr)
		return EINVAL;
	fill_port_attr(to_rctx(context), &p);
	memset(port_attr, 0, port_attr_len);
	memcpy(port_attr, &p, port_attr_len < sizeof(p) ? port_attr_len : sizeof(p));
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
	struct uiw_rdma_context *rc;

	if (!port_ok(context, port_num) || !gid)
		return -1;
	rc = to_rctx(context);
	if (index < 0 || (unsigned)index >= rc->dev->ngids)
		return -1;
	*gid = rc->dev->gids[index];
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct uiw_rdma_context *rc;
	struct ibv_gid_entry e;

	if (!context || port_num != 1 || !entry || flags || entry_size < sizeof(e))
		return EINVAL;
	rc = to_rctx(context);
	if (gid_index >= rc->dev->ngids)
		return ENODATA;
	memset(&e, 0, sizeof(e));
	e.gid = rc->dev->gids[gid_index];
	e.gid_index = gid_index;
	e.port_num = 1;
	e.gid_type = IBV_GID_TYPE_IB; /* rdma-core reports iWARP GIDs with the IB type */
	e.ndev_ifindex = 0;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       unsigned int *type)
{
	if (!port_ok(context, port_num) || !type || index >= to_rctx(context)->dev->ngids) {
		errno = EINVAL;
		return -1;
	}
	*type = 0; /* IBV_GID_TYPE_SYSFS_IB_ROCE_V1: IB (and iWARP) GIDs */
	return 0;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index, __be16 *pkey)
{
	if (!port_ok(context, port_num) || !pkey || index != 0)
		return -1;
	*pkey = htobe16(0xffff); /* the default full-membership P_Key */
	return 0;
}

/* the one P_Key of ibv_query_pkey() is at index 0 */
int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	if (!port_ok(context, port_num) || be16toh(pkey) != 0xffff) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

/* a plain file read, as rdma-core's; nothing lives under uiw0's paths */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (!dir || !file || !buf || !size)
		return -1;
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n <= 0)
		return -1;
	if ((size_t)n == size)
		n--;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

/* ---- open and close ---------------------------------------------------------- */

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct uiw_rdma_context *rc;
	struct uiw_context_attr ua;
	int ret;

	if (!is_ours(device)) {
		errno = ENODEV;
		return NULL;
	}
	rc = calloc(1, sizeof(*rc));
	if (!rc) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&ua, 0, sizeof(ua));
	ua.max_mr = UIW_RDMA_MAX_MR;
	/* RFC 6581 peer-to-peer mode: as initiator, ask for it and send the
	 * ready-to-receive message, so that the accepting side may send first
	 * (MPA holds a responder's FPDUs until one arrived: ib_write_lat's
	 * server writes first).  Hardware iWARP RNICs (cxgb4) do the same by
	 * default.  UIW_RDMA_P2P=0 turns it off (an MPA revision 2 exchange
	 * without it, as Linux siw's default). */
	{
		const char *p2p = getenv("UIW_RDMA_P2P");

		ua.p2p = !(p2p && !strcmp(p2p, "0"));
	}
	/* Linux siw as responder sends its MPA Reply before it hands the
	 * socket to its QP and drops an FPDU (here: the RTR and perftest's
	 * first Send) that arrives in between; the connection then hangs.
	 * uiwarp's own tools hold the first FPDU 50 ms for it, and so does
	 * this library (UIW_RDMA_FPDU_DELAY_MS, 0..10000, changes it). */
	ua.first_fpdu_delay_ms = env_ms("UIW_RDMA_FPDU_DELAY_MS", 50, 10000);
	ret = uiw_open_context(&rc->uctx, &ua);
	if (ret) {
		free(rc);
		errno = -ret;
		return NULL;
	}
	ret = uiw_rdma_async_init(rc);
	if (ret) {
		uiw_close_context(rc->uctx);
		free(rc);
		errno = ret;
		return NULL;
	}
	rc->dev = uiw_rdma_device();
	uiw_rdma_init_ops(rc);
	rc->vctx.sz = sizeof(rc->vctx);
	rc->vctx.query_port = query_port;
	rc->vctx.query_device_ex = query_device_ex;
	rc->vctx.context.device = device;
	rc->vctx.context.cmd_fd = -1;
	rc->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&rc->vctx.context.mutex, NULL);
	rc->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	return &rc->vctx.context;
}

int ibv_close_device(struct ibv_context *context)
{
	struct uiw_rdma_context *rc;
	int ret;

	if (!context)
		return EINVAL;
	rc = to_rctx(context);
	if (rc->cm_owned)
		return EBUSY; /* rdma_cm_id.verbs belongs to the connection manager */
	ret = uiw_close_context(rc->uctx);
	if (ret)
		return -ret; /* EBUSY: objects of the context still exist */
	uiw_rdma_async_fini(rc);
	pthread_mutex_destroy(&rc->vctx.context.mutex);
	free(rc);
	return 0;
}
