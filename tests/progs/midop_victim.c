/* SPDX-License-Identifier: MIT */
/*
 * midop_victim - the uiwarp side of tests/progs/midop_peer.py
 * (tests/sh/midop.sh): an application that acts on its own QP and memory
 * while a peer's operation is half done.
 *
 *   midop_victim [--polled] [--markers] [--help]
 *
 * Opens one context (progress thread, or --polled: the victim turns the
 * engine itself with uiw_progress() and uiw_poll_cq(); --markers: MPA
 * markers required from the peer), listens on 127.0.0.1 (kernel-chosen
 * port), prints "listening port=P", and accepts one connection onto a QP
 * created at start-up (send queue 512, receive queue 64, one CQ of 2048).
 *
 * It is driven by the peer through stdin, one command a line; each is
 * answered by one line "ok CMD ..." (or "err CMD reason").  Asynchronous
 * lines ("event ...", "wc ...") report CM events and completions as they
 * are taken.  Commands:
 *
 *   region N SIZE ACC  mmap SIZE octets (page-rounded) between two PROT_NONE
 *                      guard pages, fill with pattern(seed, offset) (7-bit:
 *                      never 0xEE), register with ACC (letters l, w, r:
 *                      local write, remote write, remote read).
 *                      -> ok region N stag=HEX addr=HEX len=SIZE seed=S
 *   recv N COUNT SIZE  post COUNT receives of SIZE octets each, back to back
 *                      from the start of region N  -> ok recv first=ID count=C
 *   read N LEN STAG TO post an RDMA Read of LEN octets into N  -> ok read id=ID
 *   write N LEN STAG TO COUNT
 *                      post COUNT signaled RDMA Writes of LEN octets each from
 *                      N (the k-th from offset k*LEN modulo N's size) to
 *                      TO + k*LEN  -> ok write first=ID count=C
 *   err                uiw_modify_qp(ERR)  -> ok err rc=R ms=T state=S
 *                      (state: uiw_query_qp() right after the call returned)
 *   waitwc ID MS       until WR ID completed (at most MS ms)
 *                      -> ok waitwc id=ID n=N st=S,... ms=T
 *   waitall MS         until every posted WR completed at least once
 *                      -> ok waitall missing=M ms=T
 *   waitdisc MS        until DISCONNECTED  -> ok waitdisc got=0|1 ms=T ...
 *   destroy [turn]     uiw_destroy_id() of the connection (the QP stays);
 *                      turn: a polled engine takes one turn right before
 *                      -> ok destroy rc=R ms=T state=S
 *   freeze             polled: the engine no longer turns between commands
 *                      (only inside them)  -> ok freeze polled=P
 *   dereg N            uiw_dereg_mr()  -> ok dereg rc=R ms=T
 *   fill N BYTE        memset the region (the "after release" pattern)
 *   prot N none|rw     mprotect the region's pages
 *   unmap N            munmap the region's pages (the guards stay)
 *   check N BYTE       octets of N that are not BYTE (made readable first)
 *                      -> ok check bad=K first=OFF
 *   query              -> ok query state=S
 *   wcs ID             -> ok wcs id=ID n=N st=S,...
 *   report             -> ok report qp=S est=E disc=D dstatus=ST term=T
 *                         posted=P missing=M dup=D unknown=U overflow=O hist=...
 *   quit               tear everything down, print "ok quit", exit 0 (also
 *                      on end of stdin)
 *
 * A crash here (a late access by the stack to memory made PROT_NONE or
 * unmapped) shows as the process dying (signal, or a sanitizer report on
 * stderr): the peer reports it.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"

#define MAX_REGIONS 16
#define MAX_WRS	    2048
#define MAX_ST	    4 /* statuses kept per WR */
#define CQ_SIZE	    2048
#define PAT_PERIOD  65521u

struct region {
	char name;
	uint8_t *map; /* guard page | body | guard page */
	size_t map_len;
	uint8_t *base;
	size_t len;  /* as asked */
	size_t body; /* page-rounded */
	unsigned seed;
	struct uiw_mr *mr;
	int mapped;
};

struct wrrec {
	char kind; /* R(ead) W(rite) V (receive) */
	int ncomp;
	int st[MAX_ST];
};

