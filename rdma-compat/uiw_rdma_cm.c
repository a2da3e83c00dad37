/* SPDX-License-Identifier: MIT */
/*
 * libuiw-rdma: librdmacm over uiwarp's connection manager.
 *
 * Every rdma_cm_id lives in one uiwarp context, the connection manager's
 * device (opened on first use and kept for the life of the process, as
 * librdmacm keeps its devices): rdma_cm_id.verbs is its ibv_context, and
 * QPs given to rdma_connect()/rdma_accept() must be of it.
 *
 * Event channels.  uiwarp has one CM event queue per context; librdmacm
 * one per rdma_event_channel, and ids move between channels.  This file
 * demultiplexes: a thread (the "CM thread") sleeps in poll(2) on uiwarp's
 * CM event fd, takes each event under the library's CM lock and appends it,
 * translated, to the queue of the channel its id is on; each channel has an
 * eventfd (semaphore mode, one unit per queued event), the
 * rdma_event_channel.fd the application polls.  A thread and not "whoever
 * waits pumps": applications (rping among them) poll(2) the channel's fd
 * before they call rdma_get_cm_event(), so only something running on its
 * own can make that fd readable.  Per-channel queues in uiwarp itself are
 * an issue-19 core change; this slice does without it.
 *
 * Lifetimes.  A delivered event holds a reference on its id (and listener)
 * until rdma_ack_cm_event(); rdma_destroy_id() ends the uiwarp id at once
 * (so no new event can name it), drops the events still queued for it and
 * frees the id when the last reference goes.  Channel fds are read only
 * under the CM lock, so the units of dropped events can be taken back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "uiw_rdma.h"

enum id_state {
	ID_IDLE,
	ID_BOUND,
	ID_ADDR,	/* ADDR_RESOLVED queued */
	ID_ROUTE,	/* ROUTE_RESOLVED queued */
	ID_LISTEN,
	ID_REQUEST,	/* a child: CONNECT_REQUEST not answered yet */
	ID_CONNECTING,	/* rdma_connect()/rdma_accept() done */
	ID_ESTABLISHED,
	ID_CLOSED	/* DISCONNECTED or a failure reported */
};

struct cm_channel;

struct uiw_rdma_cm_id {
	struct rdma_cm_id id; /* what the application sees */
	struct uiw_cm_id *uid; /* NULL once destroyed or detached */
	struct cm_channel *ch;
	struct uiw_rdma_cm_id *next; /* every id the application created (refused connects are retried) */
	enum id_state state;
	unsigned refs;	/* queued or unacknowledged events naming it */
	int destroyed;	/* rdma_destroy_id() done: freed at the last ref */
	int sync;	/* created without a channel: calls wait for their event */
	int own_ch;	/* the channel is the id's own (synchronous ids) */
	int initiator;	/* rdma_connect() was called */
	int closing;	/* rdma_disconnect() started a graceful close */
	int bind_src;	/* connect from route.addr.src_addr (rping -I): uiw_bind_addr() */
	int uid_bound;	/* uiw_bind_addr() done on @uid (rdma_bind_addr(), or bind_src()) */
	struct uiw_rdma_qp *qp; /* the QP given to connect/accept */
	uint8_t req_rr, req_id; /* CONNECT_REQUEST: what to answer by default */
	/* CQs and channels rdma_create_qp() made for the application */
	int own_cqs;
	/* rdma_connect()'s arguments, for a connection refused by TCP that
	 * is tried again (see retry_refused()) */
	char host[INET6_ADDRSTRLEN];
	uint16_t port;
	uint8_t pd[255], pd_len;
	uint16_t rr, id_depth; /* as given to uiw_connect() (UIW_IRD_ORD_ZERO: 0) */
	int retries;
	uint64_t retry_at; /* CLOCK_MONOTONIC ns; 0: none due */
	/* a passive endpoint (rdma_create_ep): the QP each new id gets */
	struct ibv_qp_init_attr *ep_attr;
	struct ibv_pd *ep_pd;
};

static int bind_src(struct uiw_rdma_cm_id *w);

struct cm_event {
	struct rdma_cm_event ev; /* first: the application's pointer */
	struct cm_event *next;
	struct uiw_rdma_cm_id *id, *lid; /* references held */
	uint8_t pdata[256];
};

struct cm_channel {
	struct rdma_event_channel ch; /* fd: eventfd, one unit per queued event */
	struct cm_event *head, **tail;
	unsigned nids;
	unsigned waiters; /* threads asleep in rdma_get_cm_event() on it */
	int dead; /* destroyed: see channel_free() */
};

static pthread_mutex_t cm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uiw_rdma_context *cm_rc; /* the device every id lives in */
static struct ibv_pd *cm_pd;	      /* rdma_create_qp() without a PD */
static struct uiw_rdma_cm_id *all_ids;

static struct uiw_rdma_cm_id *to_id(struct rdma_cm_id *id)
{
	return uiw_rdma_container_of(id, struct uiw_rdma_cm_id, id);
}

static struct cm_channel *to_ch(struct rdma_event_channel *c)
{
	return uiw_rdma_container_of(c, struct cm_channel, ch);
}

static int fail(int e)
{
	errno = e;
	return -1;
}

/* ---- ids, events, channels (CM lock held) ------------------------------------ */

/* A destroyed channel's memory is never returned: a thread of the
 * application may still be on its way into rdma_get_cm_event() with it
 * (rping's CM thread, when its main thread gives up early), and then gets
 * EBADF, as from a closed fd, instead of reading freed memory.  A few dozen
 * octets per channel ever destroyed. */
static void channel_free(struct cm_channel *c)
{
	/* a thread asleep on the fd stays asleep, as in a read(2) of
	 * librdmacm's (closing the fd would wake its poll(2) with POLLNVAL:
	 * rping's CM thread then reported EBADF and exited 255 while its main
	 * thread was returning 0); the fd is given up then */
	if (c->ch.fd >= 0 && !c->waiters)
		close(c->ch.fd);
	c->ch.fd = -1;
	c->dead = 1;
	c->head = NULL;
	c->tail = &c->head;
}

static void id_unlink(struct uiw_rdma_cm_id *w)
{
	for (struct uiw_rdma_cm_id **pp = &all_ids; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
}

static void id_put(struct uiw_rdma_cm_id *w)
{
	if (--w->refs || !w->destroyed)
		return;
	free(w->ep_attr);
	free(w);
}

static void id_release_channel(struct uiw_rdma_cm_id *w)
{
	if (w->ch)
		w->ch->nids--;
	w->ch = NULL;
}

static void ev_free(struct cm_event *e);

/* A child id whose CONNECT_REQUEST never reached the application: refuse
 * the connection and forget it. */
static void child_discard(struct uiw_rdma_cm_id *c)
{
	if (c->uid) {
		uiw_destroy_id(c->uid);
		c->uid = NULL;
	}
	id_unlink(c);
	id_release_channel(c);
	c->destroyed = 1;
}

static void ev_free(struct cm_event *e)
{
	if (e->lid)
		id_put(e->lid);
	if (e->id)
		id_put(e->id);
	free(e);
}

static struct cm_event *ev_new(struct uiw_rdma_cm_id *w, enum rdma_cm_event_type type, int status)
{
	struct cm_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->ev.event = type;
	e->ev.status = status;
	e->ev.id = &w->id;
	e->id = w;
	w->refs++;
	return e;
}

static void ev_queue(struct cm_channel *c, struct cm_event *e)
{
	uint64_t one = 1;

	if (!c || c->dead) {
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST)
			child_discard(e->id);
		ev_free(e);
		return;
	}
	e->next = NULL;
	*c->tail = e;
	c->tail = &e->next;
	if (write(c->ch.fd, &one, sizeof(one)) < 0) {
		/* cannot saturate: one unit per queued event */
	}
}

