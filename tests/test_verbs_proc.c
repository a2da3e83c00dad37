/* SPDX-License-Identifier: MIT */
/*
 * The public verbs and CM API with the two ends in separate processes.
 *
 * Every test fork()s its peer processes before it opens a context of its own
 * (so that no child inherits a socket, an io_uring or a thread of the
 * parent), talks to them over pipes, and reaps them before it ends.  Most
 * peers run peer_main(): a remote-controlled end that listens on a
 * kernel-chosen port of 127.0.0.1, accepts one connection and then executes
 * the parent's commands (fill or check its memory with a seeded pattern,
 * post work requests, poll its CQ, wait for CM events) and sends back what
 * came of them; the parent makes every assertion.  The few peers with a
 * fixed role (256 connections, a passive server, raw TCP sockets) check
 * what they can themselves and report through their exit status and stderr.
 * The parent is the MPA initiator and sends the first FPDU (RFC 5044 §7.1.2:
 * a responder sends none before it received one; see tp_connect()).
 *
 * Every wait is bounded (TP_WAIT_MS for a single step); children kill
 * themselves after TP_KID_ALARM s and die with the test process
 * (PR_SET_PDEATHSIG).  Check ends a failing test process with _exit(), so
 * every assertion of this file first kills and reaps the children
 * (tp_cleanup(), see the ck_assert_msg override below): no orphan or zombie
 * outlives a test, passing or not.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "uiw_verbs.h"

static void tp_cleanup(void);

/*
 * Kill and reap the children before Check's failure path, which _exit()s
 * the test process without running any teardown.
 */