static struct uiw_context *ctx;
static struct uiw_pd *pd;
static struct uiw_cq *cq;
static struct uiw_qp *qp;
static struct uiw_cm_id *lid, *cid;
static int polled;
static int frozen; /* "freeze": a polled engine no longer turns between commands */
static long pagesz;
static struct region regions[MAX_REGIONS];
static unsigned nregions;
static struct wrrec wrs[MAX_WRS + 1]; /* wr_id = index, from 1 */
static unsigned nwr;
static unsigned unknown_wc, overflow;
static int established, disconnected;
static struct uiw_cm_event disc_ev;
static struct timespec disc_t;
static uint8_t pat_table[PAT_PERIOD];

static double ms_since(const struct timespec *t)
{
	struct timespec n;

	clock_gettime(CLOCK_MONOTONIC, &n);
	return (double)(n.tv_sec - t->tv_sec) * 1e3 + (double)(n.tv_nsec - t->tv_nsec) / 1e6;
}

/* pattern(seed, i) = T[i mod 65521] + seed, 7 bits: never the 0xEE of
 * "after release" (midop_peer.py computes the same) */
static void pat_init(void)
{
	for (unsigned k = 0; k < PAT_PERIOD; k++)
		pat_table[k] = (uint8_t)(k * 13u + (k >> 8) * 7u);
}

static void pat_fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((pat_table[i % PAT_PERIOD] + seed) & 0x7F);
}

static struct region *region_find(const char *name)
{
	for (unsigned i = 0; i < nregions; i++)
		if (regions[i].name == name[0] && !name[1])
			return &regions[i];
	return NULL;
}

static const char *term_str(const struct uiw_cm_event *ev)
{
	static char b[48];

	if (!ev->term_flags)
		return "none";
	snprintf(b, sizeof(b), "%s:%u/%u/%u",
		 ev->term_flags == UIW_CM_TERM_SENT	  ? "sent"
		 : ev->term_flags == UIW_CM_TERM_RECEIVED ? "received"
							  : "?",
		 ev->term_layer, ev->term_etype, ev->term_ecode);
	return b;
}

static int qp_state(void)
{
	struct uiw_qp_attr a;

	uiw_query_qp(qp, &a);
	return (int)a.qp_state;
}

static void on_event(struct uiw_cm_event *ev)
{
	switch (ev->event) {
	case UIW_CM_EVENT_CONNECT_REQUEST:
		if (cid) {
			printf("event CONNECT_REQUEST rejected (one connection only)\n");
			uiw_reject(ev->id, NULL, 0);
			uiw_destroy_id(ev->id);
			return;
		}
		cid = ev->id;
		if (uiw_accept(cid, qp, NULL))
			printf("event CONNECT_REQUEST accept-failed\n");
		else
			printf("event CONNECT_REQUEST accepted\n");
		break;
	case UIW_CM_EVENT_ESTABLISHED:
		established = 1;
		printf("event ESTABLISHED\n");
		break;
	case UIW_CM_EVENT_DISCONNECTED:
		if (!disconnected) {
			disc_ev = *ev;
			clock_gettime(CLOCK_MONOTONIC, &disc_t);
		}
		disconnected++;
		printf("event DISCONNECTED status=%d term=%s\n", ev->status, term_str(ev));
		break;
	default:
		printf("event %s status=%d\n", uiw_event_str(ev->event), ev->status);
		break;
	}
}

/* Take CM events and completions (and, polled, turn the engine). */
static void drain(void)
{
	struct uiw_cm_event ev;
	struct uiw_wc wc[32];
	int n;

	while (uiw_get_cm_event(ctx, &ev, 0) == 0)
		on_event(&ev);
	while ((n = uiw_poll_cq(cq, 32, wc)) != 0) {
		if (n < 0) {
			overflow++;
			printf("wc overflow\n");
			continue;
		}
		for (int i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id;

			printf("wc id=%" PRIu64 " st=%d op=%d len=%u fl=%#x term=%u/%u/%u\n", id,
			       wc[i].status, wc[i].opcode, wc[i].byte_len, wc[i].wc_flags,
			       wc[i].term_layer, wc[i].term_etype, wc[i].term_ecode);
			if (id < 1 || id > nwr) {
				unknown_wc++;
				continue;
			}
			if (wrs[id].ncomp < MAX_ST)
				wrs[id].st[wrs[id].ncomp] = wc[i].status;
			wrs[id].ncomp++;
		}
	}
}

