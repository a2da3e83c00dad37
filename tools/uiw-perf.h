/* SPDX-License-Identifier: MIT */
/*
 * uiw-perf.h - what the parts of uiw-perf share: its options and tests, the
 * settings hello, the result records and their printing, statistics, the
 * payload pattern and the helpers every part calls.  Private to the tool.
 *
 *   uiw-perf.c           options, output, the uiwarp (verbs) tests, main()
 *   uiw-perf-tcp.c       the raw TCP baseline (tcp_bw, tcp_lat)
 *   uiw-perf-perftest.c  perftest's rdma_cm exchange (--perftest)
 */
#ifndef UIW_PERF_H
#define UIW_PERF_H

#include <stddef.h>
#include <stdint.h>

#define PERF_PORT	 18515
#define PERF_MAX_QPS	 1024
#define PERF_MAX_SIZE	 (1u << 30)
#define PERF_ALL_MAX	 (1u << 23)  /* -a: 2 .. 8 MiB, as perftest */
#define PERF_VERIFY_MEM	 (64u << 20) /* --verify: slot memory per side */
#define PERF_CTRL_LEN	 192	     /* control message buffer */
#define PERF_CTRL_RX	 32	     /* control receives per QP */
#define PERF_CTRL_TX	 64	     /* control sends outstanding per QP */
#define PERF_LAT_RX	 16	     /* receives per QP in send_lat */
#define PERF_CHAIN_MAX	 1024
#define PERF_TCP_FRAME	 256	    /* TCP hello / reply / result frames */
#define PERF_TCP_RXBUF	 (256u << 10) /* the TCP receiver's recv() size: the message size, at most this */
#define PERF_TIMEOUT_S	 10	    /* default --timeout: bound on every wait for the peer */
#define PERF_MB		 1048576.0  /* MB/sec as perftest: 2^20 bytes */
#define PERF_PD_MAGIC	 "UIWPERF\001"
#define PERF_CTRL_MAGIC	 0x55504331u /* "UPC1" */
#define PERF_FRAME_MAGIC 0x55505446u /* "UPTF" */
/* the atomic tests (RFC 7306): the server's counter word starts at
 * PERF_ATOMIC_BASE (just below 2^32, so that every run carries out of the
 * low 32 bits) and every fetch_add, or successful cmp_swap, adds
 * PERF_ATOMIC_ADD; so every value the word takes is BASE + k * ADD */
#define PERF_ATOMIC_BASE 0xffffff00ull
#define PERF_ATOMIC_ADD	 0x10001ull
#define PERF_ATOMIC_SIZE 8 /* the operand: a 64-bit word */

enum exit_code {
	EXIT_OK = 0,
	EXIT_ERR = 1,	 /* setup, connection, settings mismatch, library error */
	EXIT_USAGE = 2,	 /* bad command line */
	EXIT_VERIFY = 3, /* --verify found a payload mismatch */
};

/* ---- tests ------------------------------------------------------------- */

enum test_id {
	T_WRITE_BW,
	T_READ_BW,
	T_SEND_BW,
	T_WRITE_LAT,
	T_READ_LAT,
	T_SEND_LAT,
	T_TCP_BW,
	T_TCP_LAT,
	T_ATOMIC_LAT,	/* RFC 7306 */
	T_ATOMIC_BW,	/* RFC 7306 */
	T_WRITE_IMM_BW, /* RFC 7306 */
	T_COUNT
};

struct test_info {
	const char *name;
	const char *title;
	int lat; /* latency (ping-pong) test */
	int tcp; /* raw TCP baseline */
	int ext; /* RFC 7306 extensions: the QPs are created with UIW_QP_EXT_RFC7306 */
	int atomic; /* remote atomics on the server's counter word (size 8) */
};

extern const struct test_info tests[T_COUNT];

/* ---- options ----------------------------------------------------------- */

/* options given explicitly (a server checks only those against the client) */
enum {
	G_SIZE = 1u << 0,
	G_ALL = 1u << 1,
	G_ITERS = 1u << 2,
	G_DUR = 1u << 3,
	G_QPS = 1u << 4,
	G_TX = 1u << 5,
	G_RX = 1u << 6,
	G_CQMOD = 1u << 7,
	G_OUTS = 1u << 8,
	G_INLINE = 1u << 9,
	G_VERIFY = 1u << 10,
	G_INJECT = 1u << 11,
	G_ATOMIC = 1u << 12,
};

/* --atomic: the operation of atomic_lat and atomic_bw */
enum atomic_op { A_FETCH_ADD = 0, A_CMP_SWAP = 1 };

struct opts {
	enum test_id test;
	uint32_t size;
	int all;
	uint64_t iters;
	uint64_t duration_us; /* 0: run -n iterations */
	unsigned qps;
	unsigned port;
	int crc;     /* 1 on, 0 off */
	int markers; /* 1 on */
	int poll;    /* 1: --poll, 0: -e/--use_event; default: latency tests poll */
	int mode_given; /* --poll or -e given (else the test's default) */
	int app;     /* --progress app: polled context, the application waits in it */
	int poll_thread;  /* --poll --progress thread: a progress thread moves the
			   * data, the application busy-polls the CQ (as a
			   * libibverbs program on libuiw-rdma) */
	unsigned engines; /* --engines: progress threads of the context */
	int verify;
	int json;
	unsigned tx_depth, rx_depth, cq_mod, outs, inline_size;
	uint64_t inject; /* 0: none, else 1 + the message index to corrupt */
	int atomic_op;	 /* --atomic: enum atomic_op */
	const char *server;
	const char *bind;
	unsigned given;
	uint32_t session;
	int perftest; /* --perftest: perftest's rdma_cm (-R) exchange */
	double timeout_s; /* --timeout: bound on every wait for the peer; 0: none */
};

