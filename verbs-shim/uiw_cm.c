/* SPDX-License-Identifier: MIT */
/*
 * The connection manager: the uiw_* CM API (ids, listen, connect, accept,
 * reject, disconnect, the event queue, address resolution) and the ops
 * through which a connection's state machine (uiw_conn.c) reports what
 * happened: they become CM events and QP transitions here.  The engine
 * (uiw_engine.c) moves the octets and performs what uiw_conn_want() asks
 * for; it never decides a connection's life and never queues an event.
 *
 * Everything here runs with the id's engine's lock held: the API functions
 * take the context's and every engine's (ctx_lock_all()); the ops are
 * called by the engine's turn, which holds its own (docs/LOCKING.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uiw_int.h"

static void btab_del(struct uiw_cm_id *id);

/* ---- the event queue ---------------------------------------------------- */

/* one unit per queued event: taken back with the event (or when it is
 * dropped or moved), so the fd is readable exactly while events wait */
static void ch_unit_put(struct uiw_event_channel *ch)
{
	uint64_t one = 1;

	if (write(ch->efd, &one, sizeof(one)) < 0) {
		/* cannot saturate: one unit per queued event */
	}
}

static void ch_unit_take(struct uiw_event_channel *ch)
{
	uint64_t v;

	if (read(ch->efd, &v, sizeof(v)) < 0) {
		/* nonblocking; one unit per queued event */
	}
}

/* queue @n on @ch and wake its waiters (takes the channel's lock) */
static void ch_append(struct uiw_event_channel *ch, struct uiw_ev_node *n)
{
	lk_lock(&ch->lock, UIW_LK_EVCH);
	n->next = NULL;
	*ch->tail = n;
	ch->tail = &n->next;
	ch_unit_put(ch);
	pthread_cond_broadcast(&ch->cond);
	lk_unlock(&ch->lock, UIW_LK_EVCH);
}

/* unlink the events @pick chooses from @ch (each unit taken back); the
 * rest keep their order.  Returns them, in order (takes the channel's lock). */
static struct uiw_ev_node *ch_take(struct uiw_event_channel *ch, const struct uiw_cm_id *id,
				   int (*pick)(const struct uiw_ev_node *, const struct uiw_cm_id *))
{
	struct uiw_ev_node **pe, *out = NULL, **ot = &out;

	lk_lock(&ch->lock, UIW_LK_EVCH);
	for (pe = &ch->head; *pe;) {
		struct uiw_ev_node *e = *pe;

		if (pick(e, id)) {
			*pe = e->next;
			e->next = NULL;
			*ot = e;
			ot = &e->next;
			ch_unit_take(ch);
		} else {
			pe = &e->next;
		}
	}
	ch->tail = &ch->head;
	while (*ch->tail)
		ch->tail = &(*ch->tail)->next;
	lk_unlock(&ch->lock, UIW_LK_EVCH);
	return out;
}

static void cm_ev_push(struct uiw_context *ctx, const struct uiw_cm_event *ev)
{
	struct uiw_cm_id *id = ev->id;
	struct uiw_ev_node *n;

	/* the id's reserved nodes first: allocating here could fail, and an
	 * event lost would leave the application waiting (and a request's id
	 * nobody knows of) */
	if (id && id->ev_spare) {
		n = id->ev_spare;
		id->ev_spare = n->next;
	} else {
		n = malloc(sizeof(*n));
		if (!n)
			return; /* more events than UIW_ID_EVENTS: not expected */
	}
	n->ev = *ev;
	ch_append(id ? id->ch : &ctx->evch, n);
	/* a polled context's waiter that sleeps while another thread turns
	 * the engine (ctx_wait()) waits on the context's condition */
	if (ctx->attr.mode == UIW_CTX_POLLED)
		pthread_cond_broadcast(&ctx->cond);
}

/* An event of @id; @pd: the peer's private data (Request or Reply), or NULL.
 * The peer's IRD/ORD are those of its Request or Reply (0 before one came). */
static void id_event(struct uiw_cm_id *id, enum uiw_cm_event_type type, int status,
		     const struct uiw_conn_info *pd)
{
	struct uiw_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event = type;
	ev.id = id;
	ev.status = status;
	if (type == UIW_CM_EVENT_CONNECT_REQUEST)
		ev.listen_id = id->listener;
	if (pd && pd->pd_len) {
		size_t n = pd->pd_len < sizeof(ev.private_data) ? pd->pd_len
								: sizeof(ev.private_data);

		memcpy(ev.private_data, pd->pd, n);
		ev.private_data_len = (uint16_t)n;
	}
	ev.responder_resources = id->conn.hs.ird;
	ev.initiator_depth = id->conn.hs.ord;
	cm_ev_push(id->ctx, &ev);
}

/* ---- what a connection reports (struct uiw_conn_ops) -------------------- */

/* responder: a valid Request; the application now owns the id and must
 * accept or reject it, and destroy it */
static void conn_request(void *arg, const struct uiw_conn_info *req)
{
	struct uiw_cm_id *id = arg;

	if (id->destroying)
		return;
	id->user_owned = 1;
	__atomic_add_fetch(&id->ctx->nid, 1, __ATOMIC_RELAXED);
	id_event(id, UIW_CM_EVENT_CONNECT_REQUEST, 0, req);
}

/* full operation: the QP takes the stream */
static int conn_established(void *arg, const struct uiw_conn_info *info)
{
	struct uiw_cm_id *id = arg;
	int ret;

	if (!id->qp)
		return -EINVAL;
	ret = rdmap_qp_bind(&id->qp->qp, &id->conn.mpa);
	if (ret)
		return ret;
	/* an initiator's event carries the Reply's private data; a
	 * responder's application already saw the Request's */
	id_event(id, UIW_CM_EVENT_ESTABLISHED, 0,
		 id->conn.cfg.mpa.role == MPA_ROLE_INITIATOR ? info : NULL);
	return 0;
}

static void conn_rejected(void *arg, const struct uiw_conn_info *rep)
{
	id_event(arg, UIW_CM_EVENT_REJECTED, -ECONNREFUSED, rep);
}

/* as librdmacm reports iWARP: a refused TCP connection is REJECTED, one
 * that timed out or found no route UNREACHABLE */
