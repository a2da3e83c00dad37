/* SPDX-License-Identifier: MIT */
/* Mid-operation harness: see midop.h. */
#include "midop.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memwire.h"
#include "rdmap_pair.h"

#define ID_RECV0 0x100u
#define ID_OP	 0x200u
#define WIRE_CAP (64 * 1024)

/* One region: its own mapping, PROT_NONE guard pages on both sides, the
 * region's last octet right before the upper guard. */
struct mo_mem {
	uint8_t *map;
	size_t map_len;
	uint8_t *p;
	size_t len;
	struct ddp_mr *mr;
	uint32_t stag;
	int dead; /* released: PROT_NONE */
};

struct mo {
	/* reset for every run (everything before @p) */
	const struct mo_case *c;
	struct mo_mem a_buf;	/* the peer's memory */
	struct mo_mem v_reg;	/* the victim's region of the operation */
	struct mo_mem v_rcv[2]; /* the victim's receive buffers */
	uint64_t posted[4];	/* the victim's work requests */
	struct mo_mem *wr_mem[4];
	int nposted;
	int destroyed, revoked;
	char *why;
	size_t why_len;
	int failed;
	size_t wire_len, out_len;
	/* set up by rp_init() */
	struct rp_pair p;
	uint8_t wire[WIRE_CAP]; /* the operation's octets */
	uint8_t out[WIRE_CAP];	/* what the victim sent (outbound) */
};

static const char *const op_names[] = {"write-in",  "send-in",  "rresp-in", "term-in",
				       "write-out", "send-out", "rresp-out"};
static const char *const act_names[] = {"none",	 "err",	  "err+dereg", "dereg",
					"inval", "close", "destroy"};

const char *mo_op_name(enum mo_op op)
{
	return (unsigned)op < MO_NOPS ? op_names[op] : "?";
}

const char *mo_act_name(enum mo_act act)
{
	return (unsigned)act < MO_NACTS ? act_names[act] : "?";
}

static void fail(struct mo *m, const char *fmt, ...)
{
	va_list ap;

	if (m->failed)
		return;
	m->failed = 1;
	va_start(ap, fmt);
	vsnprintf(m->why, m->why_len, fmt, ap);
	va_end(ap);
}

/* Mappings are made once and reused (mmap/munmap per run made the kernel's
 * TLB shootdowns most of the suite's time): each run makes its regions
 * read/write again. */
static struct {
	uint8_t *map;
	size_t map_len, body;
} pool[4];

static int mem_map(struct mo_mem *r, int idx, size_t len)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE);

	memset(r, 0, sizeof(*r));
	if (len > MO_MSG_MAX)
		return -EINVAL;
	if (!pool[idx].map) {
		pool[idx].body = (MO_MSG_MAX + ps - 1) / ps * ps;
		pool[idx].map_len = pool[idx].body + 2 * ps;
		pool[idx].map = mmap(NULL, pool[idx].map_len, PROT_NONE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pool[idx].map == MAP_FAILED) {
			pool[idx].map = NULL;
			return -ENOMEM;
		}
	}
	r->map = pool[idx].map;
	r->map_len = pool[idx].map_len;
	if (mprotect(r->map + ps, pool[idx].body, PROT_READ | PROT_WRITE))
		return -errno;
	r->p = r->map + ps + pool[idx].body - len;
	r->len = len;
	return 0;
}

/* The application gives the memory back: any later access faults. */
static void mem_release(struct mo_mem *r)
{
	if (r->map && !r->dead)
		mprotect(r->map, r->map_len, PROT_NONE);
	r->dead = 1;
}

static int mem_reg(struct rp_host *h, struct mo_mem *r, unsigned access)
{
	r->mr = rp_reg(h, r->p, r->len, access);
	if (!r->mr)
		return -ENOSPC;
	r->stag = r->mr->stag;
	return 0;
}

/* The engine's uiw_dereg_mr() on the victim: the QP lets go of the range
 * (revoked at the action), which must hold once its I/O ended and it was
 * serviced; then the region goes and its memory is released. */
