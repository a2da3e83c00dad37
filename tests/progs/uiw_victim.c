/* SPDX-License-Identifier: MIT */
/*
 * uiw_victim - the victim of tests/progs/fpdu_hostile.py (tests/sh/hostile_fpdu.sh).
 *
 *   uiw_victim [--help]
 *
 * Listens on 127.0.0.1 (kernel-chosen ports) with two polled contexts, one
 * taking FPDUs without MPA markers and one requiring them, and prints
 *
 *   victim: listening port P markers-port Q
 *
 * Every connection gets its own guarded memory: an arena of 4 KiB regions
 * with 4 KiB guards between them, every octet set to a known pattern:
 *
 *   W  local write, remote write and read  (the peer may Write here)
 *   R  remote read only
 *   F  read/write, but registered in another PD
 *   D  registered, then deregistered
 *   I  registered, then invalidated (UIW_WR_LOCAL_INV) once connected
 *   O  remote write without remote read
 *   receive buffers (256 octets each)
 *
 * The MPA Request's private data sets the case: ASCII words
 * "case=NAME recv=N ird=N ext=1 grant=OFF:LEN" (recv: receives posted, default 4;
 * ird: the QP's IRD, default 4; ext=1: the QP uses RFC 7306, and every
 * region but R and O grants remote atomics; grant: the part of W the peer will Write
 * legitimately, with octet OFF+j = (OFF + j) * 131 + 7).  The MPA Reply's
 * private data, and the "ready" message the victim Sends once connected and
 * once I is invalidated, announce the regions (ASCII):
 *
 *   W=STAG:ADDR R=... F=... D=... I=... O=... rcrc=CRC nrecv=N
 *
 * (rcrc: CRC32C of R's first 64 octets).  As MPA revision 1 requires, the
 * victim (the responder) sends nothing before the peer's first FPDU: the
 * peer starts with a zero-length RDMA Write to W, then waits for "ready".  When the connection ends it waits
 * (at most 5 s) until every posted work request has completed and prints
 *
 *   victim: end case=NAME disc=STATUS term=none|sent:L/E/C|received:L/E/C
 *           recv=N ok=A err=B [status list] crc=C,... send_err=S mem=ok|BAD...
 *
 * mem=ok: every octet outside the receive buffers and the granted part of W
 * is unchanged, and the granted part holds exactly what the peer was to
 * write ("maybe=1": or is unchanged; "any=1": the granted part may hold
 * anything, for a stream broken mid-FPDU: uiwarp, like siw, places payload
 * into a destination validated from the header before the CRC arrives).  Then the connection's memory is freed.  It exits when stdin is
 * closed, printing "victim: exit rss_kb=R hwm_kb=H conns=N".
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"

#define REG	   4096
#define RBUF	   256
#define MAX_RECV   16
#define MAX_CONNS  64
#define NREG	   6
#define WAIT_WC_MS 5000

enum { RW, RR, RF, RD, RI, RO };
static const char reg_name[NREG] = {'W', 'R', 'F', 'D', 'I', 'O'};

enum { WR_READY = 1, WR_INV = 2, WR_RECV0 = 100 };

struct conn {
	int used;
	struct uiw_context *ctx;
	struct uiw_cm_id *id;
	struct uiw_pd *pd, *pd2;
	struct uiw_cq *cq;
	struct uiw_qp *qp;
	struct uiw_mr *mr[NREG], *recv_mr, *msg_mr;
	uint32_t stag[NREG];
	uint8_t *arena; /* guard | W | guard | R | ... | guard | receives | guard */
	size_t arena_len;
	uint8_t msg[256];
	char name[64];
	unsigned nrecv, ird;
	size_t grant_off, grant_len;
	int ext; /* RFC 7306 on the QP */
	int grant_maybe; /* 1: the granted octets may also be unchanged; 2: anything */
	int established, ended;
	/* completions */
	unsigned recv_done, recv_ok, send_posted, send_done, send_err;
	char statuses[256];
	char crcs[256];
	struct uiw_cm_event disc;
	int have_disc;
	struct timespec end_t;
};