/* One step of waiting: the engine turns (polled) or time passes. */
static void step(void)
{
	if (polled)
		uiw_progress(ctx, 1);
	else
		usleep(1000);
	drain();
}

static unsigned new_wr(char kind)
{
	if (nwr >= MAX_WRS)
		return 0;
	nwr++;
	memset(&wrs[nwr], 0, sizeof(wrs[nwr]));
	wrs[nwr].kind = kind;
	return nwr;
}

static void st_list(unsigned id, char *out, size_t len)
{
	size_t o = 0;

	out[0] = 0;
	for (int i = 0; i < wrs[id].ncomp && i < MAX_ST; i++)
		o += (size_t)snprintf(out + o, len - o, "%s%d", i ? "," : "", wrs[id].st[i]);
	if (!wrs[id].ncomp)
		snprintf(out, len, "-");
}

static unsigned missing(void)
{
	unsigned m = 0;

	for (unsigned i = 1; i <= nwr; i++)
		m += wrs[i].ncomp == 0;
	return m;
}

static void cmd_region(char **a, int n)
{
	struct region *r;
	size_t len;
	int acc = 0;

	if (n < 4 || strlen(a[1]) != 1 || region_find(a[1]) || nregions == MAX_REGIONS) {
		printf("err region usage\n");
		return;
	}
	len = strtoull(a[2], NULL, 0);
	for (const char *p = a[3]; *p; p++)
		acc |= *p == 'l'   ? UIW_ACCESS_LOCAL_WRITE
		       : *p == 'w' ? UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_LOCAL_WRITE
		       : *p == 'r' ? UIW_ACCESS_REMOTE_READ
				   : 0;
	r = &regions[nregions];
	memset(r, 0, sizeof(*r));
	r->name = a[1][0];
	r->len = len;
	r->body = (len + (size_t)pagesz - 1) / (size_t)pagesz * (size_t)pagesz;
	r->map_len = r->body + 2 * (size_t)pagesz;
	r->map = mmap(NULL, r->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->map == MAP_FAILED) {
		printf("err region mmap: %s\n", strerror(errno));
		return;
	}
	r->base = r->map + pagesz;
	if (mprotect(r->base, r->body, PROT_READ | PROT_WRITE)) {
		printf("err region mprotect: %s\n", strerror(errno));
		munmap(r->map, r->map_len);
		return;
	}
	r->mapped = 1;
	r->seed = nregions * 29u + 5u;
	pat_fill(r->base, r->body, r->seed);
	if (uiw_reg_mr(pd, r->base, len, acc, &r->mr)) {
		printf("err region reg_mr\n");
		munmap(r->map, r->map_len);
		return;
	}
	nregions++;
	printf("ok region %c stag=%08x addr=%" PRIxPTR " len=%zu seed=%u\n", r->name, r->mr->rkey,
	       (uintptr_t)r->base, len, r->seed);
}

static void cmd_recv(char **a, int n)
{
	struct region *r = n >= 4 ? region_find(a[1]) : NULL;
	unsigned count, first = nwr + 1;
	size_t size;

	if (!r || !r->mr) {
		printf("err recv usage\n");
		return;
	}
	count = (unsigned)strtoul(a[2], NULL, 0);
	size = strtoull(a[3], NULL, 0);
	if ((size_t)count * size > r->len) {
		printf("err recv too large\n");
		return;
	}
	for (unsigned i = 0; i < count; i++) {
		struct uiw_sge sge = {(uintptr_t)(r->base + i * size), (uint32_t)size, r->mr->lkey};
		struct uiw_recv_wr wr = {.sg_list = &sge, .num_sge = 1};
		int ret;

		wr.wr_id = new_wr('V');
		ret = uiw_post_recv(qp, &wr, NULL);
		if (ret) {
			nwr--;
			printf("err recv post %u: %s\n", i, strerror(-ret));
			return;
		}
	}
	printf("ok recv first=%u count=%u\n", first, count);
}