static void victim_dereg(struct mo *m, struct mo_mem *r)
{
	uintptr_t lo = (uintptr_t)r->p, hi = lo + r->len;

	if (!r->mr || r->dead)
		return;
	if (!m->destroyed && rdmap_qp_mem_refs(&m->p.b.qp, lo, hi))
		fail(m, "dereg: the QP still references the region with no I/O in flight "
			"(uiw_dereg_mr would wait for ever)");
	ddp_mr_dereg(&m->p.b.mem, r->mr);
	r->mr = NULL;
	mem_release(r);
}

static size_t victim_comps(struct mo *m)
{
	return (size_t)m->p.b.nswc + (size_t)m->p.b.nrwc;
}

/* How many completions @id got, in the send (@recv 0) or receive queue. */
static int comps_of(struct mo *m, uint64_t id, int *success_after, int from_s, int from_r)
{
	int n = 0;

	for (int i = 0; i < m->p.b.nswc; i++)
		if (m->p.b.swc[i].wr_id == id) {
			n++;
			if (i >= from_s && m->p.b.swc[i].status == RDMAP_WC_SUCCESS)
				(*success_after)++;
		}
	for (int i = 0; i < m->p.b.nrwc; i++)
		if (m->p.b.rwc[i].wr_id == id) {
			n++;
			if (i >= from_r && m->p.b.rwc[i].status == RDMAP_WC_SUCCESS)
				(*success_after)++;
		}
	return n;
}

static void post_recvs(struct mo *m)
{
	for (int i = 0; i < 2; i++) {
		struct rdmap_recv_wr r = {0};

		r.wr_id = ID_RECV0 + (unsigned)i;
		r.num_sge = 1;
		r.sge[0].addr = (uintptr_t)m->v_rcv[i].p;
		r.sge[0].length = (uint32_t)m->v_rcv[i].len;
		r.sge[0].lkey = m->v_rcv[i].stag;
		if (rdmap_post_recv(&m->p.b.qp, &r))
			fail(m, "post_recv");
		m->posted[m->nposted] = r.wr_id;
		m->wr_mem[m->nposted++] = &m->v_rcv[i];
	}
}

static void post(struct mo *m, struct rp_host *h, enum rdmap_wr_opcode op, uint64_t id,
		 struct mo_mem *src, struct mo_mem *remote)
{
	struct rdmap_send_wr w = {0};

	w.wr_id = id;
	w.opcode = op;
	w.flags = RDMAP_WR_SIGNALED;
	if (src) {
		w.num_sge = 1;
		w.sge[0].addr = (uintptr_t)src->p;
		w.sge[0].length = (uint32_t)src->len;
		w.sge[0].lkey = src->stag;
	}
	if (remote) {
		w.rkey = remote->stag;
		w.remote_addr = (uintptr_t)remote->p;
	}
	if (op == RDMAP_WR_LOCAL_INV)
		w.inv_stag = 0x00abcd00; /* no such STag: a local error */
	if (rdmap_post_send(&h->qp, &w))
		fail(m, "post_send %d", (int)op);
	if (h == &m->p.b) {
		m->posted[m->nposted] = id;
		m->wr_mem[m->nposted++] = src;
	}
}

static int inbound(enum mo_op op)
{
	return op <= MO_TERM_IN;
}

/* Connect, map, register, warm up, and queue the operation; inbound: its
 * octets in m->wire. */