static struct conn conns[MAX_CONNS];
static unsigned nconns_total;

static size_t reg_off(int r)
{
	return REG + (size_t)r * 2 * REG;
}
static size_t recv_off(void)
{
	return REG + (size_t)NREG * 2 * REG;
}
static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 8) * 3 + 0x5c);
}
static uint8_t grant_pat(size_t off)
{
	return (uint8_t)(off * 131 + 7);
}

static double since(const struct timespec *t)
{
	struct timespec n;

	clock_gettime(CLOCK_MONOTONIC, &n);
	return (double)(n.tv_sec - t->tv_sec) * 1e3 + (double)(n.tv_nsec - t->tv_nsec) / 1e6;
}

static void parse_case(struct conn *c, const uint8_t *pd, unsigned len)
{
	char buf[513], *save = NULL, *w;

	memcpy(buf, pd, len);
	buf[len] = 0;
	snprintf(c->name, sizeof(c->name), "?");
	c->nrecv = 4;
	c->ird = 4;
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strncmp(w, "case=", 5))
			snprintf(c->name, sizeof(c->name), "%s", w + 5);
		else if (!strncmp(w, "recv=", 5))
			c->nrecv = (unsigned)atoi(w + 5);
		else if (!strncmp(w, "ird=", 4))
			c->ird = (unsigned)atoi(w + 4);
		else if (!strcmp(w, "ext=1"))
			c->ext = 1;
		else if (!strcmp(w, "maybe=1"))
			c->grant_maybe = 1;
		else if (!strcmp(w, "any=1"))
			c->grant_maybe = 2;
		else if (!strncmp(w, "grant=", 6))
			sscanf(w + 6, "%zu:%zu", &c->grant_off, &c->grant_len);
	}
	if (c->nrecv > MAX_RECV)
		c->nrecv = MAX_RECV;
	if (c->grant_off > REG || c->grant_len > REG - c->grant_off)
		c->grant_off = c->grant_len = 0;
}

static void conn_free(struct conn *c)
{
	if (c->id)
		uiw_destroy_id(c->id);
	if (c->qp)
		uiw_destroy_qp(c->qp);
	for (int r = 0; r < NREG; r++)
		if (c->mr[r])
			uiw_dereg_mr(c->mr[r]);
	if (c->recv_mr)
		uiw_dereg_mr(c->recv_mr);
	if (c->msg_mr)
		uiw_dereg_mr(c->msg_mr);
	if (c->cq)
		uiw_destroy_cq(c->cq);
	if (c->pd2)
		uiw_dealloc_pd(c->pd2);
	if (c->pd)
		uiw_dealloc_pd(c->pd);
	if (c->arena)
		munmap(c->arena, c->arena_len);
	memset(c, 0, sizeof(*c));
}

/* A CONNECT_REQUEST: set up the connection's memory and QP, post the
 * receives, accept.  On failure the request is rejected. */
