/* SPDX-License-Identifier: MIT */
#include "mpa_pair.h"
#include "memwire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : 1024;

	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*buf, ncap * elem);

	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = ncap;
	return 0;
}

static void tp_record_rr(struct tp_side *s, const struct mpa_rr *rr)
{
	s->rr = *rr;
	memcpy(s->pd, rr->ulp_pd, rr->ulp_pd_len);
	s->rr.ulp_pd = s->pd;
}

static void tp_request(void *arg, const struct mpa_rr *req)
{
	struct tp_side *s = arg;

	s->nreq++;
	tp_record_rr(s, req);
	if (s->auto_accept)
		mpa_conn_accept(&s->c, "acc", 3, s->accept_ird, s->accept_ord, 0);
}

static void tp_reply(void *arg, const struct mpa_rr *rep)
{
	struct tp_side *s = arg;

	s->nrep++;
	tp_record_rr(s, rep);
	if (s->queue_in_reply && !rep->reject) {
		static const uint8_t hdr[14] = {0xC1, 0x40};

		tp_send(s, hdr, sizeof(hdr), NULL, 0);
	}
}

static int tp_rx_hdr_len(void *arg, const uint8_t *hdr, size_t have, size_t ulpdu_len)
{
	(void)arg;
	(void)have;
	(void)ulpdu_len;
	return (int)tp_hdr_len(hdr[0]);
}

static int tp_rx_begin(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		       unsigned flags, struct iovec *dst, int *ndst)
{
	struct tp_side *s = arg;
	size_t pl = ulpdu_len - hdr_len;

	s->nbegin++;
	s->flags = flags;
	if (grow((void **)&s->hdrs, &s->hdrs_cap, s->hdrs_len + hdr_len, 1) ||
	    grow((void **)&s->payload, &s->payload_cap, s->payload_len + pl, 1))
		return -ENOMEM;
	memcpy(s->hdrs + s->hdrs_len, hdr, hdr_len);
	s->hdrs_len += hdr_len;
	memcpy(s->cur_hdr, hdr, hdr_len);
	s->cur_hdr_len = hdr_len;
	/* Split the destination in two iovecs to exercise the scatter path. */
	*ndst = 0;
	if (pl) {
		size_t a = pl / 3;

		if (a) {
			dst[(*ndst)].iov_base = s->payload + s->payload_len;
			dst[(*ndst)++].iov_len = a;
		}
		dst[(*ndst)].iov_base = s->payload + s->payload_len + a;
		dst[(*ndst)++].iov_len = pl - a;
	}
	return 0;
}

static int tp_rx_end(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		     unsigned flags)
{
	struct tp_side *s = arg;

	/* rx_end must see the same header as rx_begin did */
	if (hdr_len != s->cur_hdr_len || memcmp(hdr, s->cur_hdr, hdr_len) || flags != s->flags)
		return -EBADE;
	s->nend++;
	s->payload_len += ulpdu_len - hdr_len;
	if (grow((void **)&s->ulpdu_lens, &s->nfpdu_cap, s->nfpdu + 1, sizeof(size_t)))
		return -ENOMEM;
	s->ulpdu_lens[s->nfpdu++] = ulpdu_len;
	return 0;
}

static void tp_tx_done(void *arg, void *cookie)
{
	struct tp_side *s = arg;

	(void)cookie;
	s->tx_done++;
}

const struct mpa_ops tp_ops = {
	.request = tp_request,
	.reply = tp_reply,
	.rx_hdr_len = tp_rx_hdr_len,
	.rx_begin = tp_rx_begin,
	.rx_end = tp_rx_end,
	.tx_done = tp_tx_done,
};

int tp_init(struct tp_pair *p, const struct mpa_cfg *ini, const struct mpa_cfg *rsp, const void *pd,
	    size_t pd_len)
{
	struct mpa_cfg a = *ini, b = *rsp;
	int ret;

	memset(p, 0, sizeof(*p));
	a.rx_hdr_min = 14;
	b.rx_hdr_min = 14;
	p->rsp.auto_accept = 1;
	p->rsp.accept_ird = 8;
	p->rsp.accept_ord = 8;
	ret = mpa_conn_init(&p->ini.c, &a, &tp_ops, &p->ini);
	if (ret)
		return ret;
	ret = mpa_conn_init(&p->rsp.c, &b, &tp_ops, &p->rsp);
	if (ret)
		return ret;
	ret = mpa_conn_start(&p->rsp.c, NULL, 0, 0);
	if (ret)
		return ret;
	return mpa_conn_start(&p->ini.c, pd, pd_len, 0);
}

static void side_free(struct tp_side *s)
{
	mpa_conn_destroy(&s->c);
	free(s->payload);
	free(s->hdrs);
	free(s->ulpdu_lens);
}

void tp_destroy(struct tp_pair *p)
{
	side_free(&p->ini);
	side_free(&p->rsp);
}

size_t tp_drain(struct tp_side *from, uint8_t *wire, size_t cap)
{
	struct iovec iov[64];

	return mw_gather(&from->c, wire, cap, iov, 64);
}

ssize_t tp_feed(struct tp_side *to, const uint8_t *in, size_t len, int mode)
{
	static const size_t ahead[] = {0, 0, UIW_TEST_AHEAD, MW_AHEAD_MAX};

	if (mode == 0)
		return mpa_rx(&to->c, in, len);
	return mw_ahead_feed(&to->c, in, len, ahead[mode & 3]);
}

int tp_handshake(struct tp_pair *p)
{
	uint8_t wire[2048];

	for (int round = 0; round < 4; round++) {
		size_t n = tp_drain(&p->ini, wire, sizeof(wire));

		if (n && tp_feed(&p->rsp, wire, n, 0) != (ssize_t)n)
			return -EPROTO;
		n = tp_drain(&p->rsp, wire, sizeof(wire));
		if (n && tp_feed(&p->ini, wire, n, 0) != (ssize_t)n)
			return -EPROTO;
		if (p->ini.c.state == MPA_S_FULL && p->rsp.c.state == MPA_S_FULL &&
		    !mpa_tx_pending_bytes(&p->rsp.c))
			return 0;
	}
	return -ETIMEDOUT;
}

int tp_send(struct tp_side *s, const uint8_t *hdr, size_t hdr_len, const uint8_t *payload,
	    size_t len)
{
	struct iovec iov = {(void *)(uintptr_t)payload, len};

	return mpa_tx_fpdu(&s->c, hdr, hdr_len, &iov, len ? 1 : 0, NULL);
}