#undef ck_assert_msg
#define ck_assert_msg(expr, ...)                                                         \
	((expr) ? _mark_point(__FILE__, __LINE__)                                        \
		: (tp_cleanup(),                                                         \
		   _ck_assert_failed(__FILE__, __LINE__, "Assertion '" #expr "' failed", \
				     ##__VA_ARGS__)))
#undef ck_abort_msg
#define ck_abort_msg(...) \
	(tp_cleanup(), _ck_assert_failed(__FILE__, __LINE__, "Failed", ##__VA_ARGS__))

#define TP_WAIT_MS   tu_ms(5000)	   /* one step: a completion, an event, a reply */
#define TP_IDLE_MS   tu_ms(20000)	   /* a peer waiting for its next command */
#define TP_KID_ALARM (tu_ms(30000) / 1000) /* s: a stuck child never outlives its test */
#define TP_MAX_KIDS  4

#define KIB	1024u
#define MIB	(1024u * 1024u)
#define TP_BIG	(16u * MIB)
#define DSLOT	(TP_BIG + 64 * KIB) /* slots of the 16 MiB tests */
#define OSLOT	(2 * MIB)	    /* slots of the other tests */
#define XO	5		    /* odd offset of the data in each slot */
#define GUARD	64		    /* octets after the data that must stay zero */
#define SYNC_ID 0x5badULL	    /* wr_id of the placement-fencing zero-length Reads */
#define ACC_ALL (UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE | UIW_ACCESS_REMOTE_READ)

/* RFC 5040 §4.8 TERMINATE layers, types and codes the tests expect. */
#define TERM_LAYER_RDMAP       0
#define TERM_LAYER_DDP	       1
#define TERM_RDMAP_REMOTE_PROT 1 /* RDMAP: remote protection error */
#define TERM_DDP_TAGGED	       1 /* DDP: tagged buffer error */
#define TERM_CODE_INVALID_STAG 0 /* RDMAP 0x00, DDP tagged 0x00 */

/* Exit codes of the children */
enum {
	KX_OK = 0,
	KX_SETUP = 10,	 /* opening the end, listening */
	KX_PIPE = 11,	 /* the parent went silent or away */
	KX_CONN = 12,	 /* connection set-up */
	KX_CHECK = 13,	 /* a memory or completion check failed */
	KX_CLEANUP = 14, /* destroying the objects failed */
	KX_DEATH = 15	 /* the parent died before the child started */
};

/* ---- time, patterns ----------------------------------------------------- */

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t seed_of(unsigned tag)
{
	return tu_seed() ^ ((uint64_t)tag << 40) ^ ((uint64_t)tag * 0x9E3779B97F4A7C15ull);
}

/*
 * For ThreadSanitizer: a process's engine thread reads and writes payload
 * memory with its context lock held, in an order the two processes agree on
 * through TCP and the pipes, which TSan cannot see.  The helpers that touch
 * payload (pat_*, zero_cmp) take the lock of every end of this process
 * (uiw_query_qp()) before and after, which makes that order visible to it.
 */
#define TP_MAX_ENDS 4
static struct uiw_qp *tp_end_qps[TP_MAX_ENDS];

static void pat_sync(void)
{
	struct uiw_qp_attr attr;

	for (int i = 0; i < TP_MAX_ENDS; i++)
		if (tp_end_qps[i])
			uiw_query_qp(tp_end_qps[i], &attr);
}

static void pat_fill(void *p, size_t n, uint64_t seed)
{
	uint64_t s = seed;

	pat_sync();
	tu_rand_fill(&s, p, n);
	pat_sync();
}

static void pat_zero(void *p, size_t n)
{
	pat_sync();
	memset(p, 0, n);
	pat_sync();
}

/* 0 if [p, p + n) holds the pattern of @seed, else -EILSEQ (told on stderr). */
static int pat_cmp(const void *p, size_t n, uint64_t seed)
{
	const uint8_t *a = p;
	uint8_t *ref;
	int ret = 0;

	if (!n)
		return 0;
	ref = malloc(n);
	if (!ref)
		return -ENOMEM;
	pat_fill(ref, n, seed); /* takes the locks after filling */
	if (memcmp(a, ref, n)) {
		size_t i = 0;

		while (a[i] == ref[i])
			i++;
		fprintf(stderr,
			"verbs_proc[%d]: pattern %llx differs at %zu of %zu (%02x, not %02x)\n",
			(int)getpid(), (unsigned long long)seed, i, n, a[i], ref[i]);
		ret = -EILSEQ;
	}
	pat_sync();
	free(ref);
	return ret;
}

static int zero_cmp(const void *p, size_t n)
{
	const uint8_t *a = p;

	pat_sync();
	for (size_t i = 0; i < n; i++) {
		if (a[i]) {
			fprintf(stderr, "verbs_proc[%d]: octet %zu of %zu is %02x, not 0\n",
				(int)getpid(), i, n, a[i]);
			return -EILSEQ;
		}
	}
	return 0;
}

/* A piece of a buffer: offset from its start, length, and (peer side) which
 * of the peer's regions gives the lkey (0: the main one). */
struct seg {
	uint64_t off;
	uint32_t len;
	uint32_t mr;
};

static uint64_t seg_total(const struct seg *sg, int n)
{
	uint64_t t = 0;

	for (int i = 0; i < n; i++)
		t += sg[i].len;
	return t;
}

/* Scatter the pattern of @seed over the pieces, in order. */
static int sgl_fill(uint8_t *base, const struct seg *sg, int n, uint64_t seed)
{
	uint64_t total = seg_total(sg, n), at = 0;
	uint8_t *ref = malloc(total ? total : 1);

	if (!ref)
		return -ENOMEM;
	pat_fill(ref, total, seed);
	for (int i = 0; i < n; i++) {
		memcpy(base + sg[i].off, ref + at, sg[i].len);
		at += sg[i].len;
	}
	free(ref);
	return 0;
}

/* 0 if the first @total octets gathered from the pieces are the pattern. */
static int sgl_cmp(const uint8_t *base, const struct seg *sg, int n, uint64_t total, uint64_t seed)
{
	uint8_t *got = malloc(total ? total : 1);
	uint64_t at = 0;
	int ret;

	if (!got)
		return -ENOMEM;
	for (int i = 0; i < n && at < total; i++) {
		uint64_t take = sg[i].len < total - at ? sg[i].len : total - at;

		memcpy(got + at, base + sg[i].off, take);
		at += take;
	}
	ret = at == total ? pat_cmp(got, total, seed) : -ERANGE;
	free(got);
	return ret;
}

/* ---- child processes ------------------------------------------------------ */

struct tp_kid {
	pid_t pid;
	int to_fd;   /* parent: commands to the child; child: replies to the parent */
	int from_fd; /* parent: replies of the child; child: commands of the parent */
};

static struct tp_kid tp_kids[TP_MAX_KIDS];
static int tp_nkids;
static int tp_in_child;

/* Kill and reap every child of the test (assertion failures, teardown). */
static void tp_cleanup(void)
{
	if (tp_in_child)
		return;
	for (int i = 0; i < tp_nkids; i++) {
		struct tp_kid *k = &tp_kids[i];

		if (k->pid > 0) {
			kill(k->pid, SIGKILL);
			while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
				;
			k->pid = 0;
		}
		if (k->to_fd >= 0)
			close(k->to_fd);
		if (k->from_fd >= 0)
			close(k->from_fd);
		k->to_fd = k->from_fd = -1;
	}
	tp_nkids = 0;
}

static void tp_setup(void)
{
	signal(SIGPIPE, SIG_IGN); /* a dead child's pipe: EPIPE, not death */
	tp_nkids = 0;
	tp_in_child = 0;
}

static void tp_teardown(void)
{
	tp_cleanup();
}

__attribute__((format(printf, 2, 3))) static int kid_fail(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "verbs_proc child %d: ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

typedef int (*kid_fn)(struct tp_kid *self, const void *arg);

/* Fork a child running @fn(@arg); its return value is its exit status. */
static struct tp_kid *tp_spawn(kid_fn fn, const void *arg)
{
	pid_t parent = getpid(), pid;
	struct tp_kid *k;
	int p2c[2], c2p[2];

	ck_assert_int_lt(tp_nkids, TP_MAX_KIDS);
	ck_assert_int_eq(pipe2(p2c, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(c2p, O_CLOEXEC), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		struct tp_kid me = {getpid(), c2p[1], p2c[0]};

		for (int i = 0; i < tp_nkids; i++) {
			close(tp_kids[i].to_fd);
			close(tp_kids[i].from_fd);
		}
		tp_nkids = 0;
		tp_in_child = 1;
		close(p2c[1]);
		close(c2p[0]);
		signal(SIGALRM, SIG_DFL); /* not Check's handler: it kills the group */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(KX_DEATH);
		alarm(TP_KID_ALARM);
		_exit(fn(&me, arg));
	}
	if (pid < 0) {
		close(p2c[0]);
		close(p2c[1]);
		close(c2p[0]);
		close(c2p[1]);
		ck_abort_msg("fork: %s", strerror(errno));
	}
	close(p2c[0]);
	close(c2p[1]);
	k = &tp_kids[tp_nkids++];
	k->pid = pid;
	k->to_fd = p2c[1];
	k->from_fd = c2p[0];
	return k;
}

/* Wait up to @ms for child @k to end; returns its wait status, or -1. */
static int tp_reap(struct tp_kid *k, int ms)
{
	uint64_t end = ms_now() + (uint64_t)ms;
	int status;

	for (;;) {
		pid_t r = waitpid(k->pid, &status, WNOHANG);

		if (r == k->pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (ms_now() >= end)
			return -1;
		usleep(1000);
	}
	k->pid = 0;
	close(k->to_fd);
	close(k->from_fd);
	k->to_fd = k->from_fd = -1;
	return status;
}

static void tp_expect_exit(struct tp_kid *k, int code)
{
	pid_t pid = k->pid;
	int status = tp_reap(k, TP_WAIT_MS);

	ck_assert_msg(status != -1, "child %d did not end within %d ms", (int)pid, TP_WAIT_MS);
	ck_assert_msg(WIFEXITED(status), "child %d ended by signal %d", (int)pid,
		      WIFSIGNALED(status) ? WTERMSIG(status) : -1);
	ck_assert_msg(WEXITSTATUS(status) == code, "child %d exited with %d, expected %d (stderr)",
		      (int)pid, WEXITSTATUS(status), code);
}

struct tp_end;
static int fd_wait(int fd, int ms, struct tp_end *turn);

static int tp_write(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly @len octets within @ms; -ETIMEDOUT, -EPIPE (EOF), -errno. */
static int tp_read(int fd, void *buf, size_t len, int ms, struct tp_end *turn)
{
	uint64_t end = ms_now() + (uint64_t)ms;
	uint8_t *p = buf;

	while (len) {
		uint64_t now = ms_now();
		ssize_t n;
		int ret = fd_wait(fd, now < end ? (int)(end - now) : 0, turn);

		if (ret)
			return ret;
		n = read(fd, p, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- one end: context, PD, CQ(s), QP, registered buffer ------------------ */

struct tp_end_cfg {
	struct uiw_context_attr attr;
	size_t len; /* registered buffer */
	unsigned send_wr, recv_wr, inline_max;
	uint16_t ird, ord;
	int cqe;
	int channel; /* receive completions on their own CQ, with a channel */
};

struct tp_end {
	struct uiw_context *ctx;
	struct uiw_pd *pd;
	struct uiw_cq *cq;  /* send completions (and receive, without channel) */
	struct uiw_cq *rcq; /* receive completions */
	struct uiw_comp_channel *ch;
	struct uiw_qp *qp;
	struct uiw_cm_id *id;  /* the connection */
	struct uiw_cm_id *lid; /* a listener */
	uint8_t *buf;
	size_t len;
	struct uiw_mr *mr;
	struct uiw_mr *xmr[4]; /* more regions */
	int nxmr;
	int polled;
};

static void end_cfg_default(struct tp_end_cfg *c, size_t slot)
{
	memset(c, 0, sizeof(*c));
	c->len = 3 * slot;
	c->send_wr = 128;
	c->recv_wr = 64;
	c->inline_max = 256;
	c->cqe = 512;
}

static int end_open(struct tp_end *e, const struct tp_end_cfg *c)
{
	struct uiw_qp_init_attr qa = {0};
	int ret;

	memset(e, 0, sizeof(*e));
	e->polled = c->attr.mode == UIW_CTX_POLLED;
	e->len = c->len;
	ret = uiw_open_context(&e->ctx, &c->attr);
	if (!ret)
		ret = uiw_alloc_pd(e->ctx, &e->pd);
	if (!ret)
		ret = uiw_create_cq(e->ctx, c->cqe, NULL, NULL, &e->cq);
	if (!ret && c->channel) {
		ret = uiw_create_comp_channel(e->ctx, &e->ch);
		if (!ret)
			ret = uiw_create_cq(e->ctx, c->cqe, e, e->ch, &e->rcq);
	} else {
		e->rcq = e->cq;
	}
	qa.send_cq = e->cq;
	qa.recv_cq = e->rcq;
	qa.cap.max_send_wr = c->send_wr;
	qa.cap.max_recv_wr = c->recv_wr;
	qa.cap.max_send_sge = UIW_MAX_SGE;
	qa.cap.max_recv_sge = UIW_MAX_SGE;
	qa.cap.max_inline_data = c->inline_max;
	qa.ird = c->ird;
	qa.ord = c->ord;
	if (!ret)
		ret = uiw_create_qp(e->pd, &qa, &e->qp);
	if (!ret) {
		e->buf = calloc(1, c->len);
		if (!e->buf)
			ret = -ENOMEM;
	}
	if (!ret)
		ret = uiw_reg_mr(e->pd, e->buf, c->len, ACC_ALL, &e->mr);
	for (int i = 0; !ret && i < TP_MAX_ENDS; i++)
		if (!tp_end_qps[i]) {
			tp_end_qps[i] = e->qp;
			break;
		}
	return ret;
}

/* Destroy everything (connections abortively); the first error, or 0. */
static int end_close(struct tp_end *e)
{
	int ret = 0, r;

#define KEEP(x)                  \
	do {                     \
		r = (x);         \
		if (r && !ret)   \
			ret = r; \
	} while (0)
	if (e->id)
		KEEP(uiw_destroy_id(e->id));
	if (e->lid)
		KEEP(uiw_destroy_id(e->lid));
	for (int i = 0; i < TP_MAX_ENDS; i++)
		if (e->qp && tp_end_qps[i] == e->qp)
			tp_end_qps[i] = NULL;
	if (e->qp)
		KEEP(uiw_destroy_qp(e->qp));
	for (int i = 0; i < e->nxmr; i++)
		KEEP(uiw_dereg_mr(e->xmr[i]));
	if (e->mr)
		KEEP(uiw_dereg_mr(e->mr));
	if (e->rcq && e->rcq != e->cq)
		KEEP(uiw_destroy_cq(e->rcq));
	if (e->cq)
		KEEP(uiw_destroy_cq(e->cq));
	if (e->ch)
		KEEP(uiw_destroy_comp_channel(e->ch));
	if (e->pd)
		KEEP(uiw_dealloc_pd(e->pd));
	if (e->ctx)
		KEEP(uiw_close_context(e->ctx));
#undef KEEP
	free(e->buf);
	memset(e, 0, sizeof(*e));
	return ret;
}

/* Wait up to @ms for @fd to be readable, turning @turn's engine meanwhile
 * if it is in polled mode (a polled end makes no progress otherwise). */
static int fd_wait(int fd, int ms, struct tp_end *turn)
{
	uint64_t end = ms_now() + (uint64_t)ms;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int spin = turn && turn->polled;

	for (;;) {
		uint64_t now = ms_now();
		int left = now < end ? (int)(end - now) : 0;
		int r = poll(&pfd, 1, spin && left > 1 ? 1 : left);

		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (spin) {
			struct uiw_wc wc;

			uiw_poll_cq(turn->cq, 0, &wc);
		}
		if (ms_now() >= end)
			return -ETIMEDOUT;
	}
}

static int poll1(int fd, int ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r;

	while ((r = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
		;
	return r;
}

static int wait_wc(struct uiw_cq *cq, int ms, struct uiw_wc *wc)
{
	uint64_t end = ms_now() + (uint64_t)ms;

	for (;;) {
		int n = uiw_poll_cq(cq, 1, wc);

		if (n)
			return n == 1 ? 0 : n;
		if (ms_now() >= end)
			return -ETIMEDOUT;
		usleep(50);
	}
}

static int post_wr(struct tp_end *e, uint64_t wr_id, enum uiw_wr_opcode op, unsigned flags,
		   struct uiw_sge *sg, int nsge, uint64_t raddr, uint32_t rkey, uint32_t inv)
{
	struct uiw_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sg,
		.num_sge = nsge,
		.opcode = op,
		.send_flags = flags,
		.invalidate_rkey = inv,
	};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return uiw_post_send(e->qp, &wr, NULL);
}

static int post_rx(struct tp_end *e, uint64_t wr_id, struct uiw_sge *sg, int nsge)
{
	struct uiw_recv_wr wr = {.wr_id = wr_id, .sg_list = sg, .num_sge = nsge};

	return uiw_post_recv(e->qp, &wr, NULL);
}

/* ---- the remote-controlled peer ------------------------------------------ */

struct peer_cfg {
	struct tp_end_cfg end;
	int reject;	 /* refuse the CONNECT_REQUEST (with private data) */
	uint16_t pd_len; /* private data of the accept or reject: pattern of pd_seed */
	uint64_t pd_seed;
	uint16_t acc_ird; /* conn param of the accept */
	uint16_t acc_ord;
};

struct peer_hello {
	uint64_t addr; /* the buffer: tagged offsets of the main region */
	uint64_t len;
	uint32_t rkey;
	uint16_t port;
};

/* What the CONNECT_REQUEST brought and how the answer went. */
struct peer_conn {
	int32_t ret;
	uint16_t pd_len, ird, ord;
	uint8_t pd[512];
};

enum peer_op {
	PO_EXIT = 1,
	PO_FILL,       /* a0 off, a1 len, a2 seed: write the pattern */
	PO_CHECK,      /* a0 off, a1 len, a2 seed: compare; -EILSEQ */
	PO_ZERO,       /* a0 off, a1 len */
	PO_CHECK_ZERO, /* a0 off, a1 len */
	PO_FILL_SGL,   /* seg[], a2 seed */
	PO_CHECK_SGL,  /* seg[], a1 total, a2 seed */
	PO_REG_MR,     /* a0 off, a1 len, a2 access: ret index, rkey */
	PO_POST_RECV,  /* wr_id, seg[] */
	PO_POST_SEND,  /* wr_id, opcode, flags, seg[], raddr, rkey, inv */
	PO_POLL,       /* a0 ms: one completion */
	PO_CM_EVENT,   /* a0 ms: one CM event */
	PO_DISCONNECT,
	PO_FREEZE /* a0: 1 stop turning the engine (polled mode), 0 resume */
};

struct peer_req {
	uint32_t op;
	int32_t nseg;
	uint64_t wr_id;
	uint32_t opcode;
	uint32_t flags;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t inv;
	uint64_t a[3];
	struct seg seg[UIW_MAX_SGE + 1];
};

struct peer_rep {
	int32_t ret;
	uint32_t rkey;
	struct uiw_wc wc;
	int32_t ev;
	int32_t ev_status;
};

struct peer_state {
	struct tp_end e;
	struct uiw_mr *mrs[5]; /* 0: the main region */
	int frozen;
	int fails;
};

static int peer_range(const struct peer_state *ps, uint64_t off, uint64_t len)
{
	return off <= ps->e.len && len <= ps->e.len - off ? 0 : -ERANGE;
}

static int peer_sgl(struct peer_state *ps, const struct peer_req *rq, struct uiw_sge *sg)
{
	if (rq->nseg < 0 || rq->nseg > UIW_MAX_SGE + 1)
		return -EINVAL;
	for (int i = 0; i < rq->nseg; i++) {
		const struct seg *s = &rq->seg[i];

		if (peer_range(ps, s->off, s->len) || s->mr >= 5 || !ps->mrs[s->mr])
			return -ERANGE;
		sg[i].addr = (uintptr_t)(ps->e.buf + s->off);
		sg[i].length = s->len;
		sg[i].lkey = ps->mrs[s->mr]->lkey;
	}
	return 0;
}

static void peer_do(struct peer_state *ps, const struct peer_req *rq, struct peer_rep *rp)
{
	struct uiw_sge sg[UIW_MAX_SGE + 1];
	struct uiw_cm_event ev;
	uint8_t *p;
	int ret = 0;

	switch (rq->op) {
	case PO_FILL:
	case PO_CHECK:
	case PO_ZERO:
	case PO_CHECK_ZERO:
		ret = peer_range(ps, rq->a[0], rq->a[1]);
		if (ret)
			break;
		p = ps->e.buf + rq->a[0];
		if (rq->op == PO_FILL)
			pat_fill(p, rq->a[1], rq->a[2]);
		else if (rq->op == PO_ZERO)
			pat_zero(p, rq->a[1]);
		else if (rq->op == PO_CHECK)
			ret = pat_cmp(p, rq->a[1], rq->a[2]);
		else
			ret = zero_cmp(p, rq->a[1]);
		break;
	case PO_FILL_SGL:
	case PO_CHECK_SGL:
		ret = peer_sgl(ps, rq, sg);
		if (ret)
			break;
		if (rq->op == PO_FILL_SGL)
			ret = sgl_fill(ps->e.buf, rq->seg, rq->nseg, rq->a[2]);
		else
			ret = sgl_cmp(ps->e.buf, rq->seg, rq->nseg, rq->a[1], rq->a[2]);
		break;
	case PO_REG_MR:
		ret = peer_range(ps, rq->a[0], rq->a[1]);
		if (ret)
			break;
		if (ps->e.nxmr == 4) {
			ret = -ENOSPC;
			break;
		}
		p = ps->e.buf + rq->a[0];
		ret = uiw_reg_mr(ps->e.pd, p, rq->a[1], (int)rq->a[2], &ps->e.xmr[ps->e.nxmr]);
		if (ret)
			break;
		ps->mrs[ps->e.nxmr + 1] = ps->e.xmr[ps->e.nxmr];
		rp->rkey = ps->e.xmr[ps->e.nxmr]->rkey;
		ret = ++ps->e.nxmr;
		break;
	case PO_POST_RECV:
		ret = peer_sgl(ps, rq, sg);
		if (!ret)
			ret = post_rx(&ps->e, rq->wr_id, sg, rq->nseg);
		break;
	case PO_POST_SEND:
		ret = peer_sgl(ps, rq, sg);
		if (!ret)
			ret = post_wr(&ps->e, rq->wr_id, (enum uiw_wr_opcode)rq->opcode, rq->flags,
				      sg, rq->nseg, rq->raddr, rq->rkey, rq->inv);
		break;
	case PO_POLL:
		ret = wait_wc(ps->e.cq, (int)rq->a[0], &rp->wc);
		break;
	case PO_CM_EVENT:
		ret = uiw_get_cm_event(ps->e.ctx, &ev, (int)rq->a[0]);
		if (!ret) {
			rp->ev = ev.event;
			rp->ev_status = ev.status;
		}
		break;
	case PO_DISCONNECT:
		ret = ps->e.id ? uiw_disconnect(ps->e.id) : -ENOTCONN;
		break;
	case PO_FREEZE:
		ps->frozen = (int)rq->a[0];
		break;
	default:
		ret = -ENOSYS;
	}
	if (ret == -EILSEQ || ret == -ERANGE)
		ps->fails++;
	rp->ret = ret;
}

/*
 * A peer: listen, say where (hello), accept or reject one connection and
 * report it, then serve commands until PO_EXIT.  Exit status 0 when every
 * memory check passed and every object was destroyed cleanly.
 */
static int peer_main(struct tp_kid *self, const void *arg)
{
	const struct peer_cfg *cfg = arg;
	struct peer_state ps;
	struct peer_hello h = {0};
	struct peer_conn conn;
	struct uiw_cm_event ev;
	uint8_t pd[512];
	int ret;

	memset(&ps, 0, sizeof(ps));
	ret = end_open(&ps.e, &cfg->end);
	if (!ret)
		ret = uiw_create_id(ps.e.ctx, NULL, &ps.e.lid);
	if (!ret)
		ret = uiw_listen(ps.e.lid, "127.0.0.1", 0, 8);
	if (ret)
		return kid_fail(KX_SETUP, "set-up: %d", ret);
	ps.mrs[0] = ps.e.mr;
	h.addr = (uintptr_t)ps.e.buf;
	h.len = ps.e.len;
	h.rkey = ps.e.mr->rkey;
	h.port = uiw_get_port(ps.e.lid);
	if (tp_write(self->to_fd, &h, sizeof(h)))
		return kid_fail(KX_PIPE, "hello");

	memset(&conn, 0, sizeof(conn));
	pat_fill(pd, cfg->pd_len, cfg->pd_seed);
	ret = uiw_get_cm_event(ps.e.ctx, &ev, TP_WAIT_MS);
	if (!ret && ev.event != UIW_CM_EVENT_CONNECT_REQUEST)
		ret = -EPROTO;
	if (!ret) {
		struct uiw_conn_param cp = {pd, cfg->pd_len, cfg->acc_ird, cfg->acc_ord};

		conn.pd_len = ev.private_data_len;
		memcpy(conn.pd, ev.private_data, sizeof(conn.pd));
		conn.ird = ev.responder_resources;
		conn.ord = ev.initiator_depth;
		ps.e.id = ev.id;
		if (ev.listen_id != ps.e.lid)
			ret = -EPROTO;
		else if (cfg->reject)
			ret = uiw_reject(ev.id, pd, cfg->pd_len);
		else
			ret = uiw_accept(ev.id, ps.e.qp, &cp);
		if (!ret && !cfg->reject) {
			ret = uiw_get_cm_event(ps.e.ctx, &ev, TP_WAIT_MS);
			if (!ret && (ev.event != UIW_CM_EVENT_ESTABLISHED || ev.id != ps.e.id))
				ret = -EPROTO;
		}
	}
	conn.ret = ret;
	if (ret)
		kid_fail(0, "connection: %d", ret);
	if (tp_write(self->to_fd, &conn, sizeof(conn)))
		return kid_fail(KX_PIPE, "conn report");

	for (;;) {
		struct peer_req rq;
		struct peer_rep rp;

		ret = tp_read(self->from_fd, &rq, sizeof(rq), TP_IDLE_MS, ps.frozen ? NULL : &ps.e);
		if (ret)
			return kid_fail(KX_PIPE, "waiting for a command: %d", ret);
		if (rq.op == PO_EXIT)
			break;
		memset(&rp, 0, sizeof(rp));
		peer_do(&ps, &rq, &rp);
		if (tp_write(self->to_fd, &rp, sizeof(rp)))
			return kid_fail(KX_PIPE, "reply");
	}
	ret = end_close(&ps.e);
	if (ret)
		return kid_fail(KX_CLEANUP, "clean-up: %d", ret);
	if (ps.fails)
		return kid_fail(KX_CHECK, "%d checks failed", ps.fails);
	return KX_OK;
}

/* The parent's handle on a peer. */
struct tp_peer {
	struct tp_kid *kid;
	struct peer_hello h;
	struct peer_conn conn;
	struct tp_end *turn; /* the parent's end, turned while waiting if polled */
};

static void peer_start(struct tp_peer *p, const struct peer_cfg *cfg)
{
	int ret;

	memset(p, 0, sizeof(*p));
	p->kid = tp_spawn(peer_main, cfg);
	ret = tp_read(p->kid->from_fd, &p->h, sizeof(p->h), TP_WAIT_MS, NULL);
	ck_assert_msg(ret == 0, "no hello from the peer (%d)", ret);
	ck_assert_uint_ne(p->h.port, 0);
}

static void peer_cfg_default(struct peer_cfg *c, size_t slot)
{
	memset(c, 0, sizeof(*c));
	end_cfg_default(&c->end, slot);
	c->pd_len = 24;
	c->pd_seed = seed_of(0x5e);
}

static int pcall(struct tp_peer *p, struct peer_req *rq, struct peer_rep *rp)
{
	int extra = rq->op == PO_POLL || rq->op == PO_CM_EVENT ? (int)rq->a[0] : 0;
	int ret = tp_write(p->kid->to_fd, rq, sizeof(*rq));

	ck_assert_msg(ret == 0, "peer command %u: %d", rq->op, ret);
	ret = tp_read(p->kid->from_fd, rp, sizeof(*rp), TP_WAIT_MS + extra, p->turn);
	ck_assert_msg(ret == 0, "peer command %u: no reply (%d)", rq->op, ret);
	return rp->ret;
}

static int pc_mem(struct tp_peer *p, enum peer_op op, uint64_t off, uint64_t len, uint64_t seed)
{
	struct peer_req rq = {.op = op, .a = {off, len, seed}};
	struct peer_rep rp;

	return pcall(p, &rq, &rp);
}

#define p_fill(p, off, len, seed) ck_assert_int_eq(pc_mem(p, PO_FILL, off, len, seed), 0)
#define p_zero(p, off, len)	  ck_assert_int_eq(pc_mem(p, PO_ZERO, off, len, 0), 0)
#define p_check(p, off, len, seed)                                                 \
	ck_assert_msg(pc_mem(p, PO_CHECK, off, len, seed) == 0,                    \
		      "peer memory [%llu, +%llu) is not the pattern (see stderr)", \
		      (unsigned long long)(off), (unsigned long long)(len))
#define p_check_zero(p, off, len)                                           \
	ck_assert_msg(pc_mem(p, PO_CHECK_ZERO, off, len, 0) == 0,           \
		      "peer memory [%llu, +%llu) is not zero (see stderr)", \
		      (unsigned long long)(off), (unsigned long long)(len))

static int pc_sgl(struct tp_peer *p, enum peer_op op, const struct seg *sg, int n, uint64_t total,
		  uint64_t seed)
{
	struct peer_req rq = {.op = op, .nseg = n, .a = {0, total, seed}};
	struct peer_rep rp;

	memcpy(rq.seg, sg, sizeof(*sg) * (size_t)n);
	return pcall(p, &rq, &rp);
}

static uint32_t p_reg_mr(struct tp_peer *p, uint64_t off, uint64_t len, int access, int *idx)
{
	struct peer_req rq = {.op = PO_REG_MR, .a = {off, len, (uint64_t)access}};
	struct peer_rep rp;
	int ret = pcall(p, &rq, &rp);

	ck_assert_msg(ret > 0, "peer reg_mr: %d", ret);
	*idx = ret;
	return rp.rkey;
}

static void p_post_recv(struct tp_peer *p, uint64_t wr_id, const struct seg *sg, int n)
{
	struct peer_req rq = {.op = PO_POST_RECV, .nseg = n, .wr_id = wr_id};
	struct peer_rep rp;
	int ret;

	memcpy(rq.seg, sg, sizeof(*sg) * (size_t)n);
	ret = pcall(p, &rq, &rp);
	ck_assert_msg(ret == 0, "peer post_recv %llu: %d", (unsigned long long)wr_id, ret);
}

static void p_recv1(struct tp_peer *p, uint64_t wr_id, uint64_t off, uint32_t len)
{
	struct seg s = {off, len, 0};

	p_post_recv(p, wr_id, &s, 1);
}

static int p_post_send(struct tp_peer *p, uint64_t wr_id, enum uiw_wr_opcode op, unsigned flags,
		       const struct seg *sg, int n, uint64_t raddr, uint32_t rkey, uint32_t inv)
{
	struct peer_req rq = {.op = PO_POST_SEND,
			      .nseg = n,
			      .wr_id = wr_id,
			      .opcode = op,
			      .flags = flags,
			      .raddr = raddr,
			      .rkey = rkey,
			      .inv = inv};
	struct peer_rep rp;

	if (n)
		memcpy(rq.seg, sg, sizeof(*sg) * (size_t)n);
	return pcall(p, &rq, &rp);
}

/* The peer posts one WR with one piece of its main region (none if @len is
 * 0 and it is not a Read: zero-length messages without an SGE). */
static void p_post1(struct tp_peer *p, uint64_t wr_id, enum uiw_wr_opcode op, unsigned flags,
		    uint64_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct seg s = {off, len, 0};
	int n = len || op == UIW_WR_RDMA_READ ? 1 : 0;
	int ret = p_post_send(p, wr_id, op, flags, &s, n, raddr, rkey, 0);

	ck_assert_msg(ret == 0, "peer post_send %llu (opcode %d): %d", (unsigned long long)wr_id,
		      op, ret);
}

static int p_poll(struct tp_peer *p, int ms, struct uiw_wc *wc)
{
	struct peer_req rq = {.op = PO_POLL, .a = {(uint64_t)ms}};
	struct peer_rep rp;
	int ret = pcall(p, &rq, &rp);

	*wc = rp.wc;
	return ret;
}

static void check_wc(const struct uiw_wc *wc, const char *who, uint64_t wr_id,
		     enum uiw_wc_opcode op, enum uiw_wc_status st)
{
	ck_assert_msg(
		wc->wr_id == wr_id && wc->status == st &&
			(st != UIW_WC_SUCCESS || wc->opcode == op),
		"%s completion: wr %llu status %d opcode %d; expected wr %llu status %d opcode %d",
		who, (unsigned long long)wc->wr_id, wc->status, wc->opcode,
		(unsigned long long)wr_id, st, op);
}

static void p_want_wc(struct tp_peer *p, uint64_t wr_id, enum uiw_wc_opcode op,
		      enum uiw_wc_status st, struct uiw_wc *out)
{
	struct uiw_wc wc;
	int ret = p_poll(p, TP_WAIT_MS, &wc);

	ck_assert_msg(ret == 0, "peer: no completion for wr %llu (%d)", (unsigned long long)wr_id,
		      ret);
	check_wc(&wc, "peer", wr_id, op, st);
	if (out)
		*out = wc;
}

static void p_want_event(struct tp_peer *p, enum uiw_cm_event_type type)
{
	struct peer_req rq = {.op = PO_CM_EVENT, .a = {TP_WAIT_MS}};
	struct peer_rep rp;
	int ret = pcall(p, &rq, &rp);

	ck_assert_msg(ret == 0, "peer: no CM event (%d), wanted %s", ret, uiw_event_str(type));
	ck_assert_msg(rp.ev == (int)type, "peer: event %s (status %d), wanted %s",
		      uiw_event_str((enum uiw_cm_event_type)rp.ev), rp.ev_status,
		      uiw_event_str(type));
}

static void p_simple(struct tp_peer *p, enum peer_op op, uint64_t a0)
{
	struct peer_req rq = {.op = op, .a = {a0}};
	struct peer_rep rp;
	int ret = pcall(p, &rq, &rp);

	ck_assert_msg(ret == 0, "peer command %d: %d", op, ret);
}

/* End the peer (PO_EXIT) and expect a clean exit. */
static void peer_stop(struct tp_peer *p)
{
	struct peer_req rq = {.op = PO_EXIT};

	ck_assert_int_eq(tp_write(p->kid->to_fd, &rq, sizeof(rq)), 0);
	tp_expect_exit(p->kid, KX_OK);
}

static void peer_read_conn(struct tp_peer *p)
{
	int ret = tp_read(p->kid->from_fd, &p->conn, sizeof(p->conn), TP_WAIT_MS, p->turn);

	ck_assert_msg(ret == 0, "no connection report from the peer (%d)", ret);
}

/* ---- the parent's side ---------------------------------------------------- */

static void open_end(struct tp_end *e, const struct tp_end_cfg *c)
{
	int ret = end_open(e, c);

	ck_assert_msg(ret == 0, "opening an end: %d", ret);
}

static void close_end(struct tp_end *e)
{
	int ret = end_close(e);

	ck_assert_msg(ret == 0, "closing an end: %d", ret);
}

static void want_event(struct uiw_context *ctx, enum uiw_cm_event_type type,
		       struct uiw_cm_event *ev)
{
	int ret = uiw_get_cm_event(ctx, ev, TP_WAIT_MS);

	ck_assert_msg(ret == 0, "no CM event (%d), wanted %s", ret, uiw_event_str(type));
	ck_assert_msg(ev->event == type, "event %s (status %d), wanted %s",
		      uiw_event_str(ev->event), ev->status, uiw_event_str(type));
}

static void expect_wc(struct uiw_cq *cq, uint64_t wr_id, enum uiw_wc_opcode op,
		      enum uiw_wc_status st, struct uiw_wc *out)
{
	struct uiw_wc wc;
	int ret = wait_wc(cq, TP_WAIT_MS, &wc);

	ck_assert_msg(ret == 0, "no completion for wr %llu within %d ms (%d)",
		      (unsigned long long)wr_id, TP_WAIT_MS, ret);
	check_wc(&wc, "local", wr_id, op, st);
	if (out)
		*out = wc;
}

static void no_wc(struct uiw_cq *cq)
{
	struct uiw_wc wc = {0};
	int n = uiw_poll_cq(cq, 1, &wc);

	ck_assert_msg(n == 0, "unexpected completion: wr %llu status %d (%d)",
		      (unsigned long long)wc.wr_id, wc.status, n);
}

/* Post one WR with one piece of the main region (none for a zero-length
 * Write or Send). */
static void post1(struct tp_end *e, uint64_t wr_id, enum uiw_wr_opcode op, unsigned flags,
		  void *addr, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct uiw_sge sg = {(uintptr_t)addr, len, e->mr->lkey};
	int n = len || op == UIW_WR_RDMA_READ ? 1 : 0;
	int ret = post_wr(e, wr_id, op, flags, &sg, n, raddr, rkey, 0);

	ck_assert_msg(ret == 0, "post_send %llu (opcode %d): %d", (unsigned long long)wr_id, op,
		      ret);
}

static void recv1(struct tp_end *e, uint64_t wr_id, void *addr, uint32_t len)
{
	struct uiw_sge sg = {(uintptr_t)addr, len, e->mr->lkey};

	ck_assert_int_eq(post_rx(e, wr_id, &sg, 1), 0);
}

/* A zero-length Read of the peer: its response follows everything the
 * peer received before, so earlier Writes are placed when it completes. */
static void sync_read(struct tp_end *e, struct tp_peer *p)
{
	post1(e, SYNC_ID, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e->buf, 0, p->h.addr, p->h.rkey);
	expect_wc(e->cq, SYNC_ID, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
}

/* The same, from the peer to us. */
static void p_sync_read(struct tp_peer *p, struct tp_end *e)
{
	p_post1(p, SYNC_ID, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, 0, 0, (uintptr_t)e->buf,
		e->mr->rkey);
	p_want_wc(p, SYNC_ID, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
}

#define CPD_LEN 40 /* the private data tp_connect() sends */

/*
 * Connect @e to peer @p (with @cp, or a seeded 40-octet private data) and
 * check what both sides received.  @est gets the ESTABLISHED event.
 *
 * RFC 5044 §7.1.2 rule 4: the MPA responder sends no FPDU before it has
 * received one, so (as every iWARP ULP without RFC 6581 RTRs) the
 * initiator speaks first: a zero-length Read, completed before returning.
 */
static void tp_connect(struct tp_end *e, struct tp_peer *p, const struct peer_cfg *pc,
		       const struct uiw_conn_param *cp, struct uiw_cm_event *est)
{
	uint8_t pd[CPD_LEN];
	struct uiw_conn_param def = {pd, sizeof(pd), 0, 0};
	struct uiw_cm_event ev;
	uint64_t pd_seed = seed_of(0xc0);

	pat_fill(pd, sizeof(pd), pd_seed);
	p->turn = e;
	ck_assert_int_eq(uiw_create_id(e->ctx, e, &e->id), 0);
	ck_assert_int_eq(uiw_connect(e->id, "127.0.0.1", p->h.port, e->qp, cp ? cp : &def), 0);
	want_event(e->ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.id, e->id);
	ck_assert_ptr_eq(uiw_id_context(ev.id), e);
	/* the accept's private data, intact */
	ck_assert_uint_eq(ev.private_data_len, pc->pd_len);
	ck_assert_int_eq(pat_cmp(ev.private_data, pc->pd_len, pc->pd_seed), 0);
	peer_read_conn(p);
	ck_assert_msg(p->conn.ret == 0, "peer: accepting failed (%d)", p->conn.ret);
	if (!cp) {
		ck_assert_uint_eq(p->conn.pd_len, CPD_LEN);
		ck_assert_int_eq(pat_cmp(p->conn.pd, CPD_LEN, pd_seed), 0);
	}
	if (est)
		*est = ev;
	sync_read(e, p);
}

static void tp_disconnect(struct tp_end *e, struct tp_peer *p)
{
	struct uiw_cm_event ev;

	ck_assert_int_eq(uiw_disconnect(e->id), 0);
	want_event(e->ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	ck_assert_ptr_eq(ev.id, e->id);
	p_want_event(p, UIW_CM_EVENT_DISCONNECTED);
}

/*
 * Write, Read and Send of @n octets each way between @e and @p, with
 * verification: the data (pattern and memcmp), the octets after it (still
 * zero), the completions.  Both buffers are three slots of @slot octets:
 * 0 data to send, 1 data received by Write or Read, 2 receive buffers.
 */
static void exchange(struct tp_end *e, struct tp_peer *p, uint32_t n, size_t slot, uint64_t seed)
{
	uint8_t *out = e->buf + XO, *in = e->buf + slot + XO, *rx = e->buf + 2 * slot + XO;
	uint64_t c_out = XO, c_in = slot + XO, c_rx = 2 * slot + XO;
	struct uiw_wc wc;

	ck_assert_uint_le((uint64_t)n + XO + GUARD, slot);
	ck_assert_uint_eq(p->h.len, 3 * slot);

	/* RDMA Write to the peer */
	pat_fill(out, n, seed + 1);
	p_zero(p, c_in, n + GUARD);
	post1(e, 1, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, out, n, p->h.addr + c_in, p->h.rkey);
	expect_wc(e->cq, 1, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
	sync_read(e, p);
	p_check(p, c_in, n, seed + 1);
	p_check_zero(p, c_in + n, GUARD);

	/* RDMA Read of the peer */
	p_fill(p, c_out, n, seed + 2);
	memset(in, 0, n + GUARD);
	post1(e, 2, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, in, n, p->h.addr + c_out, p->h.rkey);
	expect_wc(e->cq, 2, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
	ck_assert_int_eq(pat_cmp(in, n, seed + 2), 0);
	ck_assert_int_eq(zero_cmp(in + n, GUARD), 0);

	/* Send to the peer */
	pat_fill(out, n, seed + 3);
	p_zero(p, c_rx, n + GUARD);
	p_recv1(p, 50, c_rx, n + GUARD);
	post1(e, 3, UIW_WR_SEND, UIW_SEND_SIGNALED, out, n, 0, 0);
	expect_wc(e->cq, 3, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	p_want_wc(p, 50, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, n);
	ck_assert_uint_eq(wc.wc_flags & (UIW_WC_WITH_INV | UIW_WC_SOLICITED), 0);
	p_check(p, c_rx, n, seed + 3);
	p_check_zero(p, c_rx + n, GUARD);

	/* RDMA Write from the peer */
	p_fill(p, c_out, n, seed + 4);
	pat_zero(in, n + GUARD);
	p_post1(p, 60, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, c_out, n, (uintptr_t)in, e->mr->rkey);
	p_want_wc(p, 60, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
	p_sync_read(p, e);
	ck_assert_int_eq(pat_cmp(in, n, seed + 4), 0);
	ck_assert_int_eq(zero_cmp(in + n, GUARD), 0);

	/* RDMA Read by the peer */
	pat_fill(out, n, seed + 5);
	p_zero(p, c_in, n + GUARD);
	p_post1(p, 61, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, c_in, n, (uintptr_t)out, e->mr->rkey);
	p_want_wc(p, 61, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
	p_check(p, c_in, n, seed + 5);
	p_check_zero(p, c_in + n, GUARD);

	/* Send from the peer */
	memset(rx, 0, n + GUARD);
	recv1(e, 70, rx, n + GUARD);
	p_fill(p, c_out, n, seed + 6);
	p_post1(p, 62, UIW_WR_SEND, UIW_SEND_SIGNALED, c_out, n, 0, 0);
	p_want_wc(p, 62, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	expect_wc(e->rcq, 70, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, n);
	ck_assert_int_eq(pat_cmp(rx, n, seed + 6), 0);
	ck_assert_int_eq(zero_cmp(rx + n, GUARD), 0);

	no_wc(e->cq);
	ck_assert_int_eq(p_poll(p, 0, &wc), -ETIMEDOUT);
}

/* ---- 1: data of every size and opcode ------------------------------------- */

static const uint32_t data_sizes[] = {0, 1, 65535, 65537, TP_BIG};

/* Write, Read and Send both ways, payloads of 0, 1, 64 KiB-1, 64 KiB+1 and
 * 16 MiB octets, verified where they land. */
START_TEST(test_proc_data)
{
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;

	peer_cfg_default(&pc, DSLOT);
	peer_start(&p, &pc);
	end_cfg_default(&ec, DSLOT);
	open_end(&e, &ec);
	tp_connect(&e, &p, &pc, NULL, NULL);
	exchange(&e, &p, data_sizes[_i], DSLOT, seed_of(0x100 + (unsigned)_i));
	tp_disconnect(&e, &p);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

/*
 * Inline sends, solicited events, signaled and unsignaled WRs, the fence,
 * and SGE lists of up to 6 entries on both sides.
 */
START_TEST(test_proc_opcodes)
{
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_wc wc;
	uint64_t seed = seed_of(0x200);
	uint8_t *out, *in, *rx;
	const size_t slot = OSLOT;

	peer_cfg_default(&pc, slot);
	peer_start(&p, &pc);
	end_cfg_default(&ec, slot);
	open_end(&e, &ec);
	out = e.buf;
	in = e.buf + slot;
	rx = e.buf + 2 * slot;
	tp_connect(&e, &p, &pc, NULL, NULL);

	/* Inline: the data is taken at posting time, from unregistered memory */
	{
		uint8_t tmp[300];
		struct uiw_sge sg[2] = {{(uintptr_t)tmp, 120, 0}, {(uintptr_t)(tmp + 150), 80, 0}};
		const struct seg tseg[2] = {{0, 120, 0}, {150, 80, 0}};
		struct uiw_sge big = {(uintptr_t)tmp, 257, 0};

		ck_assert_int_eq(sgl_fill(tmp, tseg, 2, seed + 1), 0);
		p_zero(&p, 2 * slot, 4096);
		p_recv1(&p, 40, 2 * slot, 4096);
		ck_assert_int_eq(post_wr(&e, 1, UIW_WR_SEND, UIW_SEND_SIGNALED | UIW_SEND_INLINE,
					 sg, 2, 0, 0, 0),
				 0);
		memset(tmp, 0xa5, sizeof(tmp));
		expect_wc(e.cq, 1, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
		p_want_wc(&p, 40, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
		ck_assert_uint_eq(wc.byte_len, 200);
		p_check(&p, 2 * slot, 200, seed + 1);
		p_check_zero(&p, 2 * slot + 200, GUARD);

		/* an inline Write of max_inline_data octets */
		pat_fill(tmp, 256, seed + 2);
		sg[0].length = 256;
		p_zero(&p, slot, 4096);
		ck_assert_int_eq(post_wr(&e, 2, UIW_WR_RDMA_WRITE,
					 UIW_SEND_SIGNALED | UIW_SEND_INLINE, sg, 1,
					 p.h.addr + slot, p.h.rkey, 0),
				 0);
		memset(tmp, 0x5a, sizeof(tmp));
		expect_wc(e.cq, 2, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
		sync_read(&e, &p);
		p_check(&p, slot, 256, seed + 2);
		p_check_zero(&p, slot + 256, GUARD);
		/* one octet more than max_inline_data */
		ck_assert_int_eq(post_wr(&e, 3, UIW_WR_SEND, UIW_SEND_SIGNALED | UIW_SEND_INLINE,
					 &big, 1, 0, 0, 0),
				 -EINVAL);
	}

	/* Solicited Event: flagged at the receiver, only on the Send that asked */
	p_recv1(&p, 41, 0, 4096);
	p_recv1(&p, 42, 4096, 4096);
	pat_fill(out, 64, seed + 3);
	post1(&e, 4, UIW_WR_SEND, UIW_SEND_SIGNALED | UIW_SEND_SOLICITED, out, 64, 0, 0);
	post1(&e, 5, UIW_WR_SEND, UIW_SEND_SIGNALED, out, 32, 0, 0);
	expect_wc(e.cq, 4, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	expect_wc(e.cq, 5, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	p_want_wc(&p, 41, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 64);
	ck_assert_uint_eq(wc.wc_flags & (UIW_WC_SOLICITED | UIW_WC_WITH_INV), UIW_WC_SOLICITED);
	p_check(&p, 0, 64, seed + 3);
	p_want_wc(&p, 42, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 32);
	ck_assert_uint_eq(wc.wc_flags & (UIW_WC_SOLICITED | UIW_WC_WITH_INV), 0);
	p_check(&p, 4096, 32, seed + 3);

	/*
	 * Signaled and unsignaled: three rounds of 60 unsignaled Writes and a
	 * signaled one, more than the send queue (128) holds: unsignaled WRs
	 * free their slots and produce no completion.
	 */
	for (int r = 0; r < 3; r++) {
		uint64_t s = seed + 10 + (uint64_t)r;

		pat_fill(out, 61 * 4096, s);
		for (int k = 0; k < 61; k++)
			post1(&e, 100 + (uint64_t)k, UIW_WR_RDMA_WRITE,
			      k == 60 ? UIW_SEND_SIGNALED : 0, out + (size_t)k * 4096, 4096,
			      p.h.addr + slot + (uint64_t)k * 4096, p.h.rkey);
		expect_wc(e.cq, 160, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
		sync_read(&e, &p);
		no_wc(e.cq);
		p_check(&p, slot, 61 * 4096, s);
	}

	/*
	 * Fence: a Read into @in, then a fenced Send of @in.  The Send may start
	 * only once the Read's data is there: the peer must receive it.
	 */
	p_fill(&p, 0, MIB, seed + 20);
	memset(in, 0, MIB);
	p_zero(&p, 2 * slot, MIB);
	p_recv1(&p, 43, 2 * slot, MIB);
	post1(&e, 6, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, in, MIB, p.h.addr, p.h.rkey);
	post1(&e, 7, UIW_WR_SEND, UIW_SEND_SIGNALED | UIW_SEND_FENCE, in, MIB, 0, 0);
	expect_wc(e.cq, 6, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
	expect_wc(e.cq, 7, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	ck_assert_int_eq(pat_cmp(in, MIB, seed + 20), 0);
	p_want_wc(&p, 43, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, MIB);
	p_check(&p, 2 * slot, MIB, seed + 20); /* not the zeros @in held before the Read */

	/* SGE lists: 6 pieces gathered by Send and Write, scattered by a receive */
	{
		static const struct seg tx[6] = {{0, 1, 0},	{10, 4095, 0},
						 {5000, 0, 0},	{9000, 70000, 0},
						 {80007, 3, 0}, {90001, 12345, 0}};
		static const struct seg rxs[6] = {{0, 10, 0},	     {100, 20000, 0},
						  {20200, 7, 0},     {30000, 0, 0},
						  {30010, 50000, 0}, {90000, 20000, 0}};
		const uint64_t total = seg_total(tx, 6); /* 86444 */
		const uint64_t last_used = total - (10 + 20000 + 7 + 0 + 50000);
		struct uiw_sge sg[7];
		struct seg rseg[6], cseg[6];

		for (int i = 0; i < 6; i++) {
			sg[i] = (struct uiw_sge){(uintptr_t)(out + tx[i].off), tx[i].len,
						 e.mr->lkey};
			rseg[i] = rxs[i];
			rseg[i].off += 2 * slot;
			cseg[i] = tx[i];
		}
		ck_assert_int_eq(sgl_fill(out, tx, 6, seed + 30), 0);
		p_zero(&p, 2 * slot, 128 * KIB);
		p_post_recv(&p, 44, rseg, 6);
		ck_assert_int_eq(post_wr(&e, 8, UIW_WR_SEND, UIW_SEND_SIGNALED, sg, 6, 0, 0, 0), 0);
		expect_wc(e.cq, 8, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
		p_want_wc(&p, 44, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
		ck_assert_uint_eq(wc.byte_len, total);
		ck_assert_int_eq(pc_sgl(&p, PO_CHECK_SGL, rseg, 6, total, seed + 30), 0);
		p_check_zero(&p, 2 * slot + 90000 + last_used, 20000 - last_used);
		p_check_zero(&p, 2 * slot + 10, 90);

		/* a Write gathering the same six pieces lands contiguous */
		p_zero(&p, slot, 128 * KIB);
		ck_assert_int_eq(post_wr(&e, 9, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, sg, 6,
					 p.h.addr + slot, p.h.rkey, 0),
				 0);
		expect_wc(e.cq, 9, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
		sync_read(&e, &p);
		p_check(&p, slot, total, seed + 30);
		p_check_zero(&p, slot + total, GUARD);

		/* seven pieces are refused */
		sg[6] = sg[0];
		ck_assert_int_eq(post_wr(&e, 10, UIW_WR_SEND, UIW_SEND_SIGNALED, sg, 7, 0, 0, 0),
				 -EINVAL);

		/* the other way: the peer gathers six pieces, we scatter into six */
		for (int i = 0; i < 6; i++) {
			sg[i] = (struct uiw_sge){(uintptr_t)(rx + rxs[i].off), rxs[i].len,
						 e.mr->lkey};
		}
		memset(rx, 0, 128 * KIB);
		ck_assert_int_eq(post_rx(&e, 71, sg, 6), 0);
		ck_assert_int_eq(pc_sgl(&p, PO_FILL_SGL, cseg, 6, 0, seed + 31), 0);
		ck_assert_int_eq(
			p_post_send(&p, 63, UIW_WR_SEND, UIW_SEND_SIGNALED, cseg, 6, 0, 0, 0), 0);
		p_want_wc(&p, 63, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
		expect_wc(e.rcq, 71, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
		ck_assert_uint_eq(wc.byte_len, total);
		ck_assert_int_eq(sgl_cmp(rx, rxs, 6, total, seed + 31), 0);
		ck_assert_int_eq(zero_cmp(rx + 90000 + last_used, 20000 - last_used), 0);
	}

	no_wc(e.cq);
	tp_disconnect(&e, &p);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

/*
 * Send with Invalidate: the receiver sees UIW_WC_WITH_INV and the STag;
 * a Write to it is then refused (TERMINATE, remote access error at the
 * writer) and nothing is placed.  Local invalidate, here and in the peer:
 * the STag is then refused locally (-EPERM) and remotely (a Read fails).
 */
START_TEST(test_proc_invalidate)
{
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer pa, pb;
	struct tp_end e;
	struct uiw_wc wc;
	uint64_t seed = seed_of(0x300);
	uint32_t rkey2, rkey3, rkey4;
	int idx;

	peer_cfg_default(&pc, DSLOT);
	peer_start(&pa, &pc);
	peer_start(&pb, &pc);
	end_cfg_default(&ec, DSLOT);

	/* peer A: Send with Invalidate, then a Write to the invalidated STag */
	open_end(&e, &ec);
	tp_connect(&e, &pa, &pc, NULL, NULL);
	rkey2 = p_reg_mr(&pa, DSLOT, TP_BIG, ACC_ALL, &idx);
	rkey3 = p_reg_mr(&pa, 2 * DSLOT, 64 * KIB, ACC_ALL, &idx);
	ck_assert_uint_ne(rkey2, pa.h.rkey);
	pat_fill(e.buf, 4096, seed + 1);
	post1(&e, 1, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, e.buf, 4096, pa.h.addr + DSLOT, rkey2);
	expect_wc(e.cq, 1, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
	sync_read(&e, &pa);
	p_check(&pa, DSLOT, 4096, seed + 1); /* the STag works before */

	p_recv1(&pa, 40, 0, 4096);
	pat_fill(e.buf, 100, seed + 2);
	ck_assert_int_eq(post_wr(&e, 2, UIW_WR_SEND_WITH_INV, UIW_SEND_SIGNALED,
				 &(struct uiw_sge){(uintptr_t)e.buf, 100, e.mr->lkey}, 1, 0, 0,
				 rkey2),
			 0);
	expect_wc(e.cq, 2, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	p_want_wc(&pa, 40, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 100);
	ck_assert_uint_eq(wc.wc_flags & (UIW_WC_WITH_INV | UIW_WC_SOLICITED), UIW_WC_WITH_INV);
	ck_assert_uint_eq(wc.invalidated_rkey, rkey2);
	p_check(&pa, 0, 100, seed + 2);

	/* zero-length, solicited, with Invalidate */
	p_recv1(&pa, 41, 8192, 4096);
	ck_assert_int_eq(post_wr(&e, 3, UIW_WR_SEND_WITH_INV,
				 UIW_SEND_SIGNALED | UIW_SEND_SOLICITED, NULL, 0, 0, 0, rkey3),
			 0);
	expect_wc(e.cq, 3, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	p_want_wc(&pa, 41, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 0);
	ck_assert_uint_eq(wc.wc_flags & (UIW_WC_WITH_INV | UIW_WC_SOLICITED),
			  UIW_WC_WITH_INV | UIW_WC_SOLICITED);
	ck_assert_uint_eq(wc.invalidated_rkey, rkey3);

	/* a 16 MiB Write to the invalidated STag (still in progress when the
	 * TERMINATE comes back), then a Read: both end in error */
	p_recv1(&pa, 42, 16384, 4096);
	recv1(&e, 90, e.buf + 2 * DSLOT, 4096);
	pat_fill(e.buf, TP_BIG, seed + 3);
	{
		/* one chain: both are queued before the TERMINATE can come back */
		struct uiw_sge wsg = {(uintptr_t)e.buf, TP_BIG, e.mr->lkey};
		struct uiw_sge rsg = {(uintptr_t)(e.buf + DSLOT), 4096, e.mr->lkey};
		struct uiw_send_wr rd = {.wr_id = 5,
					 .sg_list = &rsg,
					 .num_sge = 1,
					 .opcode = UIW_WR_RDMA_READ,
					 .send_flags = UIW_SEND_SIGNALED};
		struct uiw_send_wr wr = {.wr_id = 4,
					 .next = &rd,
					 .sg_list = &wsg,
					 .num_sge = 1,
					 .opcode = UIW_WR_RDMA_WRITE,
					 .send_flags = UIW_SEND_SIGNALED};

		wr.wr.rdma.remote_addr = pa.h.addr + DSLOT;
		wr.wr.rdma.rkey = rkey2;
		rd.wr.rdma.remote_addr = pa.h.addr;
		rd.wr.rdma.rkey = pa.h.rkey;
		ck_assert_int_eq(uiw_post_send(e.qp, &wr, NULL), 0);
	}
	expect_wc(e.cq, 4, UIW_WC_RDMA_WRITE, UIW_WC_REM_ACCESS_ERR, &wc);
	ck_assert_msg(wc.wc_flags & UIW_WC_TERM, "no TERMINATE cause (flags %#x)", wc.wc_flags);
	ck_assert_uint_eq(wc.term_layer, TERM_LAYER_DDP);
	ck_assert_uint_eq(wc.term_etype, TERM_DDP_TAGGED);
	ck_assert_uint_eq(wc.term_ecode, TERM_CODE_INVALID_STAG);
	expect_wc(e.cq, 5, UIW_WC_RDMA_READ, UIW_WC_WR_FLUSH_ERR, NULL);
	expect_wc(e.rcq, 90, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
	{
		struct uiw_cm_event ev;

		want_event(e.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	}
	p_want_event(&pa, UIW_CM_EVENT_DISCONNECTED);
	p_want_wc(&pa, 42, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
	/* nothing of the refused Write was placed */
	p_check(&pa, DSLOT, 4096, seed + 1);
	p_check_zero(&pa, DSLOT + 4096, TP_BIG - 4096);
	peer_stop(&pa);
	close_end(&e);

	/* peer B: local invalidate, in both processes */
	open_end(&e, &ec);
	tp_connect(&e, &pb, &pc, NULL, NULL);
	rkey4 = p_reg_mr(&pb, 0, 64 * KIB, UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_READ, &idx);
	p_fill(&pb, 0, 64 * KIB, seed + 4);
	post1(&e, 1, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e.buf + DSLOT, 4096, pb.h.addr, rkey4);
	expect_wc(e.cq, 1, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
	ck_assert_int_eq(pat_cmp(e.buf + DSLOT, 4096, seed + 4), 0);
	{
		struct uiw_mr *mr5;
		struct uiw_sge sg;

		ck_assert_int_eq(
			uiw_reg_mr(e.pd, e.buf + 2 * DSLOT, 4096, UIW_ACCESS_LOCAL_WRITE, &mr5), 0);
		e.xmr[e.nxmr++] = mr5;
		sg = (struct uiw_sge){(uintptr_t)(e.buf + 2 * DSLOT), 16, mr5->lkey};
		ck_assert_int_eq(post_wr(&e, 2, UIW_WR_LOCAL_INV, UIW_SEND_SIGNALED, NULL, 0, 0, 0,
					 mr5->lkey),
				 0);
		expect_wc(e.cq, 2, UIW_WC_LOCAL_INV, UIW_WC_SUCCESS, NULL);
		ck_assert_int_eq(post_wr(&e, 3, UIW_WR_SEND, UIW_SEND_SIGNALED, &sg, 1, 0, 0, 0),
				 -EPERM);
	}
	ck_assert_int_eq(
		p_post_send(&pb, 7, UIW_WR_LOCAL_INV, UIW_SEND_SIGNALED, NULL, 0, 0, 0, rkey4), 0);
	p_want_wc(&pb, 7, UIW_WC_LOCAL_INV, UIW_WC_SUCCESS, NULL);
	recv1(&e, 91, e.buf + 2 * DSLOT + 8192, 4096);
	post1(&e, 4, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e.buf + DSLOT, 4096, pb.h.addr, rkey4);
	expect_wc(e.cq, 4, UIW_WC_RDMA_READ, UIW_WC_REM_ACCESS_ERR, &wc);
	ck_assert_msg(wc.wc_flags & UIW_WC_TERM, "no TERMINATE cause (flags %#x)", wc.wc_flags);
	ck_assert_uint_eq(wc.term_layer, TERM_LAYER_RDMAP);
	ck_assert_uint_eq(wc.term_etype, TERM_RDMAP_REMOTE_PROT);
	ck_assert_uint_eq(wc.term_ecode, TERM_CODE_INVALID_STAG);
	expect_wc(e.rcq, 91, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
	{
		struct uiw_cm_event ev;

		want_event(e.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	}
	p_want_event(&pb, UIW_CM_EVENT_DISCONNECTED);
	peer_stop(&pb);
	close_end(&e);
}
END_TEST

/*
 * Private data of the largest size both ways, IRD/ORD announced in the
 * CONNECT_REQUEST and answered in the reply (RFC 6581), then more Reads at
 * once than the negotiated ORD.
 */
START_TEST(test_proc_conn_params)
{
	uint8_t pd[UIW_PRIVATE_DATA_MAX + 1];
	struct uiw_conn_param cp = {pd, UIW_PRIVATE_DATA_MAX, 5, 7};
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	uint64_t seed = seed_of(0x400);

	peer_cfg_default(&pc, OSLOT);
	pc.pd_len = 200;
	peer_start(&p, &pc);
	end_cfg_default(&ec, OSLOT);
	ec.ird = 12;
	ec.ord = 10;
	open_end(&e, &ec);
	pat_fill(pd, sizeof(pd), seed);
	{
		struct uiw_conn_param big = {pd, UIW_PRIVATE_DATA_MAX + 1, 0, 0};
		struct uiw_cm_id *id;

		ck_assert_int_eq(uiw_create_id(e.ctx, NULL, &id), 0);
		ck_assert_int_eq(uiw_connect(id, "127.0.0.1", p.h.port, e.qp, &big), -EMSGSIZE);
		ck_assert_int_eq(uiw_destroy_id(id), 0);
	}
	tp_connect(&e, &p, &pc, &cp, &ev);
	/* the initiator's IRD and ORD (its QP's 12/10, lowered by the conn param) */
	ck_assert_uint_eq(p.conn.ird, 5);
	ck_assert_uint_eq(p.conn.ord, 7);
	ck_assert_uint_eq(p.conn.pd_len, UIW_PRIVATE_DATA_MAX);
	ck_assert_int_eq(pat_cmp(p.conn.pd, UIW_PRIVATE_DATA_MAX, seed), 0);
	/* the responder's IRD (its QP's 16) and ORD (at most our IRD, 5) */
	ck_assert_uint_eq(ev.responder_resources, 16);
	ck_assert_uint_eq(ev.initiator_depth, 5);

	/* 12 Reads at once, beyond ORD 7: queued, all complete, in order */
	p_fill(&p, 0, 12 * 4096, seed + 1);
	for (int i = 0; i < 12; i++)
		post1(&e, 1 + (uint64_t)i, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED,
		      e.buf + OSLOT + (size_t)i * 4096, 4096, p.h.addr + (uint64_t)i * 4096,
		      p.h.rkey);
	for (int i = 0; i < 12; i++)
		expect_wc(e.cq, 1 + (uint64_t)i, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
	ck_assert_int_eq(pat_cmp(e.buf + OSLOT, 12 * 4096, seed + 1), 0);

	tp_disconnect(&e, &p);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

/*
 * RFC 5044 §7.1.2 rule 4: the responder sends no FPDU before it received
 * one.  The peer (responder) posts a Send first: it stays queued (no
 * completion, nothing arrives) until we (initiator) send a zero-length
 * Write; then the Send arrives intact.
 */
START_TEST(test_proc_responder_waits)
{
	uint8_t pd[CPD_LEN];
	struct uiw_conn_param cp = {pd, sizeof(pd), 0, 0};
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	uint64_t seed = seed_of(0x450);

	peer_cfg_default(&pc, OSLOT);
	peer_start(&p, &pc);
	end_cfg_default(&ec, OSLOT);
	open_end(&e, &ec);
	p.turn = &e;
	pat_fill(pd, sizeof(pd), seed);
	ck_assert_int_eq(uiw_create_id(e.ctx, &e, &e.id), 0);
	ck_assert_int_eq(uiw_connect(e.id, "127.0.0.1", p.h.port, e.qp, &cp), 0);
	want_event(e.ctx, UIW_CM_EVENT_ESTABLISHED, &ev);
	peer_read_conn(&p);
	ck_assert_int_eq(p.conn.ret, 0);

	recv1(&e, 1, e.buf + 2 * OSLOT, 4096);
	p_fill(&p, 0, 1000, seed + 1);
	p_post1(&p, 10, UIW_WR_SEND, UIW_SEND_SIGNALED, 0, 1000, 0, 0);
	ck_assert_int_eq(p_poll(&p, 200, &wc), -ETIMEDOUT);
	ck_assert_int_eq(wait_wc(e.cq, 50, &wc), -ETIMEDOUT);
	post1(&e, 2, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, e.buf, 0, p.h.addr, p.h.rkey);
	expect_wc(e.cq, 2, UIW_WC_RDMA_WRITE, UIW_WC_SUCCESS, NULL);
	p_want_wc(&p, 10, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	expect_wc(e.rcq, 1, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 1000);
	ck_assert_int_eq(pat_cmp(e.buf + 2 * OSLOT, 1000, seed + 1), 0);

	tp_disconnect(&e, &p);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

/* ---- 2: 256 connections in one process ------------------------------------- */

#define NCONN	 256
#define C_REGION (64 * KIB) /* per connection on the server: Write target, Read source */
#define C_HALF	 (32 * KIB)
#define C_SEND	 1024

struct many_arg {
	uint64_t seed;
};

static uint64_t many_seed(uint64_t seed, int kind, int i)
{
	return seed + (uint64_t)kind * 100000 + (uint64_t)i;
}

/*
 * The server of the 256 connections: one QP per connection, chosen by the
 * index in the private data; one receive posted on each before accepting.
 * Each connection gets a Write (checked in [0, 32K) of its region), a Read
 * (of [32K, 64K), filled here) and a Send (checked).  Reports the number of
 * good connections on the pipe, then waits for the 256 disconnections.
 */
static int many_main(struct tp_kid *self, const void *arg)
{
	const struct many_arg *a = arg;
	struct tp_end_cfg ec;
	struct tp_end e;
	struct uiw_qp *qp[NCONN] = {0};
	struct uiw_cm_id *ids[NCONN] = {0};
	uint8_t *rx;
	struct peer_hello h = {0};
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	uint64_t end;
	int ret, est = 0, got = 0, disc = 0;
	int32_t good = 0;
	uint8_t seen[NCONN] = {0};

	memset(&ec, 0, sizeof(ec));
	ec.len = NCONN * (C_REGION + 4 * KIB);
	ec.send_wr = 4;
	ec.recv_wr = 2;
	ec.cqe = 4 * NCONN;
	ret = end_open(&e, &ec);
	if (ret)
		return kid_fail(KX_SETUP, "end: %d", ret);
	rx = e.buf + NCONN * C_REGION;
	for (int i = 0; i < NCONN && !ret; i++) {
		struct uiw_qp_init_attr qa = {0};
		struct uiw_sge sg = {(uintptr_t)(rx + i * 4 * KIB), 4 * KIB, e.mr->lkey};
		struct uiw_recv_wr rw = {.wr_id = (uint64_t)i, .sg_list = &sg, .num_sge = 1};

		qa.send_cq = qa.recv_cq = e.cq;
		qa.cap.max_send_wr = 4;
		qa.cap.max_recv_wr = 2;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		ret = uiw_create_qp(e.pd, &qa, &qp[i]);
		if (!ret)
			ret = uiw_post_recv(qp[i], &rw, NULL);
		pat_fill(e.buf + (size_t)i * C_REGION + C_HALF, C_HALF, many_seed(a->seed, 2, i));
	}
	if (!ret)
		ret = uiw_create_id(e.ctx, NULL, &e.lid);
	if (!ret)
		ret = uiw_listen(e.lid, "127.0.0.1", 0, 2 * NCONN);
	if (ret)
		return kid_fail(KX_SETUP, "set-up: %d", ret);
	h.addr = (uintptr_t)e.buf;
	h.len = e.len;
	h.rkey = e.mr->rkey;
	h.port = uiw_get_port(e.lid);
	if (tp_write(self->to_fd, &h, sizeof(h)))
		return kid_fail(KX_PIPE, "hello");

	end = ms_now() + 15000;
	while (est < NCONN) {
		uint64_t now = ms_now();
		uint32_t i;

		ret = uiw_get_cm_event(e.ctx, &ev, now < end ? (int)(end - now) : 0);
		if (ret)
			return kid_fail(KX_CONN, "%d of %d established: %d", est, NCONN, ret);
		if (ev.event == UIW_CM_EVENT_ESTABLISHED) {
			est++;
			continue;
		}
		if (ev.event != UIW_CM_EVENT_CONNECT_REQUEST || ev.private_data_len != 4)
			return kid_fail(KX_CONN, "event %s, pd %u", uiw_event_str(ev.event),
					ev.private_data_len);
		memcpy(&i, ev.private_data, 4);
		if (i >= NCONN || ids[i])
			return kid_fail(KX_CONN, "bad connection index %u", i);
		ids[i] = ev.id;
		ret = uiw_accept(ev.id, qp[i], NULL);
		if (ret)
			return kid_fail(KX_CONN, "accept %u: %d", i, ret);
	}
	/* the Send of each connection comes after its Write: both are there */
	while (got < NCONN) {
		uint64_t now = ms_now();

		if (wait_wc(e.cq, now < end ? (int)(end - now) : 0, &wc))
			return kid_fail(KX_CHECK, "%d of %d receives", got, NCONN);
		got++;
		if (wc.status != UIW_WC_SUCCESS || wc.opcode != UIW_WC_RECV || wc.wr_id >= NCONN ||
		    seen[wc.wr_id] || wc.byte_len != C_SEND) {
			kid_fail(0, "receive wr %llu status %d len %u",
				 (unsigned long long)wc.wr_id, wc.status, wc.byte_len);
			continue;
		}
		seen[wc.wr_id] = 1;
		if (wc.qp != qp[wc.wr_id] ||
		    pat_cmp(rx + wc.wr_id * 4 * KIB, C_SEND,
			    many_seed(a->seed, 3, (int)wc.wr_id)) ||
		    zero_cmp(rx + wc.wr_id * 4 * KIB + C_SEND, GUARD) ||
		    pat_cmp(e.buf + wc.wr_id * C_REGION, C_HALF,
			    many_seed(a->seed, 1, (int)wc.wr_id)))
			continue;
		good++;
	}
	if (tp_write(self->to_fd, &good, sizeof(good)))
		return kid_fail(KX_PIPE, "report");
	end = ms_now() + 15000;
	while (disc < NCONN) {
		uint64_t now = ms_now();

		ret = uiw_get_cm_event(e.ctx, &ev, now < end ? (int)(end - now) : 0);
		if (ret || ev.event != UIW_CM_EVENT_DISCONNECTED)
			return kid_fail(KX_CONN, "%d of %d disconnected: %d %s", disc, NCONN, ret,
					ret ? "" : uiw_event_str(ev.event));
		disc++;
	}
	for (int i = 0; i < NCONN; i++) {
		if (ids[i] && (ret = uiw_destroy_id(ids[i])))
			return kid_fail(KX_CLEANUP, "destroy_id: %d", ret);
		if ((ret = uiw_destroy_qp(qp[i])))
			return kid_fail(KX_CLEANUP, "destroy_qp: %d", ret);
	}
	ret = end_close(&e);
	if (ret)
		return kid_fail(KX_CLEANUP, "clean-up: %d", ret);
	return good == NCONN ? KX_OK : KX_CHECK;
}

/* 256 QPs (256 connections) in this process against one server process;
 * a Write, a Read and a Send on each, all at once, verified on both sides. */
START_TEST(test_proc_256qp)
{
	struct many_arg a = {seed_of(0x500)};
	struct tp_kid *k;
	struct peer_hello h;
	struct tp_end_cfg ec;
	struct tp_end e;
	struct uiw_qp *qp[NCONN];
	struct uiw_cm_id *ids[NCONN];
	struct uiw_cm_event ev;
	struct uiw_wc wc[64];
	uint8_t *sendbuf;
	int nwc[NCONN] = {0};
	int est = 0, done = 0, disc = 0;
	int32_t good = -1;
	uint64_t end;

	k = tp_spawn(many_main, &a);
	ck_assert_int_eq(tp_read(k->from_fd, &h, sizeof(h), TP_WAIT_MS, NULL), 0);
	memset(&ec, 0, sizeof(ec));
	ec.len = NCONN * (C_REGION + C_SEND);
	ec.send_wr = 4;
	ec.recv_wr = 1;
	ec.cqe = 4 * NCONN;
	open_end(&e, &ec);
	sendbuf = e.buf + NCONN * C_REGION;
	for (int i = 0; i < NCONN; i++) {
		struct uiw_qp_init_attr qa = {0};
		uint32_t idx = (uint32_t)i;
		struct uiw_conn_param cp = {&idx, 4, 0, 0};

		qa.send_cq = qa.recv_cq = e.cq;
		qa.cap.max_send_wr = 4;
		qa.cap.max_recv_wr = 1;
		qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
		ck_assert_int_eq(uiw_create_qp(e.pd, &qa, &qp[i]), 0);
		ck_assert_int_eq(uiw_create_id(e.ctx, (void *)(uintptr_t)(i + 1), &ids[i]), 0);
		ck_assert_int_eq(uiw_connect(ids[i], "127.0.0.1", h.port, qp[i], &cp), 0);
		pat_fill(e.buf + (size_t)i * C_REGION, C_HALF, many_seed(a.seed, 1, i));
		pat_fill(sendbuf + (size_t)i * C_SEND, C_SEND, many_seed(a.seed, 3, i));
	}
	end = ms_now() + 15000;
	while (est < NCONN) {
		uint64_t now = ms_now();
		int ret = uiw_get_cm_event(e.ctx, &ev, now < end ? (int)(end - now) : 0);

		ck_assert_msg(ret == 0, "%d of %d established (%d)", est, NCONN, ret);
		ck_assert_msg(ev.event == UIW_CM_EVENT_ESTABLISHED, "event %s (status %d)",
			      uiw_event_str(ev.event), ev.status);
		est++;
	}
	for (int i = 0; i < NCONN; i++) {
		struct tp_end one = e;
		uint64_t r = h.addr + (uint64_t)i * C_REGION;
		uint8_t *mine = e.buf + (size_t)i * C_REGION;

		one.qp = qp[i];
		post1(&one, (uint64_t)i * 4 + 1, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, mine, C_HALF,
		      r, h.rkey);
		post1(&one, (uint64_t)i * 4 + 2, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, mine + C_HALF,
		      C_HALF, r + C_HALF, h.rkey);
		post1(&one, (uint64_t)i * 4 + 3, UIW_WR_SEND, UIW_SEND_SIGNALED,
		      sendbuf + (size_t)i * C_SEND, C_SEND, 0, 0);
	}
	while (done < 3 * NCONN) {
		int n = uiw_poll_cq(e.cq, 64, wc);

		ck_assert_int_ge(n, 0);
		for (int j = 0; j < n; j++) {
			int i = (int)(wc[j].wr_id / 4), step = (int)(wc[j].wr_id % 4);

			ck_assert_msg(wc[j].status == UIW_WC_SUCCESS, "wr %llu: status %d",
				      (unsigned long long)wc[j].wr_id, wc[j].status);
			ck_assert_int_lt(i, NCONN);
			ck_assert_ptr_eq(wc[j].qp, qp[i]);
			ck_assert_int_eq(step, ++nwc[i]); /* in order per QP */
			if (step == 2)
				ck_assert_int_eq(pat_cmp(e.buf + (size_t)i * C_REGION + C_HALF,
							 C_HALF, many_seed(a.seed, 2, i)),
						 0);
		}
		done += n;
		if (!n) {
			ck_assert_msg(ms_now() < end, "%d of %d completions", done, 3 * NCONN);
			usleep(100);
		}
	}
	ck_assert_int_eq(tp_read(k->from_fd, &good, sizeof(good), 15000, NULL), 0);
	ck_assert_int_eq(good, NCONN);
	for (int i = 0; i < NCONN; i++)
		ck_assert_int_eq(uiw_disconnect(ids[i]), 0);
	end = ms_now() + 15000;
	while (disc < NCONN) {
		uint64_t now = ms_now();
		int ret = uiw_get_cm_event(e.ctx, &ev, now < end ? (int)(end - now) : 0);

		ck_assert_msg(ret == 0, "%d of %d disconnected (%d)", disc, NCONN, ret);
		ck_assert_int_eq(ev.event, UIW_CM_EVENT_DISCONNECTED);
		disc++;
	}
	tp_expect_exit(k, KX_OK);
	for (int i = 0; i < NCONN; i++) {
		ck_assert_int_eq(uiw_destroy_id(ids[i]), 0);
		ck_assert_int_eq(uiw_destroy_qp(qp[i]), 0);
	}
	close_end(&e);
}
END_TEST

/* ---- 3: a passive server ----------------------------------------------------- */

#define PS_HALF (4 * MIB)

struct passive_arg {
	uint64_t seed_a; /* [0, 4M): the server's, read by the client */
	uint64_t seed_b; /* [4M, 8M): written by the client */
};

/*
 * Accept one connection, then sleep (at most TP_IDLE_MS) until the parent
 * says done, without ever polling a CQ; then check the memory: exit 0 if
 * [0, 4M) is still pattern A and [4M, 8M) is pattern B.
 */
static int passive_main(struct tp_kid *self, const void *arg)
{
	const struct passive_arg *a = arg;
	struct tp_end_cfg ec;
	struct tp_end e;
	struct peer_hello h = {0};
	struct uiw_cm_event ev;
	int32_t bad = 0;
	uint8_t cmd;
	int ret;

	memset(&ec, 0, sizeof(ec));
	ec.len = 2 * PS_HALF;
	ec.send_wr = ec.recv_wr = 4;
	ec.cqe = 16;
	ret = end_open(&e, &ec);
	if (!ret)
		ret = uiw_create_id(e.ctx, NULL, &e.lid);
	if (!ret)
		ret = uiw_listen(e.lid, "127.0.0.1", 0, 4);
	if (ret)
		return kid_fail(KX_SETUP, "set-up: %d", ret);
	pat_fill(e.buf, PS_HALF, a->seed_a);
	h.addr = (uintptr_t)e.buf;
	h.len = e.len;
	h.rkey = e.mr->rkey;
	h.port = uiw_get_port(e.lid);
	if (tp_write(self->to_fd, &h, sizeof(h)))
		return kid_fail(KX_PIPE, "hello");
	ret = uiw_get_cm_event(e.ctx, &ev, TP_WAIT_MS);
	if (ret || ev.event != UIW_CM_EVENT_CONNECT_REQUEST)
		return kid_fail(KX_CONN, "no CONNECT_REQUEST: %d", ret);
	e.id = ev.id;
	ret = uiw_accept(e.id, e.qp, NULL);
	if (!ret)
		ret = uiw_get_cm_event(e.ctx, &ev, TP_WAIT_MS);
	if (ret || ev.event != UIW_CM_EVENT_ESTABLISHED)
		return kid_fail(KX_CONN, "not established: %d", ret);
	/* sleep until the parent is done with our memory */
	if (tp_read(self->from_fd, &cmd, 1, TP_IDLE_MS, NULL))
		return kid_fail(KX_PIPE, "no word from the parent");
	if (pat_cmp(e.buf, PS_HALF, a->seed_a))
		bad |= 1;
	if (pat_cmp(e.buf + PS_HALF, PS_HALF, a->seed_b))
		bad |= 2;
	if (tp_write(self->to_fd, &bad, sizeof(bad)))
		return kid_fail(KX_PIPE, "report");
	ret = uiw_get_cm_event(e.ctx, &ev, TP_WAIT_MS);
	if (ret || ev.event != UIW_CM_EVENT_DISCONNECTED)
		return kid_fail(KX_CONN, "no DISCONNECTED: %d", ret);
	ret = end_close(&e);
	if (ret)
		return kid_fail(KX_CLEANUP, "clean-up: %d", ret);
	return bad ? kid_fail(KX_CHECK, "memory check %d", bad) : KX_OK;
}

/*
 * A passive server (it never polls a CQ): the client Reads all of
 * [0, 4M) and Writes all of [4M, 8M) in pieces of seeded random sizes,
 * interleaved, at most 48 outstanding; a final Read of [4M, 8M) checks the
 * Writes (and orders them before it); the server then checks its memory.
 */
START_TEST(test_proc_passive)
{
	struct passive_arg a = {seed_of(0x600), seed_of(0x601)};
	static const uint32_t pick[] = {1, 7, 4095, 4096, 65535, 65537, 200000};
	struct tp_peer p;
	struct tp_end_cfg ec;
	struct tp_end e;
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	uint64_t rnd = seed_of(0x602), roff = 0, woff = 0, posted = 0, completed = 0;
	int32_t bad = -1;
	uint8_t done = 1, *kind = calloc(1, 1u << 20);

	ck_assert_ptr_nonnull(kind);
	memset(&p, 0, sizeof(p));
	p.kid = tp_spawn(passive_main, &a);
	ck_assert_int_eq(tp_read(p.kid->from_fd, &p.h, sizeof(p.h), TP_WAIT_MS, NULL), 0);
	memset(&ec, 0, sizeof(ec));
	ec.len = 3 * PS_HALF;
	ec.send_wr = 64;
	ec.recv_wr = 4;
	ec.cqe = 128;
	open_end(&e, &ec);
	pat_fill(e.buf + PS_HALF, PS_HALF, a.seed_b);
	ck_assert_int_eq(uiw_create_id(e.ctx, NULL, &e.id), 0);
	ck_assert_int_eq(uiw_connect(e.id, "127.0.0.1", p.h.port, e.qp, NULL), 0);
	want_event(e.ctx, UIW_CM_EVENT_ESTABLISHED, &ev);

	while (roff < PS_HALF || woff < PS_HALF || completed < posted) {
		while (posted - completed < 48 && (roff < PS_HALF || woff < PS_HALF)) {
			uint64_t r = tu_rand(&rnd);
			uint32_t n =
				r & 1 ? pick[(r >> 8) % 7] : (uint32_t)(r >> 16) % (256 * KIB) + 1;
			int write = woff < PS_HALF && (roff >= PS_HALF || (r & 2));
			uint64_t *off = write ? &woff : &roff;

			if (n > PS_HALF - *off)
				n = (uint32_t)(PS_HALF - *off);
			ck_assert_uint_lt(posted, 1u << 20);
			kind[posted] = (uint8_t)write;
			if (write)
				post1(&e, posted, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED,
				      e.buf + PS_HALF + *off, n, p.h.addr + PS_HALF + *off,
				      p.h.rkey);
			else
				post1(&e, posted, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e.buf + *off,
				      n, p.h.addr + *off, p.h.rkey);
			*off += n;
			posted++;
		}
		expect_wc(e.cq, completed, kind[completed] ? UIW_WC_RDMA_WRITE : UIW_WC_RDMA_READ,
			  UIW_WC_SUCCESS, &wc);
		completed++;
	}
	ck_assert_int_eq(pat_cmp(e.buf, PS_HALF, a.seed_a), 0);
	post1(&e, SYNC_ID, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e.buf + 2 * PS_HALF, PS_HALF,
	      p.h.addr + PS_HALF, p.h.rkey);
	expect_wc(e.cq, SYNC_ID, UIW_WC_RDMA_READ, UIW_WC_SUCCESS, NULL);
	ck_assert_int_eq(pat_cmp(e.buf + 2 * PS_HALF, PS_HALF, a.seed_b), 0);

	ck_assert_int_eq(tp_write(p.kid->to_fd, &done, 1), 0);
	ck_assert_int_eq(tp_read(p.kid->from_fd, &bad, sizeof(bad), TP_WAIT_MS, NULL), 0);
	ck_assert_msg(bad == 0, "server memory check: %d (1: read region, 2: written region)", bad);
	ck_assert_int_eq(uiw_disconnect(e.id), 0);
	want_event(e.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);
	tp_expect_exit(p.kid, KX_OK);
	close_end(&e);
	free(kind);
}
END_TEST

/* ---- 4: disconnect with outstanding work ------------------------------------- */

/* Collect @n completions of @cq (bounded), sorted into per-wr_id slots. */
static void collect(struct uiw_cq *cq, int n, struct uiw_wc *out)
{
	for (int i = 0; i < n; i++) {
		int ret = wait_wc(cq, TP_WAIT_MS, &out[i]);

		ck_assert_msg(ret == 0, "%d of %d completions (%d)", i, n, ret);
	}
}

/*
 * Graceful disconnect with work outstanding on both queues of both ends:
 * the send queue drains (every WR succeeds: RFC 5040 §6.2), the receives
 * left are flushed; every WR completes exactly once.  Afterwards, WRs
 * posted on the QP in error are flushed at once.
 */
START_TEST(test_proc_disconnect_flush)
{
	static const struct {
		uint64_t id;
		enum uiw_wr_opcode op;
		enum uiw_wc_opcode wop;
		unsigned flags;
		uint32_t len;
	} sq[] = {
		{10, UIW_WR_SEND, UIW_WC_SEND, UIW_SEND_SIGNALED, 64 * KIB},
		{11, UIW_WR_RDMA_WRITE, UIW_WC_RDMA_WRITE, UIW_SEND_SIGNALED, MIB},
		{12, UIW_WR_RDMA_READ, UIW_WC_RDMA_READ, UIW_SEND_SIGNALED, MIB},
		{13, UIW_WR_SEND, UIW_WC_SEND, UIW_SEND_SIGNALED, 0},
		{14, UIW_WR_RDMA_WRITE, UIW_WC_RDMA_WRITE, 0, 4096}, /* unsignaled */
		{15, UIW_WR_SEND, UIW_WC_SEND, UIW_SEND_SIGNALED, 100},
		{16, UIW_WR_RDMA_READ, UIW_WC_RDMA_READ, UIW_SEND_SIGNALED, 64 * KIB},
	};
	const size_t slot = OSLOT;
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	struct uiw_wc wc[16];
	uint64_t seed = seed_of(0x700);
	int k = 0;

	peer_cfg_default(&pc, slot);
	peer_start(&p, &pc);
	end_cfg_default(&ec, slot);
	open_end(&e, &ec);
	tp_connect(&e, &p, &pc, NULL, NULL);

	/* peer: 6 receives; we: 8 receives, 2 of them consumed now */
	for (int i = 0; i < 6; i++)
		p_recv1(&p, 100 + (uint64_t)i, 2 * slot + (uint64_t)i * 128 * KIB, 128 * KIB);
	for (int i = 0; i < 8; i++)
		recv1(&e, 200 + (uint64_t)i, e.buf + 2 * slot + (size_t)i * 4096, 4096);
	p_fill(&p, 0, MIB, seed + 1);
	p_post1(&p, 300, UIW_WR_SEND, UIW_SEND_SIGNALED, 0, 1000, 0, 0);
	p_post1(&p, 301, UIW_WR_SEND, UIW_SEND_SIGNALED, 1000, 1000, 0, 0);
	p_want_wc(&p, 300, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	p_want_wc(&p, 301, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	expect_wc(e.rcq, 200, UIW_WC_RECV, UIW_WC_SUCCESS, &wc[0]);
	ck_assert_uint_eq(wc[0].byte_len, 1000);
	expect_wc(e.rcq, 201, UIW_WC_RECV, UIW_WC_SUCCESS, &wc[0]);
	{
		uint8_t *ref = malloc(2000);

		ck_assert_ptr_nonnull(ref);
		pat_fill(ref, 2000, seed + 1);
		ck_assert(memcmp(e.buf + 2 * slot, ref, 1000) == 0);
		ck_assert(memcmp(e.buf + 2 * slot + 4096, ref + 1000, 1000) == 0);
		free(ref);
	}

	/* post the send queue and disconnect at once */
	pat_fill(e.buf, MIB, seed + 2);
	for (unsigned i = 0; i < sizeof(sq) / sizeof(sq[0]); i++) {
		int read = sq[i].op == UIW_WR_RDMA_READ;

		post1(&e, sq[i].id, sq[i].op, sq[i].flags, read ? e.buf + slot : e.buf, sq[i].len,
		      p.h.addr + (read ? 0 : slot), p.h.rkey);
	}
	ck_assert_int_eq(uiw_disconnect(e.id), 0);
	ck_assert_int_eq(uiw_disconnect(e.id), -EINVAL);
	want_event(e.ctx, UIW_CM_EVENT_DISCONNECTED, &ev);

	/* 6 send completions (the unsignaled Write succeeded silently), then
	 * the 6 receives left, flushed */
	collect(e.cq, 12, wc);
	for (unsigned i = 0; i < sizeof(sq) / sizeof(sq[0]); i++) {
		if (!(sq[i].flags & UIW_SEND_SIGNALED))
			continue;
		check_wc(&wc[k++], "local", sq[i].id, sq[i].wop, UIW_WC_SUCCESS);
	}
	for (int i = 2; i < 8; i++)
		check_wc(&wc[k++], "local", 200 + (uint64_t)i, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR);
	usleep(20000);
	no_wc(e.cq);
	ck_assert_int_eq(pat_cmp(e.buf + slot, MIB, seed + 1), 0); /* the last Read's data */

	/* the peer: the 3 Sends in its first 3 receives, the other 3 flushed */
	p_want_event(&p, UIW_CM_EVENT_DISCONNECTED);
	{
		struct uiw_wc pw;

		p_want_wc(&p, 100, UIW_WC_RECV, UIW_WC_SUCCESS, &pw);
		ck_assert_uint_eq(pw.byte_len, 64 * KIB);
		p_want_wc(&p, 101, UIW_WC_RECV, UIW_WC_SUCCESS, &pw);
		ck_assert_uint_eq(pw.byte_len, 0);
		p_want_wc(&p, 102, UIW_WC_RECV, UIW_WC_SUCCESS, &pw);
		ck_assert_uint_eq(pw.byte_len, 100);
		for (int i = 3; i < 6; i++)
			p_want_wc(&p, 100 + (uint64_t)i, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
		ck_assert_int_eq(p_poll(&p, 50, &pw), -ETIMEDOUT);
	}
	p_check(&p, 2 * slot, 64 * KIB, seed + 2);
	p_check(&p, 2 * slot + 2 * 128 * KIB, 100, seed + 2);
	p_check(&p, slot, MIB, seed + 2); /* the Write, then the unsignaled one over it */

	/* on the QP in error, new WRs are taken and flushed */
	post1(&e, 20, UIW_WR_SEND, UIW_SEND_SIGNALED, e.buf, 10, 0, 0);
	recv1(&e, 21, e.buf, 10);
	expect_wc(e.cq, 20, UIW_WC_SEND, UIW_WC_WR_FLUSH_ERR, NULL);
	expect_wc(e.rcq, 21, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
	p_post1(&p, 310, UIW_WR_SEND, UIW_SEND_SIGNALED, 0, 10, 0, 0);
	p_want_wc(&p, 310, UIW_WC_SEND, UIW_WC_WR_FLUSH_ERR, NULL);
	no_wc(e.cq);

	peer_stop(&p);
	close_end(&e);
}
END_TEST

/*
 * Abortive close (uiw_destroy_id) with work stuck behind a peer that stopped
 * driving its engine (polled mode, frozen): a Read waiting for its response,
 * a 16 MiB Write that TCP cannot take whole, WRs queued behind them and
 * receives.  Every one completes, flushed, exactly once; the peer, once it
 * runs again, sees DISCONNECTED and flushes its receives.
 */
START_TEST(test_proc_abort_flush)
{
	const size_t slot = DSLOT;
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	struct uiw_wc wc[16];
	static const uint64_t ids[] = {10, 11, 12, 13, 14};
	int k = 0;

	peer_cfg_default(&pc, slot);
	pc.end.attr.mode = UIW_CTX_POLLED;
	peer_start(&p, &pc);
	end_cfg_default(&ec, slot);
	open_end(&e, &ec);
	tp_connect(&e, &p, &pc, NULL, NULL);
	for (int i = 0; i < 3; i++)
		p_recv1(&p, 100 + (uint64_t)i, 2 * slot + (uint64_t)i * 4096, 4096);
	p_simple(&p, PO_FREEZE, 1);

	for (int i = 0; i < 4; i++)
		recv1(&e, 200 + (uint64_t)i, e.buf + 2 * slot + (size_t)i * 4096, 4096);
	post1(&e, 10, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e.buf + slot, 64 * KIB, p.h.addr,
	      p.h.rkey);
	post1(&e, 11, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED, e.buf, TP_BIG, p.h.addr + slot,
	      p.h.rkey);
	post1(&e, 12, UIW_WR_SEND, UIW_SEND_SIGNALED, e.buf, 100, 0, 0);
	post1(&e, 13, UIW_WR_RDMA_WRITE, 0, e.buf, 4096, p.h.addr + slot, p.h.rkey);
	post1(&e, 14, UIW_WR_SEND, UIW_SEND_SIGNALED, e.buf, 0, 0, 0);
	usleep(100000);
	no_wc(e.cq); /* stuck */
	ck_assert_int_eq(uiw_destroy_id(e.id), 0);
	e.id = NULL;

	collect(e.cq, 9, wc);
	for (int i = 0; i < 5; i++)
		check_wc(&wc[k++], "local", ids[i], UIW_WC_SEND, UIW_WC_WR_FLUSH_ERR);
	for (int i = 0; i < 4; i++)
		check_wc(&wc[k++], "local", 200 + (uint64_t)i, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR);
	usleep(20000);
	no_wc(e.cq);
	ck_assert_int_eq(uiw_get_cm_event(e.ctx, &ev, 0), -ETIMEDOUT); /* the id is gone */

	p_simple(&p, PO_FREEZE, 0);
	p_want_event(&p, UIW_CM_EVENT_DISCONNECTED);
	for (int i = 0; i < 3; i++)
		p_want_wc(&p, 100 + (uint64_t)i, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
	ck_assert_int_eq(p_poll(&p, 50, &wc[0]), -ETIMEDOUT);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

/* ---- 5: a peer killed mid-transfer ------------------------------------------ */

#define KILL_DEPTH 32
#define KILL_MAXWR 8192

/*
 * The peer is killed with SIGKILL in the middle of a stream of 1 MiB Writes
 * and Reads (stopped first, so that work is certainly in flight when it
 * dies): within 5 s every outstanding WR completes with an error status,
 * the QP is in error, DISCONNECTED arrives.  "Outstanding" is every WR
 * without a completion when the peer dies: everything that could complete
 * did so before (the stream is quiet for 100 ms after SIGSTOP), so a WR
 * that completes after SIGKILL, in order behind a flushed one, must not
 * claim success (a Write queued behind an unanswered Read never reached
 * the peer's memory).
 */
START_TEST(test_proc_sigkill)
{
	const size_t slot = DSLOT;
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	struct uiw_wc wc[64];
	uint64_t seed = seed_of(0x800), next_wc = 0, posted = 0, t0, t_end, first_bad = 0;
	uint64_t must_fail_from;
	uint8_t *ref, *is_read;
	int recv_flushed = 0, disconnected = 0, send_errors = 0, status;
	pid_t pid;

	peer_cfg_default(&pc, slot);
	peer_start(&p, &pc);
	pid = p.kid->pid;
	end_cfg_default(&ec, slot);
	ec.send_wr = 64;
	open_end(&e, &ec);
	tp_connect(&e, &p, &pc, NULL, NULL);
	ref = malloc(TP_BIG);
	is_read = calloc(1, KILL_MAXWR);
	ck_assert_ptr_nonnull(ref);
	ck_assert_ptr_nonnull(is_read);
	pat_fill(ref, TP_BIG, seed);
	p_fill(&p, 0, TP_BIG, seed);
	for (int i = 0; i < 8; i++)
		recv1(&e, 100000 + (uint64_t)i, e.buf + 2 * slot + (size_t)i * 4096, 4096);

	/* the stream: Writes and Reads of 1 MiB, KILL_DEPTH outstanding, for
	 * 100 ms; each Read checked (16 sinks, no more Reads outstanding) */
	t0 = ms_now();
	for (;;) {
		int n, stop = ms_now() - t0 >= 100;

		while (!stop && posted - next_wc < KILL_DEPTH) {
			uint64_t i = posted;
			uint64_t slice = (i / 2) % 16;

			ck_assert_uint_lt(i, KILL_MAXWR);
			is_read[i] = i & 1;
			if (is_read[i])
				post1(&e, i, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED,
				      e.buf + slot + slice * MIB, MIB, p.h.addr + slice * MIB,
				      p.h.rkey);
			else
				post1(&e, i, UIW_WR_RDMA_WRITE, UIW_SEND_SIGNALED,
				      e.buf + slice * MIB, MIB, p.h.addr + slot + slice * MIB,
				      p.h.rkey);
			posted++;
		}
		if (stop)
			break;
		n = uiw_poll_cq(e.cq, 64, wc);
		ck_assert_int_ge(n, 0);
		for (int j = 0; j < n; j++, next_wc++) {
			check_wc(&wc[j], "stream", next_wc,
				 is_read[next_wc] ? UIW_WC_RDMA_READ : UIW_WC_RDMA_WRITE,
				 UIW_WC_SUCCESS);
			if (is_read[next_wc]) {
				uint64_t slice = (next_wc / 2) % 16;

				ck_assert(memcmp(e.buf + slot + slice * MIB, ref + slice * MIB,
						 MIB) == 0);
			}
		}
		if (!n)
			usleep(50);
	}

	/* stop the peer; let whatever can still complete complete (100 ms
	 * without a completion), then add Reads that cannot */
	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	for (uint64_t quiet = ms_now();;) {
		int n = uiw_poll_cq(e.cq, 64, wc);

		ck_assert_int_ge(n, 0);
		for (int j = 0; j < n; j++, next_wc++)
			check_wc(&wc[j], "stream", next_wc,
				 is_read[next_wc] ? UIW_WC_RDMA_READ : UIW_WC_RDMA_WRITE,
				 UIW_WC_SUCCESS);
		if (n)
			quiet = ms_now();
		else if (ms_now() - quiet >= 100)
			break;
		else
			usleep(200);
	}
	must_fail_from = posted;
	for (int i = 0; i < 4 && posted - next_wc < 60; i++) {
		is_read[posted] = 1;
		post1(&e, posted, UIW_WR_RDMA_READ, UIW_SEND_SIGNALED, e.buf + slot, 4096, p.h.addr,
		      p.h.rkey);
		posted++;
	}
	ck_assert_uint_gt(posted - next_wc, 0);
	ck_assert_int_eq(uiw_get_cm_event(e.ctx, &ev, 0), -ETIMEDOUT);

	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	t0 = ms_now();
	t_end = t0 + 5000;
	while (next_wc < posted || recv_flushed < 8 || !disconnected) {
		int n = uiw_poll_cq(e.cq, 64, wc);

		ck_assert_int_ge(n, 0);
		for (int j = 0; j < n; j++) {
			if (wc[j].wr_id >= 100000) {
				check_wc(&wc[j], "receive", 100000 + (uint64_t)recv_flushed,
					 UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR);
				recv_flushed++;
				continue;
			}
			ck_assert_msg(wc[j].wr_id == next_wc,
				      "completion of wr %llu, expected %llu",
				      (unsigned long long)wc[j].wr_id, (unsigned long long)next_wc);
			ck_assert_msg(wc[j].status != UIW_WC_SUCCESS,
				      "wr %llu (%s) succeeded after the peer was killed",
				      (unsigned long long)next_wc,
				      is_read[next_wc] ? "Read" : "Write");
			if (!send_errors++)
				first_bad = next_wc;
			next_wc++;
		}
		if (!disconnected) {
			int ret = uiw_get_cm_event(e.ctx, &ev, 0);

			if (!ret) {
				ck_assert_msg(ev.event == UIW_CM_EVENT_DISCONNECTED, "event %s",
					      uiw_event_str(ev.event));
				disconnected = 1;
			}
		}
		ck_assert_msg(
			ms_now() < t_end,
			"5 s after SIGKILL: %llu of %llu WRs, %d of 8 receives, disconnected %d",
			(unsigned long long)next_wc, (unsigned long long)posted, recv_flushed,
			disconnected);
		if (!n)
			usleep(200);
	}
	ck_assert_uint_le(first_bad, must_fail_from);
	ck_assert_int_gt(send_errors, 0);

	/* the QP is in error: new work is flushed at once */
	post1(&e, 200000, UIW_WR_SEND, UIW_SEND_SIGNALED, e.buf, 10, 0, 0);
	expect_wc(e.cq, 200000, UIW_WC_SEND, UIW_WC_WR_FLUSH_ERR, NULL);
	no_wc(e.cq);

	status = tp_reap(p.kid, TP_WAIT_MS);
	ck_assert_int_ne(status, -1);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	free(ref);
	free(is_read);
	close_end(&e);
}
END_TEST

/* ---- 6: connection failures -------------------------------------------------- */

/* A port that was listening and is closed again: tell it, wait for "done". */
static int closed_port_main(struct tp_kid *self, const void *arg)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	uint16_t port;
	uint8_t cmd;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)arg;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		return kid_fail(KX_SETUP, "socket: %s", strerror(errno));
	close(fd);
	port = ntohs(sa.sin_port);
	if (tp_write(self->to_fd, &port, sizeof(port)) ||
	    tp_read(self->from_fd, &cmd, 1, TP_IDLE_MS, NULL))
		return kid_fail(KX_PIPE, "pipe");
	return KX_OK;
}

START_TEST(test_proc_unreachable)
{
	struct tp_kid *k = tp_spawn(closed_port_main, NULL);
	struct tp_end_cfg ec;
	struct tp_end e;
	struct uiw_cm_event ev;
	uint16_t port;
	uint8_t done = 1;

	ck_assert_int_eq(tp_read(k->from_fd, &port, sizeof(port), TP_WAIT_MS, NULL), 0);
	end_cfg_default(&ec, 64 * KIB);
	open_end(&e, &ec);
	ck_assert_int_eq(uiw_create_id(e.ctx, NULL, &e.id), 0);
	ck_assert_int_eq(uiw_connect(e.id, "127.0.0.1", port, e.qp, NULL), 0);
	want_event(e.ctx, UIW_CM_EVENT_REJECTED, &ev); /* refused: REJECTED, as librdmacm on iWARP */
	ck_assert_ptr_eq(ev.id, e.id);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_int_eq(uiw_get_cm_event(e.ctx, &ev, 100), -ETIMEDOUT);
	ck_assert_int_eq(tp_write(k->to_fd, &done, 1), 0);
	tp_expect_exit(k, KX_OK);
	close_end(&e);
}
END_TEST

/* A reject with private data: REJECTED (-ECONNREFUSED), the data intact
 * both ways. */
START_TEST(test_proc_reject)
{
	uint8_t pd[100];
	struct uiw_conn_param cp = {pd, sizeof(pd), 0, 0};
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	uint64_t seed = seed_of(0x900);

	peer_cfg_default(&pc, 64 * KIB);
	pc.reject = 1;
	pc.pd_len = 300;
	peer_start(&p, &pc);
	end_cfg_default(&ec, 64 * KIB);
	open_end(&e, &ec);
	pat_fill(pd, sizeof(pd), seed);
	ck_assert_int_eq(uiw_create_id(e.ctx, NULL, &e.id), 0);
	ck_assert_int_eq(uiw_connect(e.id, "127.0.0.1", p.h.port, e.qp, &cp), 0);
	want_event(e.ctx, UIW_CM_EVENT_REJECTED, &ev);
	ck_assert_ptr_eq(ev.id, e.id);
	ck_assert_int_eq(ev.status, -ECONNREFUSED);
	ck_assert_uint_eq(ev.private_data_len, 300);
	ck_assert_int_eq(pat_cmp(ev.private_data, 300, pc.pd_seed), 0);
	peer_read_conn(&p);
	ck_assert_int_eq(p.conn.ret, 0);
	ck_assert_uint_eq(p.conn.pd_len, sizeof(pd));
	ck_assert_int_eq(pat_cmp(p.conn.pd, sizeof(pd), seed), 0);
	ck_assert_int_eq(uiw_get_cm_event(e.ctx, &ev, 100), -ETIMEDOUT);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

/*
 * A plain TCP listener that accepts and reads nothing.  After the parent is
 * done it reads what came (an MPA Request) up to the end of the stream,
 * which the initiator's failure must have closed: exit 0 then.
 */
static int silent_main(struct tp_kid *self, const void *arg)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);
	uint8_t buf[4096], cmd = 1;
	size_t got = 0;
	uint16_t port;
	int fd = socket(AF_INET, SOCK_STREAM, 0), cfd;
	uint64_t end;

	(void)arg;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len))
		return kid_fail(KX_SETUP, "socket: %s", strerror(errno));
	port = ntohs(sa.sin_port);
	if (tp_write(self->to_fd, &port, sizeof(port)))
		return kid_fail(KX_PIPE, "pipe");
	if (poll1(fd, TP_WAIT_MS) != 1 || (cfd = accept(fd, NULL, NULL)) < 0)
		return kid_fail(KX_CONN, "no connection");
	if (tp_write(self->to_fd, &cmd, 1) || tp_read(self->from_fd, &cmd, 1, TP_IDLE_MS, NULL))
		return kid_fail(KX_PIPE, "pipe");
	end = ms_now() + TP_WAIT_MS;
	for (;;) {
		ssize_t n;

		if (poll1(cfd, 100) == 1) {
			n = read(cfd, buf + (got < 64 ? got : 64), sizeof(buf) - 64);
			if (n == 0 || (n < 0 && errno == ECONNRESET))
				break;
			if (n < 0)
				return kid_fail(KX_CONN, "read: %s", strerror(errno));
			got += (size_t)n;
		}
		if (ms_now() >= end)
			return kid_fail(KX_CONN, "the initiator did not close the connection");
	}
	if (got < 16 || memcmp(buf, "MPA ID Req Frame", 16))
		return kid_fail(KX_CHECK, "no MPA Request received (%zu octets)", got);
	close(cfd);
	close(fd);
	return KX_OK;
}

/* A listener that never answers the MPA Request: CONNECT_ERROR with
 * -ETIMEDOUT after handshake_timeout_ms (300 ms). */
START_TEST(test_proc_hs_timeout)
{
	struct tp_kid *k = tp_spawn(silent_main, NULL);
	struct tp_end_cfg ec;
	struct tp_end e;
	struct uiw_cm_event ev;
	uint16_t port;
	uint8_t b = 1;
	uint64_t t0, dt;

	ck_assert_int_eq(tp_read(k->from_fd, &port, sizeof(port), TP_WAIT_MS, NULL), 0);
	end_cfg_default(&ec, 64 * KIB);
	ec.attr.handshake_timeout_ms = 300;
	open_end(&e, &ec);
	ck_assert_int_eq(uiw_create_id(e.ctx, NULL, &e.id), 0);
	t0 = ms_now();
	ck_assert_int_eq(uiw_connect(e.id, "127.0.0.1", port, e.qp, NULL), 0);
	want_event(e.ctx, UIW_CM_EVENT_CONNECT_ERROR, &ev);
	dt = ms_now() - t0;
	ck_assert_ptr_eq(ev.id, e.id);
	ck_assert_int_eq(ev.status, -ETIMEDOUT);
	ck_assert_msg(dt >= 290 && dt < 2000, "CONNECT_ERROR after %llu ms, not ~300",
		      (unsigned long long)dt);
	ck_assert_int_eq(tp_read(k->from_fd, &b, 1, TP_WAIT_MS, NULL), 0); /* it accepted */
	ck_assert_int_eq(tp_write(k->to_fd, &b, 1), 0);
	tp_expect_exit(k, KX_OK);
	close_end(&e);
}
END_TEST

/* ---- 7: polled mode, completion channels, CM event fd -------------------------- */

/*
 * Both ends in polled mode, driven only by uiw_poll_cq() and
 * uiw_get_cm_event(): nothing moves while the sender does not poll; then
 * Writes, Reads and Sends both ways.
 */
START_TEST(test_proc_polled)
{
	const size_t slot = OSLOT;
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_wc wc;
	uint64_t seed = seed_of(0xa00);

	peer_cfg_default(&pc, slot);
	pc.end.attr.mode = UIW_CTX_POLLED;
	peer_start(&p, &pc);
	end_cfg_default(&ec, slot);
	ec.attr.mode = UIW_CTX_POLLED;
	open_end(&e, &ec);
	tp_connect(&e, &p, &pc, NULL, NULL);

	/* a Send does not leave until we poll */
	p_zero(&p, 2 * slot, 4096);
	p_recv1(&p, 50, 2 * slot, 4096);
	pat_fill(e.buf, 200, seed);
	post1(&e, 1, UIW_WR_SEND, UIW_SEND_SIGNALED, e.buf, 200, 0, 0);
	p.turn = NULL;
	ck_assert_int_eq(p_poll(&p, 300, &wc), -ETIMEDOUT);
	p.turn = &e;
	expect_wc(e.cq, 1, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	p_want_wc(&p, 50, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 200);
	p_check(&p, 2 * slot, 200, seed);

	exchange(&e, &p, 65537, slot, seed + 100);
	exchange(&e, &p, MIB, slot, seed + 200);
	tp_disconnect(&e, &p);
	peer_stop(&p);
	close_end(&e);
}
END_TEST

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	ck_assert_int_ge(fl, 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK), 0);
}

/* Take the one event of the channel (its fd must be readable within
 * TP_WAIT_MS): it is for @e's receive CQ; acknowledge it. */
static void take_cq_event(struct tp_end *e)
{
	struct uiw_cq *cq = NULL;
	void *cq_ctx = NULL;

	ck_assert_int_eq(poll1(e->ch->fd, TP_WAIT_MS), 1);
	ck_assert_int_eq(uiw_get_cq_event(e->ch, &cq, &cq_ctx), 0);
	ck_assert_ptr_eq(cq, e->rcq);
	ck_assert_ptr_eq(cq_ctx, e);
	ck_assert_int_eq(uiw_destroy_cq(e->rcq), -EBUSY); /* in use, not acknowledged */
	uiw_ack_cq_events(e->rcq, 1);
	ck_assert_int_eq(poll1(e->ch->fd, 0), 0);
}

/*
 * Completion channels: a solicited-only arm ignores a plain Send and fires
 * on a solicited one; an "any" arm fires on a plain one; an error
 * completion (flush at the peer's disconnect) fires a solicited-only arm;
 * the channel fd is readable with poll(2) exactly while an event is
 * pending.  The CM event fd is readable while a CM event is queued.
 */
START_TEST(test_proc_channels)
{
	const size_t slot = 64 * KIB;
	struct peer_cfg pc;
	struct tp_end_cfg ec;
	struct tp_peer p;
	struct tp_end e;
	struct uiw_cm_event ev;
	struct uiw_wc wc;
	struct uiw_cq *cq;
	void *cq_ctx;
	uint64_t seed = seed_of(0xb00);
	uint8_t pd[CPD_LEN];
	struct uiw_conn_param cp = {pd, sizeof(pd), 0, 0};
	int cmfd;

	peer_cfg_default(&pc, slot);
	peer_start(&p, &pc);
	end_cfg_default(&ec, slot);
	ec.channel = 1;
	open_end(&e, &ec);
	p.turn = &e;

	/* the CM event fd */
	cmfd = uiw_cm_event_fd(e.ctx);
	ck_assert_int_ge(cmfd, 0);
	ck_assert_int_eq(poll1(cmfd, 0), 0);
	pat_fill(pd, sizeof(pd), seed);
	ck_assert_int_eq(uiw_create_id(e.ctx, &e, &e.id), 0);
	ck_assert_int_eq(uiw_connect(e.id, "127.0.0.1", p.h.port, e.qp, &cp), 0);
	ck_assert_int_eq(poll1(cmfd, TP_WAIT_MS), 1);
	ck_assert_int_eq(uiw_get_cm_event(e.ctx, &ev, 0), 0);
	ck_assert_int_eq(ev.event, UIW_CM_EVENT_ESTABLISHED);
	ck_assert_int_eq(poll1(cmfd, 0), 0);
	peer_read_conn(&p);
	ck_assert_int_eq(p.conn.ret, 0);
	sync_read(&e, &p); /* the initiator sends first (see tp_connect()) */

	for (int i = 0; i < 4; i++)
		recv1(&e, 1 + (uint64_t)i, e.buf + 2 * slot + (size_t)i * 4096, 4096);
	p_fill(&p, 0, 4096, seed + 1);
	ck_assert_int_eq(poll1(e.ch->fd, 0), 0);

	/* solicited-only: a plain Send completes but does not wake us */
	ck_assert_int_eq(uiw_req_notify_cq(e.rcq, 1), 0);
	p_post1(&p, 10, UIW_WR_SEND, UIW_SEND_SIGNALED, 0, 100, 0, 0);
	p_want_wc(&p, 10, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	expect_wc(e.rcq, 1, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.wc_flags & UIW_WC_SOLICITED, 0);
	ck_assert_int_eq(poll1(e.ch->fd, 200), 0);
	set_nonblock(e.ch->fd, 1);
	ck_assert_int_eq(uiw_get_cq_event(e.ch, &cq, &cq_ctx), -EAGAIN);
	set_nonblock(e.ch->fd, 0);

	/* ... a solicited one does (the arm is still set) */
	p_post1(&p, 11, UIW_WR_SEND, UIW_SEND_SIGNALED | UIW_SEND_SOLICITED, 0, 200, 0, 0);
	p_want_wc(&p, 11, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	take_cq_event(&e);
	expect_wc(e.rcq, 2, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.wc_flags & UIW_WC_SOLICITED, UIW_WC_SOLICITED);
	ck_assert_uint_eq(wc.byte_len, 200);
	ck_assert_int_eq(pat_cmp(e.buf + 2 * slot + 4096, 200, seed + 1), 0);

	/* one event per arm: not re-armed, a solicited Send wakes nobody */
	p_post1(&p, 12, UIW_WR_SEND, UIW_SEND_SIGNALED | UIW_SEND_SOLICITED, 0, 1, 0, 0);
	p_want_wc(&p, 12, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	expect_wc(e.rcq, 3, UIW_WC_RECV, UIW_WC_SUCCESS, NULL);
	ck_assert_int_eq(poll1(e.ch->fd, 100), 0);

	/* "any": a plain Send wakes us; the non-blocking fd gives the event */
	ck_assert_int_eq(uiw_req_notify_cq(e.rcq, 0), 0);
	recv1(&e, 5, e.buf + 2 * slot, 4096);
	p_post1(&p, 13, UIW_WR_SEND, UIW_SEND_SIGNALED, 0, 0, 0, 0);
	p_want_wc(&p, 13, UIW_WC_SEND, UIW_WC_SUCCESS, NULL);
	set_nonblock(e.ch->fd, 1);
	take_cq_event(&e);
	set_nonblock(e.ch->fd, 0);
	expect_wc(e.rcq, 4, UIW_WC_RECV, UIW_WC_SUCCESS, &wc);
	ck_assert_uint_eq(wc.byte_len, 0);

	/* solicited-only, then the peer disconnects: the flushed receive is an
	 * error completion and wakes us; DISCONNECTED makes the CM fd readable */
	ck_assert_int_eq(uiw_req_notify_cq(e.rcq, 1), 0);
	p_simple(&p, PO_DISCONNECT, 0);
	ck_assert_int_eq(poll1(cmfd, TP_WAIT_MS), 1);
	ck_assert_int_eq(uiw_get_cm_event(e.ctx, &ev, 0), 0);
	ck_assert_int_eq(ev.event, UIW_CM_EVENT_DISCONNECTED);
	ck_assert_int_eq(poll1(cmfd, 0), 0);
	take_cq_event(&e);
	expect_wc(e.rcq, 5, UIW_WC_RECV, UIW_WC_WR_FLUSH_ERR, NULL);
	p_want_event(&p, UIW_CM_EVENT_DISCONNECTED);
	no_wc(e.rcq);
	no_wc(e.cq);

	peer_stop(&p);
	close_end(&e); /* the CQ and the channel go, every event acknowledged */
}
END_TEST

Suite *verbs_proc_suite(void)
{
	Suite *s = suite_create("verbs_proc");
	TCase *tc = tcase_create("processes");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_loop_test(tc, test_proc_data, 0,
			    (int)(sizeof(data_sizes) / sizeof(data_sizes[0])));
	tcase_add_test(tc, test_proc_opcodes);
	tcase_add_test(tc, test_proc_invalidate);
	tcase_add_test(tc, test_proc_conn_params);
	tcase_add_test(tc, test_proc_responder_waits);
	tcase_add_test(tc, test_proc_256qp);
	tcase_add_test(tc, test_proc_passive);
	tcase_add_test(tc, test_proc_disconnect_flush);
	tcase_add_test(tc, test_proc_abort_flush);
	tcase_add_test(tc, test_proc_sigkill);
	tcase_add_test(tc, test_proc_unreachable);
	tcase_add_test(tc, test_proc_reject);
	tcase_add_test(tc, test_proc_hs_timeout);
	tcase_add_test(tc, test_proc_polled);
	tcase_add_test(tc, test_proc_channels);
	suite_add_tcase(s, tc);
	return s;
}
