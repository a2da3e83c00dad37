/* SPDX-License-Identifier: MIT */
/*
 * Verbs objects: context, PD, MR, CQ, QP, posting and polling.  No sockets
 * here (those live in uiw_engine.c); every call takes the context mutex.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "crc32c.h"
#include "uiw_hidden.h"
#include "uiw_int.h"

/* the public bounds (uiw_verbs.h) are the engine's */
_Static_assert(UIW_MAX_SGE == RDMAP_MAX_SGE, "UIW_MAX_SGE");
_Static_assert(UIW_MAX_INLINE == RDMAP_MAX_INLINE, "UIW_MAX_INLINE");
_Static_assert(UIW_MAX_IRD_ORD == MPA_V2_IRD_ORD_MASK, "UIW_MAX_IRD_ORD");
/* uiw_wc.qp_num and imm_data took padding: arrays of uiw_wc keep their layout */
_Static_assert(sizeof(struct uiw_wc) == 48, "uiw_wc grew");

int uiw_open_context(struct uiw_context **out, const struct uiw_context_attr *attr)
{
	struct uiw_context_attr a = {0};
	struct uiw_context *ctx;
	int ret;

	*out = NULL;
	if (attr)
		a = *attr;
	if (a.mode != UIW_CTX_PROGRESS_THREAD && a.mode != UIW_CTX_POLLED)
		return -EINVAL;
	/* several engines need threads of their own */
	if (a.engine_threads > UIW_ENGINES_MAX || (a.mode == UIW_CTX_POLLED && a.engine_threads > 1))
		return -EINVAL;
	if (!a.max_mr)
		a.max_mr = UIW_DEFAULT_MAX_MR;
	if ((unsigned)a.crc > UIW_CRC_OFF || a.mpa_rev > 2 || a.pd_max > MPA_PD_MAX ||
	    (a.p2p && a.mpa_rev == 1) || (a.rtr & ~(unsigned)MPA_RTR_ALL) ||
	    (a.fpdu_max && (a.fpdu_max < MPA_MULPDU_MIN || a.fpdu_max > MPA_MULPDU_MAX)) ||
	    a.tcp_user_timeout_ms > (unsigned)INT_MAX || a.tcp_keepalive_ms > 32767000u)
		return -EINVAL;
	/* CRC32C tables are built on first use (about 1 ms): here, not in
	 * the first FPDU */
	(void)crc32c_selected();
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_cond_init(&ctx->cond, NULL);
	ctx->evch.ctx = ctx;
	pthread_mutex_init(&ctx->evch.lock, NULL);
	pthread_cond_init(&ctx->evch.cond, NULL);
	ctx->evch.tail = &ctx->evch.head;
	ctx->evch.efd = -1;
	ctx->attr = a;
	ret = ddp_mem_init(&ctx->mem, a.max_mr);
	if (ret)
		goto out_free;
	ret = engine_start(ctx);
	if (ret)
		goto out_mem;
	*out = ctx;
	return 0;
out_mem:
	ddp_mem_destroy(&ctx->mem);
out_free:
	pthread_cond_destroy(&ctx->evch.cond);
	pthread_mutex_destroy(&ctx->evch.lock);
	pthread_cond_destroy(&ctx->cond);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return ret;
}

int uiw_close_context(struct uiw_context *ctx)
{
	struct uiw_event_channel *ch;
	struct uiw_ev_node *e;

	lk_lock(&ctx->lock, UIW_LK_CTX);
	if (ctx->npd || ctx->ncq || ctx->nqp || __atomic_load_n(&ctx->nid, __ATOMIC_RELAXED) ||
	    ctx->nch || ctx->nsrq) {
		lk_unlock(&ctx->lock, UIW_LK_CTX);
		return -EBUSY;
	}
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	engine_stop(ctx);
	/* no id is left, so neither are events; channels the application did
	 * not destroy go with the context */
	while ((ch = ctx->channels)) {
		ctx->channels = ch->next;
		cm_channel_free(ch);
	}
	while ((e = ctx->evch.head)) {
		ctx->evch.head = e->next;
		free(e);
	}
	ddp_mem_destroy(&ctx->mem);
	pthread_cond_destroy(&ctx->evch.cond);
	pthread_mutex_destroy(&ctx->evch.lock);
	pthread_cond_destroy(&ctx->cond);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return 0;
}

int uiw_alloc_pd(struct uiw_context *ctx, struct uiw_pd **out)
{
	struct uiw_pd *pd = calloc(1, sizeof(*pd));

	*out = NULL;
	if (!pd)
		return -ENOMEM;
	pd->ctx = ctx;
	lk_lock(&ctx->lock, UIW_LK_CTX);
	ddp_pd_init(&ctx->mem, &pd->pd);
	ctx->npd++;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	*out = pd;
	return 0;
}

int uiw_dealloc_pd(struct uiw_pd *pd)
{
	struct uiw_context *ctx = pd->ctx;

	lk_lock(&ctx->lock, UIW_LK_CTX);
	if (pd->pd.refs) {
		lk_unlock(&ctx->lock, UIW_LK_CTX);
		return -EBUSY;
	}
	ctx->npd--;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	free(pd);
	return 0;
}