static void conn_unreachable(void *arg, int err)
{
	id_event(arg, err == -ECONNREFUSED ? UIW_CM_EVENT_REJECTED : UIW_CM_EVENT_UNREACHABLE, err,
		 NULL);
}

static void conn_connect_error(void *arg, int err)
{
	id_event(arg, UIW_CM_EVENT_CONNECT_ERROR, err, NULL);
}

/* the stream under the QP ended or failed: MPA's TERMINATE if MPA recorded
 * one, else straight to ERROR */
static void conn_lost(void *arg, int err)
{
	struct rdmap_qp *qp = id_bound_qp(arg);

	if (qp)
		rdmap_qp_conn_failed(qp, err);
}

/* closing: may TCP be shut?  A graceful close waits for the QP's send
 * queue and Read Responses (rdmap_qp_close() also stops new work and
 * queues what is left); a failed one for the QP to reach ERROR, by which
 * time its TERMINATE is queued */
static int conn_drained(void *arg)
{
	struct uiw_cm_id *id = arg;
	struct rdmap_qp *qp = id_bound_qp(id);

	if (!qp)
		return 1;
	if (id->conn.state == UIW_CONN_CLOSING &&
	    (qp->state == RDMAP_QPS_RTS || qp->state == RDMAP_QPS_CLOSING))
		return rdmap_qp_close(qp);
	return qp->state == RDMAP_QPS_ERROR;
}

/* over after ESTABLISHED: reported once the socket is closed (cm_conn_closed) */
static void conn_disconnected(void *arg, const struct uiw_conn_disc *d)
{
	struct uiw_cm_id *id = arg;

	id->disc = *d;
	id->disc_pending = 1;
}

static const struct uiw_conn_ops cm_conn_ops = {
	.request = conn_request,
	.established = conn_established,
	.rejected = conn_rejected,
	.unreachable = conn_unreachable,
	.connect_error = conn_connect_error,
	.lost = conn_lost,
	.drained = conn_drained,
	.disconnected = conn_disconnected,
};

void cm_conn_closed(struct uiw_cm_id *id)
{
	struct uiw_cm_event ev;

	if (!id->disc_pending || id->destroying)
		return;
	id->disc_pending = 0;
	memset(&ev, 0, sizeof(ev));
	ev.event = UIW_CM_EVENT_DISCONNECTED;
	ev.id = id;
	ev.status = id->disc.status;
	ev.term_flags = id->disc.term_flags;
	ev.term_layer = id->disc.term_layer;
	ev.term_etype = id->disc.term_etype;
	ev.term_ecode = id->disc.term_ecode;
	ev.responder_resources = id->conn.hs.ird;
	ev.initiator_depth = id->conn.hs.ord;
	cm_ev_push(id->ctx, &ev);
}

/* ---- ids and their connections ------------------------------------------ */

static void id_free_spares(struct uiw_cm_id *id)
{
	struct uiw_ev_node *n;

	while ((n = id->ev_spare)) {
		id->ev_spare = n->next;
		free(n);
	}
}

struct uiw_cm_id *cm_id_alloc(struct uiw_context *ctx)
{
	struct uiw_cm_id *id = calloc(1, sizeof(*id));

	for (int i = 0; id && i < UIW_ID_EVENTS; i++) {
		struct uiw_ev_node *n = malloc(sizeof(*n));

		if (!n) {
			id_free_spares(id);
			free(id);
			return NULL;
		}
		n->next = id->ev_spare;
		id->ev_spare = n;
	}
	if (!id)
		return NULL;
	id->ctx = ctx;
	id->ch = &ctx->evch;
	id->fd = -1;
	id->bfd = -1;
	id->op_rx = (struct uiw_op){UIW_OP_RX, id};
	id->op_tx = (struct uiw_op){UIW_OP_TX, id};
	id->op_misc = (struct uiw_op){UIW_OP_MISC, id};
	id->op_poll = (struct uiw_op){UIW_OP_POLL, id};
	return id;
}

/* @id's engine's lock held (or the engines stopped); @nids is atomic: the
 * ids of several engines change it */
void cm_id_set_channel(struct uiw_cm_id *id, struct uiw_event_channel *ch)
{
	if (id->ch != &id->ctx->evch)
		__atomic_sub_fetch(&id->ch->nids, 1, __ATOMIC_RELAXED);
	if (ch != &id->ctx->evch)
		__atomic_add_fetch(&ch->nids, 1, __ATOMIC_RELAXED);
	id->ch = ch;
}

void cm_pending_done(struct uiw_cm_id *c)
{
	if (!c->pending)
		return;
	c->pending = 0;
	if (c->listener)
		__atomic_sub_fetch(&c->listener->npending, 1, __ATOMIC_RELAXED);
}

/* @id's share of the context's statistics, added to @st; @shared: @st is
 * the context's, which engine threads freeing ids update at once (each
 * under its own engine's lock only): atomically */
static void id_stats_add(const struct uiw_cm_id *id, struct uiw_context_stats *st, int shared)
{
	const struct mpa_copy_stats *c = &id->conn.mpa.copies;
	const uint64_t v[6] = {c->rx_direct + c->rx_copied, c->rx_copied, c->tx_queued,
			       c->tx_copied, id->rx_reads, id->rx_reads_app};
	uint64_t *f[6] = {&st->rx_payload, &st->rx_payload_copied, &st->tx_payload,
			  &st->tx_payload_copied, &st->rx_reads, &st->rx_reads_app};

	for (int i = 0; i < 6; i++) {
		if (shared)
			__atomic_add_fetch(f[i], v[i], __ATOMIC_RELAXED);
		else
			*f[i] += v[i];
	}
}

