/* SPDX-License-Identifier: MIT */
/*
 * CM event channels (uiw_create_event_channel(), uiw_migrate_id()): each
 * id's events arrive in its channel and nowhere else, the channel's fd is
 * readable exactly while events wait there, an accepted connection reports
 * where its listener does, migration carries queued events along (a
 * listener's pending CONNECT_REQUESTs with their connections), events of a
 * destroyed id leave their channel, and a channel in use is not destroyed.
 * Real TCP connections on 127.0.0.1 between two contexts of this process;
 * every wait is bounded.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"
#include "uiw_verbs.h"

#define CH_WAIT_MS 10000

struct ch_side {
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
};

static void ch_side_open(struct ch_side *s)
{
	struct uiw_qp_init_attr qa = {0};

	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(uiw_open_context(&s->ctx, NULL), 0);
	ck_assert_int_eq(uiw_alloc_pd(s->ctx, &s->pd), 0);
	ck_assert_int_eq(uiw_create_cq(s->ctx, 64, NULL, NULL, &s->cq), 0);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ck_assert_int_eq(uiw_create_qp(s->pd, &qa, &s->qp), 0);
}

static void ch_side_close(struct ch_side *s)
{
	ck_assert_int_eq(uiw_destroy_qp(s->qp), 0);
	ck_assert_int_eq(uiw_destroy_cq(s->cq), 0);
	ck_assert_int_eq(uiw_dealloc_pd(s->pd), 0);
	ck_assert_int_eq(uiw_close_context(s->ctx), 0);
}

/* fd readable now (0 ms) or within @ms */
static int readable(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static void want_ch(struct uiw_event_channel *ch, enum uiw_cm_event_type type,
		    struct uiw_cm_event *ev)
{
	int ret = uiw_get_channel_event(ch, ev, CH_WAIT_MS);

	ck_assert_msg(ret == 0, "no CM event in the channel (%d), wanted %s", ret,
		      uiw_event_str(type));
	ck_assert_msg(ev->event == type, "event %s (status %d), wanted %s",
		      uiw_event_str(ev->event), ev->status, uiw_event_str(type));
}

static void want_ctx(struct uiw_context *ctx, enum uiw_cm_event_type type,
		     struct uiw_cm_event *ev)
{
	int ret = uiw_get_cm_event(ctx, ev, CH_WAIT_MS);

	ck_assert_msg(ret == 0, "no CM event (%d), wanted %s", ret, uiw_event_str(type));
	ck_assert_msg(ev->event == type, "event %s (status %d), wanted %s",
		      uiw_event_str(ev->event), ev->status, uiw_event_str(type));
}

/* nothing queued for the context's own queue (nor its fd readable) */
static void ctx_quiet(struct uiw_context *ctx)
{
	struct uiw_cm_event ev;

	ck_assert(!readable(uiw_cm_event_fd(ctx), 0));
	ck_assert_int_eq(uiw_get_cm_event(ctx, &ev, 0), -ETIMEDOUT);
}

static void ch_quiet(struct uiw_event_channel *ch)
{
	struct uiw_cm_event ev;

	ck_assert(!readable(uiw_event_channel_fd(ch), 0));
	ck_assert_int_eq(uiw_get_channel_event(ch, &ev, 0), -ETIMEDOUT);
}

static struct uiw_cm_id *ch_listen(struct ch_side *s, uint16_t *port)
{
	struct uiw_cm_id *l;

	ck_assert_int_eq(uiw_create_id(s->ctx, NULL, &l), 0);
	ck_assert_int_eq(uiw_listen(l, "127.0.0.1", 0, 8), 0);
	*port = uiw_get_port(l);
	ck_assert_uint_ne(*port, 0);
	return l;
}

/* The CONNECT_REQUEST of listener @l taken from @ch (its one unit of the
 * fd with it), accepted with @s's QP; ESTABLISHED in @ch and at @c.
 * Returns the accepted id. */
static struct uiw_cm_id *accept_in(struct uiw_event_channel *ch, struct uiw_cm_id *l,
				   struct ch_side *s, struct ch_side *c)
{
	struct uiw_cm_event ev;
	struct uiw_cm_id *sid;

	want_ch(ch, UIW_CM_EVENT_CONNECT_REQUEST, &ev);
	ck_assert_ptr_eq(ev.listen_id, l);
	sid = ev.id;
	ck_assert(!readable(uiw_event_channel_fd(ch), 0));
	ck_assert_int_eq(uiw_accept(sid, s->qp, NULL), 0);
	want_ch(ch, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.id, sid);
	want_ctx(c->ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	return sid;
}

/* A listener moved to channel A: the request and the accepted connection's
 * events arrive in A only; the connection moved to B reports its
 * DISCONNECTED in B only; A cannot be destroyed while the listener uses it. */
START_TEST(test_ch_route)
{
	struct ch_side s, c;
	struct uiw_event_channel *a, *b;
	struct uiw_cm_id *l, *cid, *sid;
	struct uiw_cm_event ev;
	uint16_t port;

	ch_side_open(&s);
	ch_side_open(&c);
	ck_assert_int_eq(uiw_create_event_channel(s.ctx, &a), 0);
	ck_assert_int_eq(uiw_create_event_channel(s.ctx, &b), 0);
	ck_assert_int_ne(uiw_event_channel_fd(a), uiw_event_channel_fd(b));
	l = ch_listen(&s, &port);
	ck_assert_int_eq(uiw_migrate_id(l, a), 0);
	ck_assert_int_eq(uiw_create_id(c.ctx, NULL, &cid), 0);
	ck_assert_int_eq(uiw_connect(cid, "127.0.0.1", port, c.qp, NULL), 0);

	ck_assert(readable(uiw_event_channel_fd(a), CH_WAIT_MS));
	sid = accept_in(a, l, &s, &c);
	ctx_quiet(s.ctx);
	ch_quiet(b);

	ck_assert_int_eq(uiw_destroy_event_channel(a), -EBUSY);
	ck_assert_int_eq(uiw_migrate_id(sid, b), 0);
	ck_assert_int_eq(uiw_migrate_id(sid, b), 0); /* already there */
	ck_assert_int_eq(uiw_disconnect(cid), 0);
	want_ch(b, UIW_CM_EVENT_DISCONNECTED, &ev);
	ck_assert_ptr_eq(ev.id, sid);
	want_ctx(c.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	ch_quiet(a);
	ctx_quiet(s.ctx);

	ck_assert_int_eq(uiw_destroy_event_channel(b), -EBUSY);
	ck_assert_int_eq(uiw_destroy_id(sid), 0);
	ck_assert_int_eq(uiw_destroy_event_channel(b), 0);
	ck_assert_int_eq(uiw_migrate_id(l, NULL), 0); /* back to the context's own */
	ck_assert_int_eq(uiw_destroy_event_channel(a), 0);
	ck_assert_int_eq(uiw_destroy_id(l), 0);
	ck_assert_int_eq(uiw_destroy_id(cid), 0);
	ch_side_close(&s);
	ch_side_close(&c);
}
END_TEST

/* A CONNECT_REQUEST queued in the context's own queue moves with its
 * listener, and its connection's ESTABLISHED follows it there; the
 * context's fd is no longer readable once the request left. */
START_TEST(test_ch_migrate_queued)
{
	struct ch_side s, c;
	struct uiw_event_channel *a;
	struct uiw_cm_id *l, *cid, *sid;
	struct uiw_cm_event ev;
	uint16_t port;

	ch_side_open(&s);
	ch_side_open(&c);
	ck_assert_int_eq(uiw_create_event_channel(s.ctx, &a), 0);
	l = ch_listen(&s, &port);
	ck_assert_int_eq(uiw_create_id(c.ctx, NULL, &cid), 0);
	ck_assert_int_eq(uiw_connect(cid, "127.0.0.1", port, c.qp, NULL), 0);
	ck_assert(readable(uiw_cm_event_fd(s.ctx), CH_WAIT_MS)); /* the request is queued */
	ch_quiet(a);

	ck_assert_int_eq(uiw_migrate_id(l, a), 0);
	ctx_quiet(s.ctx);
	ck_assert(readable(uiw_event_channel_fd(a), 0));
	sid = accept_in(a, l, &s, &c);
	ctx_quiet(s.ctx);

	/* an id destroyed with its events queued: they leave the channel */
	ck_assert_int_eq(uiw_disconnect(cid), 0);
	want_ctx(c.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	ck_assert(readable(uiw_event_channel_fd(a), CH_WAIT_MS)); /* sid's DISCONNECTED */
	ck_assert_int_eq(uiw_destroy_id(sid), 0);
	ch_quiet(a);

	ck_assert_int_eq(uiw_destroy_id(l), 0);
	ck_assert_int_eq(uiw_destroy_event_channel(a), 0);
	ck_assert_int_eq(uiw_destroy_id(cid), 0);
	ch_side_close(&s);
	ch_side_close(&c);
}
END_TEST

/* An initiator on a channel: its REJECTED (nobody listens) comes there;
 * a channel of another context is refused; a context closes with a
 * channel left (freed with it). */
START_TEST(test_ch_initiator_args)
{
	struct ch_side s, c;
	struct uiw_event_channel *a, *other;
	struct uiw_cm_id *l, *cid;
	struct uiw_cm_event ev;
	uint16_t port;

	ch_side_open(&s);
	ch_side_open(&c);
	ck_assert_int_eq(uiw_create_event_channel(c.ctx, &a), 0);
	ck_assert_int_eq(uiw_create_event_channel(s.ctx, &other), 0);
	ck_assert_int_eq(uiw_create_event_channel(c.ctx, NULL), -EINVAL);
	/* a port nobody listens on: one that was listened on a moment ago */
	l = ch_listen(&s, &port);
	ck_assert_int_eq(uiw_destroy_id(l), 0);
	ck_assert_int_eq(uiw_create_id(c.ctx, NULL, &cid), 0);
	ck_assert_int_eq(uiw_migrate_id(cid, other), -EINVAL);
	ck_assert_int_eq(uiw_migrate_id(cid, a), 0);
	ck_assert_int_eq(uiw_connect(cid, "127.0.0.1", port, c.qp, NULL), 0);
	want_ch(a, UIW_CM_EVENT_REJECTED, &ev);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_ptr_eq(ev.id, cid);
	ctx_quiet(c.ctx);
	ck_assert_int_eq(uiw_destroy_id(cid), 0);
	ck_assert_int_eq(uiw_destroy_event_channel(other), 0);
	ch_side_close(&s);
	ch_side_close(&c); /* @a is still there: the context frees it */
}
END_TEST

Suite *cm_channel_suite(void)
{
	Suite *s = suite_create("cm_channel");
	TCase *tc = tcase_create("channels");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ch_route);
	tcase_add_test(tc, test_ch_migrate_queued);
	tcase_add_test(tc, test_ch_initiator_args);
	suite_add_tcase(s, tc);
	return s;
}
