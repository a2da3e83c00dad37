/* SPDX-License-Identifier: MIT */
/*
 * peer.c - the conformance test peer: one script of RDMA operations, built
 * twice (peer.h): siw_peer on rdma-core, run in the VM over siw0, and
 * uiw_peer on uiwarp, run on the host.  Either can be the client
 * (initiator, the side that does the operations) or the server.
 *
 *   PEER -r client|server -a ADDR -p PORT -S SCENARIO [options]
 *
 * The server registers a target buffer and tells the client its address,
 * rkey, length and pattern seed in the MPA Reply's private data (the client
 * sends its own seed in the Request's).  The client then runs the
 * scenario; payloads are a seeded pattern, checked at the far end, and a
 * "check" Send carries the client's CRC32 of the data, which the server
 * compares and answers with a "result" Send.  Both sides print
 *   PASS: <impl> <role> <scenario>: details
 *   FAIL: <impl> <role> <scenario>: details
 *   INFO: ...
 * Exit 0 when there was a PASS and no FAIL.
 *
 * Scenarios: write read send send-inv send-se (operations; -s size, -n
 * operations in flight, -g SGEs), pd (-P octets of private data in the
 * Request, -L in the Reply, default -P),
 * reject (the server rejects with -P octets), refused (the connection must
 * fail: the client reports the event; the server must see no request),
 * refused-reply (the client refuses the server's Reply, siw one with M=1 from
 * a uiwarp server with --markers: the client reports the event as for
 * refused, the server accepts and must see the connection end, no
 * completion succeeding),
 * err-stag err-bounds err-access (the client Writes to a bad STag, beyond
 * the region, to a region without remote write: the server must TERMINATE;
 * err-send-long: the client Sends 64 octets into the server's 32-octet
 * receive, the server must TERMINATE and must not complete the receive OK;
 * err-atomic: the client (uiwarp with --rfc7306) sends an RFC 7306 FetchAdd
 * to the server's region, which a server without RFC 7306 must TERMINATE;
 * -T L/E/C[,L/E/C] the accepted TERMINATE layer/type/code, checked where
 * the library reports them).
 *
 * Options: -s SIZE (4096) -n COUNT (1) -g SGES (1) -P PDLEN -w WAIT_MS
 * (20000) --ird N --ord N; uiwarp only: --crc on|off --mpa-rev N --markers
 * --p2p --rtr write|read|send --fpdu-delay MS (50) --rfc7306 (the QP uses
 * RFC 7306: atomics and Immediate Data).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "peer.h"

#define MAGIC 0x75697770u /* "uiwp" */

struct info { /* private data of the Request (client) and Reply (server) */
	uint32_t magic, seed;
	uint64_t addr;
	uint32_t rkey, len, inv_rkey, pad;
};

struct msg { /* check (client -> server) and result (server -> client) Sends */
	uint32_t magic, kind, ok, crc;
	uint64_t len;
	char text[96];
};

static const char *scen, *role;
static int fails, passes;
static size_t size = 4096;
static int count = 1, nsge = 1, pdlen = -1, rpdlen = -1, wait_ms = 20000;
static char expect_term[64];

static void out(const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s %s %s: ", what, p_impl, role, scen);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!strcmp(what, "FAIL"))
		fails++;
	else if (!strcmp(what, "PASS"))
		passes++;
}
#define PASS(...) out("PASS", __VA_ARGS__)
#define FAIL(...) out("FAIL", __VA_ARGS__)
#define INFO(...) out("INFO", __VA_ARGS__)

static int finish(void)
{
	p_fini();
	if (!passes && !fails)
		FAIL("nothing was checked");
	printf("peer: %s %s %s: %d passed, %d failed\n", p_impl, role, scen, passes, fails);
	return fails ? 1 : 0;
}

static int die(const char *what, int rc)
{
	FAIL("%s: %s (%d)", what, strerror(rc < 0 ? -rc : rc), rc);
	return finish();
}

static inline uint8_t pat(uint32_t seed, uint64_t k)
{
	uint32_t x = (uint32_t)(k ^ (k >> 29)) * 0x9E3779B1u + seed * 0x85EBCA6Bu;

	return (uint8_t)(x >> 24 ^ x >> 11);
}

static uint32_t crc_tab[256];