int uiw_query_context_stats(struct uiw_context *ctx, struct uiw_context_stats *stats)
{
	const struct uiw_context_stats *g;

	if (!ctx || !stats)
		return -EINVAL;
	g = &ctx->gone;
	memset(stats, 0, sizeof(*stats));
	ctx_lock_all(ctx); /* also takes every engine's inbox into its ids */
	stats->rx_payload = __atomic_load_n(&g->rx_payload, __ATOMIC_RELAXED);
	stats->rx_payload_copied = __atomic_load_n(&g->rx_payload_copied, __ATOMIC_RELAXED);
	stats->tx_payload = __atomic_load_n(&g->tx_payload, __ATOMIC_RELAXED);
	stats->tx_payload_copied = __atomic_load_n(&g->tx_payload_copied, __ATOMIC_RELAXED);
	stats->rx_reads = __atomic_load_n(&g->rx_reads, __ATOMIC_RELAXED);
	stats->rx_reads_app = __atomic_load_n(&g->rx_reads_app, __ATOMIC_RELAXED);
	for (unsigned e = 0; e < ctx->neng; e++)
		for (const struct uiw_cm_id *id = ctx->eng[e].ids; id; id = id->next)
			id_stats_add(id, stats, 0);
	ctx_unlock_all(ctx);
	return 0;
}

/* Context lock held (or the engines stopped). */
void cm_id_free(struct uiw_cm_id *id)
{
	id_stats_add(id, &id->ctx->gone, 1);
	btab_del(id);
	if (id->bfd >= 0)
		close(id->bfd);
	cm_id_set_channel(id, &id->ctx->evch);
	uiw_conn_destroy(&id->conn);
	id_free_spares(id);
	free(id->alt);
	free(id);
}

/* The context's TCP_USER_TIMEOUT (0: kernel default) and keepalive (0: off)
 * on a connection socket. */
void cm_sock_user_timeout(const struct uiw_context *ctx, int fd)
{
	unsigned ut = ctx->attr.tcp_user_timeout_ms;
	int ka = (int)((ctx->attr.tcp_keepalive_ms + 999) / 1000), one = 1, cnt = 3;

	if (ut)
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
	if (ka) {
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &ka, sizeof(ka));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &ka, sizeof(ka));
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	}
}

void cm_sock_addrs(struct uiw_cm_id *id)
{
	socklen_t len = sizeof(id->local);

	id->has_local = !getsockname(id->fd, (struct sockaddr *)&id->local, &len);
	len = sizeof(id->peer);
	id->has_peer = !getpeername(id->fd, (struct sockaddr *)&id->peer, &len);
}

/* A connection's configuration from the context's options. */
static void conn_cfg(const struct uiw_context *ctx, enum mpa_role role, struct uiw_conn_cfg *cfg)
{
	const struct uiw_context_attr *a = &ctx->attr;
	struct mpa_cfg *m = &cfg->mpa;

	uiw_conn_cfg_init(cfg, role);
	m->crc = a->crc != UIW_CRC_OFF;
	m->markers = !!a->markers;
	if (a->mpa_rev)
		m->rev = (uint8_t)a->mpa_rev;
	m->tx_ulpdu_max = a->fpdu_max;
	if (a->pd_max)
		m->pd_max = (uint16_t)a->pd_max;
	if (a->handshake_timeout_ms)
		m->timeout_ns = (uint64_t)a->handshake_timeout_ms * 1000000ull;
	m->p2p = role == MPA_ROLE_INITIATOR && a->p2p;
	if (a->rtr)
		m->rtr = a->rtr;
	m->rx_hdr_min = DDP_TAGGED_HDR_LEN;
	m->tx_depth = 0; /* from the FPDU size: about 512 KiB queued */
	/* Linux siw hands the socket to its QP only after sending the Reply
	 * and drops an FPDU that arrives in between */
	if (role == MPA_ROLE_INITIATOR)
		cfg->hold_ns = (uint64_t)a->first_fpdu_delay_ms * 1000000ull;
}

socklen_t cm_sa_len(const struct sockaddr_storage *a)
{
	return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/* The path's MSS: the FPDU size follows it (RFC 5044 §8: MULPDU from EMSS). */
uint32_t cm_sock_emss(int fd)
{
	int mss = 0;
	socklen_t len = sizeof(mss);

	if (!getsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, &len) && mss > 0)
		return (uint32_t)mss;
	return 0;
}

int cm_conn_accepted(struct uiw_cm_id *id, uint64_t now)
{
	struct uiw_conn_cfg cfg;
	uint32_t emss = cm_sock_emss(id->fd);
	int ret;

	conn_cfg(id->ctx, MPA_ROLE_RESPONDER, &cfg);
	if (emss)
		cfg.mpa.emss = emss;
	ret = uiw_conn_init(&id->conn, &cfg, &cm_conn_ops, id);
	if (!ret)
		ret = uiw_conn_start(&id->conn, now, NULL, 0);
	if (!ret)
		id->state = UIW_ID_CONN;
	return ret;
}

/* ---- connection manager API ---------------------------------------------- */

int uiw_create_id(struct uiw_context *ctx, void *context, struct uiw_cm_id **out)
{
	struct uiw_cm_id *id = cm_id_alloc(ctx);

	*out = NULL;
	if (!id)
		return -ENOMEM;
	id->context = context;
	id->user_owned = 1;
	ctx_lock_all(ctx);
	engine_id_fresh(id);
	__atomic_add_fetch(&ctx->nid, 1, __ATOMIC_RELAXED);
	ctx_unlock_all(ctx);
	*out = id;
	return 0;
}

/* atomic: the application may set it on one thread while another reads
 * it for an event */
void *uiw_id_context(struct uiw_cm_id *id)
{
	return __atomic_load_n(&id->context, __ATOMIC_ACQUIRE);
}

void uiw_set_id_context(struct uiw_cm_id *id, void *context)
{
	__atomic_store_n(&id->context, context, __ATOMIC_RELEASE);
}

static int ev_of_id(const struct uiw_ev_node *e, const struct uiw_cm_id *id)
{
	return e->ev.id == id;
}

/* (every engine's lock held) @id's connection has a TERMINATE to send that
 * has not left yet: the QP found an error the engine has not acted on, or
 * the connection is sending what is queued (the TERMINATE last) before its
 * FIN */
static int term_due(struct uiw_cm_id *id)
{
	struct rdmap_qp *qp;

	if (id->state != UIW_ID_CONN || id->fd < 0)
		return 0;
	if (id->conn.state == UIW_CONN_CLOSING_DISCARD)
		return 1;
	qp = id_bound_qp(id);
	return qp && qp->term_pending && !qp->term_sent;
}