/* drop the events of @c naming @w (as id or listener), taking their units back */
static void ev_drop_for(struct cm_channel *c, struct uiw_rdma_cm_id *w)
{
	struct cm_event **pp, *e;
	uint64_t v;

	if (!c)
		return;
	for (pp = &c->head; (e = *pp);) {
		if (e->id != w && e->lid != w) {
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		if (read(c->ch.fd, &v, sizeof(v)) < 0) {
			/* cannot fail: read only under the lock, one unit per event */
		}
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->id != w)
			child_discard(e->id);
		ev_free(e);
	}
	c->tail = &c->head;
	while (*c->tail)
		c->tail = &(*c->tail)->next;
}

/* ---- the connection manager's device and its thread ------------------------- */

static void qp_set_state(struct uiw_rdma_cm_id *w, enum ibv_qp_state s)
{
	if (w->qp) {
		w->qp->qpx.qp_base.state = s;
		if (s != IBV_QPS_ERR)
			w->qp->bk_state = s;
	}
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A connection TCP refused (no listener: REJECTED without private data) is
 * tried again, every 20 ms for up to 500 ms, before the application hears
 * of it.  The kernel's rdma_cm resolves addresses and routes
 * asynchronously, which gives a peer about to listen that moment; this
 * library resolves at once, and programs rely on the moment (perftest -R:
 * its server listens again for the test connection right after the
 * handshake on the first one, and its client's retry after a failed
 * connect reads freed memory).  A connection closed by the peer before
 * the MPA Reply (CONNECT_ERROR, -ECONNRESET) is the same case seen through
 * a forwarder that accepts for the peer and closes when the peer refuses
 * (qemu's user-mode network: perftest's server in a VM under emulation
 * took over 100 ms to listen again).  1 when a retry is scheduled (CM lock
 * held).
 */
#define REFUSED_RETRIES 25
#define REFUSED_RETRY_NS 20000000ull

static int retry_refused(struct uiw_rdma_cm_id *w, const struct uiw_cm_event *u)
{
	int refused = u->event == UIW_CM_EVENT_REJECTED && u->status == -ECONNREFUSED &&
		      !u->private_data_len;
	int reset = u->event == UIW_CM_EVENT_CONNECT_ERROR && u->status == -ECONNRESET;

	if ((!refused && !reset) || !w->initiator || w->retries >= REFUSED_RETRIES || !w->qp ||
	    w->destroyed)
		return 0;
	w->retries++;
	uiw_destroy_id(w->uid); /* a failed id serves no second attempt */
	w->uid = NULL;
	w->retry_at = now_ns() + REFUSED_RETRY_NS;
	return 1;
}

/* the retries due now; the time of the next one (0: none); CM lock held */
static uint64_t retry_due(void)
{
	uint64_t now = now_ns(), next = 0;
	struct uiw_conn_param up;

	for (struct uiw_rdma_cm_id *w = all_ids; w; w = w->next) {
		struct cm_event *e;
		int ret;

		if (!w->retry_at)
			continue;
		if (w->retry_at > now) {
			if (!next || w->retry_at < next)
				next = w->retry_at;
			continue;
		}
		w->retry_at = 0;
		if (uiw_rdma_tracing())
			fprintf(stderr, "uiw-rdma: connect id %p again (refused, try %d)\n", (void *)&w->id,
				w->retries);
		ret = -EINVAL;
		if (w->qp && !w->destroyed) {
			memset(&up, 0, sizeof(up));
			up.private_data = w->pd_len ? w->pd : NULL;
			up.private_data_len = w->pd_len;
			up.responder_resources = w->rr;
			up.initiator_depth = w->id_depth;
			ret = uiw_create_id(cm_rc->uctx, w, &w->uid);
			w->uid_bound = 0;
			if (!ret) {
				ret = bind_src(w);
				if (!ret)
					ret = uiw_connect(w->uid, w->host, w->port, w->qp->uqp, &up);
				if (ret) {
					uiw_destroy_id(w->uid);
					w->uid = NULL;
				}
			}
		}
		if (!ret)
			continue;
		/* cannot even try again: the refusal stands */
		w->state = ID_CLOSED;
		e = ev_new(w, RDMA_CM_EVENT_REJECTED, -ECONNREFUSED);
		if (e)
			ev_queue(w->ch, e);
	}
	return next;
}

/* a uiwarp event, translated, to the channel of its id (CM lock held) */
static void route(struct uiw_cm_event *u)
{
	enum rdma_cm_event_type type = (enum rdma_cm_event_type)u->event; /* same values */
	struct uiw_rdma_cm_id *w, *l = NULL;
	struct cm_event *e;
	unsigned pl;

	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: cm event %s status %d uid %p pd_len %u ird %u ord %u term %u %u/%u/%u\n",
			uiw_event_str(u->event), u->status, (void *)u->id, u->private_data_len,
			u->responder_resources, u->initiator_depth, u->term_flags, u->term_layer, u->term_etype,
			u->term_ecode);

	if (u->event == UIW_CM_EVENT_CONNECT_REQUEST) {
		/* every uiwarp id carries its wrapper as context (events
		 * naming an id destroyed are dropped by uiw_destroy_id()) */
		l = u->listen_id ? uiw_id_context(u->listen_id) : NULL;
		if (!l || l->destroyed || l->uid != u->listen_id || !l->ch || l->ch->dead) {
			uiw_destroy_id(u->id);
			return;
		}
		w = calloc(1, sizeof(*w));
		if (!w) {
			uiw_destroy_id(u->id);
			return;
		}
		w->uid = u->id;
		w->id.verbs = &cm_rc->vctx.context; /* the listener's may be NULL (wildcard) */
		w->id.channel = l->id.channel;
		w->id.context = l->id.context;
		w->id.ps = l->id.ps;
		w->id.qp_type = l->id.qp_type;
		w->id.port_num = 1;
		/* the connection's two ends (rdma_get_local_addr() and
		 * rdma_get_peer_addr() read them); the listener's address
		 * if the connection has already gone */
		if (uiw_get_local_addr(u->id, &w->id.route.addr.src_storage))
			w->id.route.addr.src_storage = l->id.route.addr.src_storage;
		if (uiw_get_peer_addr(u->id, &w->id.route.addr.dst_storage))
			w->id.route.addr.dst_addr.sa_family = l->id.route.addr.src_addr.sa_family;
		w->ch = l->ch;
		w->ch->nids++;
		w->sync = l->sync;
		w->state = ID_REQUEST;
		/* rdma_cm's view is the local one: our responder resources
		 * serve the peer's ORD, our initiator depth is bounded by its IRD */
		w->req_rr = (uint8_t)(u->initiator_depth > 255 ? 255 : u->initiator_depth);
		w->req_id = (uint8_t)(u->responder_resources > 255 ? 255 : u->responder_resources);
		uiw_set_id_context(u->id, w);
	} else {
		w = uiw_id_context(u->id);
		if (!w || w->destroyed || w->uid != u->id) {
			if (uiw_rdma_tracing())
				fprintf(stderr, "uiw-rdma: cm event for an id destroyed: dropped\n");
			return;
		}
	}
	switch (u->event) {
	case UIW_CM_EVENT_ESTABLISHED:
		w->state = ID_ESTABLISHED;
		qp_set_state(w, IBV_QPS_RTS);
		/* an initiator's source port is known now */
		if (w->initiator)
			uiw_get_local_addr(u->id, &w->id.route.addr.src_storage);
		/* an initiator whose QP is not on the id (rping -q) moves it
		 * itself and calls rdma_establish(): librdmacm says CONNECT_RESPONSE */
		if (w->initiator && !w->id.qp)
			type = RDMA_CM_EVENT_CONNECT_RESPONSE;
		break;
	case UIW_CM_EVENT_DISCONNECTED:
		w->state = ID_CLOSED;
		qp_set_state(w, IBV_QPS_ERR);
		if (u->status && w->qp)
			uiw_rdma_async_post(uiw_rdma_ctx(w->qp->qpx.qp_base.context), IBV_EVENT_QP_FATAL,
					    &w->qp->qpx.qp_base);
		break;
	case UIW_CM_EVENT_CONNECT_REQUEST:
		break;
	default: /* REJECTED, UNREACHABLE, CONNECT_ERROR */
		if (retry_refused(w, u))
			return;
		w->state = ID_CLOSED;
		break;
	}
	e = ev_new(w, type, u->status);
	if (!e) {
		if (l) {
			child_discard(w);
			free(w); /* no reference to it yet */
		}
		return;
	}
	if (l) {
		e->lid = l;
		l->refs++;
		e->ev.listen_id = &l->id;
	}
	pl = u->private_data_len > sizeof(e->pdata) ? sizeof(e->pdata) : u->private_data_len;
	if (pl > 255)
		pl = 255; /* librdmacm's private_data_len is a uint8_t */
	memcpy(e->pdata, u->private_data, pl);
	e->ev.param.conn.private_data = pl ? e->pdata : NULL;
	e->ev.param.conn.private_data_len = (uint8_t)pl;
	e->ev.param.conn.responder_resources = (uint8_t)(u->initiator_depth > 255 ? 255 : u->initiator_depth);
	e->ev.param.conn.initiator_depth =
		(uint8_t)(u->responder_resources > 255 ? 255 : u->responder_resources);
	if (w->qp)
		e->ev.param.conn.qp_num = w->qp->qpx.qp_base.qp_num;
	ev_queue(w->ch, e);
}

