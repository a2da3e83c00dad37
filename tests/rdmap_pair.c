/* SPDX-License-Identifier: MIT */
#include "rdmap_pair.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "memwire.h"
#include "tests.h"

static void rp_complete(void *arg, int recv, const struct rdmap_wc *wc)
{
	struct rp_host *h = arg;

	if (recv) {
		if (h->nrwc < RP_MAX_WC)
			h->rwc[h->nrwc++] = *wc;
	} else {
		if (h->nswc < RP_MAX_WC)
			h->swc[h->nswc++] = *wc;
	}
}

static void rp_error(void *arg, const struct rdmap_term *t, int received)
{
	struct rp_host *h = arg;

	h->nerr++;
	h->err_received = received;
	if (t)
		h->err_term = *t;
}

static const struct rdmap_ops rp_ops = {
	.complete = rp_complete,
	.error = rp_error,
};

static int host_init(struct rp_host *h, const struct rdmap_qp_cfg *qcfg)
{
	int ret = ddp_mem_init(&h->mem, 1024);

	if (ret)
		return ret;
	ddp_pd_init(&h->mem, &h->pd);
	return rdmap_qp_init(&h->qp, qcfg, &h->mem, &h->pd, &rp_ops, h);
}

int rp_init(struct rp_pair *p, const struct mpa_cfg *ini, const struct mpa_cfg *rsp,
	    const struct rdmap_qp_cfg *qcfg, uint64_t seed)
{
	int ret;
	struct mpa_cfg ic = *ini;

	memset(&p->a, 0, offsetof(struct rp_host, swc));
	memset(&p->b, 0, offsetof(struct rp_host, swc));
	p->rng = seed;
	p->max_chunk = 0;
	p->lend = 0;
	/* announce in MPA what the QPs can serve (RFC 6581 §9.1) */
	ic.ird = qcfg->ird;
	ic.ord = qcfg->ord;
	ret = tp_init(&p->mpa, &ic, rsp, NULL, 0);
	p->mpa.rsp.accept_ird = qcfg->ird;
	p->mpa.rsp.accept_ord = qcfg->ord;
	if (ret)
		return ret;
	ret = tp_handshake(&p->mpa);
	if (ret)
		return ret;
	ret = host_init(&p->a, qcfg);
	if (!ret)
		ret = host_init(&p->b, qcfg);
	if (!ret)
		ret = rdmap_qp_bind(&p->a.qp, &p->mpa.ini.c);
	if (!ret)
		ret = rdmap_qp_bind(&p->b.qp, &p->mpa.rsp.c);
	return ret;
}

void rp_destroy(struct rp_pair *p)
{
	rdmap_qp_destroy(&p->a.qp);
	rdmap_qp_destroy(&p->b.qp);
	ddp_mem_destroy(&p->a.mem);
	ddp_mem_destroy(&p->b.mem);
	tp_destroy(&p->mpa);
}

struct ddp_mr *rp_reg(struct rp_host *h, void *buf, size_t len, unsigned access)
{
	struct ddp_mr *mr = NULL;

	if (ddp_mr_reg(&h->mem, &h->pd, buf, len, access, &mr))
		return NULL;
	return mr;
}

static struct mpa_conn *conn_of(struct rp_pair *p, struct rp_host *h)
{
	return h == &p->a ? &p->mpa.ini.c : &p->mpa.rsp.c;
}

static ssize_t deliver(struct rp_pair *p, struct rp_host *to, const uint8_t *buf, size_t len)
{
	struct mpa_conn *c = conn_of(p, to);
	size_t off = 0;

	while (off < len) {
		size_t k = len - off;
		ssize_t r;

		if (p->max_chunk && k > 1) {
			size_t lim = 1 + (size_t)(tu_rand(&p->rng) % p->max_chunk);

			if (k > lim)
				k = lim;
		}
		r = p->lend ? mw_ahead_feed(c, buf + off, k, p->lend == 2 ? UIW_TEST_AHEAD : p->lend == 3 ? MW_AHEAD_MAX : 0)
			    : mpa_rx(c, buf + off, k);
		if (r < 0) {
			to->conn_failed = 1;
			rdmap_qp_conn_failed(&to->qp, (int)r);
			return r;
		}
		if (r == 0)
			break;
		off += (size_t)r;
	}
	return (ssize_t)off;
}

ssize_t rp_inject(struct rp_pair *p, struct rp_host *to, const uint8_t *buf, size_t len)
{
	return deliver(p, to, buf, len);
}

size_t rp_capture(struct rp_pair *p, struct rp_host *from, uint8_t *out, size_t cap)
{
	rdmap_qp_progress(&from->qp);
	return tp_drain(from == &p->a ? &p->mpa.ini : &p->mpa.rsp, out, cap);
}

size_t rp_pump(struct rp_pair *p)
{
	static uint8_t wire[1 << 20];
	size_t total = 0;

	for (int round = 0; round < 1000000; round++) {
		size_t moved = 0;

		for (int dir = 0; dir < 2; dir++) {
			struct rp_host *from = dir ? &p->b : &p->a;
			struct rp_host *to = dir ? &p->a : &p->b;
			struct tp_side *side = dir ? &p->mpa.rsp : &p->mpa.ini;
			size_t n;

			rdmap_qp_progress(&from->qp);
			n = tp_drain(side, wire, sizeof(wire));
			if (n && !to->conn_failed)
				deliver(p, to, wire, n);
			moved += n;
		}
		total += moved;
		if (!moved)
			break;
	}
	return total;
}