static void cmd_post(char **a, int n, int read)
{
	struct region *r = n >= 5 ? region_find(a[1]) : NULL;
	unsigned count = 1, first = nwr + 1;
	uint32_t len, stag;
	uint64_t to;

	if (!r || !r->mr || (!read && n < 6)) {
		printf("err %s usage\n", a[0]);
		return;
	}
	len = (uint32_t)strtoul(a[2], NULL, 0);
	stag = (uint32_t)strtoul(a[3], NULL, 0);
	to = strtoull(a[4], NULL, 0);
	if (!read)
		count = (unsigned)strtoul(a[5], NULL, 0);
	if (len > r->len) {
		printf("err %s too long\n", a[0]);
		return;
	}
	for (unsigned k = 0; k < count; k++) {
		size_t off = read ? 0 : ((size_t)k * len) % (r->len - len + 1);
		struct uiw_sge sge = {(uintptr_t)(r->base + off), len, r->mr->lkey};
		struct uiw_send_wr wr = {.sg_list = &sge,
					 .num_sge = 1,
					 .opcode = read ? UIW_WR_RDMA_READ : UIW_WR_RDMA_WRITE,
					 .send_flags = UIW_SEND_SIGNALED};
		int ret;

		wr.wr.rdma.rkey = stag;
		wr.wr.rdma.remote_addr = to + (uint64_t)k * len;
		wr.wr_id = new_wr(read ? 'R' : 'W');
		ret = uiw_post_send(qp, &wr, NULL);
		if (ret) {
			nwr--;
			printf("err %s post %u: %s\n", a[0], k, strerror(-ret));
			return;
		}
	}
	if (read)
		printf("ok read id=%u\n", first);
	else
		printf("ok write first=%u count=%u\n", first, count);
}

static void cmd_err(void)
{
	struct uiw_qp_attr attr = {.qp_state = UIW_QPS_ERR};
	struct timespec t;
	int ret;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &t);
	ret = uiw_modify_qp(qp, &attr, UIW_QP_STATE);
	ms = ms_since(&t);
	printf("ok err rc=%d ms=%.1f state=%d\n", ret, ms, qp_state());
}

/* The application tears the connection down (uiw_destroy_id) while a
 * TERMINATE may be due; prints how long the call took.  The QP stays. */
static void cmd_destroy(char **a, int n)
{
	struct timespec t;
	int ret;

	if (!cid) {
		printf("err destroy no connection\n");
		return;
	}
	/* "destroy turn": a polled engine takes one turn first (what arrived
	 * while frozen, e.g. an FPDU that makes a TERMINATE due), and the id
	 * goes right after it */
	if (n >= 2 && !strcmp(a[1], "turn") && polled)
		uiw_progress(ctx, 1);
	clock_gettime(CLOCK_MONOTONIC, &t);
	ret = uiw_destroy_id(cid);
	cid = NULL;
	printf("ok destroy rc=%d ms=%.1f state=%d\n", ret, ms_since(&t), qp_state());
}