/* a hexadecimal address of /proc/self/maps at *@p, *@p moved past it */
static uintptr_t maps_hex(const char **p, const char *end)
{
	uintptr_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v << 4 | (uintptr_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uintptr_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

/*
 * Linux 6.11's PROCMAP_QUERY ioctl on /proc/self/maps: the mapping covering
 * an address (or the next one) with its permissions, a few microseconds
 * where reading the text of the mappings up to @lo costs tens.  The uapi
 * header of older systems (Debian 12's) lacks it: its ABI, as the kernel
 * defines it, is declared here; a kernel without it answers ENOTTY and the
 * text is read instead.
 */
struct uiw_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define UIW_PROCMAP_QUERY	     _IOWR('f', 17, struct uiw_procmap_query)
#define UIW_PROCMAP_READABLE	     0x01u
#define UIW_PROCMAP_WRITABLE	     0x02u
#define UIW_PROCMAP_COVERING_OR_NEXT 0x10u

/* mem_mapped() by PROCMAP_QUERY: 0, -EFAULT, or 1 when the kernel has no
 * such ioctl (nothing decided) */
static int mem_mapped_query(int fd, uintptr_t lo, uintptr_t hi, int write)
{
	uint64_t want = write ? UIW_PROCMAP_WRITABLE : UIW_PROCMAP_READABLE;
	uintptr_t cur = lo;

	while (cur < hi) {
		struct uiw_procmap_query q = {.size = sizeof(q),
					      .query_flags = UIW_PROCMAP_COVERING_OR_NEXT,
					      .query_addr = cur};

		if (ioctl(fd, UIW_PROCMAP_QUERY, &q) < 0) {
			if (cur == lo && (errno == ENOTTY || errno == EINVAL))
				return 1;
			return -EFAULT; /* ENOENT: nothing mapped from @cur on */
		}
		if (q.vma_start > cur || !(q.vma_flags & want) || q.vma_end <= cur)
			return -EFAULT; /* a hole, or not allowed here */
		cur = (uintptr_t)q.vma_end;
	}
	return 0;
}

/*
 * Is every page of [@lo, @hi) mapped, writable when @write, else readable?
 * The kernel's ib_umem_get() pins the pages of a registration and refuses
 * one that is not (EFAULT); uiwarp pins nothing, and a peer's Write into a
 * read-only page, or a Send from an unmapped one, would kill the process in
 * the engine's copy.  Permissions are per mapping, so the answer comes from
 * the mappings themselves (/proc/self/maps, in address order), read only
 * as far as the range: the cost does not grow with the range's size (about
 * 18 us a registration here; 7 with PROCMAP_QUERY, above: docs/RDMA-CORE.md).
 * 0 or -EFAULT; 0 when /proc is not there (nothing to check against: as
 * before).
 */
static int mem_mapped(uintptr_t lo, uintptr_t hi, int write)
{
	/* a line is at most ~80 octets of addresses, permissions, offset,
	 * device and inode, a path (PATH_MAX) and " (deleted)" */
	char buf[PATH_MAX + 256];
	size_t have = 0;
	uintptr_t cur = lo;
	int fd, ret = -EFAULT;

	if (lo >= hi)
		return 0;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* UIW_REG_MAPS_TEXT=1: the text even where the ioctl exists, so that
	 * tests/sh/dropin_qpx.sh covers the path of kernels before 6.11 */
	ret = getenv("UIW_REG_MAPS_TEXT") ? 1 : mem_mapped_query(fd, lo, hi, write);
	if (ret <= 0) {
		close(fd);
		return ret;
	}
	ret = -EFAULT;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);
		const char *p = buf, *nl;

		if (r <= 0)
			break; /* the mappings end before @hi: a hole */
		have += (size_t)r;
		/* each whole line: "start-end perms ..." */
		while ((nl = memchr(p, '\n', (size_t)(buf + have - p)))) {
			uintptr_t start = maps_hex(&p, nl), end;

			p++; /* '-' */
			end = maps_hex(&p, nl);
			p++; /* ' ' */
			if (end > cur) {
				if (start > cur || nl - p < 2 || p[write ? 1 : 0] == '-')
					goto out; /* a hole, or not allowed here */
				cur = end;
				if (cur >= hi) {
					ret = 0;
					goto out;
				}
			}
			p = nl + 1;
		}
		have = (size_t)(buf + have - p);
		if (have == sizeof(buf))
			break; /* no line is that long */
		memmove(buf, p, have);
	}
out:
	close(fd);
	return ret;
}

int uiw_reg_mr(struct uiw_pd *pd, void *addr, size_t length, int access, struct uiw_mr **out)
{
	struct uiw_context *ctx = pd->ctx;
	struct ddp_mr *dmr = NULL;
	struct uiw_mr *mr;
	int ret;

	*out = NULL;
	if (access & ~(UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_READ |
		       UIW_ACCESS_REMOTE_ATOMIC))
		return -EINVAL;
	/* what ddp_mr_reg() refuses with -EINVAL (NULL, a range that wraps,
	 * remote write without local write) it still does, as the kernel
	 * checks the arguments before it pins */
	if (addr && (uintptr_t)addr + length > (uintptr_t)addr &&
	    (!(access & (UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_ATOMIC)) ||
	     (access & UIW_ACCESS_LOCAL_WRITE)) &&
	    mem_mapped((uintptr_t)addr, (uintptr_t)addr + length, !!(access & UIW_ACCESS_LOCAL_WRITE)))
		return -EFAULT;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	/* the STag table: every engine looks up in it */
	ctx_lock_all(ctx);
	ret = ddp_mr_reg(&ctx->mem, &pd->pd, addr, length, (unsigned)access, &dmr);
	ctx_unlock_all(ctx);
	if (ret) {
		free(mr);
		return ret;
	}
	mr->context = ctx;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->lkey = mr->rkey = dmr->stag;
	mr->priv = dmr;
	*out = mr;
	return 0;
}

/* (ctx_lock_all() held) does any connection of @ctx still use [lo, hi):
 * its QP's stream (an FPDU being placed there, FPDUs queued from there) or
 * kernel I/O in flight? */
static int ctx_mem_refs(struct uiw_context *ctx, uintptr_t lo, uintptr_t hi)
{
	ctx_for_each_id(ctx, i, id) {
		struct rdmap_qp *qp = id_bound_qp(id);

		if (engine_inflight_refs(id, lo, hi) || (qp && rdmap_qp_mem_refs(qp, lo, hi)))
			return 1;
	}
	return 0;
}

/*
 * (ctx_lock_all() held) Wait until no connection of @ctx uses [lo, hi) any
 * more, or until @qp (if not NULL) has flushed, at most UIW_FENCE_WAIT_NS:
 * the engines cancel the I/O of failing QPs and wake the waiters after
 * each turn (polled: ctx_wait() turns the engine).  Returns 0 or -ETIMEDOUT.
 */