int uiw_destroy_id(struct uiw_cm_id *id)
{
	struct uiw_context *ctx = id->ctx;
	struct uiw_ev_node *gone;
	struct timespec dl;
	int graceful, term;

	ctx_lock_all(ctx);
	id->destroying = 1;
	/* a Reject still being sent goes out first (bounded: 2 s) */
	graceful = id->state == UIW_ID_CONN && id->conn.state == UIW_CONN_CLOSING_EOF && !id->qp;
	/* so does a TERMINATE that is due (RFC 5040 §7: the peer learns why),
	 * then the FIN; a peer that does not read within the bound gets a
	 * reset, which also frees what the kernel holds for it */
	term = !graceful && term_due(id);
	dl = engine_realtime_after(2000000000L);
	if (id->fd >= 0 && !graceful && !term) {
		if (id->state == UIW_ID_LISTEN)
			shutdown(id->fd, SHUT_RDWR); /* the engine ends the accept */
		else if (id->state == UIW_ID_CONN)
			uiw_conn_abort(&id->conn, 0);
	}
	if (id->state == UIW_ID_LISTEN) {
		/* handshakes it accepted that the application never saw end too */
		ctx_for_each_id(ctx, i, c)
			if (c->listener == id && !c->user_owned && c->fd >= 0)
				uiw_conn_abort(&c->conn, 0);
	}
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	ctx_lock_all(ctx);
	while (id->fd >= 0) {
		int timed_out;

		if (term && !term_due(id)) {
			/* the TERMINATE and the FIN have left: no need to wait
			 * for the peer's FIN */
			term = 0;
			uiw_conn_abort(&id->conn, 0);
			ctx_unlock_all(ctx);
			engine_wake(ctx);
			ctx_lock_all(ctx);
			continue;
		}
		timed_out = ctx_wait(ctx, graceful || term ? &dl : NULL) == ETIMEDOUT;
		if (timed_out && (graceful || term)) {
			uiw_conn_abort(&id->conn, term);
			graceful = term = 0;
			ctx_unlock_all(ctx);
			engine_wake(ctx);
			ctx_lock_all(ctx);
		}
	}
	cm_pending_done(id);
	engine_id_gone(id);
	/* events naming this id would dangle: its own go (they are all in its
	 * channel), and requests that name it as their listener, in any
	 * channel, forget it */
	gone = ch_take(id->ch, id, ev_of_id);
	while (gone) {
		struct uiw_ev_node *e = gone;

		gone = e->next;
		free(e);
	}
	for (struct uiw_event_channel *ch = &ctx->evch; ch;
	     ch = ch == &ctx->evch ? ctx->channels : ch->next) {
		lk_lock(&ch->lock, UIW_LK_EVCH);
		for (struct uiw_ev_node *e = ch->head; e; e = e->next)
			if (e->ev.listen_id == id)
				e->ev.listen_id = NULL;
		lk_unlock(&ch->lock, UIW_LK_EVCH);
	}
	cm_id_set_channel(id, &ctx->evch);
	ctx_for_each_id(ctx, i, c)
		if (c->listener == id) {
			c->pending = 0; /* nobody counts them any more */
			c->listener = NULL;
		}
	if (id->qp) {
		/* the QP keeps working state only; it must not reach the MPA conn */
		if (id->qp->qp.state != RDMAP_QPS_IDLE)
			rdmap_qp_conn_failed(&id->qp->qp, -ENOTCONN);
		id->qp->id = NULL;
		id->qp->qp.mpa = NULL;
	}
	__atomic_sub_fetch(&ctx->nid, 1, __ATOMIC_RELAXED);
	ctx_unlock_all(ctx);
	cm_id_free(id);
	return 0;
}

/* getaddrinfo()'s failure as -errno: a name that does not resolve is -ENXIO,
 * a temporary failure of the resolver -EAGAIN (never -EHOSTUNREACH, which
 * is a routing failure) */
static int gai_errno(int r)
{
	switch (r) {
	case EAI_MEMORY:
		return -ENOMEM;
	case EAI_SYSTEM:
		return errno ? -errno : -ENXIO;
	case EAI_AGAIN:
		return -EAGAIN;
	default:
		return -ENXIO;
	}
}

/*
 * @host:@port into @ss (getaddrinfo: literals and names; the first result);
 * with @alt, the further results (up to UIW_ADDR_MAX in all) into *@alt
 * (malloc'd, NULL when none) and their count into *@nalt.
 */
#define UIW_ADDR_MAX 16
static int resolve_addr(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss,
			socklen_t *len, struct sockaddr_storage **alt, unsigned *nalt)
{
	struct addrinfo hints, *res = NULL;
	char serv[8];
	int r;

	if (alt) {
		*alt = NULL;
		*nalt = 0;
	}
	memset(ss, 0, sizeof(*ss));
	if (!host || !*host) {
		/* any address: IPv6 dual-stack when the host has IPv6, else IPv4 */
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0) {
			close(fd);
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = in6addr_any;
			s6->sin6_port = htons(port);
			*len = sizeof(*s6);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = htonl(INADDR_ANY);
			s4->sin_port = htons(port);
			*len = sizeof(*s4);
		}
		return 0;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(serv, sizeof(serv), "%u", (unsigned)port);
	errno = 0;
	r = getaddrinfo(host, serv, &hints, &res);
	if (r)
		return gai_errno(r);
	if (res->ai_addrlen > sizeof(*ss)) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	if (alt) {
		unsigned n = 0;

		for (struct addrinfo *ai = res->ai_next; ai && n < UIW_ADDR_MAX - 1; ai = ai->ai_next)
			n += ai->ai_addrlen <= sizeof(*ss);
		if (n && !(*alt = calloc(n, sizeof(**alt)))) {
			freeaddrinfo(res);
			return -ENOMEM;
		}
		n = 0;
		for (struct addrinfo *ai = res->ai_next; ai && n < UIW_ADDR_MAX - 1; ai = ai->ai_next)
			if (ai->ai_addrlen <= sizeof(*ss))
				memcpy(&(*alt)[n++], ai->ai_addr, ai->ai_addrlen);
		*nalt = n;
	}
	freeaddrinfo(res);
	return 0;
}

static uint16_t ss_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* ---- the port space ----------------------------------------------------- */