static void *cm_thread(void *arg)
{
	struct uiw_context *uctx = arg;
	struct pollfd p = {.fd = uiw_cm_event_fd(uctx), .events = POLLIN};
	struct uiw_cm_event u;
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL); /* the application's signals are its own */
	uint64_t next = 0;

	for (;;) {
		int tmo = -1;

		if (next) {
			uint64_t now = now_ns();

			tmo = next > now ? (int)((next - now + 999999) / 1000000) : 0;
		}
		if (poll(&p, 1, tmo) < 0) {
			if (errno != EINTR) {
				struct timespec ts = {0, 10000000};

				nanosleep(&ts, NULL);
			}
			continue;
		}
		pthread_mutex_lock(&cm_lock);
		while (uiw_get_cm_event(uctx, &u, 0) == 0)
			route(&u);
		next = retry_due();
		pthread_mutex_unlock(&cm_lock);
	}
	return NULL;
}

/* the CM's device, opened once (CM lock held); NULL with errno */
static struct uiw_rdma_context *cm_device(void)
{
	struct ibv_context *c;
	pthread_attr_t a;
	pthread_t t;
	int ret;

	if (cm_rc)
		return cm_rc;
	c = ibv_open_device(&uiw_rdma_device()->dev);
	if (!c)
		return NULL;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &a, cm_thread, uiw_rdma_ctx(c)->uctx);
	pthread_attr_destroy(&a);
	if (ret) {
		ibv_close_device(c);
		errno = ret;
		return NULL;
	}
	cm_rc = uiw_rdma_ctx(c);
	cm_rc->cm_owned = 1;
	return cm_rc;
}

/* ---- event channels -------------------------------------------------------------- */

struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cm_channel *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	c->tail = &c->head;
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_channel *c;

	if (!channel)
		return;
	c = to_ch(channel);
	pthread_mutex_lock(&cm_lock);
	if (c->dead) {
		pthread_mutex_unlock(&cm_lock);
		return;
	}
	while (c->head) {
		struct cm_event *e = c->head;

		c->head = e->next;
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST)
			child_discard(e->id);
		ev_free(e);
	}
	c->tail = &c->head;
	channel_free(c); /* ids still on it (librdmacm: destroy them first) get no more events */
	pthread_mutex_unlock(&cm_lock);
}

/* Blocks in poll(2) on the channel's fd (a cancellation point, no lock
 * held) unless the application made it non-blocking: -1, EAGAIN. */
/* A call on a destroyed channel: EBADF, as a read(2) of a closed fd, after
 * a second.  It is nearly always a thread of a program that is exiting
 * (rping's CM thread loops back into rdma_get_cm_event() while its main
 * thread destroys the channel and returns): the second lets the program's
 * own exit status win over the thread's perror()-and-exit(). */
static int dead_channel(void)
{
	struct timespec ts = {1, 0};

	nanosleep(&ts, NULL);
	return fail(EBADF);
}

static void waiter_gone(void *arg)
{
	struct cm_channel *c = arg;

	pthread_mutex_lock(&cm_lock);
	c->waiters--;
	pthread_mutex_unlock(&cm_lock);
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cm_channel *c;
	struct cm_event *e;
	uint64_t v;
	int ret, dead;

	if (!channel || !event)
		return fail(EINVAL);
	c = to_ch(channel);
	for (;;) {
		struct pollfd p = {.fd = channel->fd, .events = POLLIN};
		int fl;

		pthread_mutex_lock(&cm_lock);
		if (c->dead) {
			pthread_mutex_unlock(&cm_lock);
			return dead_channel();
		}
		e = c->head;
		if (e) {
			c->head = e->next;
			if (!c->head)
				c->tail = &c->head;
			if (read(c->ch.fd, &v, sizeof(v)) < 0) {
				/* cannot fail: one unit per queued event */
			}
		}
		pthread_mutex_unlock(&cm_lock);
		if (e)
			break;
		fl = fcntl(channel->fd, F_GETFL);
		if (fl < 0)
			return -1; /* EBADF */
		if (fl & O_NONBLOCK)
			return fail(EAGAIN);
		pthread_mutex_lock(&cm_lock);
		if (c->dead) {
			pthread_mutex_unlock(&cm_lock);
			return dead_channel();
		}
		c->waiters++;
		pthread_mutex_unlock(&cm_lock);
		pthread_cleanup_push(waiter_gone, c);
		ret = poll(&p, 1, -1);
		pthread_cleanup_pop(1);
		if (ret < 0)
			return -1; /* EINTR */
		pthread_mutex_lock(&cm_lock);
		dead = c->dead;
		pthread_mutex_unlock(&cm_lock);
		while (dead)
			pause(); /* destroyed while we slept: sleep on, as librdmacm's read(2) */
	}
	*event = &e->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event)
		return fail(EINVAL);
	pthread_mutex_lock(&cm_lock);
	ev_free(uiw_rdma_container_of(event, struct cm_event, ev));
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

/* ---- synchronous ids (no channel: rdma_create_ep, rdma_get_request) ------------ */

/* wait for the next event of @w's private channel; 0 when it is @want */
static int sync_wait(struct uiw_rdma_cm_id *w, enum rdma_cm_event_type want, struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;
	int st;

	if (rdma_get_cm_event(w->id.channel, &ev))
		return -1;
	if (ev->event == want) {
		if (out) {
			*out = ev;
			return 0;
		}
		rdma_ack_cm_event(ev);
		return 0;
	}
	st = ev->status;
	rdma_ack_cm_event(ev);
	return fail(st < 0 ? -st : (st ? st : ECONNREFUSED));
}