static int ctx_fence_wait(struct uiw_context *ctx, uintptr_t lo, uintptr_t hi, struct uiw_qp *qp)
{
	struct timespec dl = engine_realtime_after(UIW_FENCE_WAIT_NS);
	int ret = 0;

	engine_wake(ctx);
	while (qp ? qp->qp.flush_pending : ctx_mem_refs(ctx, lo, hi)) {
		if (ctx_wait(ctx, &dl) == ETIMEDOUT &&
		    (qp ? qp->qp.flush_pending : ctx_mem_refs(ctx, lo, hi))) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	return ret;
}

int uiw_dereg_mr(struct uiw_mr *mr)
{
	struct uiw_context *ctx = mr->context;
	struct ddp_mr *dmr = mr->priv;
	uintptr_t lo, hi;
	int ret = 0;

	ctx_lock_all(ctx);
	lo = (uintptr_t)dmr->addr;
	hi = lo + (uintptr_t)dmr->length;
	/* no new segment is placed there or read from there: every one is
	 * checked against the table (a peer's Write, a Read Response's sink
	 * or source, a WR's SGEs) */
	__atomic_store_n(&dmr->valid, 0, __ATOMIC_RELAXED);
	/* a segment already under way, and FPDUs already queued, do not look
	 * again: their QPs fail, as a real RNIC's do when memory goes away
	 * under a DMA (RFC 5040 §7.1), and the call returns once no kernel
	 * I/O and no queued FPDU uses the range */
	ctx_for_each_id(ctx, i, id) {
		struct rdmap_qp *qp = id_bound_qp(id);

		if (qp && rdmap_qp_mem_revoke(qp, lo, hi))
			engine_mark(id);
	}
	if (ctx_mem_refs(ctx, lo, hi))
		ret = ctx_fence_wait(ctx, lo, hi, NULL);
	if (ret) {
		/* the region stays registered (and refused to peers): the
		 * memory is not the application's yet; it may call again */
		ctx_unlock_all(ctx);
		return -EBUSY;
	}
	ddp_mr_dereg(&ctx->mem, dmr);
	ctx_unlock_all(ctx);
	free(mr);
	return 0;
}

int uiw_create_comp_channel(struct uiw_context *ctx, struct uiw_comp_channel **out)
{
	struct uiw_channel_int *ch;

	*out = NULL;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->pub.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->pub.fd < 0) {
		int ret = -errno;

		free(ch);
		return ret;
	}
	ch->pub.context = ctx;
	ch->ev_tail = &ch->ev_head;
	pthread_mutex_init(&ch->lock, NULL);
	lk_lock(&ctx->lock, UIW_LK_CTX);
	ctx->nch++;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	*out = &ch->pub;
	return 0;
}

int uiw_destroy_comp_channel(struct uiw_comp_channel *channel)
{
	struct uiw_context *ctx = channel->context;

	lk_lock(&ctx->lock, UIW_LK_CTX);
	if (channel->refcnt) {
		lk_unlock(&ctx->lock, UIW_LK_CTX);
		return -EBUSY;
	}
	ctx->nch--;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	pthread_mutex_destroy(&((struct uiw_channel_int *)channel)->lock);
	close(channel->fd);
	free(channel);
	return 0;
}

int uiw_create_cq(struct uiw_context *ctx, int cqe, void *cq_context,
		  struct uiw_comp_channel *channel, struct uiw_cq **out)
{
	struct uiw_cq *cq;

	*out = NULL;
	if (cqe <= 0 || (channel && channel->context != ctx))
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->ring = calloc((size_t)cqe, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -ENOMEM;
	}
	cq->ctx = ctx;
	pthread_mutex_init(&cq->lock, NULL);
	cq->cap = (unsigned)cqe;
	cq->cq_context = cq_context;
	cq->channel = channel;
	lk_lock(&ctx->lock, UIW_LK_CTX);
	ctx->ncq++;
	if (channel)
		channel->refcnt++;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	*out = cq;
	return 0;
}

/* Drop @cq's queued, untaken events from its channel (its lock held). */
static void cq_drop_events(struct uiw_cq *cq)
{
	struct uiw_channel_int *ch = (struct uiw_channel_int *)cq->channel;
	struct uiw_cq **pp;
	uint64_t v;

	if (!cq->ev_queued)
		return;
	for (pp = &ch->ev_head; *pp; pp = &(*pp)->ev_next) {
		if (*pp == cq) {
			*pp = cq->ev_next;
			break;
		}
	}
	ch->ev_tail = &ch->ev_head;
	while (*ch->ev_tail)
		ch->ev_tail = &(*ch->ev_tail)->ev_next;
	/* Take the readiness back.  Another thread blocked in uiw_get_cq_event()
	 * may win a unit first; it then finds no CQ and retries. */
	while (cq->ev_queued) {
		struct pollfd pfd = {.fd = ch->pub.fd, .events = POLLIN};

		cq->ev_queued--;
		if (poll(&pfd, 1, 0) == 1 && read(ch->pub.fd, &v, sizeof(v)) < 0)
			break;
	}
}

int uiw_destroy_cq(struct uiw_cq *cq)
{
	struct uiw_context *ctx = cq->ctx;

	struct uiw_channel_int *ch = (struct uiw_channel_int *)cq->channel;

	lk_lock(&ctx->lock, UIW_LK_CTX);
	if (ch)
		lk_lock(&ch->lock, UIW_LK_CCH);
	if (cq->refs || (ch && cq->ev_unacked)) {
		if (ch)
			lk_unlock(&ch->lock, UIW_LK_CCH);
		lk_unlock(&ctx->lock, UIW_LK_CTX);
		return -EBUSY;
	}
	if (ch) {
		cq_drop_events(cq);
		lk_unlock(&ch->lock, UIW_LK_CCH);
		cq->channel->refcnt--;
	}
	ctx->ncq--;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq);
	return 0;
}

int uiw_req_notify_cq(struct uiw_cq *cq, int solicited_only)
{
	if (!cq->channel)
		return -EINVAL;
	lk_lock(&cq->lock, UIW_LK_CQ);
	/* an armed "any" stays "any" (libibverbs: the wider request wins) */
	if (cq->armed != UIW_ARM_ANY)
		cq->armed = solicited_only ? UIW_ARM_SOLICITED : UIW_ARM_ANY;
	lk_unlock(&cq->lock, UIW_LK_CQ);
	return 0;
}

/* (CQ lock held) a completion of kind @solicited/@error was added to @cq:
 * does it end the CQ's arming?  Then cq_notify() tells its channel. */
static int cq_disarm(struct uiw_cq *cq, int solicited, int error)
{
	if (!cq->armed || (cq->armed == UIW_ARM_SOLICITED && !solicited && !error))
		return 0;
	cq->armed = 0;
	return 1;
}

/* (no CQ lock) queue @cq's event on its channel and make the fd readable.
 * The eventfd write comes after the channel's lock is released: it wakes
 * the application, whose uiw_get_cq_event() takes that lock at once
 * (written under the locks, it doubled the futex calls of send_bw's
 * sender and cost it ~15%).  The unit still follows its CQ onto the
 * queue, so a reader that took a unit finds a CQ; cq_drop_events() runs
 * only once no QP can complete on the CQ (uiw_destroy_cq(): no QP uses it),
 * so no unit of a dropped event is still to come. */