/*
 * The addresses the process's ids are bound to (uiw_bind_addr(), and
 * uiw_listen(), which binds), as the kernel's rdma_cm keeps its port
 * space: TCP cannot tell, for these sockets are bound with SO_REUSEADDR
 * (a listener must come back over its connections in TIME_WAIT), and
 * Linux lets two such sockets share a port while neither listens.  An id
 * stays in it until it is freed, as a kernel id keeps its port until
 * rdma_destroy_id().  A leaf lock: nothing is taken under it.
 */
static pthread_mutex_t btab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uiw_cm_id *btab;

static int ss_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
}

static int ss_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

/* Enter @id bound to @a (its port chosen already; @id->bafonly set).  As
 * the kernel's rdma_bind_addr() decides (cma_check_port(), no reuse): a
 * port is held by one id, except by ids of distinct specific addresses,
 * or of two families when both ids are bound to their family only (tgtd
 * binds 0.0.0.0 and then [::] with RDMA_OPTION_ID_AFONLY);
 * -EADDRNOTAVAIL when one of the two is a wildcard, -EADDRINUSE when both
 * are the same address. */
static int btab_add(struct uiw_cm_id *id, const struct sockaddr_storage *a)
{
	int ret = 0;

	pthread_mutex_lock(&btab_lock);
	for (struct uiw_cm_id *c = btab; c && !ret; c = c->bnext) {
		if (ss_port(&c->baddr) != ss_port(a))
			continue;
		if (id->bafonly && c->bafonly && a->ss_family != c->baddr.ss_family)
			continue;
		if (ss_any(a) || ss_any(&c->baddr))
			ret = -EADDRNOTAVAIL;
		else if (ss_same_addr(a, &c->baddr))
			ret = -EADDRINUSE;
	}
	if (!ret) {
		id->baddr = *a;
		id->bnext = btab;
		btab = id;
		id->in_btab = 1;
	}
	pthread_mutex_unlock(&btab_lock);
	return ret;
}

static void btab_del(struct uiw_cm_id *id)
{
	if (!id->in_btab)
		return;
	pthread_mutex_lock(&btab_lock);
	for (struct uiw_cm_id **pp = &btab; *pp; pp = &(*pp)->bnext)
		if (*pp == id) {
			*pp = id->bnext;
			break;
		}
	id->in_btab = 0;
	pthread_mutex_unlock(&btab_lock);
}

/* A TCP socket bound to @sa, as a listener's (SO_REUSEADDR: TIME_WAIT of
 * earlier connections does not stop it); an IPv6 one with IPV6_V6ONLY
 * @v6only (0: the wildcard address serves IPv4 too; -1: the socket's
 * default, net.ipv6.bindv6only); its address, with the port the kernel
 * chose, in *@sa.  Returns the fd or -errno. */