/* ---- ids ----------------------------------------------------------------------- */

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	struct uiw_rdma_context *rc;
	struct uiw_rdma_cm_id *w;
	int ret, sync = 0;

	if (!id)
		return fail(EINVAL);
	*id = NULL;
	if (ps != RDMA_PS_TCP) {
		uiw_rdma_say_once("ps", "rdma_create_id(): port space %d: iWARP connects over TCP only "
				  "(RDMA_PS_TCP): EOPNOTSUPP", (int)ps);
		return fail(EOPNOTSUPP);
	}
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
		sync = 1;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		if (sync)
			rdma_destroy_event_channel(channel);
		return fail(ENOMEM);
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_device();
	if (!rc) {
		ret = errno;
		pthread_mutex_unlock(&cm_lock);
		free(w);
		if (sync)
			rdma_destroy_event_channel(channel);
		return fail(ret);
	}
	ret = uiw_create_id(rc->uctx, w, &w->uid);
	if (ret) {
		pthread_mutex_unlock(&cm_lock);
		free(w);
		if (sync)
			rdma_destroy_event_channel(channel);
		return fail(-ret);
	}
	w->id.verbs = &rc->vctx.context;
	w->id.channel = channel;
	w->id.context = context;
	w->id.ps = ps;
	w->id.qp_type = IBV_QPT_RC;
	w->id.port_num = 1;
	w->ch = to_ch(channel);
	w->ch->nids++;
	w->sync = sync;
	w->own_ch = sync;
	w->state = ID_IDLE;
	w->next = all_ids;
	all_ids = w;
	pthread_mutex_unlock(&cm_lock);
	*id = &w->id;
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: create_id %p channel %p%s\n", (void *)*id, (void *)channel,
			sync ? " (synchronous)" : "");
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct uiw_rdma_cm_id *w;
	struct rdma_event_channel *own = NULL;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: destroy_id %p\n", (void *)id);
	pthread_mutex_lock(&cm_lock);
	if (w->destroyed) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	if (w->uid) {
		/* closes a live connection abortively; the QP goes to error */
		uiw_destroy_id(w->uid);
		w->uid = NULL;
	}
	id_unlink(w);
	if (w->qp) {
		w->qp->cm = NULL;
		w->qp = NULL;
	}
	ev_drop_for(w->ch, w);
	if (w->own_ch)
		own = w->id.channel;
	id_release_channel(w);
	w->destroyed = 1;
	w->refs++;
	id_put(w);
	pthread_mutex_unlock(&cm_lock);
	if (own)
		rdma_destroy_event_channel(own);
	return 0;
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct uiw_rdma_cm_id *w;
	struct cm_channel *from, *to;
	struct cm_event **pp, *e;
	uint64_t v, one = 1;

	if (!id || !channel) {
		/* librdmacm: NULL makes the id synchronous; not here */
		return fail(EINVAL);
	}
	w = to_id(id);
	to = to_ch(channel);
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: migrate_id %p to channel %p\n", (void *)id, (void *)channel);
	pthread_mutex_lock(&cm_lock);
	from = w->ch;
	if (w->destroyed || !from || to->dead) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	if (from != to) {
		/* the events not taken yet follow the id, in order: its own
		 * and, as the kernel's ucma moves the events of the id that
		 * moves, a listener's CONNECT_REQUESTs, whose new ids (and
		 * their later events) then report to the new channel too */
		for (pp = &from->head; (e = *pp);) {
			if (e->id != w && !(e->lid == w && e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST)) {
				pp = &e->next;
				continue;
			}
			if (e->id != w && e->id->ch == from) {
				from->nids--;
				to->nids++;
				e->id->ch = to;
				e->id->id.channel = channel;
			}
			*pp = e->next;
			if (read(from->ch.fd, &v, sizeof(v)) < 0) {
				/* cannot fail: one unit per queued event */
			}
			e->next = NULL;
			*to->tail = e;
			to->tail = &e->next;
			if (write(to->ch.fd, &one, sizeof(one)) < 0) {
				/* cannot saturate */
			}
		}
		from->tail = &from->head;
		while (*from->tail)
			from->tail = &(*from->tail)->next;
		to->nids++;
		w->ch = to;
		w->id.channel = channel;
		from->nids--;
		if (w->own_ch && !from->nids) {
			/* its own channel, created by us: gone */
			while (from->head) {
				e = from->head;
				from->head = e->next;
				ev_free(e);
			}
			channel_free(from);
		}
		w->own_ch = 0;
		w->sync = 0;
	}
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

/* ---- addresses ------------------------------------------------------------------ */

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static int sa_ok(const struct sockaddr *sa)
{
	return sa && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6);
}

static uint16_t sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
					       : ((const struct sockaddr_in *)sa)->sin_port);
}

static void sa_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

static int sa_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* 127/8 or ::1: the kernel's rdma_cm (cma_any_addr()) binds these, like the
 * wildcard, to no device */
static int sa_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == IN_LOOPBACKNET;
}

static void sa_str(const struct sockaddr *sa, char *buf, size_t len)
{
	if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
}

/* (cm_lock held) a connect of @w leaves from the source address the
 * application chose, if it chose one */
static int bind_src(struct uiw_rdma_cm_id *w)
{
	char a[INET6_ADDRSTRLEN];
	int ret;

	if (!w->bind_src || w->uid_bound)
		return 0; /* or bound by rdma_bind_addr(): it connects from there */
	sa_str(&w->id.route.addr.src_addr, a, sizeof(a));
	ret = uiw_bind_addr(w->uid, a, sa_port(&w->id.route.addr.src_addr));
	w->uid_bound = !ret;
	return ret;
}

/* the source address the kernel routes @dst from (a connected UDP socket) */
static int route_src(const struct sockaddr *dst, struct sockaddr_storage *src)
{
	struct sockaddr_storage d;
	socklen_t l = sizeof(*src);
	int s = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (s < 0)
		return errno;
	memcpy(&d, dst, sa_len(dst));
	if (!sa_port((struct sockaddr *)&d))
		sa_set_port((struct sockaddr *)&d, 9); /* any port: only the route matters */
	if (connect(s, (struct sockaddr *)&d, sa_len(dst)) || getsockname(s, (struct sockaddr *)src, &l))
		ret = errno;
	close(s);
	if (!ret)
		sa_set_port((struct sockaddr *)src, 0);
	return ret;
}

/* (cm_lock held) bind @w's uiwarp id to @addr: the port is taken now, as
 * the kernel's rdma_bind_addr() takes it (qperf reads rdma_get_src_port()
 * of a listener bound to port 0 before it listens, and tells its client);
 * route.addr.src_addr then holds the address and port bound */