static void conn_new(struct uiw_context *ctx, struct uiw_cm_event *ev)
{
	struct conn *c = NULL;
	struct uiw_qp_init_attr qa = {0};
	struct uiw_conn_param param = {0};
	int n = 0, ret, acc = UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_READ;

	for (int i = 0; i < MAX_CONNS; i++)
		if (!conns[i].used) {
			c = &conns[i];
			break;
		}
	if (!c) {
		printf("victim: too many connections, rejecting\n");
		uiw_reject(ev->id, NULL, 0);
		uiw_destroy_id(ev->id);
		return;
	}
	c->used = 1;
	c->ctx = ctx;
	c->id = ev->id;
	parse_case(c, ev->private_data, ev->private_data_len);
	if (c->ext)
		acc |= UIW_ACCESS_REMOTE_ATOMIC;
	c->arena_len = recv_off() + MAX_RECV * RBUF + REG;
	c->arena = mmap(NULL, c->arena_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->arena == MAP_FAILED) {
		c->arena = NULL;
		ret = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < c->arena_len; i++)
		c->arena[i] = pat(i);
	if ((ret = uiw_alloc_pd(ctx, &c->pd)) || (ret = uiw_alloc_pd(ctx, &c->pd2)) ||
	    (ret = uiw_create_cq(ctx, 64, c, NULL, &c->cq)))
		goto fail;
	for (int r = 0; r < NREG; r++) {
		int a = r == RR ? UIW_ACCESS_REMOTE_READ
			: r == RO ? UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE
				  : acc;

		ret = uiw_reg_mr(r == RF ? c->pd2 : c->pd, c->arena + reg_off(r), REG, a, &c->mr[r]);
		if (ret)
			goto fail;
		c->stag[r] = c->mr[r]->rkey;
	}
	ret = uiw_dereg_mr(c->mr[RD]);
	c->mr[RD] = NULL;
	if (ret)
		goto fail;
	if ((ret = uiw_reg_mr(c->pd, c->arena + recv_off(), MAX_RECV * RBUF, UIW_ACCESS_LOCAL_WRITE,
			      &c->recv_mr)) ||
	    (ret = uiw_reg_mr(c->pd, c->msg, sizeof(c->msg), UIW_ACCESS_LOCAL_WRITE, &c->msg_mr)))
		goto fail;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = MAX_RECV;
	qa.ird = (uint16_t)c->ird;
	qa.ord = 4;
	qa.ext = c->ext ? UIW_QP_EXT_RFC7306 : 0;
	/* IRD 0 is "the default" for uiw_create_qp(): ird=0 is not asked for */
	ret = uiw_create_qp(c->pd, &qa, &c->qp);
	if (ret)
		goto fail;
	for (unsigned i = 0; i < c->nrecv; i++) {
		struct uiw_sge sge = {(uintptr_t)(c->arena + recv_off() + i * RBUF), RBUF,
				      c->recv_mr->lkey};
		struct uiw_recv_wr rwr = {.wr_id = WR_RECV0 + i, .sg_list = &sge, .num_sge = 1};

		ret = uiw_post_recv(c->qp, &rwr, NULL);
		if (ret)
			goto fail;
	}
	for (int r = 0; r < NREG; r++)
		n += snprintf((char *)c->msg + n, sizeof(c->msg) - (size_t)n, "%c=%08x:%016llx ",
			      reg_name[r], c->stag[r],
			      (unsigned long long)(uintptr_t)(c->arena + reg_off(r)));
	snprintf((char *)c->msg + n, sizeof(c->msg) - (size_t)n, "rcrc=%08x nrecv=%u",
		 uiw_crc32c(c->arena + reg_off(RR), 64), c->nrecv);
	param.private_data = c->msg;
	param.private_data_len = (uint16_t)strlen((char *)c->msg);
	ret = uiw_accept(c->id, c->qp, &param);
	if (ret)
		goto fail;
	nconns_total++;
	return;
fail:
	printf("victim: case=%s: set-up failed: %s\n", c->name, strerror(-ret));
	uiw_reject(c->id, NULL, 0);
	conn_free(c);
}

static int post_send(struct conn *c, struct uiw_send_wr *wr)
{
	int ret = uiw_post_send(c->qp, wr, NULL);

	if (!ret)
		c->send_posted++;
	return ret;
}

/* ESTABLISHED: invalidate I, then Send the ready message. */
static void conn_ready(struct conn *c)
{
	struct uiw_send_wr inv = {.wr_id = WR_INV, .opcode = UIW_WR_LOCAL_INV,
				  .send_flags = UIW_SEND_SIGNALED, .invalidate_rkey = c->stag[RI]};
	struct uiw_sge sge;
	struct uiw_send_wr wr = {.wr_id = WR_READY, .sg_list = &sge, .num_sge = 1,
				 .opcode = UIW_WR_SEND,
				 .send_flags = UIW_SEND_SIGNALED | UIW_SEND_FENCE};
	int ret;

	c->established = 1;
	sge = (struct uiw_sge){(uintptr_t)c->msg, (uint32_t)strlen((char *)c->msg), c->msg_mr->lkey};
	if ((ret = post_send(c, &inv)) || (ret = post_send(c, &wr)))
		printf("victim: case=%s: posting the ready message failed: %s\n", c->name,
		       strerror(-ret));
}