static void cq_notify(struct uiw_cq *cq)
{
	struct uiw_channel_int *ch = (struct uiw_channel_int *)cq->channel;
	uint64_t one = 1;

	lk_lock(&ch->lock, UIW_LK_CCH);
	if (!cq->ev_queued++) {
		cq->ev_next = NULL;
		*ch->ev_tail = cq;
		ch->ev_tail = &cq->ev_next;
	}
	lk_unlock(&ch->lock, UIW_LK_CCH);
	if (write(ch->pub.fd, &one, sizeof(one)) < 0) {
		/* the counter cannot saturate: one unit per queued event */
	}
}

int uiw_get_cq_event(struct uiw_comp_channel *channel, struct uiw_cq **cqp, void **cq_context)
{
	struct uiw_channel_int *ch = (struct uiw_channel_int *)channel;
	struct uiw_context *ctx = channel->context;
	struct uiw_cq *cq;
	uint64_t v;

	for (;;) {
		if (ctx->attr.mode == UIW_CTX_POLLED) {
			struct pollfd pfd = {.fd = channel->fd, .events = POLLIN};
			int fl = fcntl(channel->fd, F_GETFL);

			/* drive the engine until the fd is readable (non-blocking fd:
			 * one turn, then -EAGAIN) */
			while (poll(&pfd, 1, 0) == 0) {
				int nb = fl >= 0 && (fl & O_NONBLOCK);

				eng_lock(&ctx->eng[0]);
				engine_run(ctx, nb ? 0 : 1000000);
				eng_unlock(&ctx->eng[0]);
				if (nb && poll(&pfd, 1, 0) == 0)
					return -EAGAIN;
			}
		} else {
			struct pollfd pfd = {.fd = channel->fd, .events = POLLIN};
			int fl = fcntl(channel->fd, F_GETFL);

			/* this thread reads the octets of what it waits for
			 * (engine_app_wait()); a non-blocking fd: one turn */
			if (fl >= 0 && (fl & O_NONBLOCK)) {
				engine_app_turn(ctx);
			} else {
				int r = 0;

				while (!r && poll(&pfd, 1, 0) == 0)
					r = engine_app_wait(ctx, channel->fd);
				if (r < 0)
					return r; /* -EINTR */
			}
		}
		if (read(channel->fd, &v, sizeof(v)) < 0)
			return -errno;
		lk_lock(&ch->lock, UIW_LK_CCH);
		cq = ch->ev_head;
		if (cq) {
			if (!--cq->ev_queued) {
				ch->ev_head = cq->ev_next;
				if (!ch->ev_head)
					ch->ev_tail = &ch->ev_head;
			}
			cq->ev_unacked++;
		}
		lk_unlock(&ch->lock, UIW_LK_CCH);
		if (cq)
			break;
	}
	*cqp = cq;
	if (cq_context)
		*cq_context = cq->cq_context;
	return 0;
}

void uiw_ack_cq_events(struct uiw_cq *cq, unsigned int nevents)
{
	struct uiw_channel_int *ch = (struct uiw_channel_int *)cq->channel;

	if (!ch)
		return;
	lk_lock(&ch->lock, UIW_LK_CCH);
	cq->ev_unacked = nevents >= cq->ev_unacked ? 0 : cq->ev_unacked - nevents;
	lk_unlock(&ch->lock, UIW_LK_CCH);
}