static int bind_now(struct uiw_rdma_cm_id *w, const struct sockaddr *addr)
{
	struct sockaddr_storage got;
	char host[INET6_ADDRSTRLEN];
	int ret;

	sa_str(addr, host, sizeof(host));
	ret = uiw_bind_addr(w->uid, host, sa_port(addr));
	if (ret)
		return ret;
	w->uid_bound = 1;
	memset(&w->id.route.addr.src_storage, 0, sizeof(w->id.route.addr.src_storage));
	if (uiw_get_local_addr(w->uid, &got))
		memcpy(&w->id.route.addr.src_storage, addr, sa_len(addr));
	else
		memcpy(&w->id.route.addr.src_storage, &got, sa_len((struct sockaddr *)&got));
	/* as the kernel's rdma_cm: an id bound to the wildcard or a loopback
	 * address has no device until it resolves or connects (libfabric's
	 * verbs provider then advertises the device's own addresses instead
	 * of 127.0.0.1); an id bound to another address of the host is uiw0's */
	w->id.verbs = sa_any(addr) || sa_loopback(addr) ? NULL : &cm_rc->vctx.context;
	w->state = ID_BOUND;
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct uiw_rdma_cm_id *w;
	int ret;

	if (!id || !addr)
		return fail(EINVAL);
	if (!sa_ok(addr))
		return fail(EAFNOSUPPORT); /* AF_IB: not on iWARP */
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	if (w->state != ID_IDLE || w->destroyed || !w->uid) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	ret = bind_now(w, addr);
	pthread_mutex_unlock(&cm_lock);
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: bind id %p port %u: %d\n", (void *)id,
			sa_port(&id->route.addr.src_addr), ret);
	return ret ? fail(-ret) : 0;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr,
		      int timeout_ms)
{
	struct sockaddr_storage src;
	struct cm_event *e;
	struct uiw_rdma_cm_id *w;
	int ret, st = 0;

	(void)timeout_ms; /* nothing to wait for: no ARP, no path record */
	if (!id || !sa_ok(dst_addr) || (src_addr && src_addr->sa_family && !sa_ok(src_addr)))
		return fail(dst_addr && !sa_ok(dst_addr) ? EAFNOSUPPORT : EINVAL);
	w = to_id(id);
	ret = route_src(dst_addr, &src);
	if (ret)
		st = -ret; /* ADDR_ERROR: no route */
	pthread_mutex_lock(&cm_lock);
	if ((w->state != ID_IDLE && w->state != ID_BOUND) || w->destroyed) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	if (!src_addr && w->state == ID_BOUND)
		src_addr = &id->route.addr.src_addr;
	/* a chosen source address (rping -I, perftest --bind_source_ip): the
	 * connection leaves from it (uiw_bind_addr() at rdma_connect()) */
	w->bind_src = !st && src_addr && src_addr->sa_family && !sa_any(src_addr);
	if (w->bind_src && src_addr != &id->route.addr.src_addr)
		memcpy(&src, src_addr, sa_len(src_addr));
	else if (w->bind_src)
		memcpy(&src, &id->route.addr.src_storage, sizeof(src));
	if (!st) {
		/* a bound id keeps its port: the connection leaves from it */
		uint16_t bport = w->uid_bound ? sa_port(&id->route.addr.src_addr) : 0;

		memset(&id->route.addr.src_storage, 0, sizeof(id->route.addr.src_storage));
		memcpy(&id->route.addr.src_storage, &src, sa_len((struct sockaddr *)&src));
		if (bport)
			sa_set_port(&id->route.addr.src_addr, bport);
	}
	memset(&id->route.addr.dst_storage, 0, sizeof(id->route.addr.dst_storage));
	memcpy(&id->route.addr.dst_storage, dst_addr, sa_len(dst_addr));
	if (!st)
		id->verbs = &cm_rc->vctx.context; /* resolved: the device is uiw0 */
	e = ev_new(w, st ? RDMA_CM_EVENT_ADDR_ERROR : RDMA_CM_EVENT_ADDR_RESOLVED, st);
	if (!e) {
		pthread_mutex_unlock(&cm_lock);
		return fail(ENOMEM);
	}
	w->state = st ? ID_IDLE : ID_ADDR;
	ev_queue(w->ch, e);
	pthread_mutex_unlock(&cm_lock);
	return w->sync ? sync_wait(w, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) : 0;
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cm_event *e;
	struct uiw_rdma_cm_id *w;

	(void)timeout_ms;
	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	if (w->state != ID_ADDR || w->destroyed) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	e = ev_new(w, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	if (!e) {
		pthread_mutex_unlock(&cm_lock);
		return fail(ENOMEM);
	}
	w->state = ID_ROUTE;
	ev_queue(w->ch, e);
	pthread_mutex_unlock(&cm_lock);
	return w->sync ? sync_wait(w, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL) : 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	char host[INET6_ADDRSTRLEN];
	struct sockaddr *sa;
	struct uiw_rdma_cm_id *w;
	int ret;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	if (w->state == ID_IDLE && w->uid && !w->destroyed) {
		/* the kernel binds an unbound listener to any IPv4 address */
		struct sockaddr_in any = {.sin_family = AF_INET};

		ret = bind_now(w, (struct sockaddr *)&any);
		if (ret) {
			pthread_mutex_unlock(&cm_lock);
			return fail(-ret);
		}
	}
	if (w->state != ID_BOUND || !w->uid || !w->uid_bound) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	sa = &id->route.addr.src_addr;
	sa_str(sa, host, sizeof(host));
	/* backlog <= 0 is the kernel's maximum: uiw_listen() takes it so */
	ret = uiw_listen(w->uid, NULL, 0, backlog);
	if (ret) {
		pthread_mutex_unlock(&cm_lock);
		return fail(-ret);
	}
	sa_set_port(sa, uiw_get_port(w->uid));
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: listen id %p on %s port %u\n", (void *)id, host, uiw_get_port(w->uid));
	w->state = ID_LISTEN;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	struct uiw_rdma_cm_id *l;

	if (!listen || !id)
		return fail(EINVAL);
	l = to_id(listen);
	if (!l->sync)
		return fail(EINVAL); /* librdmacm: synchronous listeners only */
	struct rdma_event_channel *ch;
	struct uiw_rdma_cm_id *c;

	if (sync_wait(l, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
		return -1;
	c = to_id(ev->id);
	rdma_ack_cm_event(ev);
	/* the new id is synchronous too, on a channel of its own */
	ch = rdma_create_event_channel();
	if (!ch || rdma_migrate_id(&c->id, ch)) {
		int e = errno;

		if (ch)
			rdma_destroy_event_channel(ch);
		rdma_reject(&c->id, NULL, 0);
		rdma_destroy_id(&c->id);
		return fail(e);
	}
	pthread_mutex_lock(&cm_lock);
	c->sync = 1;
	c->own_ch = 1;
	pthread_mutex_unlock(&cm_lock);
	if (l->ep_attr) {
		/* rdma_create_ep() on a passive endpoint: each new id gets its QP */
		struct ibv_qp_init_attr a = *l->ep_attr;

		if (rdma_create_qp(&c->id, l->ep_pd, &a)) {
			int e = errno;

			rdma_reject(&c->id, NULL, 0);
			rdma_destroy_id(&c->id);
			return fail(e);
		}
	}
	*id = &c->id;
	return 0;
}

/* ---- QPs on ids ---------------------------------------------------------------- */

static struct ibv_cq *own_cq(struct rdma_cm_id *id, struct ibv_comp_channel **chp, int cqe)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(id->verbs);
	struct ibv_cq *cq;

	if (!ch)
		return NULL;
	cq = ibv_create_cq(id->verbs, cqe > 0 ? cqe : 1, id, ch, 0);
	if (!cq) {
		int e = errno;

		ibv_destroy_comp_channel(ch);
		errno = e;
		return NULL;
	}
	*chp = ch;
	return cq;
}

static void own_cqs_free(struct rdma_cm_id *id)
{
	if (id->send_cq && id->send_cq != id->recv_cq) {
		ibv_destroy_cq(id->send_cq);
		ibv_destroy_comp_channel(id->send_cq_channel);
	}
	if (id->recv_cq) {
		ibv_destroy_cq(id->recv_cq);
		ibv_destroy_comp_channel(id->recv_cq_channel);
	}
	id->send_cq = id->recv_cq = NULL;
	id->send_cq_channel = id->recv_cq_channel = NULL;
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr_ex a;
	struct uiw_rdma_cm_id *w;
	struct ibv_qp *qp;
	int made = 0;

	if (!id || !attr)
		return fail(EINVAL);
	w = to_id(id);
	if (id->qp || !id->verbs)
		return fail(EINVAL); /* no device: bound to the wildcard or loopback only */
	a = *attr;
	if (!a.qp_type)
		a.qp_type = id->qp_type; /* unset (0 is no QP type): the id's, as librdmacm */
	if (!(a.comp_mask & IBV_QP_INIT_ATTR_PD) || !a.pd) {
		pthread_mutex_lock(&cm_lock);
		if (!cm_pd && cm_rc)
			cm_pd = ibv_alloc_pd(&cm_rc->vctx.context);
		a.pd = id->pd ? id->pd : cm_pd;
		pthread_mutex_unlock(&cm_lock);
		if (!a.pd)
			return -1;
		a.comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (a.pd->context != id->verbs) {
		uiw_rdma_say_once("qp-ctx", "rdma_create_qp(): the PD is of another device context than "
				  "rdma_cm_id.verbs: EINVAL");
		return fail(EINVAL);
	}
	/* librdmacm makes the CQs the application did not give */
	if (!a.send_cq || !a.recv_cq) {
		if (!a.recv_cq) {
			id->recv_cq = own_cq(id, &id->recv_cq_channel, (int)a.cap.max_recv_wr);
			if (!id->recv_cq)
				return -1;
			a.recv_cq = id->recv_cq;
		}
		if (!a.send_cq) {
			id->send_cq = own_cq(id, &id->send_cq_channel, (int)a.cap.max_send_wr);
			if (!id->send_cq) {
				int e = errno;

				own_cqs_free(id);
				return fail(e);
			}
			a.send_cq = id->send_cq;
		}
		made = 1;
	}
	qp = ibv_create_qp_ex(id->verbs, &a);
	if (!qp) {
		int e = errno;

		if (made)
			own_cqs_free(id);
		return fail(e);
	}
	attr->cap = a.cap;
	pthread_mutex_lock(&cm_lock);
	uiw_rdma_qp(qp)->bk_state = IBV_QPS_INIT;
	qp->state = IBV_QPS_INIT;
	uiw_rdma_qp(qp)->cm = w;
	w->qp = uiw_rdma_qp(qp);
	w->own_cqs = made;
	id->qp = qp;
	id->pd = a.pd;
	pthread_mutex_unlock(&cm_lock);
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	if (!id || !qp_init_attr)
		return fail(EINVAL);
	memset(&a, 0, sizeof(a));
	a.qp_context = qp_init_attr->qp_context;
	a.send_cq = qp_init_attr->send_cq;
	a.recv_cq = qp_init_attr->recv_cq;
	a.srq = qp_init_attr->srq;
	a.cap = qp_init_attr->cap;
	a.qp_type = qp_init_attr->qp_type;
	a.sq_sig_all = qp_init_attr->sq_sig_all;
	if (pd) {
		a.comp_mask = IBV_QP_INIT_ATTR_PD;
		a.pd = pd;
	}
	ret = rdma_create_qp_ex(id, &a);
	if (!ret)
		qp_init_attr->cap = a.cap;
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct uiw_rdma_cm_id *w;

	if (!id || !id->qp)
		return;
	w = to_id(id);
	if (ibv_destroy_qp(id->qp))
		return; /* still used: stays, as librdmacm leaves it */
	id->qp = NULL;
	if (w->own_cqs) {
		own_cqs_free(id);
		w->own_cqs = 0;
	}
}

/* iWARP has no enhanced connection establishment: a plain reject, as
 * librdmacm documents it ("the same as rdma_reject()") */
int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}

/* Events of a QP that the CM should know of: only InfiniBand's CM acts on
 * them (a communication-established event); on iWARP nothing to do. */
int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)event;
	if (!id)
		return fail(EINVAL);
	return 0;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (!id || !id->srq)
		return;
	if (!ibv_destroy_srq(id->srq))
		id->srq = NULL;
}