static void cmd_waitwc(char **a, int n)
{
	unsigned id = n >= 3 ? (unsigned)strtoul(a[1], NULL, 0) : 0;
	double lim = n >= 3 ? atof(a[2]) : 0;
	struct timespec t;
	char st[64];

	if (id < 1 || id > nwr) {
		printf("err waitwc usage\n");
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	drain();
	while (!wrs[id].ncomp && ms_since(&t) < lim)
		step();
	st_list(id, st, sizeof(st));
	printf("ok waitwc id=%u n=%d st=%s ms=%.1f\n", id, wrs[id].ncomp, st, ms_since(&t));
}

static void cmd_waitall(char **a, int n)
{
	double lim = n >= 2 ? atof(a[1]) : 0;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	drain();
	while (missing() && ms_since(&t) < lim)
		step();
	printf("ok waitall missing=%u ms=%.1f\n", missing(), ms_since(&t));
}

static void cmd_waitdisc(char **a, int n)
{
	double lim = n >= 2 ? atof(a[1]) : 0;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	drain();
	while (!disconnected && ms_since(&t) < lim)
		step();
	if (disconnected)
		printf("ok waitdisc got=1 ms=%.1f status=%d term=%s\n", ms_since(&t),
		       disc_ev.status, term_str(&disc_ev));
	else
		printf("ok waitdisc got=0 ms=%.1f\n", ms_since(&t));
}

static void cmd_region_op(char **a, int n)
{
	struct region *r = n >= 2 ? region_find(a[1]) : NULL;
	struct timespec t;
	int ret = 0;

	if (!r) {
		printf("err %s no such region\n", a[0]);
		return;
	}
	if (!strcmp(a[0], "dereg")) {
		if (!r->mr) {
			printf("err dereg not registered\n");
			return;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		ret = uiw_dereg_mr(r->mr);
		r->mr = NULL;
		printf("ok dereg rc=%d ms=%.1f\n", ret, ms_since(&t));
	} else if (!strcmp(a[0], "fill") && n >= 3) {
		if (!r->mapped) {
			printf("err fill unmapped\n");
			return;
		}
		memset(r->base, (int)strtoul(a[2], NULL, 0), r->body);
		printf("ok fill\n");
	} else if (!strcmp(a[0], "prot") && n >= 3) {
		ret = mprotect(r->base, r->body,
			       !strcmp(a[2], "none") ? PROT_NONE : PROT_READ | PROT_WRITE);
		printf("ok prot rc=%d\n", ret ? -errno : 0);
	} else if (!strcmp(a[0], "unmap")) {
		ret = r->mapped ? munmap(r->base, r->body) : 0;
		r->mapped = 0;
		printf("ok unmap rc=%d\n", ret ? -errno : 0);
	} else if (!strcmp(a[0], "check") && n >= 3) {
		uint8_t want = (uint8_t)strtoul(a[2], NULL, 0);
		size_t bad = 0, first = 0;

		if (!r->mapped) {
			printf("err check unmapped\n");
			return;
		}
		mprotect(r->base, r->body, PROT_READ | PROT_WRITE);
		for (size_t i = 0; i < r->body; i++)
			if (r->base[i] != want && !bad++)
				first = i;
		printf("ok check bad=%zu first=%zu\n", bad, first);
	} else {
		printf("err %s usage\n", a[0]);
	}
}

static void cmd_report(void)
{
	unsigned dup = 0, hist[32] = {0};
	char h[256];
	size_t o = 0;

	drain();
	for (unsigned i = 1; i <= nwr; i++) {
		dup += wrs[i].ncomp > 1;
		for (int k = 0; k < wrs[i].ncomp && k < MAX_ST; k++)
			hist[wrs[i].st[k] & 31]++;
	}
	h[0] = 0;
	for (int s = 0; s < 32; s++)
		if (hist[s])
			o += (size_t)snprintf(h + o, sizeof(h) - o, "%s%d:%u", o ? "," : "", s,
					      hist[s]);
	printf("ok report qp=%d est=%d disc=%d dstatus=%d term=%s posted=%u missing=%u dup=%u "
	       "unknown=%u overflow=%u hist=%s\n",
	       qp_state(), established, disconnected, disconnected ? disc_ev.status : 0,
	       disconnected ? term_str(&disc_ev) : "none", nwr, missing(), dup, unknown_wc,
	       overflow, h[0] ? h : "-");
}

static void teardown(void)
{
	if (cid)
		uiw_destroy_id(cid);
	cid = NULL;
	drain();
	if (qp)
		uiw_destroy_qp(qp);
	for (unsigned i = 0; i < nregions; i++) {
		if (regions[i].mr)
			uiw_dereg_mr(regions[i].mr);
		if (regions[i].mapped)
			munmap(regions[i].base, regions[i].body);
		/* the guard pages */
		munmap(regions[i].map, (size_t)pagesz);
		munmap(regions[i].map + pagesz + regions[i].body, (size_t)pagesz);
	}
	if (cq)
		uiw_destroy_cq(cq);
	if (pd)
		uiw_dealloc_pd(pd);
	if (lid)
		uiw_destroy_id(lid);
	if (ctx)
		uiw_close_context(ctx);
}

/* Runs one command line; returns 0 on quit. */
static int run(char *line)
{
	char *a[8], *save = NULL;
	int n = 0;

	for (char *w = strtok_r(line, " \t\r", &save); w && n < 8;
	     w = strtok_r(NULL, " \t\r", &save))
		a[n++] = w;
	if (!n)
		return 1;
	if (!strcmp(a[0], "region"))
		cmd_region(a, n);
	else if (!strcmp(a[0], "recv"))
		cmd_recv(a, n);
	else if (!strcmp(a[0], "read"))
		cmd_post(a, n, 1);
	else if (!strcmp(a[0], "write"))
		cmd_post(a, n, 0);
	else if (!strcmp(a[0], "err"))
		cmd_err();
	else if (!strcmp(a[0], "destroy"))
		cmd_destroy(a, n);
	else if (!strcmp(a[0], "freeze")) {
		frozen = polled;
		printf("ok freeze polled=%d\n", polled);
	}
	else if (!strcmp(a[0], "waitwc"))
		cmd_waitwc(a, n);
	else if (!strcmp(a[0], "waitall"))
		cmd_waitall(a, n);
	else if (!strcmp(a[0], "waitdisc"))
		cmd_waitdisc(a, n);
	else if (!strcmp(a[0], "query"))
		printf("ok query state=%d\n", qp_state());
	else if (!strcmp(a[0], "wcs") && n >= 2) {
		unsigned id = (unsigned)strtoul(a[1], NULL, 0);
		char st[64];

		drain();
		if (id < 1 || id > nwr) {
			printf("err wcs no such id\n");
		} else {
			st_list(id, st, sizeof(st));
			printf("ok wcs id=%u n=%d st=%s\n", id, wrs[id].ncomp, st);
		}
	} else if (!strcmp(a[0], "report"))
		cmd_report();
	else if (!strcmp(a[0], "quit"))
		return 0;
	else if (!strcmp(a[0], "dereg") || !strcmp(a[0], "fill") || !strcmp(a[0], "prot") ||
		 !strcmp(a[0], "unmap") || !strcmp(a[0], "check"))
		cmd_region_op(a, n);
	else
		printf("err %s unknown command\n", a[0]);
	return 1;
}

int main(int argc, char **argv)
{
	struct uiw_context_attr attr = {.mode = UIW_CTX_PROGRESS_THREAD, .crc = UIW_CRC_ON};
	struct uiw_qp_init_attr qa = {0};
	char buf[4096];
	size_t have = 0;
	int ret, open_in = 1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--polled")) {
			attr.mode = UIW_CTX_POLLED;
			polled = 1;
		} else if (!strcmp(argv[i], "--markers")) {
			attr.markers = 1;
		} else {
			printf("usage: midop_victim [--polled] [--markers]\n(the victim of "
			       "tests/progs/midop_peer.py; see the comment at the top of "
			       "tests/progs/midop_victim.c)\n");
			return strcmp(argv[i], "--help") ? 2 : 0;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pagesz = sysconf(_SC_PAGESIZE);
	pat_init();
	if ((ret = uiw_open_context(&ctx, &attr)) || (ret = uiw_alloc_pd(ctx, &pd)) ||
	    (ret = uiw_create_cq(ctx, CQ_SIZE, NULL, NULL, &cq))) {
		fprintf(stderr, "midop_victim: set-up: %s\n", strerror(-ret));
		return 1;
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap.max_send_wr = 512;
	qa.cap.max_recv_wr = 64;
	qa.ird = 16;
	qa.ord = 16;
	if ((ret = uiw_create_qp(pd, &qa, &qp)) || (ret = uiw_create_id(ctx, NULL, &lid)) ||
	    (ret = uiw_listen(lid, "127.0.0.1", 0, 4))) {
		fprintf(stderr, "midop_victim: set-up: %s\n", strerror(-ret));
		return 1;
	}
	printf("listening port=%u mode=%s markers=%d\n", uiw_get_port(lid),
	       polled ? "polled" : "thread", attr.markers);
	while (open_in) {
		struct pollfd pfd = {.fd = 0, .events = POLLIN};
		char *nl;

		poll(&pfd, 1, polled && !frozen ? 0 : 2);
		if (polled && !frozen)
			uiw_progress(ctx, 1);
		if (!frozen)
			drain();
		if (!pfd.revents)
			continue;
		ret = (int)read(0, buf + have, sizeof(buf) - 1 - have);
		if (ret <= 0)
			break;
		have += (size_t)ret;
		buf[have] = 0;
		while ((nl = memchr(buf, '\n', have))) {
			size_t used = (size_t)(nl - buf) + 1;

			*nl = 0;
			open_in = run(buf);
			memmove(buf, buf + used, have - used);
			have -= used;
			buf[have] = 0;
			if (!open_in)
				break;
		}
		if (have == sizeof(buf) - 1)
			have = 0; /* an over-long line: dropped */
	}
	teardown();
	printf("ok quit\n");
	return 0;
}