static int bound_socket(struct sockaddr_storage *sa, int v6only)
{
	socklen_t len = sizeof(*sa);
	int fd, one = 1, ret;

	fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->ss_family == AF_INET6 && v6only >= 0)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
	if (bind(fd, (struct sockaddr *)sa, cm_sa_len(sa)) ||
	    getsockname(fd, (struct sockaddr *)sa, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* Whether @id, bound to @sa by socket @fd, is bound to its family only, as
 * the kernel's rdma_bind_addr() sets afonly: IPv4 always unless the
 * application said otherwise, IPv6 as the socket serves it. */
static int bound_afonly(const struct uiw_cm_id *id, int fd, const struct sockaddr_storage *sa)
{
	socklen_t len = sizeof(int);
	int v6only = 0;

	if (sa->ss_family != AF_INET6)
		return id->afonly_set ? id->afonly : 1;
	if (getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &len))
		return 0;
	return v6only != 0;
}

/* listen(2)'s backlog for @backlog: the kernel's rdma_listen() takes 0 or
 * less for its maximum, and so does the socket here (SOMAXCONN, which the
 * kernel lowers to net.core.somaxconn): a backlog of 0 given to listen(2)
 * holds one connection, and a burst of connects loses its SYNs to TCP's
 * retries (cmtime, ucmatose: rdma_listen(id, 0)) */
static int sock_backlog(int backlog)
{
	return backlog > 0 ? backlog : SOMAXCONN;
}

int uiw_listen(struct uiw_cm_id *id, const char *host, uint16_t port, int backlog)
{
	struct uiw_context *ctx = id->ctx;
	struct sockaddr_storage sa;
	socklen_t len;
	int fd = -1, ret, bound;

	ctx_lock_all(ctx);
	bound = id->bfd >= 0;
	ctx_unlock_all(ctx);
	if (!bound) {
		ret = resolve_addr(host, port, 1, &sa, &len, NULL, NULL);
		if (ret)
			return ret;
		fd = bound_socket(&sa, !host || !*host ? 0 : -1);
		if (fd < 0)
			return fd;
		if (listen(fd, sock_backlog(backlog))) {
			ret = -errno;
			close(fd);
			return ret;
		}
	} else if ((host && *host) || port) {
		return -EINVAL; /* bound already: it listens where it is bound */
	}
	ctx_lock_all(ctx);
	if (id->state != UIW_ID_IDLE || id->fd >= 0 || (id->bfd >= 0) != bound) {
		ret = -EINVAL;
		goto err;
	}
	if (bound) {
		if (listen(id->bfd, sock_backlog(backlog))) {
			ret = -errno;
			goto err;
		}
		fd = id->bfd;
		id->bfd = -1;
		sa = id->baddr;
	} else {
		/* as listen(2) says of a port taken */
		id->bafonly = bound_afonly(id, fd, &sa);
		ret = btab_add(id, &sa);
		if (ret) {
			ret = -EADDRINUSE;
			goto err;
		}
	}
	id->fd = fd;
	id->port = ss_port(&sa);
	id->local = sa;
	id->has_local = 1;
	id->pending_max = backlog > 0 && backlog < UIW_HS_PENDING_MAX ? (unsigned)backlog
								       : UIW_HS_PENDING_MAX;
	id->state = UIW_ID_LISTEN;
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	return 0;
err:
	ctx_unlock_all(ctx);
	if (!bound && fd >= 0)
		close(fd);
	return ret;
}

uint16_t uiw_get_port(struct uiw_cm_id *id)
{
	uint16_t p;

	ctx_lock_all(id->ctx);
	p = id->port;
	ctx_unlock_all(id->ctx);
	return p;
}

/* one of @id's recorded addresses (@have) into @out */
static int id_addr(struct uiw_cm_id *id, const struct sockaddr_storage *a, const int *have,
		   struct sockaddr_storage *out)
{
	int ret = -ENOTCONN;

	ctx_lock_all(id->ctx);
	if (*have) {
		*out = *a;
		ret = 0;
	}
	ctx_unlock_all(id->ctx);
	return ret;
}

int uiw_get_peer_addr(struct uiw_cm_id *id, struct sockaddr_storage *addr)
{
	return id_addr(id, &id->peer, &id->has_peer, addr);
}

int uiw_get_local_addr(struct uiw_cm_id *id, struct sockaddr_storage *addr)
{
	return id_addr(id, &id->local, &id->has_local, addr);
}

int uiw_set_afonly(struct uiw_cm_id *id, int afonly)
{
	struct uiw_context *ctx = id->ctx;
	struct sockaddr_storage sa;
	int fd;

	afonly = !!afonly;
	ctx_lock_all(ctx);
	if (id->state != UIW_ID_IDLE || id->fd >= 0) {
		ctx_unlock_all(ctx);
		return -EINVAL; /* listening or connected: too late, as the kernel says */
	}
	if (id->bfd >= 0 && id->baddr.ss_family == AF_INET6 && id->bafonly != afonly) {
		/* bound already (the kernel takes the option until
		 * rdma_listen()): IPV6_V6ONLY cannot change on a bound
		 * socket, so a new one takes over the port, which the old
		 * one (SO_REUSEADDR, not listening) shares until closed */
		sa = id->baddr;
		fd = bound_socket(&sa, afonly);
		if (fd < 0) {
			ctx_unlock_all(ctx);
			return fd;
		}
		close(id->bfd);
		id->bfd = fd;
	}
	if (id->in_btab) {
		/* the port was granted at the bind, as the kernel's; later
		 * binds of others see the new afonly */
		pthread_mutex_lock(&btab_lock);
		id->bafonly = afonly;
		pthread_mutex_unlock(&btab_lock);
	}
	id->afonly_set = 1;
	id->afonly = afonly;
	ctx_unlock_all(ctx);
	return 0;
}

int uiw_bind_addr(struct uiw_cm_id *id, const char *host, uint16_t port)
{
	struct uiw_context *ctx = id->ctx;
	struct sockaddr_storage sa;
	socklen_t len;
	int fd, ret, v6only;

	if (!host || !*host)
		return -EINVAL;
	ret = resolve_addr(host, port, 1, &sa, &len, NULL, NULL);
	if (ret)
		return ret;
	/* the port is taken now, as rdma_bind_addr() takes it: the socket
	 * stays bound for uiw_listen() or uiw_connect() (the wildcard IPv6
	 * address serves IPv4 too unless uiw_set_afonly() said otherwise,
	 * or, without it, net.ipv6.bindv6only does, as the kernel's rdma_cm
	 * decides) */
	ctx_lock_all(ctx);
	v6only = id->afonly_set ? id->afonly : -1;
	ctx_unlock_all(ctx);
	fd = bound_socket(&sa, v6only);
	if (fd < 0)
		return fd;
	ctx_lock_all(ctx);
	if (id->state != UIW_ID_IDLE || id->fd >= 0 || id->bfd >= 0 || id->in_btab) {
		ret = -EINVAL;
	} else {
		id->bafonly = bound_afonly(id, fd, &sa);
		ret = btab_add(id, &sa);
		if (!ret) {
			id->bfd = fd;
			id->src = sa;
			id->srclen = cm_sa_len(&sa);
			id->port = ss_port(&sa);
			id->local = sa;
			id->has_local = 1;
		}
	}
	ctx_unlock_all(ctx);
	if (ret)
		close(fd);
	return ret;
}

int cm_conn_socket(const struct uiw_cm_id *id, const struct sockaddr_storage *a)
{
	int fd, ret;

	if (id->srclen && a->ss_family != id->src.ss_family)
		return -EAFNOSUPPORT;
	fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	cm_sock_user_timeout(id->ctx, fd); /* bounds the SYN retries too */
	if (id->srclen) {
		int one = 1;

		/* the port uiw_bind_addr() took is held by its socket (or by
		 * the socket of the address tried before): share it */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (const struct sockaddr *)&id->src, id->srclen)) {
			ret = -errno;
			close(fd);
			return ret;
		}
	}
	return fd;
}

/* A connection parameter's IRD or ORD (@want) applied to the QP's @cur: 0
 * keeps it, UIW_IRD_ORD_ZERO is 0, more than the QP serves is not raised
 * (its tables are sized at creation): MPA announces what the QP serves,
 * lowered to the application's wish (RFC 6581 §9.1). */
static uint16_t param_ird_ord(uint16_t want, uint16_t cur)
{
	if (want == UIW_IRD_ORD_ZERO)
		return 0;
	return want && want < cur ? want : cur;
}