static int setup(struct mo *m)
{
	const struct mo_case *c = m->c;
	struct rdmap_qp_cfg q = {.max_send_wr = 8, .max_recv_wr = 8, .ird = 4, .ord = 4};
	struct mpa_cfg ic, rc;
	uint8_t tmp[2048];
	size_t n;
	int ret;

	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.crc = rc.crc = 1;
	ic.markers = rc.markers = !!c->markers;
	ic.tx_ulpdu_max = rc.tx_ulpdu_max = MO_FPDU_MAX;
	ret = rp_init(&m->p, &ic, &rc, &q, c->seed);
	if (ret)
		return ret;
	m->p.lend = c->lend;
	m->p.max_chunk = c->chunk;
	if (mem_map(&m->a_buf, 0, c->msg) || mem_map(&m->v_reg, 1, c->msg) ||
	    mem_map(&m->v_rcv[0], 2, c->msg) || mem_map(&m->v_rcv[1], 3, c->msg))
		return -ENOMEM;
	for (size_t i = 0; i < c->msg; i++) {
		m->a_buf.p[i] = (uint8_t)(i * 7 + 1);
		m->v_reg.p[i] = (uint8_t)(i * 13 + 5);
	}
	if (mem_reg(&m->p.a, &m->a_buf, DDP_ACC_ALL) || mem_reg(&m->p.b, &m->v_reg, DDP_ACC_ALL) ||
	    mem_reg(&m->p.b, &m->v_rcv[0], DDP_ACC_LOCAL_WRITE) ||
	    mem_reg(&m->p.b, &m->v_rcv[1], DDP_ACC_LOCAL_WRITE))
		return -ENOSPC;
	/* a zero-length Write opens the victim's (the responder's) send side
	 * (RFC 5044 §7.1.2 rule 4) */
	{
		struct rdmap_send_wr w = {0};

		w.opcode = RDMAP_WR_WRITE;
		if (rdmap_post_send(&m->p.a.qp, &w))
			return -EIO;
		rp_pump(&m->p);
	}
	post_recvs(m);
	switch (c->op) {
	case MO_WRITE_IN:
		post(m, &m->p.a, RDMAP_WR_WRITE, 1, &m->a_buf, &m->v_reg);
		break;
	case MO_SEND_IN:
		post(m, &m->p.a, RDMAP_WR_SEND, 1, &m->a_buf, NULL);
		break;
	case MO_RRESP_IN:
	case MO_TERM_IN:
		post(m, &m->p.b, RDMAP_WR_READ, ID_OP, &m->v_reg, &m->a_buf);
		n = rp_capture(&m->p, &m->p.b, tmp, sizeof(tmp));
		if (rp_inject(&m->p, &m->p.a, tmp, n) < 0)
			return -EIO;
		if (c->op == MO_TERM_IN)
			post(m, &m->p.a, RDMAP_WR_LOCAL_INV, 1, NULL, NULL);
		break;
	case MO_WRITE_OUT:
		post(m, &m->p.b, RDMAP_WR_WRITE, ID_OP, &m->v_reg, &m->a_buf);
		break;
	case MO_SEND_OUT: {
		struct rdmap_recv_wr r = {0};

		r.num_sge = 1;
		r.sge[0].addr = (uintptr_t)m->a_buf.p;
		r.sge[0].length = (uint32_t)m->a_buf.len;
		r.sge[0].lkey = m->a_buf.stag;
		if (rdmap_post_recv(&m->p.a.qp, &r))
			return -EIO;
		post(m, &m->p.b, RDMAP_WR_SEND, ID_OP, &m->v_reg, NULL);
		break;
	}
	case MO_RRESP_OUT:
		post(m, &m->p.a, RDMAP_WR_READ, 1, &m->a_buf, &m->v_reg);
		n = rp_capture(&m->p, &m->p.a, tmp, sizeof(tmp));
		if (rp_inject(&m->p, &m->p.b, tmp, n) < 0)
			return -EIO;
		break;
	default:
		return -EINVAL;
	}
	if (inbound(c->op))
		m->wire_len = rp_capture(&m->p, &m->p.a, m->wire, sizeof(m->wire));
	else
		rdmap_qp_progress(&m->p.b.qp);
	return m->failed ? -EIO : 0;
}

static void teardown(struct mo *m)
{
	rp_destroy(&m->p);
}

/* One run's state, reused: rp_pair alone is over a megabyte. */
static struct mo *mo_get(const struct mo_case *c, char *why, size_t why_len)
{
	static struct mo *m;

	if (!m)
		m = malloc(sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0, offsetof(struct mo, p));
	m->wire_len = m->out_len = 0;
	m->why = why;
	m->why_len = why_len;
	m->failed = 0;
	m->c = c;
	return m;
}

size_t mo_wire_len(const struct mo_case *c)
{
	char why[128];
	struct mo *m = mo_get(c, why, sizeof(why));
	size_t n = 0;

	if (!m)
		return 0;
	if (!setup(m))
		n = inbound(c->op) ? m->wire_len : mpa_tx_pending_bytes(&m->p.mpa.rsp.c);
	teardown(m);
	return n;
}

/* The victim's receive side as the engine drives it: a failure ends it. */
static void victim_feed(struct mo *m, const uint8_t *buf, size_t len)
{
	if (len && !m->p.b.conn_failed && !m->destroyed)
		rp_inject(&m->p, &m->p.b, buf, len);
}