static void take_wcs(struct conn *c)
{
	struct uiw_wc wc[16];
	int n;

	while ((n = uiw_poll_cq(c->cq, 16, wc)) != 0) {
		if (n < 0) {
			printf("victim: case=%s: CQ overflow\n", c->name);
			continue;
		}
		for (int i = 0; i < n; i++) {
			size_t l = strlen(c->statuses);

			if (wc[i].opcode == UIW_WC_RECV) {
				c->recv_done++;
				if (wc[i].status == UIW_WC_SUCCESS) {
					unsigned k = (unsigned)(wc[i].wr_id - WR_RECV0);
					size_t cl = strlen(c->crcs);

					c->recv_ok++;
					snprintf(c->crcs + cl, sizeof(c->crcs) - cl, "%s%u:%08x",
						 cl ? "," : "", wc[i].byte_len,
						 uiw_crc32c(c->arena + recv_off() + k * RBUF,
							    wc[i].byte_len));
				} else {
					snprintf(c->statuses + l, sizeof(c->statuses) - l, "%s%d",
						 l ? "," : "", wc[i].status);
				}
			} else {
				c->send_done++;
				if (wc[i].status != UIW_WC_SUCCESS)
					c->send_err++;
			}
		}
	}
}

/* Octets of the arena that differ from what they must hold. */
static void check_mem(struct conn *c, char *out, size_t outlen)
{
	size_t bad = 0, first = 0;
	const size_t w0 = reg_off(RW), r0 = recv_off();

	for (size_t i = 0; i < c->arena_len; i++) {
		uint8_t want = pat(i);

		if (i >= r0 && i < r0 + MAX_RECV * RBUF)
			continue; /* receive buffers: the peer's to fill */
		if (i >= w0 + c->grant_off && i < w0 + c->grant_off + c->grant_len) {
			if ((c->grant_maybe == 1 && c->arena[i] == want) || c->grant_maybe == 2)
				continue;
			want = grant_pat(i - w0);
		}
		if (c->arena[i] != want && !bad++)
			first = i;
	}
	if (!bad) {
		snprintf(out, outlen, "ok");
		return;
	}
	/* name the region of the first bad octet */
	for (int r = 0; r < NREG; r++)
		if (first >= reg_off(r) && first < reg_off(r) + REG) {
			snprintf(out, outlen, "BAD(%zu-octets,first-at-%c+%zu)", bad, reg_name[r],
				 first - reg_off(r));
			return;
		}
	snprintf(out, outlen, "BAD(%zu-octets,first-at-arena+%zu,a-guard)", bad, first);
}

/* Once the connection is gone and every WR completed (or 5 s passed): report, free. */
static void conn_finish(struct conn *c)
{
	char term[32] = "none", mem[96];
	struct uiw_qp_attr qa;

	take_wcs(c);
	if (c->recv_done < c->nrecv || c->send_done < c->send_posted) {
		if (since(&c->end_t) < WAIT_WC_MS)
			return;
		printf("victim: case=%s: WRs still outstanding %.0f ms after the end\n", c->name,
		       since(&c->end_t));
	}
	if (c->disc.term_flags)
		snprintf(term, sizeof(term), "%s:%u/%u/%u",
			 c->disc.term_flags == UIW_CM_TERM_SENT ? "sent" : "received",
			 c->disc.term_layer, c->disc.term_etype, c->disc.term_ecode);
	uiw_query_qp(c->qp, &qa);
	check_mem(c, mem, sizeof(mem));
	printf("victim: end case=%s disc=%d term=%s qp=%d recv=%u ok=%u err=%u status=%s crc=%s "
	       "send=%u send_err=%u wait_ms=%.0f mem=%s\n",
	       c->name, c->disc.status, term, qa.qp_state, c->recv_done, c->recv_ok,
	       c->recv_done - c->recv_ok, c->statuses[0] ? c->statuses : "-",
	       c->crcs[0] ? c->crcs : "-", c->send_done, c->send_err, since(&c->end_t), mem);
	conn_free(c);
}