int uiw_connect(struct uiw_cm_id *id, const char *host, uint16_t port, struct uiw_qp *qp,
		const struct uiw_conn_param *param)
{
	struct uiw_context *ctx = id->ctx;
	struct sockaddr_storage sa, *alt = NULL;
	struct uiw_conn_cfg cfg;
	socklen_t salen;
	unsigned nalt = 0;
	int fd, ret;

	if (!host || !qp || qp->ctx != ctx)
		return -EINVAL;
	if (param && param->private_data_len > UIW_PRIVATE_DATA_MAX)
		return -EMSGSIZE;
	if (param && param->private_data_len && !param->private_data)
		return -EINVAL;
	if (param) {
		/* the context's cap on PD_Length, less RFC 6581's IRD/ORD words */
		unsigned cap = ctx->attr.pd_max ? ctx->attr.pd_max : MPA_PD_MAX;

		if (ctx->attr.mpa_rev != 1)
			cap = cap > 8 ? cap - 8 : 0;
		if (param->private_data_len > cap)
			return -EMSGSIZE;
	}
	ret = resolve_addr(host, port, 0, &sa, &salen, &alt, &nalt);
	if (ret)
		return ret;
	if (id->srclen && sa.ss_family != id->src.ss_family) {
		/* connecting from a bound address: the first destination of its
		 * family goes first */
		unsigned i;

		for (i = 0; i < nalt && alt[i].ss_family != id->src.ss_family; i++)
			;
		if (i == nalt) {
			free(alt);
			return -EAFNOSUPPORT;
		}
		struct sockaddr_storage t = sa;

		sa = alt[i];
		alt[i] = t;
		salen = cm_sa_len(&sa);
	}
	/* a bound id connects its bound socket (its port is the one
	 * uiw_bind_addr() took); another a new one */
	ctx_lock_all(ctx);
	fd = id->bfd;
	ctx_unlock_all(ctx);
	if (fd < 0) {
		fd = cm_conn_socket(id, &sa);
		if (fd < 0) {
			free(alt);
			return fd;
		}
	}
	ctx_lock_all(ctx);
	if (id->state != UIW_ID_IDLE || id->fd >= 0 || (id->bfd >= 0 && id->bfd != fd) || qp->id ||
	    qp->qp.state != RDMAP_QPS_IDLE) {
		ctx_unlock_all(ctx);
		if (fd != id->bfd)
			close(fd);
		free(alt);
		return -EINVAL;
	}
	if (fd == id->bfd) {
		cm_sock_user_timeout(ctx, fd); /* bounds the SYN retries too */
		id->bfd = -1;
	}
	if (param) {
		/* the QP checks the same at bind time */
		qp->qp.cfg.ird = param_ird_ord(param->responder_resources, qp->qp.cfg.ird);
		qp->qp.cfg.ord = param_ird_ord(param->initiator_depth, qp->qp.cfg.ord);
	}
	conn_cfg(ctx, MPA_ROLE_INITIATOR, &cfg);
	cfg.mpa.ird = qp->qp.cfg.ird;
	cfg.mpa.ord = qp->qp.cfg.ord;
	ret = uiw_conn_init(&id->conn, &cfg, &cm_conn_ops, id);
	if (!ret)
		ret = uiw_conn_start(&id->conn, engine_now_ns(), param ? param->private_data : NULL,
				     param ? param->private_data_len : 0);
	if (ret) {
		ctx_unlock_all(ctx);
		close(fd);
		free(alt);
		return ret;
	}
	id->fd = fd;
	id->addr = sa;
	id->addrlen = salen;
	free(id->alt);
	id->alt = alt;
	id->nalt = nalt;
	id->ialt = 0;
	id->qp = qp;
	qp->id = id;
	/* the QP is guarded by its connection's engine from now on (every
	 * engine's lock is held: no post is under way on its old one) */
	__atomic_store_n(&qp->eng, id->eng, __ATOMIC_RELEASE);
	id->state = UIW_ID_CONN;
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	return 0;
}

int uiw_accept(struct uiw_cm_id *id, struct uiw_qp *qp, const struct uiw_conn_param *param)
{
	struct uiw_context *ctx = id->ctx;
	const void *pd = NULL;
	size_t pd_len = 0;
	uint16_t ird, ord, old_ird, old_ord;
	int ret;

	if (param && param->private_data_len > UIW_PRIVATE_DATA_MAX)
		return -EMSGSIZE;
	if (param && param->private_data_len && !param->private_data)
		return -EINVAL;
	if (param) {
		pd = param->private_data;
		pd_len = param->private_data_len;
	}
	ctx_lock_all(ctx);
	if (id->state != UIW_ID_CONN || id->conn.state != UIW_CONN_REQUEST || !qp || qp->ctx != ctx ||
	    qp->id || qp->qp.state != RDMAP_QPS_IDLE) {
		ret = -EINVAL;
		goto out_unlock;
	}
	old_ird = ird = qp->qp.cfg.ird;
	old_ord = ord = qp->qp.cfg.ord;
	if (param) {
		ird = param_ird_ord(param->responder_resources, ird);
		ord = param_ird_ord(param->initiator_depth, ord);
	}
	/* the QP serves what is announced (RFC 6581 §9.1) */
	qp->qp.cfg.ird = ird;
	qp->qp.cfg.ord = ord;
	id->qp = qp;
	qp->id = id;
	/* guarded by the connection's engine from now on (uiw_connect()) */
	__atomic_store_n(&qp->eng, id->eng, __ATOMIC_RELEASE);
	/* the Reply is queued and the QP bound (conn_established); a bind
	 * that fails is returned here, with no event (-ECONNABORTED: the QP
	 * sends MPA's TERMINATE, then the connection closes) */
	ret = uiw_conn_accept(&id->conn, engine_now_ns(), pd, pd_len, ird, ord);
	if (ret && id->conn.state == UIW_CONN_REQUEST) {
		/* nothing was sent: the id may still be accepted or rejected */
		qp->qp.cfg.ird = old_ird;
		qp->qp.cfg.ord = old_ord;
		id->qp = NULL;
		qp->id = NULL;
	}
out_unlock:
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	return ret;
}

int uiw_reject(struct uiw_cm_id *id, const void *pd, uint16_t len)
{
	struct uiw_context *ctx = id->ctx;
	int ret;

	if (len > UIW_PRIVATE_DATA_MAX)
		return -EMSGSIZE;
	if (len && !pd)
		return -EINVAL;
	ctx_lock_all(ctx);
	if (id->state != UIW_ID_CONN)
		ret = -EINVAL;
	else
		ret = uiw_conn_reject(&id->conn, engine_now_ns(), pd, len);
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	return ret;
}

int uiw_disconnect(struct uiw_cm_id *id)
{
	struct uiw_context *ctx = id->ctx;
	struct rdmap_qp *qp;
	int ret = -EINVAL;

	ctx_lock_all(ctx);
	qp = id->state == UIW_ID_CONN ? id_bound_qp(id) : NULL;
	if (qp && (id->conn.state == UIW_CONN_UP || id->conn.state == UIW_CONN_HELD)) {
		rdmap_qp_close(qp); /* no new work; what is queued is still sent */
		ret = uiw_conn_disconnect(&id->conn, engine_now_ns());
	}
	ctx_unlock_all(ctx);
	engine_wake(ctx);
	return ret;
}

/* (channel lock held) take @ch's first event into *@ev */
static void ch_pop(struct uiw_event_channel *ch, struct uiw_cm_event *ev)
{
	struct uiw_ev_node *e = ch->head;

	ch_unit_take(ch);
	ch->head = e->next;
	if (!ch->head)
		ch->tail = &ch->head;
	*ev = e->ev;
	free(e);
}