static void act(struct mo *m)
{
	struct rdmap_qp *qp = &m->p.b.qp;
	uintptr_t lo = (uintptr_t)m->v_reg.p;

	switch (m->c->act) {
	case MO_ACT_ERR:
	case MO_ACT_ERR_DEREG:
	case MO_ACT_DESTROY:
		rdmap_qp_modify_error(qp);
		break;
	case MO_ACT_DEREG:
		/* uiw_dereg_mr: refused to new segments at once, the QP fails
		 * if its stream still uses the range */
		m->v_reg.mr->valid = 0;
		m->revoked = rdmap_qp_mem_revoke(qp, lo, lo + m->v_reg.len);
		break;
	case MO_ACT_INV:
		ddp_stag_invalidate(&m->p.b.mem, m->v_reg.stag, &m->p.b.pd);
		break;
	case MO_ACT_CLOSE:
		rdmap_qp_close(qp);
		break;
	default:
		break;
	}
}

/* After the action and the I/O that was in flight: what the application
 * may now give back, it gives back (PROT_NONE). */
static void release(struct mo *m)
{
	struct rdmap_qp *qp = &m->p.b.qp;
	int dummy = 0;

	switch (m->c->act) {
	case MO_ACT_ERR:
		if (qp->state != RDMAP_QPS_ERROR || qp->flush_pending)
			fail(m, "modify to error: QP %s, flush pending %d with no I/O in flight",
			     rdmap_qp_state_name(qp->state), qp->flush_pending);
		/* each WR's memory once its completion was reported */
		for (int i = 0; i < m->nposted; i++)
			if (m->wr_mem[i] && comps_of(m, m->posted[i], &dummy, 0, 0))
				mem_release(m->wr_mem[i]);
		break;
	case MO_ACT_ERR_DEREG:
	case MO_ACT_DESTROY:
		if (qp->state != RDMAP_QPS_ERROR || qp->flush_pending)
			fail(m, "modify to error: QP %s, flush pending %d with no I/O in flight",
			     rdmap_qp_state_name(qp->state), qp->flush_pending);
		if (m->c->act == MO_ACT_DESTROY) {
			/* uiw_destroy_id/uiw_destroy_qp: the connection is gone */
			mpa_conn_set_ops(&m->p.mpa.rsp.c, NULL, NULL);
			qp->mpa = NULL;
			rdmap_qp_destroy(qp);
			m->destroyed = 1;
		}
		victim_dereg(m, &m->v_reg);
		victim_dereg(m, &m->v_rcv[0]);
		victim_dereg(m, &m->v_rcv[1]);
		break;
	case MO_ACT_DEREG:
		victim_dereg(m, &m->v_reg);
		break;
	default:
		break;
	}
}