static uint32_t crc32_upd(uint32_t c, const uint8_t *p, size_t n)
{
	if (!crc_tab[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t r = i;
			for (int j = 0; j < 8; j++)
				r = r & 1 ? 0xEDB88320u ^ (r >> 1) : r >> 1;
			crc_tab[i] = r;
		}
	c = ~c;
	while (n--)
		c = crc_tab[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

/* op i, chunk j of g: offset in the far (remote / logical) layout and in
 * the near buffer (chunks in reverse order there, so SGEs really gather
 * and scatter) */
static void layout(int i, int j, int g, uint64_t *far, uint64_t *near, uint32_t *len)
{
	uint64_t a = (uint64_t)j * size / g, b = (uint64_t)(j + 1) * size / g;

	*far = (uint64_t)i * size + a;
	*len = (uint32_t)(b - a);
	*near = (uint64_t)i * size + (size - b);
}

static int build_sges(struct pmr *mr, int i, int g, struct psge *sg)
{
	uint64_t far, near;
	uint32_t len;

	if (size == 0)
		return 0;
	for (int j = 0; j < g; j++) {
		layout(i, j, g, &far, &near, &len);
		sg[j].addr = (uint8_t *)mr->addr + near;
		sg[j].len = len;
		sg[j].lkey = mr->lkey;
	}
	return g;
}

/* fill the near buffer so that op i's chunks carry the far pattern */
static void fill_near(struct pmr *mr, int g, uint32_t seed)
{
	uint64_t far, near;
	uint32_t len;

	for (int i = 0; i < count && size; i++)
		for (int j = 0; j < g; j++) {
			layout(i, j, g, &far, &near, &len);
			for (uint32_t k = 0; k < len; k++)
				((uint8_t *)mr->addr)[near + k] = pat(seed, far + k);
		}
}

/* check the near buffer; returns -1 or the far offset of the first bad octet */
static int64_t check_near(struct pmr *mr, int g, uint32_t seed, uint32_t *crc)
{
	uint64_t far, near;
	uint32_t len;
	int64_t bad = -1;

	*crc = 0;
	for (int i = 0; i < count && size; i++)
		for (int j = 0; j < g; j++) {
			layout(i, j, g, &far, &near, &len);
			uint8_t *p = (uint8_t *)mr->addr + near;
			for (uint32_t k = 0; k < len && bad < 0; k++)
				if (p[k] != pat(seed, far + k))
					bad = (int64_t)(far + k);
		}
	/* the CRC in far order */
	for (int i = 0; i < count && size; i++)
		for (int j = 0; j < g; j++) {
			layout(i, j, g, &far, &near, &len);
			*crc = crc32_upd(*crc, (uint8_t *)mr->addr + near, len);
		}
	return bad;
}

static uint32_t pat_crc(uint32_t seed, uint64_t n)
{
	uint8_t b[4096];
	uint32_t c = 0;

	for (uint64_t o = 0; o < n; o += sizeof(b)) {
		uint64_t l = n - o < sizeof(b) ? n - o : sizeof(b);
		for (uint64_t k = 0; k < l; k++)
			b[k] = pat(seed, o + k);
		c = crc32_upd(c, b, l);
	}
	return c;
}

static void fill_pd(uint8_t *p, int n, uint32_t seed)
{
	for (int i = 0; i < n; i++)
		p[i] = pat(seed, (uint64_t)i + 1000);
}

static int pd_ok(const struct pev *ev, int n, uint32_t seed, char *why, size_t wl)
{
	if (ev->pdlen != n) {
		snprintf(why, wl, "%d octets of private data, expected %d", ev->pdlen, n);
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (ev->pd[i] != pat(seed, (uint64_t)i + 1000)) {
			snprintf(why, wl, "private data octet %d is 0x%02x, expected 0x%02x", i, ev->pd[i],
				 pat(seed, (uint64_t)i + 1000));
			return 0;
		}
	snprintf(why, wl, "%d octets intact", n);
	return 1;
}

static const char *term_str(const struct pev *ev, char *b, size_t l)
{
	if (ev->term_flags < 0)
		snprintf(b, l, "status %d (the library reports no TERMINATE fields)", ev->status);
	else
		snprintf(b, l, "status %d term_flags %d (%s) layer/etype/ecode %d/%d/%d", ev->status,
			 ev->term_flags,
			 ev->term_flags == 1 ? "sent" : ev->term_flags == 2 ? "received" : "none",
			 ev->term_layer, ev->term_etype, ev->term_ecode);
	return b;
}

static int term_expected(const struct pev *ev)
{
	char want[16];
	const char *p = expect_term;

	if (!*p)
		return 1;
	snprintf(want, sizeof(want), "%d/%d/%d", ev->term_layer, ev->term_etype, ev->term_ecode);
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == strlen(want) && !strncmp(p, want, n))
			return 1;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* completions taken while waiting for another one (one CQ serves both
 * queues, so a receive can come before the Send that preceded it) */
static struct pwc early[64];
static int nearly;

/* wait for one completion with id == want (errors fail; others are kept) */
static int wait_wc(uint64_t want, struct pwc *wc, const char *what)
{
	for (int i = 0; i < nearly; i++)
		if (early[i].id == want) {
			*wc = early[i];
			early[i] = early[--nearly];
			return 0;
		}
	for (;;) {
		int n = p_poll(wc, wait_ms);
		if (n < 0) {
			FAIL("%s: poll: %d", what, n);
			return -1;
		}
		if (n == 0) {
			FAIL("%s: no completion within %d ms", what, wait_ms);
			return -1;
		}
		if (wc->status) {
			FAIL("%s: completion %llu status %s (%d)%s", what, (unsigned long long)wc->id,
			     wc->status_str, wc->status, wc->term ? " with TERMINATE fields" : "");
			return -1;
		}
		if (wc->id == want)
			return 0;
		if (nearly < (int)(sizeof(early) / sizeof(early[0])))
			early[nearly++] = *wc;
		else
			INFO("%s: completion id %llu dropped", what, (unsigned long long)wc->id);
	}
}

static int wait_disconnect(int quiet)
{
	struct pev ev;
	char b[160];

	for (int i = 0; i < 4; i++) {
		if (p_next_event(&ev, 10000))
			break;
		if (ev.type == P_EV_DISCONNECTED) {
			if (!quiet)
				INFO("DISCONNECTED: %s", term_str(&ev, b, sizeof(b)));
			return 0;
		}
		if (ev.type == P_EV_TIMEOUT)
			break;
		INFO("event %s status %d", ev.name, ev.status);
	}
	INFO("no DISCONNECTED within 10 s");
	return -1;
}

enum { ID_DATA = 1000, ID_CTL0 = 1, ID_CTL1 = 2, ID_CTLTX = 3 };

static struct popts po = { .crc = -1, .fpdu_delay = 50, .max_sge = 6 };

/* ---- error scenarios --------------------------------------------------- */

static int err_client(struct info *si, struct pmr *loc)
{
	struct psge sg = { loc->addr, 64, loc->lkey };
	uint64_t ra = si->addr;
	uint32_t rk = si->rkey;
	struct pwc wc;
	struct pev ev;
	char b[160];
	int n, got_err = 0, op = P_WRITE;

	if (!strcmp(scen, "err-send-long"))
		op = P_SEND;
	else if (!strcmp(scen, "err-atomic"))
		op = P_ATOMIC_FADD;
	else if (!strcmp(scen, "err-stag"))
		rk = (si->rkey & 0xff) | ((si->rkey + 0x5500) & 0xffffff00);
	else if (!strcmp(scen, "err-bounds"))
		ra = si->addr + si->len - 16;
	memset(loc->addr, 0xab, 64);
	if (op == P_ATOMIC_FADD) {
		sg.len = 8;
		INFO("RFC 7306 Atomic Request (FetchAdd of 1) to STag 0x%08x TO 0x%llx", rk,
		     (unsigned long long)ra);
	} else if (op == P_SEND)
		INFO("Send of 64 octets into the server's 32-octet receive");
	else
		INFO("RDMA Write of 64 octets to STag 0x%08x TO 0x%llx (region 0x%08x at 0x%llx, %u octets)",
		     rk, (unsigned long long)ra, si->rkey, (unsigned long long)si->addr, si->len);
	n = p_post_send(10, op, &sg, 1, ra, rk, 0, P_F_SIGNALED);
	if (n)
		return die("post the operation", n);
	/* the Write completes when sent; what follows must be flushed */
	for (int i = 0; i < 4; i++) {
		n = p_poll(&wc, 3000);
		if (n <= 0)
			break;
		INFO("completion %llu: %s (%d)%s", (unsigned long long)wc.id, wc.status_str, wc.status,
		     wc.term ? " with TERMINATE fields" : "");
		if (wc.term)
			INFO("completion TERMINATE layer/etype/ecode %d/%d/%d", wc.term_layer, wc.term_etype,
			     wc.term_ecode);
		if (wc.status)
			got_err = 1;
	}
	for (int i = 0; i < 4; i++) {
		if (p_next_event(&ev, 15000) || ev.type == P_EV_TIMEOUT) {
			FAIL("no DISCONNECTED after the bad operation (completion error seen: %d)", got_err);
			return finish();
		}
		if (ev.type == P_EV_DISCONNECTED)
			break;
		INFO("event %s status %d", ev.name, ev.status);
	}
	INFO("DISCONNECTED: %s", term_str(&ev, b, sizeof(b)));
	if (ev.term_flags < 0)
		PASS("the connection was torn down after the bad operation (see the capture for the TERMINATE)");
	else if (ev.term_flags != 2)
		FAIL("DISCONNECTED without a received TERMINATE: %s", b);
	else if (!term_expected(&ev))
		FAIL("TERMINATE %d/%d/%d, expected one of %s", ev.term_layer, ev.term_etype, ev.term_ecode,
		     expect_term);
	else
		PASS("TERMINATE received: layer/etype/ecode %d/%d/%d", ev.term_layer, ev.term_etype,
		     ev.term_ecode);
	return finish();
}

/* refused-reply: the client refused our Reply (siw refuses M=1, having no
 * markers to send) and closes TCP: whatever the accept reported, the
 * connection must end within wait_ms and nothing posted may succeed. */
static int refused_reply_server(struct pev *ev)
{
	struct pwc wc;
	char b[160];

	for (int i = 0; i < 4 && ev->type == P_EV_ESTABLISHED; i++) {
		INFO("ESTABLISHED after accept: waiting for the connection to end");
		if (p_next_event(ev, wait_ms))
			ev->type = P_EV_TIMEOUT;
	}
	if (ev->type != P_EV_DISCONNECTED && ev->type != P_EV_CONNECT_ERROR &&
	    ev->type != P_EV_REJECTED) {
		FAIL("%s (status %d): the refused connection did not end", ev->name, ev->status);
		return finish();
	}
	INFO("%s status %d: %s", ev->name, ev->status, term_str(ev, b, sizeof(b)));
	while (p_poll(&wc, 200) > 0) {
		INFO("completion %llu: %s", (unsigned long long)wc.id, wc.status_str);
		if (!wc.status) {
			FAIL("completion %llu succeeded on a refused connection",
			     (unsigned long long)wc.id);
			return finish();
		}
	}
	PASS("the refused Reply ended the connection: %s, status %d", ev->name, ev->status);
	return finish();
}

static int err_server(void)
{
	struct pev ev;
	struct pwc wc;
	char b[160];

	for (int i = 0; i < 4; i++) {
		if (p_next_event(&ev, wait_ms) || ev.type == P_EV_TIMEOUT) {
			FAIL("no DISCONNECTED after the client's bad Write");
			return finish();
		}
		if (ev.type == P_EV_DISCONNECTED)
			break;
		INFO("event %s status %d", ev.name, ev.status);
	}
	INFO("DISCONNECTED: %s", term_str(&ev, b, sizeof(b)));
	while (p_poll(&wc, 200) > 0) {
		INFO("completion %llu: %s", (unsigned long long)wc.id, wc.status_str);
		if (wc.id == ID_DATA && !wc.status) {
			FAIL("the 32-octet receive completed successfully with a 64-octet Send");
			return finish();
		}
	}
	if (ev.term_flags < 0)
		PASS("the connection was torn down (see the capture for the TERMINATE)");
	else if (ev.term_flags != 1)
		FAIL("DISCONNECTED without a TERMINATE sent: %s", b);
	else if (!term_expected(&ev))
		FAIL("TERMINATE sent %d/%d/%d, expected one of %s", ev.term_layer, ev.term_etype,
		     ev.term_ecode, expect_term);
	else
		PASS("TERMINATE sent: layer/etype/ecode %d/%d/%d", ev.term_layer, ev.term_etype,
		     ev.term_ecode);
	return finish();
}

/* ---- server ------------------------------------------------------------ */

static int is_send_scen(void)
{
	return !strcmp(scen, "send") || !strcmp(scen, "send-inv") || !strcmp(scen, "send-se");
}

static int server(const char *addr, int port)
{
	struct pmr tgt, inv, ctl, data;
	struct info ci = { 0 }, si;
	struct msg *rx, *tx;
	struct pev ev;
	struct pwc wc;
	struct psge sg[8];
	uint8_t pdb[512];
	char why[160];
	uint32_t seed = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)getpid(), crc = 0;
	size_t tlen = size * count < 64 ? 64 : size * count;
	int rc, ndata = is_send_scen() ? count : 0;
	int short_recv = !strcmp(scen, "err-send-long");
	int acc = P_ACC_LW | P_ACC_RW | P_ACC_RR;

	po.sq = 8;
	po.rq = ndata + 4;
	if ((rc = p_init(1, addr, port, &po)))
		return die("init", rc);
	if (!strcmp(scen, "err-access"))
		acc = P_ACC_LW | P_ACC_RR;
	if ((rc = p_reg(tlen, acc, &tgt)) || (rc = p_reg(4096, P_ACC_LW | P_ACC_RW, &inv)) ||
	    (rc = p_reg(3 * sizeof(struct msg), P_ACC_LW, &ctl)) ||
	    (rc = p_reg(tlen, P_ACC_LW, &data)))
		return die("register", rc);
	rx = ctl.addr;
	tx = rx + 2;
	for (uint64_t k = 0; k < tlen; k++)
		((uint8_t *)tgt.addr)[k] = pat(seed, k);

	rc = p_wait_request(&ev, wait_ms);
	if (rc)
		return die("wait for a CONNECT_REQUEST", rc);
	if (!strcmp(scen, "refused")) {
		if (ev.type == P_EV_TIMEOUT)
			PASS("no CONNECT_REQUEST reached the application in %d ms", wait_ms);
		else
			FAIL("event %s (status %d): the connection should have been refused", ev.name,
			     ev.status);
		return finish();
	}
	if (ev.type != P_EV_REQUEST) {
		FAIL("%s (status %d) instead of a CONNECT_REQUEST", ev.name, ev.status);
		return finish();
	}
	INFO("CONNECT_REQUEST: %d octets of private data, peer IRD %d ORD %d", ev.pdlen, ev.ird, ev.ord);
	if (!strcmp(scen, "pd") || !strcmp(scen, "reject")) {
		if (pd_ok(&ev, pdlen, 1, why, sizeof(why)))
			PASS("Request private data: %s", why);
		else
			FAIL("Request private data: %s", why);
		fill_pd(pdb, pdlen, 2);
		if (!strcmp(scen, "reject")) {
			rc = p_reject(pdb, pdlen);
			if (rc)
				FAIL("reject: %d", rc);
			else
				PASS("rejected with %d octets of private data", pdlen);
			sleep(1);
			return finish();
		}
	} else {
		if (ev.pdlen < (int)sizeof(ci)) {
			FAIL("Request private data of %d octets, expected %zu", ev.pdlen, sizeof(ci));
			return finish();
		}
		memcpy(&ci, ev.pd, sizeof(ci));
		if (ci.magic != MAGIC) {
			FAIL("Request private data without the peer's magic");
			return finish();
		}
	}
	if (short_recv) {
		struct psge s = { data.addr, 32, data.lkey };
		if ((rc = p_post_recv(ID_DATA, &s, 1)))
			return die("post a receive", rc);
	}
	for (int i = 0; i < ndata; i++) {
		int n = build_sges(&data, i, nsge, sg);
		if (n == 0) { /* rdma-core's siw provider refuses receives without SGEs */
			sg[0].addr = data.addr;
			sg[0].len = 0;
			sg[0].lkey = data.lkey;
			n = 1;
		}
		if ((rc = p_post_recv(ID_DATA + i, sg, n)))
			return die("post a receive", rc);
	}
	for (int i = 0; i < 2; i++) {
		struct psge s = { rx + i, sizeof(*rx), ctl.lkey };
		if ((rc = p_post_recv(ID_CTL0 + i, &s, 1)))
			return die("post a receive", rc);
	}
	if (!strcmp(scen, "send-se") && strcmp(p_impl, "siw") && (rc = p_arm(1)))
		return die("arm the CQ (solicited)", rc);
	memset(&si, 0, sizeof(si));
	si.magic = MAGIC;
	si.seed = seed;
	si.addr = (uintptr_t)tgt.addr;
	si.rkey = tgt.rkey;
	si.len = (uint32_t)tlen;
	si.inv_rkey = inv.rkey;
	if (!strcmp(scen, "pd")) {
		fill_pd(pdb, rpdlen, 2);
		rc = p_accept(pdb, rpdlen, &ev, wait_ms);
	} else {
		rc = p_accept(&si, sizeof(si), &ev, wait_ms);
	}
	if (rc)
		return die("accept", rc);
	if (!strcmp(scen, "refused-reply"))
		return refused_reply_server(&ev);
	if (ev.type != P_EV_ESTABLISHED) {
		FAIL("%s (status %d) after accept, expected ESTABLISHED", ev.name, ev.status);
		return finish();
	}
	INFO("ESTABLISHED");
	if (!strncmp(scen, "err-", 4))
		return err_server();

	/* the data */
	if (!strcmp(scen, "send-se") && !strcmp(p_impl, "siw")) {
		/* siw 6.1 never raises a solicited-only CQ event for a receive:
		 * siw_rqe_complete() asks siw_cq_notify_now() with SIGNALLED, not
		 * the RQE's SOLICITED flag.  Take the receives by polling; the
		 * capture check looks at the SE bit on the wire. */
		INFO("siw cannot signal a solicited-only CQ event (siw_rqe_complete): receives polled");
		for (int i = 0; i < 2; i++)
			if (wait_wc(ID_DATA + i, &wc, "receive"))
				return finish();
		PASS("an unsolicited and a solicited Send received");
	} else if (!strcmp(scen, "send-se")) {
		/* client: an unsolicited Send, 500 ms, then a solicited one */
		int e = p_wait_cq_event(wait_ms);
		int got = 0, sol_seen = -1, unsol_flag = -1;
		if (e <= 0) {
			FAIL("no CQ event for the solicited Send within %d ms", wait_ms);
			return finish();
		}
		while (got < 2 && p_poll(&wc, 1000) == 1) {
			if (wc.id == ID_DATA + 1)
				sol_seen = wc.solicited;
			if (wc.id == ID_DATA)
				unsol_flag = wc.solicited;
			if (wc.status) {
				FAIL("receive %llu: %s", (unsigned long long)wc.id, wc.status_str);
				return finish();
			}
			got++;
		}
		if (got < 2)
			FAIL("CQ event after %d of 2 receives: the unsolicited Send raised it", got);
		else if (sol_seen == 0 || unsol_flag == 1)
			FAIL("the SOLICITED completion flag is wrong: unsolicited %d, solicited %d",
			     unsol_flag, sol_seen);
		else
			PASS("one CQ event (solicited only), after the solicited Send%s",
			     sol_seen < 0 ? "" : "; completion flags right");
	} else if (is_send_scen()) {
		for (int i = 0; i < count; i++) {
			if (wait_wc(ID_DATA + i, &wc, "receive"))
				return finish();
			if (wc.byte_len != size) {
				FAIL("receive %d: byte_len %u, expected %zu", i, wc.byte_len, size);
				return finish();
			}
			if (!strcmp(scen, "send-inv")) {
				if (!strcmp(p_impl, "siw") && !wc.with_inv)
					INFO("receive %d: no IBV_WC_WITH_INV (rdma-core's siw provider never sets "
					     "wc_flags); the client's Write to the STag checks the invalidation", i);
				else if (!wc.with_inv || wc.inv_rkey != inv.rkey)
					FAIL("receive %d: with_inv %d rkey 0x%08x, expected 0x%08x", i,
					     wc.with_inv, wc.inv_rkey, inv.rkey);
				else
					PASS("Send with Invalidate: STag 0x%08x reported invalidated",
					     inv.rkey);
			}
		}
		int64_t bad = check_near(&data, nsge, ci.seed, &crc);
		if (bad >= 0)
			FAIL("received data differs at octet %lld", (long long)bad);
		else
			PASS("%d Sends of %zu octets in %d SGEs received intact", count, size, nsge);
	}
	if (wait_wc(ID_CTL0, &wc, "check message"))
		return finish();
	if (rx->magic != MAGIC) {
		FAIL("bad check message");
		return finish();
	}
	memset(tx, 0, sizeof(*tx));
	tx->magic = MAGIC;
	tx->ok = 1;
	if (!strcmp(scen, "write")) {
		int64_t bad = -1;
		uint64_t n = rx->len;
		for (uint64_t k = 0; k < n && bad < 0; k++)
			if (((uint8_t *)tgt.addr)[k] != pat(ci.seed, k))
				bad = (int64_t)k;
		crc = crc32_upd(0, tgt.addr, n);
		if (bad >= 0 || crc != rx->crc) {
			tx->ok = 0;
			FAIL("written data: first bad octet %lld, CRC 0x%08x, client's 0x%08x", (long long)bad,
			     crc, rx->crc);
		} else {
			PASS("%llu octets written intact (CRC32 0x%08x both sides)", (unsigned long long)n, crc);
		}
	} else if (!strcmp(scen, "read")) {
		crc = pat_crc(seed, rx->len);
		if (crc != rx->crc || !rx->ok) {
			tx->ok = 0;
			FAIL("client read CRC 0x%08x (ok %u: %s), mine 0x%08x", rx->crc, rx->ok, rx->text, crc);
		} else {
			PASS("%llu octets read intact (CRC32 0x%08x both sides)", (unsigned long long)rx->len,
			     crc);
		}
	} else if (is_send_scen() && strcmp(scen, "send-se")) {
		if (crc != rx->crc) {
			tx->ok = 0;
			FAIL("Send data CRC 0x%08x, client's 0x%08x", crc, rx->crc);
		}
	} else if (!strcmp(scen, "pd")) {
		PASS("connection works after the private data exchange");
	}
	if (fails)
		tx->ok = 0;
	tx->crc = crc;
	{
		struct psge s = { tx, sizeof(*tx), ctl.lkey };
		if ((rc = p_post_send(ID_CTLTX, P_SEND, &s, 1, 0, 0, 0, P_F_SIGNALED)))
			return die("send the result", rc);
		/* the client confirms the delivery; siw completes a Send it has put
		 * on the wire with LOC_QP_OP_ERR when the peer closes right after */
		if (p_poll(&wc, wait_ms) == 1 && wc.status)
			INFO("the result Send completed with %s (%d); the client's PASS says whether it arrived",
			     wc.status_str, wc.status);
	}
	wait_disconnect(0);
	return finish();
}

/* ---- client ------------------------------------------------------------ */

static int client(const char *addr, int port)
{
	struct pmr loc, ctl;
	struct info ci, si;
	struct msg *rx, *tx;
	struct pev ev;
	struct pwc wc;
	struct psge sg[8];
	uint8_t pdb[512];
	char why[160];
	uint32_t seed = (uint32_t)time(NULL) * 40503u ^ (uint32_t)getpid() * 7u, crc = 0;
	size_t llen = size * count < 64 ? 64 : size * count;
	int rc;

	po.sq = count + 8;
	po.rq = 4;
	if ((rc = p_init(0, addr, port, &po)))
		return die("init", rc);
	if ((rc = p_client_qp()))
		return die("create the QP", rc);
	if ((rc = p_reg(llen, P_ACC_LW, &loc)) || (rc = p_reg(3 * sizeof(struct msg), P_ACC_LW, &ctl)))
		return die("register", rc);
	rx = ctl.addr;
	tx = rx + 2;
	for (int i = 0; i < 2; i++) {
		struct psge s = { rx + i, sizeof(*rx), ctl.lkey };
		if ((rc = p_post_recv(ID_CTL0 + i, &s, 1)))
			return die("post a receive", rc);
	}
	memset(&ci, 0, sizeof(ci));
	ci.magic = MAGIC;
	ci.seed = seed;
	if (!strcmp(scen, "pd") || !strcmp(scen, "reject")) {
		fill_pd(pdb, pdlen, 1);
		rc = p_connect(pdb, pdlen, &ev, wait_ms);
	} else {
		rc = p_connect(&ci, sizeof(ci), &ev, wait_ms);
	}
	if (rc)
		return die("connect", rc);
	if (!strcmp(scen, "refused") || !strcmp(scen, "refused-reply")) {
		if (ev.type == P_EV_REJECTED || ev.type == P_EV_CONNECT_ERROR)
			PASS("connection refused: %s, status %d (%s), %d octets of private data", ev.name,
			     ev.status, strerror(ev.status < 0 ? -ev.status : ev.status), ev.pdlen);
		else
			FAIL("%s (status %d): expected REJECTED or CONNECT_ERROR", ev.name, ev.status);
		return finish();
	}
	if (!strcmp(scen, "reject")) {
		if (ev.type != P_EV_REJECTED) {
			FAIL("%s (status %d), expected REJECTED", ev.name, ev.status);
		} else {
			INFO("REJECTED status %d", ev.status);
			if (pd_ok(&ev, pdlen, 2, why, sizeof(why)))
				PASS("Reject private data: %s", why);
			else
				FAIL("Reject private data: %s", why);
		}
		return finish();
	}
	if (ev.type != P_EV_ESTABLISHED) {
		FAIL("%s (status %d), expected ESTABLISHED", ev.name, ev.status);
		return finish();
	}
	INFO("ESTABLISHED: %d octets of private data, peer IRD %d ORD %d", ev.pdlen, ev.ird, ev.ord);
	if (!strcmp(scen, "pd")) {
		if (pd_ok(&ev, rpdlen, 2, why, sizeof(why)))
			PASS("Reply private data: %s", why);
		else
			FAIL("Reply private data: %s", why);
		memset(&si, 0, sizeof(si));
	} else {
		if (ev.pdlen < (int)sizeof(si)) {
			FAIL("Reply private data of %d octets, expected %zu", ev.pdlen, sizeof(si));
			return finish();
		}
		memcpy(&si, ev.pd, sizeof(si));
		if (si.magic != MAGIC) {
			FAIL("Reply private data without the peer's magic");
			return finish();
		}
	}
	if (!strncmp(scen, "err-", 4))
		return err_client(&si, &loc);

	memset(tx, 0, sizeof(*tx));
	tx->magic = MAGIC;
	tx->ok = 1;
	tx->len = (uint64_t)size * count;
	if (!strcmp(scen, "write") || is_send_scen()) {
		int g = nsge;
		int nops = count;
		enum pop op = !strcmp(scen, "write") ? P_WRITE : !strcmp(scen, "send-inv") ? P_SEND_INV : P_SEND;
		fill_near(&loc, g, seed);
		for (int i = 0; i < nops; i++) {
			int n = build_sges(&loc, i, g, sg);
			unsigned fl = P_F_SIGNALED;
			if (!strcmp(scen, "send-se") && i == 1) {
				usleep(500000);
				fl |= P_F_SOLICITED;
			}
			if ((rc = p_post_send(ID_DATA + i, op, sg, n, si.addr + (uint64_t)i * size, si.rkey,
					      si.inv_rkey, fl)))
				return die("post", rc);
		}
		for (int i = 0; i < nops; i++)
			if (wait_wc(ID_DATA + i, &wc, "completion"))
				return finish();
		check_near(&loc, g, seed, &crc);
		tx->crc = crc;
		INFO("%d %s of %zu octets in %d SGEs completed", nops,
		     op == P_WRITE ? "RDMA Writes" : op == P_SEND_INV ? "Sends with Invalidate" : "Sends", size, g);
	} else if (!strcmp(scen, "read")) {
		for (int i = 0; i < count; i++) {
			int n = build_sges(&loc, i, nsge, sg);
			if (n == 0) { /* a zero-length Read: one empty SGE (uiwarp refuses none) */
				sg[0].addr = loc.addr;
				sg[0].len = 0;
				sg[0].lkey = loc.lkey;
				n = 1;
			}
			if ((rc = p_post_send(ID_DATA + i, P_READ, sg, n, si.addr + (uint64_t)i * size, si.rkey,
					      0, P_F_SIGNALED)))
				return die("post a Read", rc);
		}
		for (int i = 0; i < count; i++)
			if (wait_wc(ID_DATA + i, &wc, "Read completion"))
				return finish();
		int64_t bad = check_near(&loc, nsge, si.seed, &crc);
		tx->crc = crc;
		if (bad >= 0) {
			tx->ok = 0;
			snprintf(tx->text, sizeof(tx->text), "first bad octet %lld", (long long)bad);
			FAIL("read data differs at octet %lld", (long long)bad);
		} else {
			PASS("%d RDMA Reads of %zu octets in %d SGEs: data intact", count, size, nsge);
		}
	}
	{
		struct psge s = { tx, sizeof(*tx), ctl.lkey };
		if ((rc = p_post_send(ID_CTLTX, P_SEND, &s, 1, 0, 0, 0, P_F_SIGNALED)))
			return die("send the check message", rc);
		if (wait_wc(ID_CTLTX, &wc, "check message"))
			return finish();
	}
	if (wait_wc(ID_CTL0, &wc, "result message"))
		return finish();
	if (rx->magic != MAGIC || !rx->ok)
		FAIL("the server found the data bad (CRC 0x%08x, mine 0x%08x)", rx->crc, crc);
	else
		PASS("the server confirmed the data (CRC32 0x%08x)", rx->crc);
	if (!strcmp(scen, "send-inv")) {
		/* the STag must be invalid now: a Write to it draws a TERMINATE */
		struct psge s = { loc.addr, 16, loc.lkey };
		char b[160];
		INFO("RDMA Write of 16 octets to the invalidated STag 0x%08x", si.inv_rkey);
		if ((rc = p_post_send(ID_CTLTX + 1, P_WRITE, &s, 1, si.addr, si.inv_rkey, 0, 0)))
			return die("post the Write", rc);
		for (int i = 0;; i++) {
			if (p_next_event(&ev, 8000) || ev.type == P_EV_TIMEOUT || i == 4) {
				FAIL("the connection survived a Write to the invalidated STag 0x%08x",
				     si.inv_rkey);
				return finish();
			}
			if (ev.type == P_EV_DISCONNECTED)
				break;
		}
		INFO("DISCONNECTED: %s", term_str(&ev, b, sizeof(b)));
		if (ev.term_flags >= 0 && ev.term_flags != 2)
			FAIL("no TERMINATE after a Write to the invalidated STag: %s", b);
		else
			PASS("the Send with Invalidate invalidated STag 0x%08x: a Write to it was refused (%s)",
			     si.inv_rkey, b);
		return finish();
	}
	if ((rc = p_disconnect()))
		INFO("disconnect: %d", rc);
	wait_disconnect(1);
	return finish();
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "crc", 1, 0, 'C' },	{ "mpa-rev", 1, 0, 'R' },
					    { "markers", 0, 0, 'M' },	{ "p2p", 0, 0, 'Q' },
					    { "rtr", 1, 0, 'X' },	{ "ird", 1, 0, 'I' },
					    { "ord", 1, 0, 'O' },	{ "fpdu-delay", 1, 0, 'D' },
					    { "rfc7306", 0, 0, 'E' },	{ 0, 0, 0, 0 } };
	const char *addr = NULL;
	int port = 0, c;

	role = "?";
	scen = "?";
	while ((c = getopt_long(argc, argv, "r:a:p:S:s:n:g:P:L:w:T:", lo, NULL)) != -1) {
		switch (c) {
		case 'r': role = optarg; break;
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'S': scen = optarg; break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'n': count = atoi(optarg); break;
		case 'g': nsge = atoi(optarg); break;
		case 'P': pdlen = atoi(optarg); break;
		case 'L': rpdlen = atoi(optarg); break;
		case 'w': wait_ms = atoi(optarg); break;
		case 'T': snprintf(expect_term, sizeof(expect_term), "%s", optarg); break;
		case 'C': po.crc = !strcmp(optarg, "on") ? 1 : !strcmp(optarg, "off") ? 0 : -1; break;
		case 'R': po.mpa_rev = atoi(optarg); break;
		case 'M': po.markers = 1; break;
		case 'Q': po.p2p = 1; break;
		case 'X':
			po.rtr = !strcmp(optarg, "write") ? P_RTR_WRITE : !strcmp(optarg, "read") ? P_RTR_READ : P_RTR_SEND;
			break;
		case 'I': po.ird = atoi(optarg); break;
		case 'O': po.ord = atoi(optarg); break;
		case 'D': po.fpdu_delay = atoi(optarg); break;
		case 'E': po.rfc7306 = 1; break;
		default: fprintf(stderr, "usage: see peer.c\n"); return 2;
		}
	}
	if (!addr || (strcmp(role, "client") && strcmp(role, "server")) || nsge < 1 || nsge > 6 ||
	    count < 1) {
		fprintf(stderr, "usage: %s -r client|server -a ADDR -p PORT -S SCENARIO [options]\n", argv[0]);
		return 2;
	}
	if ((!strcmp(scen, "pd") || !strcmp(scen, "reject")) && (pdlen < 0 || pdlen > 255)) {
		fprintf(stderr, "peer: scenario %s needs -P 0..255\n", scen);
		return 2;
	}
	if (pdlen < 0)
		pdlen = 0;
	if (rpdlen < 0 || rpdlen > 255)
		rpdlen = pdlen;
	if (!strcmp(scen, "send-se"))
		count = 2; /* an unsolicited Send, then a solicited one */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("peer: %s %s %s: size %zu count %d sges %d pd %d\n", p_impl, role, scen, size, count, nsge,
	       pdlen);
	return !strcmp(role, "server") ? server(addr, port) : client(addr, port);
}