/*
 * The next event of @ch, waiting up to @timeout_ms (-1: forever).  The
 * progress-thread mode waits on the channel's own condition under its own
 * lock; a polled context turns the engine meanwhile (ctx_wait(), under
 * every lock but the channel's).
 */
static int ch_get_event(struct uiw_event_channel *ch, struct uiw_cm_event *ev, int timeout_ms)
{
	struct uiw_context *ctx = ch->ctx;
	struct timespec dl;
	int turned = 0, rc = 0;

	if (!ev)
		return -EINVAL;
	dl = engine_realtime_after(timeout_ms > 0 ? (long)timeout_ms * 1000000L : 0);
	for (;;) {
		lk_lock(&ch->lock, UIW_LK_EVCH);
		if (ch->head) {
			ch_pop(ch, ev);
			lk_unlock(&ch->lock, UIW_LK_EVCH);
			return 0;
		}
		if (ctx->attr.mode != UIW_CTX_POLLED) {
			rc = timeout_ms == 0 ? ETIMEDOUT
			     : timeout_ms < 0 ? pthread_cond_wait(&ch->cond, &ch->lock)
					      : pthread_cond_timedwait(&ch->cond, &ch->lock, &dl);
			if (rc == ETIMEDOUT && !ch->head) {
				lk_unlock(&ch->lock, UIW_LK_EVCH);
				return -ETIMEDOUT;
			}
			lk_unlock(&ch->lock, UIW_LK_EVCH);
			continue;
		}
		lk_unlock(&ch->lock, UIW_LK_EVCH);
		if (timeout_ms == 0 && turned)
			return -ETIMEDOUT;
		ctx_lock_all(ctx);
		if (timeout_ms == 0)
			engine_run(ctx, 0);
		else
			rc = ctx_wait(ctx, timeout_ms < 0 ? NULL : &dl);
		ctx_unlock_all(ctx);
		/* timed out: the last look at the queue is the loop's next */
		turned = 1;
		if (timeout_ms > 0 && rc == ETIMEDOUT)
			timeout_ms = 0;
	}
}

int uiw_get_cm_event(struct uiw_context *ctx, struct uiw_cm_event *ev, int timeout_ms)
{
	return ch_get_event(&ctx->evch, ev, timeout_ms);
}

int uiw_cm_event_fd(struct uiw_context *ctx)
{
	return ctx->evch.efd;
}

/* ---- event channels ----------------------------------------------------- */

int uiw_create_event_channel(struct uiw_context *ctx, struct uiw_event_channel **out)
{
	struct uiw_event_channel *ch;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->ctx = ctx;
	ch->tail = &ch->head;
	ch->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
	if (ch->efd < 0) {
		int ret = -errno;

		free(ch);
		return ret;
	}
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);
	lk_lock(&ctx->lock, UIW_LK_CTX);
	ch->next = ctx->channels;
	ctx->channels = ch;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	*out = ch;
	return 0;
}

int uiw_destroy_event_channel(struct uiw_event_channel *ch)
{
	struct uiw_context *ctx = ch->ctx;
	struct uiw_event_channel **pp;

	lk_lock(&ctx->lock, UIW_LK_CTX);
	if (ch->nids) {
		lk_unlock(&ctx->lock, UIW_LK_CTX);
		return -EBUSY;
	}
	for (pp = &ctx->channels; *pp && *pp != ch; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = ch->next;
	lk_unlock(&ctx->lock, UIW_LK_CTX);
	/* no id reports here, and an id's events leave with it: nothing queued */
	cm_channel_free(ch);
	return 0;
}

void cm_channel_free(struct uiw_event_channel *ch)
{
	close(ch->efd);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

int uiw_get_channel_event(struct uiw_event_channel *ch, struct uiw_cm_event *ev, int timeout_ms)
{
	return ch_get_event(ch, ev, timeout_ms);
}

int uiw_event_channel_fd(struct uiw_event_channel *ch)
{
	return ch->efd;
}

/* what follows a listener that moves: the requests it reported and those
 * it has not reported yet */
static int ev_moves_with(const struct uiw_ev_node *e, const struct uiw_cm_id *id)
{
	return e->ev.id == id ||
	       (e->ev.event == UIW_CM_EVENT_CONNECT_REQUEST && e->ev.listen_id == id);
}

int uiw_migrate_id(struct uiw_cm_id *id, struct uiw_event_channel *ch)
{
	struct uiw_context *ctx = id->ctx;
	struct uiw_ev_node *moved;

	if (!ch)
		ch = &ctx->evch;
	if (ch->ctx != ctx)
		return -EINVAL;
	ctx_lock_all(ctx);
	if (id->ch != ch) {
		/* events already queued for it go along, in their order, behind
		 * what the new channel holds */
		moved = ch_take(id->ch, id, ev_moves_with);
		while (moved) {
			struct uiw_ev_node *e = moved;

			moved = e->next;
			/* a request moves with its connection's later events */
			if (e->ev.id != id)
				cm_id_set_channel(e->ev.id, ch);
			ch_append(ch, e);
		}
		/* connections it accepted whose request is not reported yet
		 * report where it does now */
		ctx_for_each_id(ctx, i, c)
			if (c->listener == id && !c->user_owned)
				cm_id_set_channel(c, ch);
		cm_id_set_channel(id, ch);
		pthread_cond_broadcast(&ctx->cond);
	}
	ctx_unlock_all(ctx);
	return 0;
}

const char *uiw_event_str(enum uiw_cm_event_type ev)
{
	switch (ev) {
	case UIW_CM_EVENT_CONNECT_REQUEST:
		return "CONNECT_REQUEST";
	case UIW_CM_EVENT_CONNECT_ERROR:
		return "CONNECT_ERROR";
	case UIW_CM_EVENT_UNREACHABLE:
		return "UNREACHABLE";
	case UIW_CM_EVENT_REJECTED:
		return "REJECTED";
	case UIW_CM_EVENT_ESTABLISHED:
		return "ESTABLISHED";
	case UIW_CM_EVENT_DISCONNECTED:
		return "DISCONNECTED";
	}
	return "?";
}