int mo_run(const struct mo_case *c, char *why, size_t why_len)
{
	struct mo *m = mo_get(c, why, why_len);
	struct rdmap_qp *qp;
	struct mpa_conn *vc;
	size_t pos = 0, comps_at_act;
	int s_at_act, r_at_act, busy = 0;
	int ret;

	if (!m) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	why[0] = 0;
	ret = setup(m);
	if (ret) {
		fail(m, "set-up failed: %d", ret);
		goto out;
	}
	qp = &m->p.b.qp;
	vc = &m->p.mpa.rsp.c;

	/* 1. the operation up to the split */
	if (inbound(c->op)) {
		pos = c->split < m->wire_len ? c->split : m->wire_len;
		victim_feed(m, m->wire, pos);
	} else {
		struct iovec iov[64];

		m->out_len = mw_gather(vc, m->out, c->split, iov, 64);
	}

	/* 2. the engine's read or send in flight across the action */
	{
		struct iovec iov[64];
		int n = 0;
		size_t lent = 0, k;

		if (c->inflight && !m->p.b.conn_failed) {
			static uint8_t ahead[UIW_TEST_AHEAD];

			/* as the engine reads: the lend and its look-ahead */
			n = inbound(c->op) ? mpa_rx_lend_ahead(vc, iov, 32, ahead, sizeof(ahead))
					   : mpa_tx_pending(vc, iov, 64);
			for (int i = 0; i < n; i++)
				lent += iov[i].iov_len;
			if (inbound(c->op) && lent > m->wire_len - pos)
				lent = m->wire_len - pos; /* the peer sends no more */
			busy = lent > 0;
			if (busy)
				rdmap_qp_set_io_busy(qp, 1);
		}
		comps_at_act = victim_comps(m);
		s_at_act = m->p.b.nswc;
		r_at_act = m->p.b.nrwc;
		act(m);
		if (busy && victim_comps(m) != comps_at_act &&
		    (c->act == MO_ACT_ERR || c->act == MO_ACT_ERR_DEREG || c->act == MO_ACT_DESTROY ||
		     c->act == MO_ACT_DEREG))
			fail(m, "%zu completion(s) reported while the engine's I/O was in flight",
			     victim_comps(m) - comps_at_act);
		if (busy) {
			/* the kernel finishes the read or send: the memory is
			 * still the stack's (nothing was released yet) */
			k = c->io_len && c->io_len < lent ? c->io_len : lent;
			if (inbound(c->op)) {
				size_t left = k;
				int r;

				for (int i = 0; i < n && left; i++) {
					size_t t = iov[i].iov_len < left ? iov[i].iov_len : left;

					memcpy(iov[i].iov_base, m->wire + pos + (k - left), t);
					left -= t;
				}
				pos += k;
				r = mpa_rx_ack(vc, k);
				if (r < 0) {
					/* the engine's on_rx: the connection failed (the
					 * QP learns its I/O ended just after) */
					m->p.b.conn_failed = 1;
					rdmap_qp_conn_failed(qp, r);
				}
			} else {
				size_t left = k;

				for (int i = 0; i < n && left; i++) {
					size_t t = iov[i].iov_len < left ? iov[i].iov_len : left;

					memcpy(m->out + m->out_len, iov[i].iov_base, t);
					m->out_len += t;
					left -= t;
				}
				mpa_tx_advance(vc, k);
			}
			rdmap_qp_set_io_busy(qp, 0);
		}
	}
	/* 3. the engine services the connection (a TERMINATE gets queued) */
	if (!m->destroyed)
		rdmap_qp_progress(qp);
	release(m);

	/* 4. the rest of the operation (fuzzing: corrupted) */
	if (inbound(c->op)) {
		for (size_t i = 0; i < c->mut_len && pos + i < m->wire_len; i++)
			m->wire[pos + i] ^= c->mut[i];
		victim_feed(m, m->wire + pos, m->wire_len - pos);
	} else if (m->out_len) {
		rp_inject(&m->p, &m->p.a, m->out, m->out_len);
	}
	rp_pump(&m->p);

	/* 5. whatever is still outstanding is flushed, then the checks */
	if (!m->destroyed && qp->state != RDMAP_QPS_ERROR) {
		rdmap_qp_modify_error(qp);
		rp_pump(&m->p);
	}
	for (int i = 0; i < m->nposted; i++) {
		int after = 0, n = comps_of(m, m->posted[i], &after, s_at_act, r_at_act);

		if (n != 1)
			fail(m, "WR 0x%llx completed %d times", (unsigned long long)m->posted[i], n);
		/* (after a deregistration that failed the QP, a send in flight
		 * that took a WR's last octets completes it: they left while
		 * the region was registered) */
		if (after && (c->act == MO_ACT_ERR || c->act == MO_ACT_ERR_DEREG ||
			      c->act == MO_ACT_DESTROY))
			fail(m, "WR 0x%llx completed successfully after the QP was failed",
			     (unsigned long long)m->posted[i]);
	}
	/* the victim's TERMINATE reached the peer intact (unless the peer had
	 * sent its own: it then takes nothing more): after FPDUs queued behind
	 * it were dropped, the stream (CRC, markers every 512 octets) still
	 * frames it */
	if (!m->destroyed && qp->term_sent && !m->p.a.qp.term_sent && !m->p.a.qp.term_received)
		fail(m, "the victim sent a TERMINATE (%s) that the peer did not receive (peer QP %s)",
		     rdmap_term_name(qp->term.layer, qp->term.etype, qp->term.ecode),
		     rdmap_qp_state_name(m->p.a.qp.state));
	if (victim_comps(m) != (size_t)m->nposted)
		fail(m, "%zu completions for %d work requests", victim_comps(m), m->nposted);
out:
	ret = m->failed ? -1 : 0;
	teardown(m);
	return ret;
}