struct wbuf {
	uint8_t *p;
	size_t len, cap;
};

struct rbuf {
	const uint8_t *p;
	size_t len, off;
	int err;
};

struct sysfacts {
	char cc[32];
	int mss;
	char mss_how[48];
};

struct bw_result {
	uint32_t size;
	uint64_t msgs;
	uint64_t elapsed_ns;
	double peak, avg, rate; /* MB/sec, MB/sec, Mpps */
	/* user + system CPU seconds of this process and of the peer over the
	 * size's run (getrusage, every thread); negative: not known */
	double cpu_self, cpu_peer;
	uint64_t bytes; /* moved, for CPU per GiB; 0: msgs * size */
	/* user-space copies per payload octet received and sent
	 * (uiw_query_context_stats()), ours and the peer's, over the size's
	 * run; negative: not known (uiwarp tests only) */
	double cp_rx, cp_tx, cp_peer_rx, cp_peer_tx;
};

struct lat_result {
	uint32_t size;
	uint64_t iters;
	double min, max, typ, avg, stdev, p99, p999; /* usec */
};

/*
 * The hello: the settings of a run and, per QP, the memory the peer may
 * access.  Sent by the client in uiw_connect()'s private data and by the
 * server in uiw_accept()'s (TCP tests: a PERF_TCP_FRAME frame).
 */
struct hello {
	uint8_t test, crc, markers, poll, verify, all;
	uint16_t qps, qp_index;
	uint32_t session, size;
	uint64_t iters, duration_us, inject;
	uint32_t tx_depth, rx_depth, cq_mod, outs, inline_size, given;
	/* per QP */
	uint64_t addr;
	uint32_t rkey, nslots, slot_size, recv_posted;
	char version[16];
	uint8_t atomic; /* --atomic (enum atomic_op) */
};

/* a growable array of (time, value) pairs */
struct samples {
	uint64_t *t, *v;
	size_t n, cap;
};

/* progress of -D runs, on stderr, once a second */
struct progress {
	uint64_t t0, next, dur_ns;
};

/* streams: the client's QP i sends stream i, the server's answers 0x8000 | i */
#define STREAM_REPLY 0x8000u

extern const char *prog;
extern const char *dashes;	/* the rule of perftest's result table */
extern uint64_t stall_ns;	/* --timeout in ns; 0: no bound */
extern uint64_t verify_errors;	/* --verify mismatches found here */

/* ---- uiw-perf.c -------------------------------------------------------- */

void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));
void stall_die(const char *who, const char *during) __attribute__((noreturn));
void vcheck(int ret, const char *what);
uint64_t now_ns(void);
unsigned run_sizes(const struct opts *o, uint32_t *sizes);

uint64_t pat_seed(unsigned stream, uint64_t iter);
void pat_fill(uint8_t *p, uint64_t seed, uint64_t off, size_t n);
void verify_msg(const char *what, unsigned stream, uint64_t iter, const uint8_t *p, uint64_t off,
		size_t n);
void maybe_inject(const struct opts *o, uint64_t iter, uint8_t *p, size_t n);

void w_bytes(struct wbuf *w, const void *d, size_t n);
void w_u8(struct wbuf *w, uint8_t v);
void w_u32(struct wbuf *w, uint32_t v);
void w_u64(struct wbuf *w, uint64_t v);
void r_bytes(struct rbuf *r, void *d, size_t n);
uint8_t r_u8(struct rbuf *r);
uint32_t r_u32(struct rbuf *r);
uint64_t r_u64(struct rbuf *r);

size_t hello_encode(const struct hello *h, uint8_t *buf, size_t cap);
int pd_decode(const uint8_t *buf, size_t len, struct hello *h, char *msg, size_t msglen);
void hello_from_opts(const struct opts *o, struct hello *h);
int settings_merge(struct opts *o, const struct hello *h, char *why, size_t len);
const char *onoff(int v);
const char *atomic_name(int op);

const char *resolve_error(const char *host);
void sysfacts_get(struct sysfacts *s, const struct opts *o);
void listening_line(const struct opts *o, unsigned port);

double cpu_now(void);
void print_header(const struct opts *o, const struct sysfacts *s, int server);
void print_footer(const struct opts *o);
void print_bw(const struct opts *o, const struct sysfacts *s, int server,
	      const struct bw_result *r);
void print_lat(const struct opts *o, const struct sysfacts *s, int server,
	       const struct lat_result *r);

void samples_push(struct samples *s, uint64_t t, uint64_t v);
void samples_free(struct samples *s);
void bw_compute(const struct samples *s, uint32_t size, uint64_t msgs, uint64_t t0, uint64_t t1,
		struct bw_result *r);
void lat_compute(uint64_t *v, size_t n, uint32_t size, struct lat_result *r);
void progress_init(struct progress *pg, const struct opts *o, uint64_t t0);
void progress_tick(struct progress *pg, const struct opts *o, uint64_t t, uint32_t size,
		   uint64_t msgs);

/* ---- uiw-perf-tcp.c ---------------------------------------------------- */

/* recv() size of the TCP receiver for messages of @size */
size_t tcp_rx_len(uint32_t size);
void run_tcp_client(struct opts *o);
void run_tcp_server(struct opts *o);

/* ---- uiw-perf-perftest.c ----------------------------------------------- */

void pt_run(struct opts *o);

#endif