int uiw_poll_cq(struct uiw_cq *cq, int n, struct uiw_wc *wc)
{
	int got = 0;

	if (n < 0)
		return -EINVAL;
	/* Progress-thread mode: an empty CQ is answered without the lock, so a
	 * busy-polling application does not fight the engine for it; and as
	 * such a poller holds a CPU the progress thread needs to produce what
	 * it waits for, it gives the CPU up every UIW_POLL_YIELD empty polls
	 * (free when a core is idle: nothing else to run). */
	if (cq->ctx->attr.mode != UIW_CTX_POLLED && !__atomic_load_n(&cq->count, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&cq->overflow, __ATOMIC_RELAXED)) {
		/* nothing yet: read the sockets from this thread (when the
		 * engine is free), not wait for the progress thread to */
		engine_app_turn(cq->ctx);
		if (!__atomic_load_n(&cq->count, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&cq->overflow, __ATOMIC_RELAXED)) {
			if (__atomic_add_fetch(&cq->empty_polls, 1, __ATOMIC_RELAXED) % UIW_POLL_YIELD == 0)
				sched_yield();
			return 0;
		}
	}
	if (cq->ctx->attr.mode == UIW_CTX_POLLED) {
		eng_lock(&cq->ctx->eng[0]);
		engine_run(cq->ctx, 0);
		eng_unlock(&cq->ctx->eng[0]);
	}
	/* the CQ's lock alone: the engines write completions under it too */
	lk_lock(&cq->lock, UIW_LK_CQ);
	if (cq->overflow) {
		/* once per overflow: completions were lost since the last poll */
		__atomic_store_n(&cq->overflow, 0, __ATOMIC_RELAXED);
		lk_unlock(&cq->lock, UIW_LK_CQ);
		return -EOVERFLOW;
	}
	while (got < n && cq->count) {
		wc[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		__atomic_store_n(&cq->count, cq->count - 1, __ATOMIC_RELAXED);
	}
	lk_unlock(&cq->lock, UIW_LK_CQ);
	return got;
}

/* rdmap upcall (the QP's engine's lock held): a completion for the QP's CQ, written
 * under the CQ's lock. */
static void qp_complete(void *arg, int recv, const struct rdmap_wc *rwc)
{
	struct uiw_qp *qp = arg;
	struct uiw_cq *cq = recv ? qp->recv_cq : qp->send_cq;
	struct uiw_wc *wc;
	int notify;
	static const enum uiw_wc_opcode opc[] = {
		[RDMAP_WC_SEND] = UIW_WC_SEND,
		[RDMAP_WC_RDMA_WRITE] = UIW_WC_RDMA_WRITE,
		[RDMAP_WC_RDMA_READ] = UIW_WC_RDMA_READ,
		[RDMAP_WC_LOCAL_INV] = UIW_WC_LOCAL_INV,
		[RDMAP_WC_RECV] = UIW_WC_RECV,
		[RDMAP_WC_COMP_SWAP] = UIW_WC_COMP_SWAP,
		[RDMAP_WC_FETCH_ADD] = UIW_WC_FETCH_ADD,
		[RDMAP_WC_RECV_RDMA_WITH_IMM] = UIW_WC_RECV_RDMA_WITH_IMM,
	};

	lk_lock(&cq->lock, UIW_LK_CQ);
	if (cq->count == cq->cap) {
		if (!cq->overflow)
			__atomic_store_n(&cq->overflow, 1, __ATOMIC_RELAXED);
		lk_unlock(&cq->lock, UIW_LK_CQ);
		/* a completion is lost: every QP on this CQ goes to error (the
		 * engine does it at its next turn, outside this upcall; a verbs
		 * CQ error does the same), so none goes on with lost state */
		if (!__atomic_exchange_n(&cq->error, 1, __ATOMIC_RELAXED))
			engine_wake(cq->ctx);
		return;
	}
	wc = &cq->ring[(cq->head + cq->count) % cq->cap];
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = rwc->wr_id;
	wc->status = (enum uiw_wc_status)rwc->status; /* same values (ibv_wc_status) */
	wc->opcode = (unsigned)rwc->opcode < sizeof(opc) / sizeof(opc[0]) ? opc[rwc->opcode] : UIW_WC_SEND;
	wc->byte_len = rwc->byte_len;
	wc->qp = qp;
	wc->qp_num = qp->qp_num;
	if (rwc->flags & RDMAP_WC_F_WITH_INV) {
		wc->wc_flags |= UIW_WC_WITH_INV;
		wc->invalidated_rkey = rwc->inv_stag;
	}
	if (rwc->flags & RDMAP_WC_F_SOLICITED)
		wc->wc_flags |= UIW_WC_SOLICITED;
	if (rwc->flags & RDMAP_WC_F_WITH_IMM) {
		wc->wc_flags |= UIW_WC_WITH_IMM;
		wc->imm_data = rwc->imm_data;
	}
	if (rwc->flags & RDMAP_WC_F_TERM) {
		wc->wc_flags |= UIW_WC_TERM;
		wc->term_layer = rwc->term.layer;
		wc->term_etype = rwc->term.etype;
		wc->term_ecode = rwc->term.ecode;
	}
	/* the entry is complete before a lock-free poller sees the count */
	__atomic_store_n(&cq->count, cq->count + 1, __ATOMIC_RELEASE);
	notify = cq->channel && cq_disarm(cq, recv && (rwc->flags & RDMAP_WC_F_SOLICITED),
					  rwc->status != 0);
	lk_unlock(&cq->lock, UIW_LK_CQ);
	if (notify)
		cq_notify(cq);
}

/* The connection of @uq's QP, while the QP is bound to its stream. */
static struct uiw_conn *qp_conn(struct uiw_qp *uq)
{
	struct uiw_cm_id *id = uq->id;

	return id && id->state == UIW_ID_CONN && id_bound_qp(id) == &uq->qp ? &id->conn : NULL;
}

/* The QP moved to ERROR (flushed): its connection sends what it queued (a
 * TERMINATE), drops what arrives, then closes. */
static void qp_error(void *arg, const struct rdmap_term *t, int received)
{
	struct uiw_qp *uq = arg;
	struct uiw_conn *c = qp_conn(uq);

	(void)t;
	(void)received;
	if (!c)
		return;
	uiw_conn_qp_error(c, engine_now_ns());
	engine_mark(uq->id);
}

/* A TERMINATE left, arrived or was abandoned: the connection reports it
 * with DISCONNECTED (and resets when it was abandoned). */
static void qp_term(void *arg, enum rdmap_term_ev ev, const struct rdmap_term *t)
{
	struct uiw_qp *uq = arg;
	struct uiw_conn *c = qp_conn(uq);
	enum uiw_conn_term_kind k = ev == RDMAP_TERM_EV_RECEIVED  ? UIW_CONN_TERM_KIND_RECEIVED
				    : ev == RDMAP_TERM_EV_SENT	  ? UIW_CONN_TERM_KIND_SENT
								  : UIW_CONN_TERM_KIND_ABANDONED;

	if (!c)
		return;
	uiw_conn_term(c, engine_now_ns(), k, t->layer, t->etype, t->ecode);
	engine_mark(uq->id);
}

const struct rdmap_ops verbs_qp_ops = {
	.complete = qp_complete,
	.error = qp_error,
	.term = qp_term,
};

/*
 * QP numbers: 24 bits, unique among the live QPs of the process (a verbs
 * program may name a QP of any of its contexts by number), handed out in
 * increasing order from 0x100 so that a number comes back only after 16M
 * others: a completion or a peer's message about an old QP does not name a
 * new one.  0 and 1 are special in verbs.  The table has its own lock,
 * never taken with a context's.
 */
#define QPN_BUCKETS 256
#define QPN_MASK    0xffffffu
static pthread_mutex_t qpn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uiw_qp *qpn_tab[QPN_BUCKETS];
static uint32_t qpn_next = 0x100;

static struct uiw_qp *qpn_find(uint32_t n)
{
	struct uiw_qp *q;

	for (q = qpn_tab[n % QPN_BUCKETS]; q && q->qp_num != n; q = q->qpn_next)
		;
	return q;
}

static void qpn_add(struct uiw_qp *qp)
{
	uint32_t n;

	lk_lock(&qpn_lock, UIW_LK_QPN);
	do
		n = qpn_next++ & QPN_MASK;
	while (n < 2 || qpn_find(n));
	qp->qp_num = n;
	qp->qpn_next = qpn_tab[n % QPN_BUCKETS];
	qpn_tab[n % QPN_BUCKETS] = qp;
	lk_unlock(&qpn_lock, UIW_LK_QPN);
}

static void qpn_del(struct uiw_qp *qp)
{
	struct uiw_qp **pp;

	lk_lock(&qpn_lock, UIW_LK_QPN);
	for (pp = &qpn_tab[qp->qp_num % QPN_BUCKETS]; *pp; pp = &(*pp)->qpn_next)
		if (*pp == qp) {
			*pp = qp->qpn_next;
			break;
		}
	lk_unlock(&qpn_lock, UIW_LK_QPN);
}

uint32_t uiw_qp_num(struct uiw_qp *qp)
{
	return qp->qp_num; /* set before the QP was handed out, never changed */
}

int uiw_qp_by_num(uint32_t qp_num, struct uiw_qp **qp)
{
	lk_lock(&qpn_lock, UIW_LK_QPN);
	*qp = qpn_find(qp_num);
	lk_unlock(&qpn_lock, UIW_LK_QPN);
	return *qp ? 0 : -ENOENT;
}

void uiw_qp_set_context(struct uiw_qp *qp, void *context)
{
	__atomic_store_n(&qp->context, context, __ATOMIC_RELEASE);
}

void *uiw_qp_context(struct uiw_qp *qp)
{
	return __atomic_load_n(&qp->context, __ATOMIC_ACQUIRE);
}

/* (ctx_lock_all() held) @qp goes: its completions still queued in @cq no longer
 * point at it (their qp_num still names it) */
static void cq_forget_qp(struct uiw_cq *cq, struct uiw_qp *qp)
{
	lk_lock(&cq->lock, UIW_LK_CQ);
	for (unsigned i = 0; i < cq->count; i++) {
		struct uiw_wc *wc = &cq->ring[(cq->head + i) % cq->cap];

		if (wc->qp == qp)
			wc->qp = NULL;
	}
	lk_unlock(&cq->lock, UIW_LK_CQ);
}

int uiw_create_qp(struct uiw_pd *pd, const struct uiw_qp_init_attr *attr, struct uiw_qp **out)
{
	struct uiw_context *ctx = pd->ctx;
	struct rdmap_qp_cfg cfg = {0};
	struct uiw_qp *qp;
	int ret;

	*out = NULL;
	if (!attr->send_cq || !attr->recv_cq)
		return -EINVAL;
	if (attr->srq && attr->srq->pd != pd)
		return -EINVAL;
	if (attr->send_cq->ctx != ctx || attr->recv_cq->ctx != ctx)
		return -EINVAL;
	if (attr->cap.max_send_sge > UIW_MAX_SGE || attr->cap.max_recv_sge > UIW_MAX_SGE)
		return -EINVAL;
	if ((attr->ird > UIW_MAX_IRD_ORD && attr->ird != UIW_IRD_ORD_ZERO) ||
	    (attr->ord > UIW_MAX_IRD_ORD && attr->ord != UIW_IRD_ORD_ZERO))
		return -EINVAL;
	if (attr->ext & ~(unsigned)UIW_QP_EXT_RFC7306)
		return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	cfg.max_send_wr = attr->cap.max_send_wr;
	cfg.max_recv_wr = attr->srq ? 0 : attr->cap.max_recv_wr;
	cfg.max_inline = attr->cap.max_inline_data;
	cfg.ird = attr->ird == UIW_IRD_ORD_ZERO ? 0 : attr->ird ? attr->ird : 16;
	cfg.ord = attr->ord == UIW_IRD_ORD_ZERO ? 0 : attr->ord ? attr->ord : 16;
	cfg.ext = (attr->ext & UIW_QP_EXT_RFC7306) ? RDMAP_EXT_RFC7306 : 0;
	qp->ctx = ctx;
	qp->pd = pd;
	qp->max_send_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	qp->max_recv_sge = attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->eng = engine_pick(ctx); /* until a connection takes it */
	lk_lock(&ctx->lock, UIW_LK_CTX);
	ret = rdmap_qp_init(&qp->qp, &cfg, &ctx->mem, &pd->pd, &verbs_qp_ops, qp);
	if (!ret && attr->srq)
		ret = rdmap_qp_set_srq(&qp->qp, &attr->srq->srq);
	if (!ret) {
		qp->send_cq->refs++;
		qp->recv_cq->refs++;
		qp->srq = attr->srq;
		if (qp->srq)
			qp->srq->refs++;
		ctx->nqp++;
	}
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	if (ret) {
		rdmap_qp_destroy(&qp->qp);
		free(qp);
		return ret;
	}
	qpn_add(qp);
	*out = qp;
	return 0;
}

/*
 * (ctx_lock_all() held) @qp's connection closed gracefully and its FIN is out
 * (LINGER): everything it sent is in TCP, and only the peer's FIN is
 * awaited.  Detach the QP without the reset of an abortive destroy, as the
 * kernel's siw closes: the QP goes to ERROR (its WRs flushed once, after
 * the engine's I/O that may use their memory ended; the connection then
 * drops what arrives), and the connection lingers on its own until the
 * peer's FIN or its bound, then reports DISCONNECTED.  A peer still
 * finishing its side (perftest's last Send, siw under emulation) is not
 * cut by a RST.  The QP stays attached when that I/O did not end in time:
 * the caller then detaches it abortively.
 */
static void qp_detach_lingering(struct uiw_context *ctx, struct uiw_qp *qp, struct uiw_cm_id *id)
{
	if (qp->qp.state != RDMAP_QPS_ERROR)
		rdmap_qp_modify_error(&qp->qp);
	if (qp->qp.flush_pending) {
		engine_mark(id);
		if (ctx_fence_wait(ctx, 0, 0, qp))
			return;
	}
	/* the wait released the engines' locks: the id may have let go meanwhile */
	id = qp->id;
	if (!id || id->state == UIW_ID_DEAD)
		return;
	/* nothing of MPA's may reach the QP any more: its upcalls go */
	mpa_conn_set_ops(&id->conn.mpa, NULL, NULL);
	id->qp = NULL;
	qp->id = NULL;
	qp->qp.mpa = NULL;
}

int uiw_destroy_qp(struct uiw_qp *qp)
{
	struct uiw_context *ctx = qp->ctx;
	struct uiw_cm_id *id;

	ctx_lock_all(ctx);
	id = qp->id;
	if (id && id->state == UIW_ID_CONN && !id->closing &&
	    (id->conn.state == UIW_CONN_LINGER || id->conn.state == UIW_CONN_LINGER_DISCARD))
		qp_detach_lingering(ctx, qp, id);
	id = qp->id;
	if (id && id->state != UIW_ID_DEAD) {
		/*
		 * Its connection lives: detach abortively, keeping the id.  The
		 * QP goes to ERROR: every WR is flushed, once (at once, or when
		 * the engine's I/O that may use their memory has ended: the
		 * engine cancels it).  The connection is reset and reports
		 * DISCONNECTED (CONNECT_ERROR during an initiator's handshake);
		 * the QP is freed once the engine has closed the socket, after
		 * which nothing (MPA's upcalls, kernel I/O) can reach it.
		 */
		if (qp->qp.state != RDMAP_QPS_ERROR)
			rdmap_qp_modify_error(&qp->qp);
		if (id->state == UIW_ID_CONN)
			uiw_conn_reset(&id->conn, -ECONNABORTED);
		engine_mark(id);
		ctx_unlock_all(ctx);
		engine_wake(ctx);
		ctx_lock_all(ctx);
		/* uiw_destroy_id() on another thread may take the id away
		 * meanwhile: it clears qp->id first (every lock held) */
		while ((id = qp->id) && id->state != UIW_ID_DEAD)
			ctx_wait(ctx, NULL);
	}
	if (qp->id)
		qp->id->qp = NULL;
	rdmap_qp_destroy(&qp->qp);
	cq_forget_qp(qp->send_cq, qp);
	if (qp->recv_cq != qp->send_cq)
		cq_forget_qp(qp->recv_cq, qp);
	qp->send_cq->refs--;
	qp->recv_cq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	ctx->nqp--;
	ctx_unlock_all(ctx);
	qpn_del(qp);
	free(qp);
	return 0;
}

static int conv_sge(struct rdmap_sge *dst, const struct uiw_sge *src, int n)
{
	if (n < 0 || n > RDMAP_MAX_SGE || (n && !src))
		return -EINVAL;
	for (int i = 0; i < n; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
	return 0;
}

static int conv_send(struct rdmap_send_wr *w, const struct uiw_send_wr *wr)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	switch (wr->opcode) {
	case UIW_WR_RDMA_WRITE:
		w->opcode = RDMAP_WR_WRITE;
		break;
	case UIW_WR_RDMA_READ:
		w->opcode = RDMAP_WR_READ;
		break;
	case UIW_WR_SEND:
		w->opcode = RDMAP_WR_SEND;
		break;
	case UIW_WR_SEND_WITH_INV:
		w->opcode = RDMAP_WR_SEND_INV;
		break;
	case UIW_WR_LOCAL_INV:
		w->opcode = RDMAP_WR_LOCAL_INV;
		break;
	case UIW_WR_RDMA_WRITE_WITH_IMM:
		w->opcode = RDMAP_WR_WRITE_IMM;
		break;
	case UIW_WR_SEND_WITH_IMM:
		w->opcode = RDMAP_WR_SEND_IMM;
		break;
	case UIW_WR_ATOMIC_CMP_AND_SWP:
		w->opcode = RDMAP_WR_ATOMIC_CSWAP;
		break;
	case UIW_WR_ATOMIC_FETCH_AND_ADD:
		w->opcode = RDMAP_WR_ATOMIC_FADD;
		break;
	default:
		return -EINVAL;
	}
	if (wr->send_flags &
	    ~(UIW_SEND_FENCE | UIW_SEND_SIGNALED | UIW_SEND_SOLICITED | UIW_SEND_INLINE))
		return -EINVAL;
	if (wr->send_flags & UIW_SEND_SIGNALED)
		w->flags |= RDMAP_WR_SIGNALED;
	if (wr->send_flags & UIW_SEND_SOLICITED)
		w->flags |= RDMAP_WR_SOLICITED;
	if (wr->send_flags & UIW_SEND_FENCE)
		w->flags |= RDMAP_WR_FENCE;
	if (wr->send_flags & UIW_SEND_INLINE)
		w->flags |= RDMAP_WR_INLINE;
	w->num_sge = wr->num_sge;
	if (wr->opcode == UIW_WR_ATOMIC_CMP_AND_SWP || wr->opcode == UIW_WR_ATOMIC_FETCH_AND_ADD) {
		w->remote_addr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
	} else {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	w->inv_stag = wr->invalidate_rkey;
	if (wr->opcode == UIW_WR_RDMA_WRITE_WITH_IMM || wr->opcode == UIW_WR_SEND_WITH_IMM)
		w->imm_data = wr->imm_data;
	return conv_sge(w->sge, wr->sg_list, wr->num_sge);
}

/* @wr as RDMAP's request in *@w, checked against what the QP allows */
static int send_wr_of(struct uiw_qp *qp, struct rdmap_send_wr *w, const struct uiw_send_wr *wr)
{
	return wr->num_sge > (int)qp->max_send_sge ? -EINVAL : conv_send(w, wr);
}

/* uiw_post_send(); @all: the chain whole or nothing (uiw_post_send_all()) */
static int post_send(struct uiw_qp *qp, struct uiw_send_wr *wr, struct uiw_send_wr **bad_wr, int all)
{
	struct uiw_context *ctx = qp->ctx;
	struct rdmap_send_wr w;
	struct uiw_engine *eng = NULL, *qeng;
	int ret = 0, kick = 0, sent = 0;

	/* the QP's engine's lock alone: other engines turn meanwhile */
	qeng = qp_lock(qp);
	if (all) {
		/* the whole chain first, as if each WR were queued behind the
		 * ones before it; nothing changes the queue until the lock is
		 * released, so what passes here is queued below */
		unsigned ahead = 0;

		for (struct uiw_send_wr *c = wr; c; c = c->next, ahead++) {
			ret = send_wr_of(qp, &w, c);
			if (!ret)
				ret = rdmap_send_check(&qp->qp, &w, ahead);
			if (ret) {
				eng_unlock(qeng);
				if (bad_wr)
					*bad_wr = c;
				return ret;
			}
		}
	}
	for (; wr; wr = wr->next) {
		ret = send_wr_of(qp, &w, wr);
		if (!ret)
			ret = rdmap_post_send(&qp->qp, &w);
		if (ret)
			break;
	}
	/* Queue FPDUs now; a small queue is sent from this thread
	 * (engine_send_now()), the rest by the engine's thread. */
	if (qp->id && qp->qp.mpa && qp->qp.state != RDMAP_QPS_IDLE && qp->id->state != UIW_ID_DEAD) {
		rdmap_qp_progress(&qp->qp);
		if (!engine_send_now(qp->id))
			sent = 1;
	}
	if (qp->id && !sent) {
		engine_mark(qp->id); /* only this connection needs a look */
		eng = qp->id->eng;
		kick = engine_needs_kick(eng);
	}
	eng_unlock(qeng);
	if (ret && bad_wr)
		*bad_wr = wr;
	if (sent)
		return ret; /* nothing left for the engine */
	if (!eng)
		engine_wake(ctx);
	else if (kick)
		engine_kick(eng);
	return ret;
}

int uiw_post_send(struct uiw_qp *qp, struct uiw_send_wr *wr, struct uiw_send_wr **bad_wr)
{
	return post_send(qp, wr, bad_wr, 0);
}

int uiw_post_send_all(struct uiw_qp *qp, struct uiw_send_wr *wr, struct uiw_send_wr **bad_wr)
{
	return post_send(qp, wr, bad_wr, 1);
}

int uiw_modify_qp(struct uiw_qp *qp, struct uiw_qp_attr *attr, int attr_mask)
{
	struct uiw_context *ctx = qp->ctx;

	if (attr_mask != UIW_QP_STATE || attr->qp_state != UIW_QPS_ERR)
		return -EINVAL;
	ctx_lock_all(ctx);
	/* RFC 5040 §6.2 / §7: an abortive close; the engine sees ERROR and
	 * shuts the connection once the send side is done.  From TERMINATE
	 * too: the QP does not wait for its TERMINATE to be queued. */
	if (qp->qp.state != RDMAP_QPS_ERROR)
		rdmap_qp_modify_error(&qp->qp);
	/* The flush waits while the engine's I/O may still use the WRs'
	 * memory; the engine cancels that I/O.  Waiting here (one engine
	 * turn) gives the application its flushes on return, as before. */
	if (qp->qp.flush_pending && qp->id) {
		engine_mark(qp->id);
		ctx_fence_wait(ctx, 0, 0, qp);
	}
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	return 0;
}

int uiw_query_qp(struct uiw_qp *qp, struct uiw_qp_attr *attr)
{
	static const enum uiw_qp_state map[] = {
		[RDMAP_QPS_IDLE] = UIW_QPS_INIT,     [RDMAP_QPS_RTS] = UIW_QPS_RTS,
		[RDMAP_QPS_CLOSING] = UIW_QPS_SQD,   [RDMAP_QPS_TERMINATE] = UIW_QPS_SQE,
		[RDMAP_QPS_ERROR] = UIW_QPS_ERR,
	};

	struct uiw_engine *eng;

	memset(attr, 0, sizeof(*attr));
	eng = qp_lock(qp);
	attr->qp_state = map[qp->qp.state];
	attr->cap.max_send_wr = qp->qp.cfg.max_send_wr;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->qp.cfg.max_recv_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->srq ? qp->srq->max_sge : qp->max_recv_sge;
	attr->cap.max_inline_data = qp->qp.cfg.max_inline;
	attr->ird = qp->qp.cfg.ird;
	attr->ord = qp->qp.cfg.ord;
	attr->ext = (qp->qp.cfg.ext & RDMAP_EXT_RFC7306) ? UIW_QP_EXT_RFC7306 : 0;
	eng_unlock(eng);
	return 0;
}

/* rdmap's hook around a QP's take from the SRQ (engine lock held) */
static void srq_lock_cb(void *arg, int lock)
{
	struct uiw_srq *srq = arg;

	if (lock)
		lk_lock(&srq->lock, UIW_LK_SRQ);
	else
		lk_unlock(&srq->lock, UIW_LK_SRQ);
}

int uiw_create_srq(struct uiw_pd *pd, const struct uiw_srq_init_attr *attr, struct uiw_srq **out)
{
	struct uiw_context *ctx = pd->ctx;
	struct uiw_srq *srq;
	int ret;

	*out = NULL;
	if (!attr->max_wr || attr->max_sge > UIW_MAX_SGE)
		return -EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq->ctx = ctx;
	srq->pd = pd;
	srq->max_sge = attr->max_sge ? attr->max_sge : 1;
	pthread_mutex_init(&srq->lock, NULL);
	lk_lock(&ctx->lock, UIW_LK_CTX);
	ret = rdmap_srq_init(&srq->srq, attr->max_wr, &ctx->mem, &pd->pd);
	if (!ret) {
		srq->srq.lock = srq_lock_cb;
		srq->srq.lock_arg = srq;
		pd->pd.refs++;
		ctx->nsrq++;
	}
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	if (ret) {
		pthread_mutex_destroy(&srq->lock);
		free(srq);
		return ret;
	}
	*out = srq;
	return 0;
}

int uiw_destroy_srq(struct uiw_srq *srq)
{
	struct uiw_context *ctx = srq->ctx;

	lk_lock(&ctx->lock, UIW_LK_CTX);
	if (srq->refs) {
		lk_unlock(&ctx->lock, UIW_LK_CTX);
		return -EBUSY;
	}
	rdmap_srq_destroy(&srq->srq);
	srq->pd->pd.refs--;
	ctx->nsrq--;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	pthread_mutex_destroy(&srq->lock);
	free(srq);
	return 0;
}

int uiw_post_srq_recv(struct uiw_srq *srq, struct uiw_recv_wr *wr, struct uiw_recv_wr **bad_wr)
{
	struct rdmap_recv_wr w;
	int ret = 0;

	lk_lock(&srq->lock, UIW_LK_SRQ); /* its own lock: QPs of any engine take from it */
	for (; wr; wr = wr->next) {
		memset(&w, 0, sizeof(w));
		w.wr_id = wr->wr_id;
		w.num_sge = wr->num_sge;
		ret = wr->num_sge > (int)srq->max_sge ? -EINVAL
						      : conv_sge(w.sge, wr->sg_list, wr->num_sge);
		if (!ret)
			ret = rdmap_srq_post(&srq->srq, &w);
		if (ret)
			break;
	}
	lk_unlock(&srq->lock, UIW_LK_SRQ);
	/* no engine turn (see uiw_post_recv): nothing waits for a receive;
	 * this used to ask for a look at every connection of the context */
	if (ret && bad_wr)
		*bad_wr = wr;
	return ret;
}

int uiw_post_recv(struct uiw_qp *qp, struct uiw_recv_wr *wr, struct uiw_recv_wr **bad_wr)
{
	struct rdmap_recv_wr w;
	struct uiw_engine *eng = NULL, *qeng;
	int ret = 0;

	qeng = qp_lock(qp);
	if (qp->srq)
		ret = -EINVAL; /* receives come from the SRQ */
	for (; wr && !ret; wr = wr->next) {
		memset(&w, 0, sizeof(w));
		w.wr_id = wr->wr_id;
		w.num_sge = wr->num_sge;
		ret = wr->num_sge > (int)qp->max_recv_sge
			      ? -EINVAL
			      : conv_sge(w.sge, wr->sg_list, wr->num_sge);
		if (!ret)
			ret = rdmap_post_recv(&qp->qp, &w);
		if (ret)
			break;
	}
	/* A connected QP needs no engine turn for a receive: a Send that
	 * finds the queue empty is an error at once (RFC 5040 §5.3, the
	 * TERMINATE in rdmap_rx), nothing waits in the socket for a buffer,
	 * and a flushed receive completed above.  Waking the progress thread
	 * for every batch of receives cost send_bw about one engine wake-up
	 * per completion event.  A QP without a connection (receives posted
	 * before uiw_connect()/uiw_accept(), or after its id was destroyed)
	 * needs none either: the handshake's turn starts the QP, a QP in
	 * error flushed the receive above.  Other states (closing,
	 * terminating) get a look. */
	if (qp->id && qp->qp.state != RDMAP_QPS_RTS) {
		engine_mark(qp->id);
		eng = qp->id->eng;
	}
	eng_unlock(qeng);
	if (ret && bad_wr)
		*bad_wr = wr;
	if (eng)
		engine_kick(eng);
	return ret;
}