/* Basic SRQs only (no XRC, no tag matching): what rdma_create_srq() makes. */
int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a;
	int ret;

	if (!id || !attr)
		return fail(EINVAL);
	if ((attr->comp_mask & ~(IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ)) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC))
		return fail(EOPNOTSUPP);
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	ret = rdma_create_srq(id, (attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? attr->pd : NULL, &a);
	if (!ret)
		attr->attr = a.attr;
	return ret;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq *srq;

	if (!id || !attr)
		return fail(EINVAL);
	if (!pd) {
		pthread_mutex_lock(&cm_lock);
		if (!cm_pd && cm_rc)
			cm_pd = ibv_alloc_pd(&cm_rc->vctx.context);
		pd = cm_pd;
		pthread_mutex_unlock(&cm_lock);
		if (!pd)
			return -1;
	}
	srq = ibv_create_srq(pd, attr);
	if (!srq)
		return -1;
	id->srq = srq;
	id->pd = pd;
	return 0;
}

int uiw_rdma_cm_destroy_uqp(struct uiw_rdma_qp *qp)
{
	struct uiw_rdma_cm_id *w;
	int ret;

	/* A live connection is reset by uiwarp, which keeps the id: it
	 * reports DISCONNECTED (CONNECT_ERROR during a handshake) through the
	 * CM thread, which routes it only after w->qp is cleared here (the CM
	 * lock is held from uiw_destroy_qp() on; uiwarp's wait for its engine
	 * needs no CM lock). */
	pthread_mutex_lock(&cm_lock);
	/* after rdma_disconnect() the graceful close gets 200 ms to end
	 * (rping destroys the QP at once): what the program queued before
	 * still leaves, where a reset would drop what TCP holds */
	for (int i = 0; i < 100 && (w = qp->cm) && w->uid && w->closing && w->state != ID_CLOSED; i++) {
		struct timespec ts = {0, 2000000};

		pthread_mutex_unlock(&cm_lock);
		nanosleep(&ts, NULL);
		pthread_mutex_lock(&cm_lock);
	}
	ret = uiw_destroy_qp(qp->uqp);
	w = qp->cm;
	if (!ret && w) {
		if (w->id.qp == &qp->qpx.qp_base)
			w->id.qp = NULL;
		w->qp = NULL;
		qp->cm = NULL;
	}
	pthread_mutex_unlock(&cm_lock);
	return ret;
}

/* ---- connecting ------------------------------------------------------------------- */

/* the QP for connect/accept: the id's, or conn_param.qp_num's (a QP the
 * application made with ibv_create_qp(), rping -q); NULL with errno */
static struct uiw_rdma_qp *conn_qp(struct uiw_rdma_cm_id *w, const struct rdma_conn_param *p)
{
	struct uiw_rdma_qp *qp = NULL;

	if (w->id.qp)
		qp = uiw_rdma_qp(w->id.qp);
	else if (p && p->qp_num)
		qp = uiw_rdma_qp_by_num(p->qp_num);
	if (!qp) {
		uiw_rdma_say_once("noqp", "rdma_connect()/rdma_accept() without a QP: uiwarp attaches the QP "
				  "when the connection is made (rdma_create_qp() first): EINVAL");
		errno = EINVAL;
		return NULL;
	}
	if (qp->qpx.qp_base.context != w->id.verbs) {
		uiw_rdma_say_once("qp-ctx2", "rdma_connect()/rdma_accept(): the QP is of another device "
				  "context than rdma_cm_id.verbs: EINVAL");
		errno = EINVAL;
		return NULL;
	}
	return qp;
}

