/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma_xdr.c - the reducing/restoring XDR streams of rpcrdma_xdr.h.
 */
#include "rpcrdma_xdr.h"

#include <arpa/inet.h>
#include <string.h>

static struct rpcrdma_xdr *S(XDR *x)
{
	return (struct rpcrdma_xdr *)x->x_private;
}

static int room(struct rpcrdma_xdr *s, u_int n)
{
	if (s->cap - s->pos < n) {
		s->failed = 1;
		return 0;
	}
	return 1;
}

/* ---- encode ----------------------------------------------------------- */

static bool_t enc_putlong(XDR *x, const long *lp)
{
	struct rpcrdma_xdr *s = S(x);
	uint32_t v = htonl((uint32_t)*lp);

	s->skip_pad = 0;
	if (!room(s, 4))
		return FALSE;
	memcpy(s->buf + s->pos, &v, 4);
	s->pos += 4;
	s->upos += 4;
	return TRUE;
}

static bool_t enc_putbytes(XDR *x, const char *p, u_int n)
{
	struct rpcrdma_xdr *s = S(x);

	if (s->skip_pad) {
		/* xdr_opaque() follows a body with its roundup (1..3 zeros):
		 * the reduced stream drops it, the unreduced one counts it */
		u_int pad = s->skip_pad;

		s->skip_pad = 0;
		if (n == pad) {
			s->upos += n;
			return TRUE;
		}
	}
	if (s->threshold && n >= s->threshold && s->nitems < s->max_items) {
		struct rpcrdma_ddp_item *it = &s->items[s->nitems++];

		it->pos = s->upos;
		it->addr = p;
		it->len = n;
		s->upos += n;
		s->skip_pad = (4 - n % 4) % 4;
		return TRUE;
	}
	if (!room(s, n))
		return FALSE;
	if (n)
		memcpy(s->buf + s->pos, p, n);
	s->pos += n;
	s->upos += n;
	return TRUE;
}

/* ---- decode ----------------------------------------------------------- */

static bool_t dec_getlong(XDR *x, long *lp)
{
	struct rpcrdma_xdr *s = S(x);
	uint32_t v;

	s->skip_pad = 0;
	s->inline_pad = 0;
	if (!room(s, 4))
		return FALSE;
	memcpy(&v, s->buf + s->pos, 4);
	*lp = (long)ntohl(v);
	s->pos += 4;
	return TRUE;
}

static bool_t dec_getbytes(XDR *x, char *p, u_int n)
{
	struct rpcrdma_xdr *s = S(x);

	if (s->skip_pad) {
		u_int pad = s->skip_pad;

		s->skip_pad = 0;
		if (n == pad) {
			memset(p, 0, n);
			return TRUE;
		}
	}
	if (s->wbuf && s->armed && !s->wused && s->wlen && n == s->wlen && n != s->inline_pad) {
		/* the item the Responder wrote into our Write chunk */
		if ((const uint8_t *)p != s->wbuf)
			memcpy(p, s->wbuf, n);
		s->wused = 1;
		s->skip_pad = (4 - n % 4) % 4;
		return TRUE;
	}
	if (!room(s, n))
		return FALSE;
	if (n)
		memcpy(p, s->buf + s->pos, n);
	s->pos += n;
	/* xdr_opaque() reads a body, then its roundup: the roundup read
	 * that may follow is never the DDP-eligible item */
	s->inline_pad = n == s->inline_pad ? 0 : (4 - n % 4) % 4;
	return TRUE;
}

/* ---- both ------------------------------------------------------------- */

static bool_t no_putlong(XDR *x, const long *lp)
{
	(void)x;
	(void)lp;
	return FALSE;
}

static bool_t no_putbytes(XDR *x, const char *p, u_int n)
{
	(void)x;
	(void)p;
	(void)n;
	return FALSE;
}

static bool_t no_getlong(XDR *x, long *lp)
{
	(void)x;
	(void)lp;
	return FALSE;
}

static bool_t no_getbytes(XDR *x, char *p, u_int n)
{
	(void)x;
	(void)p;
	(void)n;
	return FALSE;
}

static u_int getpostn(XDR *x)
{
	return S(x)->pos;
}

static bool_t setpostn(XDR *x, u_int pos)
{
	struct rpcrdma_xdr *s = S(x);

	/* repositioning is only meaningful before anything was diverted */
	if (pos > s->cap || s->nitems || s->wused)
		return FALSE;
	s->upos = s->upos - s->pos + pos;
	s->pos = pos;
	return TRUE;
}

static int32_t *xinline(XDR *x, u_int n)
{
	struct rpcrdma_xdr *s = S(x);
	int32_t *p;

	if (s->skip_pad || n % 4 || s->cap - s->pos < n)
		return NULL;
	p = (int32_t *)(void *)(s->buf + s->pos);
	if ((uintptr_t)p % 4)
		return NULL;
	s->pos += n;
	s->upos += n;
	return p;
}

static void destroy(XDR *x)
{
	(void)x;
}

static bool_t control(XDR *x, int req, void *info)
{
	(void)x;
	(void)req;
	(void)info;
	return FALSE;
}

static const struct xdr_ops enc_ops = { .x_getlong = no_getlong,
					.x_putlong = enc_putlong,
					.x_getbytes = no_getbytes,
					.x_putbytes = enc_putbytes,
					.x_getpostn = getpostn,
					.x_setpostn = setpostn,
					.x_inline = xinline,
					.x_destroy = destroy,
					.x_control = control };

static const struct xdr_ops dec_ops = { .x_getlong = dec_getlong,
					.x_putlong = no_putlong,
					.x_getbytes = dec_getbytes,
					.x_putbytes = no_putbytes,
					.x_getpostn = getpostn,
					.x_setpostn = setpostn,
					.x_inline = xinline,
					.x_destroy = destroy,
					.x_control = control };

void rpcrdma_xdr_encode_init(struct rpcrdma_xdr *s, void *buf, u_int cap, u_int threshold,
			     int max_items)
{
	memset(s, 0, sizeof(*s));
	s->x.x_op = XDR_ENCODE;
	s->x.x_ops = &enc_ops;
	s->x.x_private = (char *)s;
	s->buf = buf;
	s->cap = cap;
	s->threshold = max_items > 0 ? threshold : 0;
	s->max_items = max_items > RPC_XDR_MAX_ITEMS ? RPC_XDR_MAX_ITEMS : max_items;
}

void rpcrdma_xdr_decode_init(struct rpcrdma_xdr *s, const void *buf, u_int len, const void *wbuf,
			     u_int wlen)
{
	memset(s, 0, sizeof(*s));
	s->x.x_op = XDR_DECODE;
	s->x.x_ops = &dec_ops;
	s->x.x_private = (char *)s;
	s->buf = (uint8_t *)(uintptr_t)buf;
	s->cap = len;
	s->wbuf = wbuf;
	s->wlen = wbuf ? wlen : 0;
	s->armed = 1;
}

bool_t rpcrdma_xdr_results(XDR *x, void *where)
{
	struct rpcrdma_xdr *s = S(x);

	if (!s->inner)
		return FALSE;
	s->armed = 1;
	return s->inner(x, where);
}