static struct conn *find(struct uiw_cm_id *id)
{
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].used && conns[i].id == id)
			return &conns[i];
	return NULL;
}

static void on_event(struct uiw_context *ctx, struct uiw_cm_event *ev)
{
	struct conn *c;

	if (ev->event == UIW_CM_EVENT_CONNECT_REQUEST) {
		conn_new(ctx, ev);
		return;
	}
	c = find(ev->id);
	if (!c)
		return;
	switch (ev->event) {
	case UIW_CM_EVENT_ESTABLISHED:
		conn_ready(c);
		break;
	case UIW_CM_EVENT_DISCONNECTED:
	case UIW_CM_EVENT_CONNECT_ERROR:
		c->disc = *ev;
		c->ended = 1;
		clock_gettime(CLOCK_MONOTONIC, &c->end_t);
		/* the id goes now: the QP can only be destroyed once it is freed */
		uiw_destroy_id(c->id);
		c->id = NULL;
		if (!c->established)
			c->send_posted = 0;
		break;
	default:
		break;
	}
}

static long status_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	struct uiw_context_attr attr[2] = {{.mode = UIW_CTX_POLLED, .crc = UIW_CRC_ON},
					   {.mode = UIW_CTX_POLLED, .crc = UIW_CRC_ON, .markers = 1}};
	struct uiw_context *ctx[2];
	struct uiw_cm_id *lid[2];
	struct pollfd pfd[5];
	int ret, stdin_open = 1;

	if (argc > 1) {
		printf("usage: uiw_victim\n(the victim of tests/progs/fpdu_hostile.py; see the "
		       "comment at the top of tests/progs/uiw_victim.c)\n");
		return strcmp(argv[1], "--help") ? 2 : 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < 2; i++) {
		if ((ret = uiw_open_context(&ctx[i], &attr[i])) ||
		    (ret = uiw_create_id(ctx[i], NULL, &lid[i])) ||
		    (ret = uiw_listen(lid[i], "127.0.0.1", 0, 64))) {
			fprintf(stderr, "uiw_victim: set-up: %s\n", strerror(-ret));
			return 1;
		}
		pfd[2 * i].fd = uiw_context_fd(ctx[i]);
		pfd[2 * i + 1].fd = uiw_cm_event_fd(ctx[i]);
		pfd[2 * i].events = pfd[2 * i + 1].events = POLLIN;
	}
	pfd[4].fd = 0;
	pfd[4].events = POLLIN;
	printf("victim: listening port %u markers-port %u\n", uiw_get_port(lid[0]),
	       uiw_get_port(lid[1]));
	while (stdin_open) {
		struct uiw_cm_event ev;

		poll(pfd, 5, 20);
		if (pfd[4].revents) {
			char b[64];

			if (read(0, b, sizeof(b)) <= 0)
				stdin_open = 0;
		}
		for (int i = 0; i < 2; i++) {
			uiw_progress(ctx[i], 0);
			while (uiw_get_cm_event(ctx[i], &ev, 0) == 0)
				on_event(ctx[i], &ev);
		}
		for (int i = 0; i < MAX_CONNS; i++) {
			if (!conns[i].used)
				continue;
			if (conns[i].ended)
				conn_finish(&conns[i]);
			else
				take_wcs(&conns[i]);
		}
	}
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].used)
			printf("victim: case=%s: still connected at exit\n", conns[i].name);
	printf("victim: exit rss_kb=%ld hwm_kb=%ld conns=%u\n", status_kb("VmRSS:"),
	       status_kb("VmHWM:"), nconns_total);
	for (int i = 0; i < MAX_CONNS; i++)
		if (conns[i].used)
			conn_free(&conns[i]);
	for (int i = 0; i < 2; i++) {
		uiw_destroy_id(lid[i]);
		uiw_close_context(ctx[i]);
	}
	return 0;
}