/* uiwarp's connection parameters from librdmacm's @p, or (NULL) the
 * defaults @rr/@id, where 0 stays uiwarp's "the QP's": rdma_connect(id,
 * NULL) wants that (librdmacm takes the device's maximum), and so does
 * rdma_accept(id, NULL) with a request that said 0 (or, MPA revision 1,
 * nothing): RFC 6581 lowers our ORD to the peer's IRD anyway, and our IRD
 * beyond its ORD goes unused */
static void conn_param(struct uiw_conn_param *u, const struct rdma_conn_param *p, uint8_t rr, uint8_t id)
{
	memset(u, 0, sizeof(*u));
	if (p) {
		u->private_data = p->private_data;
		u->private_data_len = p->private_data ? p->private_data_len : 0;
		rr = p->responder_resources;
		id = p->initiator_depth;
	}
	u->responder_resources = rr;
	u->initiator_depth = id;
	/* the application's 0 is no Reads at all, as on an iWARP RNIC */
	if (p && !rr)
		u->responder_resources = UIW_IRD_ORD_ZERO;
	if (p && !id)
		u->initiator_depth = UIW_IRD_ORD_ZERO;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct uiw_conn_param up;
	struct uiw_rdma_qp *qp;
	char host[INET6_ADDRSTRLEN];
	struct uiw_rdma_cm_id *w;
	int ret;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	if ((w->state != ID_ROUTE && w->state != ID_ADDR) || !w->uid) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	qp = conn_qp(w, param);
	if (!qp) {
		pthread_mutex_unlock(&cm_lock);
		return -1;
	}
	conn_param(&up, param, 0, 0);
	sa_str(&id->route.addr.dst_addr, host, sizeof(host));
	ret = bind_src(w);
	if (!ret)
		ret = uiw_connect(w->uid, host, sa_port(&id->route.addr.dst_addr), qp->uqp, &up);
	if (ret) {
		pthread_mutex_unlock(&cm_lock);
		return fail(-ret);
	}
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: connect id %p qp %u to %s port %u\n", (void *)id, qp->qpx.qp_base.qp_num,
			host, sa_port(&id->route.addr.dst_addr));
	w->qp = qp;
	qp->cm = w;
	w->initiator = 1;
	/* kept for a retry of a refused connection */
	snprintf(w->host, sizeof(w->host), "%s", host);
	w->port = sa_port(&id->route.addr.dst_addr);
	w->pd_len = (uint8_t)up.private_data_len;
	if (w->pd_len)
		memcpy(w->pd, up.private_data, w->pd_len);
	w->rr = up.responder_resources;
	w->id_depth = up.initiator_depth;
	w->state = ID_CONNECTING;
	pthread_mutex_unlock(&cm_lock);
	if (w->sync)
		return sync_wait(w, id->qp ? RDMA_CM_EVENT_ESTABLISHED : RDMA_CM_EVENT_CONNECT_RESPONSE, NULL);
	return 0;
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct uiw_conn_param up;
	struct uiw_rdma_qp *qp;
	struct uiw_rdma_cm_id *w;
	int ret;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	if (w->state != ID_REQUEST || !w->uid) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	qp = conn_qp(w, param);
	if (!qp) {
		pthread_mutex_unlock(&cm_lock);
		return -1;
	}
	conn_param(&up, param, w->req_rr, w->req_id);
	ret = uiw_accept(w->uid, qp->uqp, &up);
	if (ret) {
		pthread_mutex_unlock(&cm_lock);
		return fail(-ret);
	}
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: accept id %p qp %u\n", (void *)id, qp->qpx.qp_base.qp_num);
	w->qp = qp;
	qp->cm = w;
	w->state = ID_CONNECTING;
	pthread_mutex_unlock(&cm_lock);
	if (w->sync)
		return sync_wait(w, RDMA_CM_EVENT_ESTABLISHED, NULL);
	return 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	struct uiw_rdma_cm_id *w;
	int ret;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	if (w->state != ID_REQUEST || !w->uid) {
		pthread_mutex_unlock(&cm_lock);
		return fail(EINVAL);
	}
	ret = uiw_reject(w->uid, private_data, private_data ? private_data_len : 0);
	if (!ret)
		w->state = ID_CLOSED;
	pthread_mutex_unlock(&cm_lock);
	return ret ? fail(-ret) : 0;
}

/* librdmacm's accessors of the ports (network order), 0 for another family */
static __be16 sa_port_be(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return id ? sa_port_be(&id->route.addr.src_addr) : 0;
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return id ? sa_port_be(&id->route.addr.dst_addr) : 0;
}

/* the QP was moved to RTS by the application (rping -q) */
int rdma_establish(struct rdma_cm_id *id)
{
	struct uiw_rdma_cm_id *w;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	return w->state == ID_ESTABLISHED ? 0 : fail(EINVAL);
}

/*
 * As the kernel's rdma_disconnect() on iWARP (iw_cm_disconnect()): EINVAL
 * for an id that never had a connection (no iWARP CM id: idle, bound,
 * resolved) and for a listener; 0 for a connection, which starts its
 * graceful close, and 0, doing nothing, when that close is under way
 * already (a second call, or the peer closed first, DISCONNECTED queued
 * or not), when it ended (DISCONNECTED delivered, a connect that failed,
 * a request rejected) or when a request is not answered yet.  An active
 * connect not established yet (the kernel does not define that case) is
 * EINVAL.
 */
int rdma_disconnect(struct rdma_cm_id *id)
{
	struct uiw_rdma_cm_id *w;
	int ret = 0;

	if (!id)
		return fail(EINVAL);
	w = to_id(id);
	pthread_mutex_lock(&cm_lock);
	switch (w->state) {
	case ID_REQUEST:
	case ID_CLOSED:
		break;
	case ID_CONNECTING:
	case ID_ESTABLISHED:
		ret = w->uid ? uiw_disconnect(w->uid) : -EINVAL;
		if (!ret) {
			w->closing = 1;
		} else if (w->state == ID_ESTABLISHED || !w->initiator || w->closing) {
			/* closing already (ours, or the peer's first): the
			 * DISCONNECTED to come says when it is over */
			ret = 0;
		}
		break;
	default:
		ret = -EINVAL;
		break;
	}
	pthread_mutex_unlock(&cm_lock);
	if (uiw_rdma_tracing())
		fprintf(stderr, "uiw-rdma: disconnect id %p: %d\n", (void *)id, ret);
	return ret ? fail(-ret) : 0;
}

/* what the application's own QP needs for each state (rping -q): the state */
int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	if (!id || !qp_attr || !qp_attr_mask)
		return fail(EINVAL);
	*qp_attr_mask = IBV_QP_STATE;
	switch (qp_attr->qp_state) {
	case IBV_QPS_INIT:
		qp_attr->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ;
		qp_attr->port_num = 1;
		qp_attr->pkey_index = 0;
		*qp_attr_mask |= IBV_QP_ACCESS_FLAGS | IBV_QP_PORT | IBV_QP_PKEY_INDEX;
		return 0;
	case IBV_QPS_RTR:
	case IBV_QPS_RTS:
		return 0;
	default:
		return fail(EINVAL);
	}
}

/* RDMA_OPTION_ID_AFONLY: taken, as the kernel takes it, until the id
 * listens or connects (tgtd sets it on its [::] listener, which shares
 * port 3260 with its 0.0.0.0 one) */
static int set_afonly(struct uiw_rdma_cm_id *w, int afonly)
{
	int ret;

	pthread_mutex_lock(&cm_lock);
	if ((w->state != ID_IDLE && w->state != ID_BOUND) || w->destroyed || !w->uid)
		ret = -EINVAL;
	else
		ret = uiw_set_afonly(w->uid, afonly);
	pthread_mutex_unlock(&cm_lock);
	return ret ? fail(-ret) : 0;
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	if (!id || !optval)
		return fail(EINVAL);
	if (level == RDMA_OPTION_ID) {
		switch (optname) {
		case RDMA_OPTION_ID_TOS:
		case RDMA_OPTION_ID_ACK_TIMEOUT:
			/* accepted and not applied: uiwarp sets no DSCP, and
			 * TCP owns retransmission timing */
			return optlen == sizeof(uint8_t) ? 0 : fail(EINVAL);
		case RDMA_OPTION_ID_REUSEADDR:
			/* uiwarp's listening sockets reuse addresses already */
			return optlen == sizeof(int) ? 0 : fail(EINVAL);
		case RDMA_OPTION_ID_AFONLY:
			if (optlen != sizeof(int))
				return fail(EINVAL);
			return set_afonly(to_id(id), *(int *)optval);
		default:
			break;
		}
	} else if (level == RDMA_OPTION_IB) {
		uiw_rdma_say_once("opt-ib", "rdma_set_option(RDMA_OPTION_IB, %d): InfiniBand path records: "
				  "not on iWARP: EOPNOTSUPP", optname);
		return fail(EOPNOTSUPP);
	}
	uiw_rdma_say_once("opt", "rdma_set_option(level %d, option %d): unknown to uiwarp: EINVAL", level,
			  optname);
	return fail(EINVAL);
}

/* ---- devices --------------------------------------------------------------------- */

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **l = calloc(2, sizeof(*l));
	struct uiw_rdma_context *rc;

	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&cm_lock);
	rc = cm_device();
	pthread_mutex_unlock(&cm_lock);
	if (!rc) {
		free(l);
		return NULL;
	}
	l[0] = &rc->vctx.context;
	if (num_devices)
		*num_devices = 1;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- rdma_getaddrinfo, endpoints ------------------------------------------------ */

/* Over getaddrinfo(3): TCP addresses are all iWARP needs (no route or
 * path records).  Returns 0, getaddrinfo()'s (negative) EAI_* code when
 * the name does not resolve (as librdmacm), or -1 with errno. */
int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h, *ai = NULL, *a;
	struct rdma_addrinfo *head = NULL, **tail = &head;
	int passive, ret;

	if (!res)
		return fail(EINVAL);
	*res = NULL;
	if (!node && !service) {
		/* the addresses themselves, in the hints (libfabric's verbs
		 * provider asks so) */
		struct sockaddr *src = hints ? hints->ai_src_addr : NULL, *dst = hints ? hints->ai_dst_addr : NULL;
		struct rdma_addrinfo *r;

		if ((!src && !dst) || (src && !sa_ok(src)) || (dst && !sa_ok(dst)) ||
		    (src && hints->ai_src_len < sa_len(src)) || (dst && hints->ai_dst_len < sa_len(dst)))
			return fail(EINVAL);
		r = calloc(1, sizeof(*r) + 2 * sizeof(struct sockaddr_storage));
		if (!r)
			return fail(ENOMEM);
		r->ai_flags = hints->ai_flags;
		r->ai_family = (dst ? dst : src)->sa_family;
		r->ai_qp_type = IBV_QPT_RC;
		r->ai_port_space = RDMA_PS_TCP;
		if (src) {
			r->ai_src_addr = (struct sockaddr *)(r + 1);
			memcpy(r->ai_src_addr, src, sa_len(src));
			r->ai_src_len = sa_len(src);
		}
		if (dst) {
			r->ai_dst_addr = (struct sockaddr *)((struct sockaddr_storage *)(r + 1) + 1);
			memcpy(r->ai_dst_addr, dst, sa_len(dst));
			r->ai_dst_len = sa_len(dst);
		}
		*res = r;
		return 0;
	}
	memset(&h, 0, sizeof(h));
	h.ai_socktype = SOCK_STREAM;
	passive = hints && (hints->ai_flags & RAI_PASSIVE);
	if (hints) {
		if (hints->ai_family && hints->ai_family != AF_INET && hints->ai_family != AF_INET6)
			return fail(EAFNOSUPPORT); /* AF_IB */
		if (hints->ai_port_space && hints->ai_port_space != RDMA_PS_TCP) {
			uiw_rdma_say_once("gai-ps", "rdma_getaddrinfo(): port space %d: iWARP is RDMA_PS_TCP "
					  "only: EOPNOTSUPP", hints->ai_port_space);
			return fail(EOPNOTSUPP);
		}
		if (hints->ai_qp_type && hints->ai_qp_type != IBV_QPT_RC) {
			uiw_rdma_say_once("gai-qp", "rdma_getaddrinfo(): QP type %d: iWARP has RC only: "
					  "EOPNOTSUPP", hints->ai_qp_type);
			return fail(EOPNOTSUPP);
		}
		h.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
	}
	if (passive)
		h.ai_flags |= AI_PASSIVE;
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret)
		return ret;
	for (a = ai; a; a = a->ai_next) {
		struct rdma_addrinfo *r;
		struct sockaddr *sa;

		if (a->ai_family != AF_INET && a->ai_family != AF_INET6)
			continue;
		r = calloc(1, sizeof(*r) + 2 * sizeof(struct sockaddr_storage));
		if (!r) {
			freeaddrinfo(ai);
			rdma_freeaddrinfo(head);
			return fail(ENOMEM);
		}
		sa = (struct sockaddr *)(r + 1);
		memcpy(sa, a->ai_addr, a->ai_addrlen);
		r->ai_flags = hints ? hints->ai_flags : 0;
		r->ai_family = a->ai_family;
		r->ai_qp_type = IBV_QPT_RC;
		r->ai_port_space = RDMA_PS_TCP;
		if (passive) {
			r->ai_src_addr = sa;
			r->ai_src_len = a->ai_addrlen;
		} else {
			r->ai_dst_addr = sa;
			r->ai_dst_len = a->ai_addrlen;
			if (hints && hints->ai_src_addr && hints->ai_src_len &&
			    hints->ai_src_len <= sizeof(struct sockaddr_storage)) {
				r->ai_src_addr = (struct sockaddr *)((struct sockaddr_storage *)sa + 1);
				memcpy(r->ai_src_addr, hints->ai_src_addr, hints->ai_src_len);
				r->ai_src_len = hints->ai_src_len;
			}
		}
		*tail = r;
		tail = &r->ai_next;
	}
	freeaddrinfo(ai);
	if (!head)
		return fail(EAFNOSUPPORT);
	*res = head;
	return 0;
}

/* lists come from rdma_getaddrinfo() only: one allocation per entry */
void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res);
		res = n;
	}
}

int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	int e;

	if (!id || !res)
		return fail(EINVAL);
	*id = NULL;
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)(res->ai_port_space ? res->ai_port_space
										   : RDMA_PS_TCP)))
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		if (!res->ai_src_addr || rdma_bind_addr(cid, res->ai_src_addr))
			goto err;
		if (qp_init_attr) {
			struct uiw_rdma_cm_id *w = to_id(cid);

			w->ep_attr = malloc(sizeof(*qp_init_attr));
			if (!w->ep_attr) {
				errno = ENOMEM;
				goto err;
			}
			*w->ep_attr = *qp_init_attr;
			w->ep_pd = pd;
		}
	} else {
		if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000) ||
		    rdma_resolve_route(cid, 2000))
			goto err;
		if (qp_init_attr && rdma_create_qp(cid, pd, qp_init_attr))
			goto err;
	}
	*id = cid;
	return 0;
err:
	e = errno;
	rdma_destroy_id(cid);
	return fail(e);
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}
