/* SPDX-License-Identifier: MIT */
/*
 * failalloc - failing-allocation test of connection setup and teardown
 * (issue 8): fail the Nth allocation, for every N, and check that nothing
 * crashes or hangs, that every call succeeds or fails with a clean -errno,
 * and that everything allocated is freed again.
 *
 *   failalloc [-m thread|polled|all] [-s SCENARIO|all] [-n FIRST] [-N LAST]
 *             [-r ROUNDS] [-t SECONDS] [-o FILE] [-p] [-q] [-X leak|crash|hang]
 *
 * This program replaces malloc, calloc, realloc, reallocarray, free,
 * posix_memalign, aligned_alloc, memalign, valloc and pvalloc (glibc allows
 * it in the executable: libc, OpenSSL and liburing call these too) with
 * wrappers around glibc's own (__libc_malloc, ...) that, once armed, count
 * the allocations of every thread, fail the Nth with ENOMEM (-p: the Nth
 * and every later one), and remember every block allocated (with a short
 * backtrace) until it is freed.
 *
 * The scenario (full), in one process, over 127.0.0.1 with a kernel-chosen
 * port: two contexts (server and client; both progress-thread or both
 * polled, -m), on each a PD, a CQ (the server's with a completion
 * channel), an MR and a QP; the server listens, the client connects with
 * private data, the server posts a receive and accepts; the client Sends 64
 * octets, RDMA Writes 4 KiB and RDMA Reads 4 KiB back, every octet
 * verified; the client disconnects, both see DISCONNECTED; then every
 * object is destroyed and both contexts closed.  Variants (-s): p2p-srq
 * (RFC 6581 peer-to-peer, markers, CRC, the server's receives from an SRQ),
 * abort (after the data, 4 MiB of Writes queued and the client's QP moved
 * to error), reject (the server rejects, and destroys the id at once), and
 * a peer that goes away during setup: client-gone (the client destroys its
 * id once the server has the CONNECT_REQUEST, then the server accepts) and
 * server-gone (the server destroys the request's id and the listener
 * without answering).
 *
 * After an unarmed warm-up run of each scenario (OpenSSL, liburing, NSS and
 * the thread stacks allocate lazily), for N = 1, 2, ... a child process is
 * forked that arms the counter at N and runs the scenario: each step that
 * fails must fail with an errno the API documents for it, CM events carry
 * only the statuses the failure explains, the scenario then tears down
 * what it created (every teardown call must return 0), and no block
 * allocated while armed may be left.  Every wait is bounded (10 s; the
 * handshake timeout is 5 s); the parent kills a child that takes longer
 * than -t seconds (default 60) and reports a hang; a signal is a crash.
 * The sweep ends with the first N that the scenario never reaches.  One
 * line per N (to -o FILE, else stdout; -q: only those with problems) says
 * which allocation failed (function, size, call chain) and what the
 * scenario saw; a table at the end counts N per allocating function and
 * outcome.  -X feeds the checker a leak, a crash or a hang (at N = FIRST)
 * to show that it catches them.
 * Exit 0: no problem; 1: problems (lines with PROBLEM, and FAIL); 2: usage.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "uiw_verbs.h"

/* ---- the allocator ------------------------------------------------------ */

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);
void *__libc_memalign(size_t align, size_t n);
/* <malloc.h> has these; it also declares what this file replaces */
void *memalign(size_t align, size_t n);
void *pvalloc(size_t n);

#define FA_BT	  10	     /* frames kept per block (the caller first) */
#define FA_TABLE  (1u << 16) /* blocks tracked at once */
#define FA_REPORT 2048	     /* a child's report text */

struct fa_block {
	void *p; /* NULL: empty; FA_TOMB: deleted */
	size_t n;
	void *bt[FA_BT];
};
#define FA_TOMB ((void *)1)

/* What a child records, in memory shared with the parent: a crash or a
 * hang still leaves the failed allocation and the step it was in. */
struct fa_shared {
	unsigned long calls; /* allocations counted while armed */
	int hit;	     /* the Nth allocation was failed */
	int hit_main;	     /* ... in the scenario's thread (else a progress thread) */
	const char *hit_fn;
	size_t hit_size;
	int hit_nbt;
	void *hit_bt[FA_BT + 1];
	const char *step; /* the scenario step under way */
	int done;	  /* the report below is complete */
	int problems;
	unsigned ms;
	char first[160]; /* the first step that failed, or an error event */
	char text[FA_REPORT];
};

static int fa_armed;		   /* count, fail and track */
static unsigned long fa_fail_at;   /* N (0: never) */
static int fa_persist;		   /* -p: fail every allocation from the Nth on */
static unsigned long fa_nblocks;   /* tracked blocks */
static struct fa_block *fa_blocks; /* FA_TABLE entries (mmap) */
static pthread_mutex_t fa_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread int fa_in; /* inside a wrapper: do not count nested calls */
static pid_t fa_main_tid;
static struct fa_shared *sh;

static size_t fa_hash(const void *p)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 48) & (FA_TABLE - 1);
}

/* lock held */
static void fa_track(void *p, size_t n, void *const *bt, int nbt)
{
	size_t i = fa_hash(p);

	for (unsigned k = 0; k < FA_TABLE; k++, i = (i + 1) & (FA_TABLE - 1)) {
		struct fa_block *b = &fa_blocks[i];

		if (b->p == NULL || b->p == FA_TOMB) {
			b->p = p;
			b->n = n;
			memset(b->bt, 0, sizeof(b->bt));
			for (int j = 0; j < nbt && j < FA_BT; j++)
				b->bt[j] = bt[j];
			fa_nblocks++;
			return;
		}
	}
	/* table full: the block is not tracked (a leak of it goes unseen) */
}

/* lock held */
static void fa_untrack(void *p)
{
	size_t i = fa_hash(p);

	for (unsigned k = 0; k < FA_TABLE; k++, i = (i + 1) & (FA_TABLE - 1)) {
		struct fa_block *b = &fa_blocks[i];

		if (b->p == NULL)
			return;
		if (b->p == p) {
			b->p = FA_TOMB;
			fa_nblocks--;
			return;
		}
	}
}

/* Enter a wrapper: 1 when this call counts (armed, not nested). */
static int fa_enter(void)
{
	if (!__atomic_load_n(&fa_armed, __ATOMIC_ACQUIRE) || fa_in)
		return 0;
	fa_in = 1;
	return 1;
}

/* Counted allocation: 1 when it is the one to fail.  @bt gets the call chain. */
static int fa_count(const char *fn, size_t n, void **bt, int *nbt)
{
	unsigned long k = __atomic_add_fetch(&sh->calls, 1, __ATOMIC_RELAXED);
	void *frames[FA_BT + 1];
	int got = backtrace(frames, FA_BT + 1);

	/* frames[0] is this wrapper */
	*nbt = got > 1 ? got - 1 : 0;
	memcpy(bt, frames + 1, (size_t)*nbt * sizeof(void *));
	if (!fa_fail_at || k < fa_fail_at || (k > fa_fail_at && !fa_persist))
		return 0;
	if (k > fa_fail_at)
		return 1; /* -p: the later ones fail too; the Nth is the one reported */
	sh->hit_fn = fn;
	sh->hit_size = n;
	sh->hit_nbt = *nbt;
	memcpy(sh->hit_bt, bt, (size_t)*nbt * sizeof(void *));
	sh->hit_main = (pid_t)syscall(SYS_gettid) == fa_main_tid;
	__atomic_store_n(&sh->hit, 1, __ATOMIC_RELEASE);
	return 1;
}

static void *fa_alloc(const char *fn, size_t n, size_t align, int zero)
{
	void *bt[FA_BT + 1], *p;
	int nbt;

	if (!fa_enter()) {
		if (align)
			return __libc_memalign(align, n);
		return zero ? __libc_calloc(1, n) : __libc_malloc(n);
	}
	if (fa_count(fn, n, bt, &nbt)) {
		fa_in = 0;
		errno = ENOMEM;
		return NULL;
	}
	p = align ? __libc_memalign(align, n) : zero ? __libc_calloc(1, n) : __libc_malloc(n);
	if (p) {
		pthread_mutex_lock(&fa_lock);
		fa_track(p, n, bt, nbt);
		pthread_mutex_unlock(&fa_lock);
	}
	fa_in = 0;
	return p;
}

void *malloc(size_t n)
{
	return fa_alloc("malloc", n, 0, 0);
}

void *calloc(size_t k, size_t n)
{
	if (n && k > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	return fa_alloc("calloc", k * n, 0, 1);
}

void free(void *p)
{
	if (!p)
		return;
	if (__atomic_load_n(&fa_nblocks, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&fa_lock);
		fa_untrack(p);
		pthread_mutex_unlock(&fa_lock);
	}
	__libc_free(p);
}

void *realloc(void *old, size_t n)
{
	void *bt[FA_BT + 1], *p;
	int nbt;

	if (!old)
		return malloc(n);
	if (!n) {
		free(old);
		return NULL;
	}
	if (!fa_enter()) {
		if (!__atomic_load_n(&fa_nblocks, __ATOMIC_RELAXED))
			return __libc_realloc(old, n);
		/* tracked blocks may move: under the lock, so that the old
		 * address is untracked before another thread can get it */
		pthread_mutex_lock(&fa_lock);
		p = __libc_realloc(old, n);
		if (p)
			fa_untrack(old);
		pthread_mutex_unlock(&fa_lock);
		return p;
	}
	if (fa_count("realloc", n, bt, &nbt)) {
		fa_in = 0;
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&fa_lock);
	p = __libc_realloc(old, n);
	if (p) {
		fa_untrack(old);
		fa_track(p, n, bt, nbt);
	}
	pthread_mutex_unlock(&fa_lock);
	fa_in = 0;
	return p;
}

void *reallocarray(void *old, size_t k, size_t n)
{
	if (n && k > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(old, k * n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = fa_alloc("posix_memalign", n, align, 0);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return fa_alloc("aligned_alloc", n, align, 0);
}

void *memalign(size_t align, size_t n)
{
	return fa_alloc("memalign", n, align, 0);
}

void *valloc(size_t n)
{
	return fa_alloc("valloc", n, (size_t)sysconf(_SC_PAGESIZE), 0);
}

void *pvalloc(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return fa_alloc("pvalloc", (n + pg - 1) / pg * pg, pg, 0);
}

/* ---- symbols (the executable's .symtab: libuiw.a is linked in) ---------- */

struct fa_sym {
	uintptr_t lo, hi;
	const char *name;
};
static struct fa_sym *syms;
static size_t nsyms;
static uintptr_t exe_bias;

static int sym_cmp(const void *a, const void *b)
{
	const struct fa_sym *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	exe_bias = info->dlpi_addr; /* the first object is the executable */
	return 1;
}

static void syms_load(void)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *shdr;
	struct stat st;
	void *map;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	dl_iterate_phdr(phdr_cb, NULL);
	if (fd < 0)
		return;
	if (fstat(fd, &st) ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return;
	}
	close(fd);
	eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return;
	shdr = (const Elf64_Shdr *)((const char *)map + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *s;
		const char *str;
		size_t n;

		if (shdr[i].sh_type != SHT_SYMTAB)
			continue;
		s = (const Elf64_Sym *)((const char *)map + shdr[i].sh_offset);
		str = (const char *)map + shdr[shdr[i].sh_link].sh_offset;
		n = shdr[i].sh_size / sizeof(*s);
		syms = calloc(n, sizeof(*syms));
		if (!syms)
			return;
		for (size_t j = 0; j < n; j++) {
			if (ELF64_ST_TYPE(s[j].st_info) != STT_FUNC || !s[j].st_value)
				continue;
			syms[nsyms].lo = s[j].st_value;
			syms[nsyms].hi = s[j].st_value + (s[j].st_size ? s[j].st_size : 1);
			syms[nsyms].name = str + s[j].st_name;
			nsyms++;
		}
		qsort(syms, nsyms, sizeof(*syms), sym_cmp);
		return;
	}
}

/* "name" of the function containing @addr (a return address: addr - 1);
 * 1 when it is in this executable (uiwarp or this test). */
static int sym_name(void *addr, char *buf, size_t len)
{
	uintptr_t a = (uintptr_t)addr - 1 - exe_bias;
	size_t lo = 0, hi = nsyms;
	Dl_info di;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (syms[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && a < syms[lo - 1].hi) {
		snprintf(buf, len, "%s", syms[lo - 1].name);
		return 1;
	}
	if (dladdr(addr, &di) && di.dli_sname) {
		snprintf(buf, len, "%s", di.dli_sname);
	} else if (dladdr(addr, &di) && di.dli_fname) {
		const char *b = strrchr(di.dli_fname, '/');

		snprintf(buf, len, "%s+%#lx", b ? b + 1 : di.dli_fname,
			 (unsigned long)((uintptr_t)addr - (uintptr_t)di.dli_fbase));
	} else {
		snprintf(buf, len, "%p", addr);
	}
	return 0;
}

/* a function of this file's allocator */
static int is_wrapper(const char *name)
{
	static const char *const w[] = {
		"malloc",	 "calloc",   "realloc", "reallocarray", "posix_memalign",
		"aligned_alloc", "memalign", "valloc",	"pvalloc",	NULL};

	if (!strncmp(name, "fa_", 3))
		return 1;
	for (int k = 0; w[k]; k++)
		if (!strcmp(name, w[k]))
			return 1;
	return 0;
}

/* "f1 <- f2 <- ..." for a call chain; returns 1 when a frame is ours */
static int chain_str(void *const *bt, int n, char *buf, size_t len)
{
	size_t off = 0;
	int ours = 0;

	buf[0] = 0;
	for (int i = 0; i < n && bt[i] && off + 4 < len; i++) {
		char name[96];
		int mine = sym_name(bt[i], name, sizeof(name));

		if (!off && mine && is_wrapper(name))
			continue; /* this file's allocator */
		ours |= mine;
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " <- " : "", name);
		if (!strcmp(name, "scenario") || !strcmp(name, "engine_main") ||
		    !strcmp(name, "main"))
			break;
	}
	return ours;
}

/* ---- the scenario ------------------------------------------------------- */

enum fa_scn { SCN_FULL, SCN_P2P, SCN_ABORT, SCN_REJECT, SCN_CLIENT_GONE, SCN_SERVER_GONE, SCN_N };
static const char *const scn_names[SCN_N] = {"full",   "p2p-srq",     "abort",
					     "reject", "client-gone", "server-gone"};

#define WAIT_MS	 10000
#define BUF_LEN	 (4u << 20)  /* abort: more than the sockets buffer */
#define OFF_SEND 0	     /* client: Send source; server: receive */
#define OFF_WR	 4096	     /* client: Write source; server: Write target */
#define OFF_RD	 (12u << 10) /* server: Read source; client: Read target */
#define LEN_SEND 64
#define LEN_RDMA 4096
#define LEN_BIG	 (1u << 20) /* abort: the Writes queued */

struct side {
	const char *name;
	struct uiw_context *ctx;
	struct uiw_comp_channel *ch;
	struct uiw_pd *pd;
	struct uiw_cq *cq;
	struct uiw_mr *mr;
	struct uiw_srq *srq; /* server, p2p-srq: receives come from it */
	struct uiw_qp *qp;
	struct uiw_cm_id *lid; /* server: the listener */
	struct uiw_cm_id *id;  /* the connection's id */
	uint8_t *buf;
	int req, est, disc, err; /* events seen */
	int ncomp, comp_bad;	 /* completions polled; with an error status */
	struct uiw_wc wc[8];
};

static struct side srv, cli;
static int polled;
static enum fa_scn cur_scn;
static int server_gone; /* the server dropped the request: the client's error is expected */

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	size_t off = strlen(sh->text);
	va_list ap;

	if (off + 2 >= sizeof(sh->text))
		return;
	va_start(ap, fmt);
	vsnprintf(sh->text + off, sizeof(sh->text) - off, fmt, ap);
	va_end(ap);
	off = strlen(sh->text);
	if (off + 1 < sizeof(sh->text)) {
		sh->text[off] = '\n';
		sh->text[off + 1] = 0;
	}
}

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sh->problems++;
	report("PROBLEM: %s", msg);
}

static const char *errname(int e)
{
	switch (e < 0 ? -e : e) {
	case ENOMEM:
		return "ENOMEM";
	case EAGAIN:
		return "EAGAIN";
	case EIO:
		return "EIO";
	case EINVAL:
		return "EINVAL";
	case EBUSY:
		return "EBUSY";
	case EPIPE:
		return "EPIPE";
	case ECONNRESET:
		return "ECONNRESET";
	case ECONNABORTED:
		return "ECONNABORTED";
	case ECONNREFUSED:
		return "ECONNREFUSED";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	case EHOSTUNREACH:
		return "EHOSTUNREACH";
	case ENOTCONN:
		return "ENOTCONN";
	case EPROTO:
		return "EPROTO";
	case 0:
		return "0";
	}
	return "?";
}

/* The outcome of a call: 0 goes on; an error in @ok (0-terminated list of
 * errno values the call may return here) is recorded as the step that
 * failed; any other is a problem. */
static int chk(const char *what, int ret, const int *ok)
{
	if (ret == 0)
		return 0;
	if (!sh->first[0])
		snprintf(sh->first, sizeof(sh->first), "%s = -%s", what, errname(ret));
	for (; ret < 0 && ok && *ok; ok++)
		if (-ret == *ok)
			return ret;
	problem("%s returned %d (%s)", what, ret, errname(ret));
	return ret ? ret : -1;
}

static const int ok_none[] = {0};
static const int ok_nomem[] = {ENOMEM, 0};
/* pthread_create: EAGAIN; RAND_bytes failing: EIO */
static const int ok_open[] = {ENOMEM, EAGAIN, EIO, 0};
/* RAND_bytes failing (a new STag's random octets): EIO */
static const int ok_reg[] = {ENOMEM, EIO, 0};
/* a failed request, or its peer gone (uiw_accept on a dead request) */
static const int ok_accept[] = {ENOMEM, EINVAL, 0};
static const int ok_disconnect[] = {EINVAL, 0};

#define STEP(s) (sh->step = (s))

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void on_event(struct side *s, const struct uiw_cm_event *ev)
{
	char what[64];

	snprintf(what, sizeof(what), "%s: %s", s->name, uiw_event_str(ev->event));
	switch (ev->event) {
	case UIW_CM_EVENT_CONNECT_REQUEST:
		if (s != &srv || s->id || s->req)
			problem("%s: unexpected CONNECT_REQUEST", s->name);
		s->req = 1;
		s->id = ev->id;
		break;
	case UIW_CM_EVENT_ESTABLISHED:
		if (ev->id != s->id || s->est)
			problem("%s: unexpected ESTABLISHED", s->name);
		s->est = 1;
		break;
	case UIW_CM_EVENT_DISCONNECTED:
		if (!s->est || s->disc)
			problem("%s: DISCONNECTED without ESTABLISHED", s->name);
		if (ev->status && ev->status != -ECONNABORTED)
			problem("%s: DISCONNECTED with status %d", s->name, ev->status);
		s->disc = 1;
		break;
	case UIW_CM_EVENT_CONNECT_ERROR:
		/* the local handshake failed (-ENOMEM), or the peer went away */
		if (ev->status != -ENOMEM && ev->status != -ECONNRESET && ev->status != -EPIPE &&
		    ev->status != -ECONNABORTED)
			problem("%s: CONNECT_ERROR with status %d (%s)", s->name, ev->status,
				errname(ev->status));
		if (!sh->first[0] && !(server_gone && s == &cli && ev->status != -ENOMEM))
			snprintf(sh->first, sizeof(sh->first), "%s (%s)", what,
				 errname(ev->status));
		s->err = 1;
		break;
	case UIW_CM_EVENT_REJECTED:
		if (cur_scn != SCN_REJECT || s != &cli || ev->status != -ECONNREFUSED)
			problem("%s: unexpected REJECTED (status %d)", s->name, ev->status);
		s->err = 1;
		break;
	default:
		problem("%s: unexpected %s (status %d)", s->name, uiw_event_str(ev->event),
			ev->status);
		s->err = 1;
		break;
	}
}

/* one round: turn polled engines, take CM events and completions */
static void pump(void)
{
	struct side *sides[2] = {&srv, &cli};
	struct uiw_cm_event ev;

	for (int i = 0; i < 2; i++) {
		struct side *s = sides[i];
		int n;

		if (!s->ctx)
			continue;
		if (polled) {
			int r = uiw_progress(s->ctx, 1);

			if (r)
				problem("%s: uiw_progress returned %d", s->name, r);
		}
		while (uiw_get_cm_event(s->ctx, &ev, 0) == 0)
			on_event(s, &ev);
		while (s->cq && s->ncomp < 8 &&
		       (n = uiw_poll_cq(s->cq, 1, &s->wc[s->ncomp])) != 0) {
			if (n < 0) {
				problem("%s: uiw_poll_cq returned %d", s->name, n);
				break;
			}
			if (s->wc[s->ncomp].status != UIW_WC_SUCCESS)
				s->comp_bad++;
			s->ncomp++;
		}
	}
	if (!polled)
		usleep(200);
}

/* pump until @done says so; a problem after WAIT_MS */
static int wait_until(int (*done)(void), const char *what)
{
	uint64_t end = ms_now() + WAIT_MS;

	STEP(what);
	while (!done()) {
		if (ms_now() >= end) {
			problem("no progress within %d ms: %s (server req %d est %d disc %d err %d,"
				" client est %d disc %d err %d)",
				WAIT_MS, what, srv.req, srv.est, srv.disc, srv.err, cli.est,
				cli.disc, cli.err);
			return -1;
		}
		pump();
	}
	return 0;
}

/* the server has the request, or the client's attempt ended */
static int w_request(void)
{
	return srv.req || cli.err || cli.disc;
}

/* a side with a connection id has an outcome */
static int settled(const struct side *s)
{
	return !s->id || s->est || s->err || s->disc;
}

static int w_outcome(void)
{
	return settled(&srv) && settled(&cli);
}

static int w_data(void)
{
	return cli.ncomp >= 3 && srv.ncomp >= 1;
}

/* every side that was established has seen DISCONNECTED */
static int w_disc(void)
{
	return (!srv.est || srv.disc || !srv.id) && (!cli.est || cli.disc || !cli.id);
}

static int side_open(struct side *s, int channel)
{
	struct uiw_context_attr a = {.mode = polled ? UIW_CTX_POLLED : UIW_CTX_PROGRESS_THREAD,
				     .handshake_timeout_ms = 5000};
	int srq = channel && cur_scn == SCN_P2P;

	if (cur_scn == SCN_P2P) {
		/* peer-to-peer with an RTR, markers and CRC: other MPA paths */
		a.p2p = 1;
		a.markers = 1;
		a.crc = UIW_CRC_ON;
	}
	struct uiw_qp_init_attr qa = {0};
	char what[64];

#define SIDE_CALL(nm, expr, ok)                                      \
	do {                                                         \
		snprintf(what, sizeof(what), "%s: %s", s->name, nm); \
		STEP(nm);                                            \
		if (chk(what, (expr), (ok)))                         \
			return -1;                                   \
	} while (0)
	SIDE_CALL("uiw_open_context", uiw_open_context(&s->ctx, &a), ok_open);
	SIDE_CALL("uiw_alloc_pd", uiw_alloc_pd(s->ctx, &s->pd), ok_nomem);
	/* eventfd() fails with EMFILE/ENFILE only */
	if (channel)
		SIDE_CALL("uiw_create_comp_channel", uiw_create_comp_channel(s->ctx, &s->ch),
			  ok_nomem);
	SIDE_CALL("uiw_create_cq", uiw_create_cq(s->ctx, 16, s, s->ch, &s->cq), ok_nomem);
	SIDE_CALL("uiw_reg_mr",
		  uiw_reg_mr(s->pd, s->buf, BUF_LEN,
			     UIW_ACCESS_LOCAL_WRITE | UIW_ACCESS_REMOTE_WRITE |
				     UIW_ACCESS_REMOTE_READ,
			     &s->mr),
		  ok_reg);
	if (srq) {
		struct uiw_srq_init_attr sa = {.max_wr = 8, .max_sge = 1};

		SIDE_CALL("uiw_create_srq", uiw_create_srq(s->pd, &sa, &s->srq), ok_nomem);
	}
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.srq = s->srq;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = srq ? 0 : 8;
	qa.cap.max_inline_data = 64;
	SIDE_CALL("uiw_create_qp", uiw_create_qp(s->pd, &qa, &s->qp), ok_nomem);
#undef SIDE_CALL
	return 0;
}

/* every teardown call must succeed */
static void side_close(struct side *s)
{
	char what[64];

#define DOWN(nm, expr)                                                          \
	do {                                                                    \
		snprintf(what, sizeof(what), "%s: %s (teardown)", s->name, nm); \
		STEP(nm);                                                       \
		chk(what, (expr), ok_none);                                     \
	} while (0)
	if (s->id)
		DOWN("uiw_destroy_id", uiw_destroy_id(s->id));
	if (s->lid)
		DOWN("uiw_destroy_id(listener)", uiw_destroy_id(s->lid));
	s->id = s->lid = NULL;
	if (s->qp)
		DOWN("uiw_destroy_qp", uiw_destroy_qp(s->qp));
	if (s->srq)
		DOWN("uiw_destroy_srq", uiw_destroy_srq(s->srq));
	if (s->mr)
		DOWN("uiw_dereg_mr", uiw_dereg_mr(s->mr));
	if (s->cq)
		DOWN("uiw_destroy_cq", uiw_destroy_cq(s->cq));
	if (s->ch)
		DOWN("uiw_destroy_comp_channel", uiw_destroy_comp_channel(s->ch));
	if (s->pd)
		DOWN("uiw_dealloc_pd", uiw_dealloc_pd(s->pd));
	if (s->ctx)
		DOWN("uiw_close_context", uiw_close_context(s->ctx));
#undef DOWN
	s->qp = NULL;
	s->srq = NULL;
	s->mr = NULL;
	s->cq = NULL;
	s->ch = NULL;
	s->pd = NULL;
	s->ctx = NULL;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static int post(struct side *s, enum uiw_wr_opcode op, uint64_t wr_id, uint32_t off, uint32_t len,
		uint64_t raddr, uint32_t rkey)
{
	struct uiw_sge sge = {(uintptr_t)(s->buf + off), len, s->mr->lkey};
	struct uiw_send_wr wr = {.wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = UIW_SEND_SIGNALED};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	/* the peer may be gone already: -EPIPE once the QP is closing */
	return uiw_post_send(s->qp, &wr, NULL);
}

/* The scenario; buffers are allocated and filled before arming. */
static void scenario(enum fa_scn scn)
{
	static const char cpd[] = "failalloc client";
	static const char spd[] = "failalloc server";
	struct uiw_conn_param cp = {cpd, sizeof(cpd), 0, 0};
	struct uiw_conn_param sp = {spd, sizeof(spd), 0, 0};
	uint16_t port;
	int ret;

	cur_scn = scn;
	if (side_open(&srv, 1) || side_open(&cli, 0))
		goto down;
	STEP("uiw_create_id(listener)");
	if (chk("server: uiw_create_id(listener)", uiw_create_id(srv.ctx, NULL, &srv.lid),
		ok_nomem))
		goto down;
	STEP("uiw_listen");
	/* getaddrinfo() out of memory: EAI_MEMORY, -ENOMEM */
	if (chk("server: uiw_listen", uiw_listen(srv.lid, "127.0.0.1", 0, 4), ok_nomem))
		goto down;
	port = uiw_get_port(srv.lid);
	if (!port) {
		problem("uiw_get_port returned 0");
		goto down;
	}
	STEP("uiw_create_id");
	if (chk("client: uiw_create_id", uiw_create_id(cli.ctx, &cli, &cli.id), ok_nomem))
		goto down;
	STEP("uiw_post_recv");
	{
		struct uiw_sge sge = {(uintptr_t)(srv.buf + OFF_SEND), LEN_SEND, srv.mr->lkey};
		struct uiw_recv_wr wr = {.wr_id = 100, .sg_list = &sge, .num_sge = 1};

		if (chk("server: uiw_post_recv",
			srv.srq ? uiw_post_srq_recv(srv.srq, &wr, NULL)
				: uiw_post_recv(srv.qp, &wr, NULL),
			ok_none))
			goto down;
	}
	STEP("uiw_connect");
	if (chk("client: uiw_connect", uiw_connect(cli.id, "127.0.0.1", port, cli.qp, &cp),
		ok_nomem))
		goto down;
	if (wait_until(w_request, "waiting for CONNECT_REQUEST"))
		goto down;
	if (srv.req && scn == SCN_CLIENT_GONE) {
		STEP("client goes away");
		chk("client: uiw_destroy_id (goes away)", uiw_destroy_id(cli.id), ok_none);
		cli.id = NULL;
	}
	if (srv.req && srv.id && scn == SCN_REJECT) {
		STEP("uiw_reject");
		server_gone = 1;
		/* -EINVAL: the request's connection died already */
		chk("server: uiw_reject", uiw_reject(srv.id, "no", 3), ok_accept);
		/* destroyed at once: waits for the Reject to leave */
		chk("server: uiw_destroy_id (after reject)", uiw_destroy_id(srv.id), ok_none);
		srv.id = NULL;
	}
	if (srv.req && scn == SCN_SERVER_GONE) {
		STEP("server goes away");
		chk("server: uiw_destroy_id (goes away)", uiw_destroy_id(srv.id), ok_none);
		srv.id = NULL;
		chk("server: uiw_destroy_id(listener) (goes away)", uiw_destroy_id(srv.lid),
		    ok_none);
		srv.lid = NULL;
		server_gone = 1;
	}
	if (srv.id) {
		STEP("uiw_accept");
		ret = uiw_accept(srv.id, srv.qp, &sp);
		/* -EINVAL only when the request's connection died: the client
		 * went away (a race the scenario expects), or its handshake
		 * failed on its side */
		if (ret == -EINVAL && scn != SCN_CLIENT_GONE && !cli.err)
			pump(); /* the client's error event may be queued */
		if (ret == -EINVAL && scn == SCN_CLIENT_GONE)
			; /* as expected, not a failure */
		else if (ret == -EINVAL && !cli.err && !cli.disc)
			chk("server: uiw_accept (client alive)", ret, ok_nomem);
		else
			chk("server: uiw_accept", ret, ok_accept);
		if (ret) {
			/* nothing more to do with the request: drop it now, so
			 * that the client sees the connection close */
			STEP("uiw_destroy_id(after accept failed)");
			chk("server: uiw_destroy_id (accept failed)", uiw_destroy_id(srv.id),
			    ok_none);
			srv.id = NULL;
		}
	}
	if (wait_until(w_outcome, "waiting for ESTABLISHED or an error"))
		goto down;
	if (srv.est && cli.est && !srv.disc && !cli.disc) {
		uint64_t raddr = (uintptr_t)srv.buf;

		STEP("data");
		ret = post(&cli, UIW_WR_SEND, 1, OFF_SEND, LEN_SEND, 0, 0);
		if (!ret)
			ret = post(&cli, UIW_WR_RDMA_WRITE, 2, OFF_WR, LEN_RDMA, raddr + OFF_WR,
				   srv.mr->rkey);
		if (!ret)
			ret = post(&cli, UIW_WR_RDMA_READ, 3, OFF_RD, LEN_RDMA, raddr + OFF_RD,
				   srv.mr->rkey);
		/* both sides established: the posts must succeed */
		if (chk("client: uiw_post_send", ret, ok_none))
			goto down;
		if (wait_until(w_data, "waiting for completions"))
			goto down;
		if (cli.comp_bad || srv.comp_bad) {
			if (!sh->first[0])
				snprintf(sh->first, sizeof(sh->first),
					 "completions in error (client %d, server %d)",
					 cli.comp_bad, srv.comp_bad);
			/* only a connection that broke may flush */
			if (!cli.disc && !srv.disc)
				pump();
			if (!cli.disc && !srv.disc)
				problem("completions in error on a live connection");
		} else if (memcmp(srv.buf + OFF_SEND, cli.buf + OFF_SEND, LEN_SEND) ||
			   memcmp(srv.buf + OFF_WR, cli.buf + OFF_WR, LEN_RDMA) ||
			   memcmp(cli.buf + OFF_RD, srv.buf + OFF_RD, LEN_RDMA)) {
			problem("data differ after successful completions");
		}
		if (scn == SCN_ABORT) {
			/* abortive: Writes queued, the QP moved to error */
			struct uiw_qp_attr qa = {.qp_state = UIW_QPS_ERR};

			STEP("abort");
			for (int i = 0; i < 4; i++)
				if (post(&cli, UIW_WR_RDMA_WRITE, 10 + (uint64_t)i, 0, LEN_BIG,
					 raddr, srv.mr->rkey))
					break;
			/* polled: the client's engine turns while the server's
			 * does not read; a send stays in flight on the full
			 * socket, and the move to error keeps it (a copy) */
			if (polled)
				for (int i = 0; i < 4; i++)
					uiw_progress(cli.ctx, 0);
			chk("client: uiw_modify_qp(ERR)", uiw_modify_qp(cli.qp, &qa, UIW_QP_STATE),
			    ok_none);
		} else {
			STEP("uiw_disconnect");
			if (!cli.disc)
				chk("client: uiw_disconnect", uiw_disconnect(cli.id),
				    ok_disconnect);
		}
	}
	wait_until(w_disc, "waiting for DISCONNECTED");
down:
	side_close(&cli);
	side_close(&srv);
	STEP("done");
}

/* ---- the sweep ---------------------------------------------------------- */

static unsigned child_timeout = 60;
static int quiet;
static FILE *detail; /* the per-N lines (stdout, or -o FILE) */
enum { X_NONE, X_LEAK, X_CRASH, X_HANG } selftest;
static void *volatile x_leaked;

/* what failed where, over all sweeps: (first uiwarp function of the failed
 * allocation's chain, what the scenario saw) -> number of N */
struct tally {
	char site[96], what[160];
	unsigned long n;
};
static struct tally tallies[256];
static unsigned ntallies;

static void tally_add(const char *site, const char *what)
{
	unsigned i;

	for (i = 0; i < ntallies; i++)
		if (!strcmp(tallies[i].site, site) && !strcmp(tallies[i].what, what))
			break;
	if (i == ntallies) {
		if (ntallies == sizeof(tallies) / sizeof(tallies[0]))
			return;
		snprintf(tallies[i].site, sizeof(tallies[i].site), "%s", site);
		snprintf(tallies[i].what, sizeof(tallies[i].what), "%s", what);
		ntallies++;
	}
	tallies[i].n++;
}

static int tally_cmp(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;
	int c = strcmp(x->site, y->site);

	return c ? c : strcmp(x->what, y->what);
}

/* the first function of this executable in @bt that is not the allocator */
static void first_ours(void *const *bt, int n, char *buf, size_t len)
{
	snprintf(buf, len, "(deeper than %d frames)", FA_BT);
	for (int i = 0; i < n && bt[i]; i++) {
		char name[96];

		if (sym_name(bt[i], name, sizeof(name)) && !is_wrapper(name)) {
			snprintf(buf, len, "%s", name);
			return;
		}
	}
}

static void sides_reset(void)
{
	uint8_t *sb = srv.buf, *cb = cli.buf;

	memset(&srv, 0, sizeof(srv));
	memset(&cli, 0, sizeof(cli));
	server_gone = 0;
	srv.name = "server";
	cli.name = "client";
	srv.buf = sb;
	cli.buf = cb;
	/* the checked regions only: touching all of BUF_LEN in every child
	 * costs more than the scenario */
	memset(srv.buf, 0, OFF_RD + LEN_RDMA);
	memset(cli.buf, 0, OFF_RD + LEN_RDMA);
	fill(cli.buf + OFF_SEND, LEN_SEND, 1);
	fill(cli.buf + OFF_WR, LEN_RDMA, 2);
	fill(srv.buf + OFF_RD, LEN_RDMA, 3);
}

/* In the child: arm at @n (0: count only), run, disarm, look for leaks. */
static void child_run(enum fa_scn scn, unsigned long n)
{
	uint64_t t0;

	fa_main_tid = (pid_t)syscall(SYS_gettid);
	sides_reset();
	fa_fail_at = n;
	t0 = ms_now();
	__atomic_store_n(&fa_armed, 1, __ATOMIC_RELEASE);
	scenario(scn);
	if (n && selftest == X_LEAK) /* the checker must see this */
		x_leaked = malloc(100);
	if (n && selftest == X_CRASH)
		raise(SIGSEGV);
	while (n && selftest == X_HANG)
		pause();
	__atomic_store_n(&fa_armed, 0, __ATOMIC_RELEASE);
	sh->ms = (unsigned)(ms_now() - t0);
	/* every block allocated while armed must be free again */
	pthread_mutex_lock(&fa_lock);
	if (fa_nblocks) {
		size_t bytes = 0, shown = 0;

		for (unsigned i = 0; i < FA_TABLE; i++)
			if (fa_blocks[i].p && fa_blocks[i].p != FA_TOMB)
				bytes += fa_blocks[i].n;
		problem("leak: %lu blocks, %zu octets", fa_nblocks, bytes);
		for (unsigned i = 0; i < FA_TABLE && shown < 6; i++) {
			struct fa_block *b = &fa_blocks[i];
			char chain[400];

			if (!b->p || b->p == FA_TOMB)
				continue;
			chain_str(b->bt, FA_BT, chain, sizeof(chain));
			report("  leaked %zu octets from %s", b->n, chain);
			shown++;
		}
	}
	pthread_mutex_unlock(&fa_lock);
	sh->done = 1;
}

struct sweep_stat {
	unsigned long points, problems, crashes, hangs, quiet_ok;
	unsigned long max_ms;
};

/* One N in a child; returns 1 when the scenario reached the Nth allocation. */
static int run_one(enum fa_scn scn, const char *mode, unsigned long n, struct sweep_stat *st)
{
	uint64_t end;
	pid_t pid;
	int status = 0, reaped = 0;
	char site[600] = "", line[900];

	memset(sh, 0, sizeof(*sh));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("failalloc: fork");
		exit(1);
	}
	if (pid == 0) {
		child_run(scn, n);
		_exit(0);
	}
	end = ms_now() + (uint64_t)child_timeout * 1000;
	while (!reaped) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			reaped = 1;
		} else if (ms_now() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			reaped = 2;
		} else {
			usleep(n < 3 ? 1000 : 300);
		}
	}
	if (sh->hit) {
		char chain[500];

		chain_str(sh->hit_bt, sh->hit_nbt, chain, sizeof(chain));
		snprintf(site, sizeof(site), "%s(%zu) in %s%s", sh->hit_fn, sh->hit_size, chain,
			 sh->hit_main ? "" : " [progress thread]");
	}
	if (reaped == 2) {
		st->hangs++;
		sh->problems++;
		snprintf(line, sizeof(line), "PROBLEM: hang: killed after %u s in step \"%s\"",
			 child_timeout, sh->step ? sh->step : "?");
	} else if (WIFSIGNALED(status)) {
		st->crashes++;
		sh->problems++;
		snprintf(line, sizeof(line), "PROBLEM: crash: signal %d (%s) in step \"%s\"",
			 WTERMSIG(status), strsignal(WTERMSIG(status)), sh->step ? sh->step : "?");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !sh->done) {
		sh->problems++;
		snprintf(line, sizeof(line), "PROBLEM: child exited with status %d in step \"%s\"",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1, sh->step ? sh->step : "?");
	} else {
		line[0] = 0;
	}
	if (sh->hit) {
		st->points++;
		if (!sh->first[0] && !sh->problems)
			st->quiet_ok++;
		if (sh->ms > st->max_ms)
			st->max_ms = sh->ms;
	}
	if (sh->problems)
		st->problems++;
	if (sh->hit) {
		const char *what = sh->first[0] ? sh->first : "no call failed";
		char fn[96];

		if (!strncmp(what, "server: ", 8) || !strncmp(what, "client: ", 8))
			what += 8;
		first_ours(sh->hit_bt, sh->hit_nbt, fn, sizeof(fn));
		tally_add(fn, sh->problems ? "PROBLEM" : what);
	}
	/* the per-N line to the detail output; with its problems to stdout too */
	for (int out = 0; out < 2 && (sh->hit || sh->problems); out++) {
		FILE *f = out ? stdout : detail;

		if (out && (f == detail || !sh->problems))
			break;
		if (!out && quiet && !sh->problems)
			break;
		fprintf(f, "%s/%s N=%lu: %s: %s%s (%u ms)\n", mode, scn_names[scn], n,
			sh->hit ? site : "not reached", sh->first[0] ? sh->first : "no call failed",
			sh->problems ? "" : ", clean", sh->ms);
		if (line[0])
			fprintf(f, "  %s\n", line);
		/* the child's lines, indented */
		for (char *p = sh->text, *nl; *p; p = nl + 1) {
			nl = strchr(p, '\n');
			if (!nl)
				break;
			fprintf(f, "  %.*s\n", (int)(nl - p), p);
		}
	}
	fflush(detail);
	fflush(stdout);
	return sh->hit || reaped == 2 || WIFSIGNALED(status);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: failalloc [-m thread|polled|all] [-s SCENARIO|all] [-n FIRST] [-N LAST]\n"
		"                 [-r ROUNDS] [-t SECONDS] [-o FILE] [-p] [-q] [-X leak|crash|hang]\n"
		"  scenarios: full p2p-srq abort reject client-gone server-gone\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long first = 1, last = 100000;
	int modes = 3, scns = (1 << SCN_N) - 1, opt, bad = 0;
	unsigned long total_points = 0, rounds = 1;
	uint64_t t_all = ms_now();
	void *bt[4];

	detail = stdout;
	while ((opt = getopt(argc, argv, "m:s:n:N:r:t:o:pqX:")) != -1) {
		switch (opt) {
		case 'm':
			modes = !strcmp(optarg, "thread")   ? 1
				: !strcmp(optarg, "polled") ? 2
				: !strcmp(optarg, "all")    ? 3
							    : 0;
			if (!modes)
				usage();
			break;
		case 's':
			scns = 0;
			for (int i = 0; i < SCN_N; i++)
				if (!strcmp(optarg, scn_names[i]))
					scns = 1 << i;
			if (!strcmp(optarg, "all"))
				scns = (1 << SCN_N) - 1;
			if (!scns)
				usage();
			break;
		case 'n':
			first = strtoul(optarg, NULL, 0);
			break;
		case 'N':
			last = strtoul(optarg, NULL, 0);
			break;
		case 't':
			child_timeout = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 'o':
			detail = fopen(optarg, "w");
			if (!detail) {
				perror(optarg);
				return 2;
			}
			break;
		case 'p':
			fa_persist = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'X':
			selftest = !strcmp(optarg, "leak")    ? X_LEAK
				   : !strcmp(optarg, "crash") ? X_CRASH
				   : !strcmp(optarg, "hang")  ? X_HANG
							      : X_NONE;
			if (selftest == X_NONE)
				usage();
			break;
		default:
			usage();
		}
	}
	if (!first || first > last || !child_timeout || !rounds)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fa_blocks = mmap(NULL, FA_TABLE * sizeof(*fa_blocks), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	srv.buf = aligned_alloc(4096, BUF_LEN);
	cli.buf = aligned_alloc(4096, BUF_LEN);
	if (sh == MAP_FAILED || fa_blocks == MAP_FAILED || !srv.buf || !cli.buf) {
		perror("failalloc");
		return 1;
	}
	syms_load();
	if (!nsyms)
		printf("failalloc: no symbol table: call chains are shown as addresses\n");
	/* the unwinder loads libgcc_s on its first use: not while armed */
	backtrace(bt, 4);

	for (unsigned long round = 0; round < rounds; round++)
		for (int m = 0; m < 2; m++) {
			const char *mode = m ? "polled" : "thread";

			if (!(modes & (1 << m)))
				continue;
			polled = m;
			for (int s = 0; s < SCN_N; s++) {
				struct sweep_stat st = {0};
				uint64_t t0 = ms_now();
				unsigned long n;

				if (!(scns & (1 << s)))
					continue;
				/* warm-up, unarmed, in this process: what is allocated
				 * once (OpenSSL's DRBG, NSS, thread stacks) is there in
				 * every child; then a counting run must pass clean */
				memset(sh, 0, sizeof(*sh));
				fa_main_tid = (pid_t)syscall(SYS_gettid);
				sides_reset();
				scenario((enum fa_scn)s);
				if (sh->problems) {
					printf("%s/%s warm-up: FAIL:\n%s", mode, scn_names[s],
					       sh->text);
					bad = 1;
					continue;
				}
				run_one((enum fa_scn)s, mode, 0, &st);
				if (sh->problems || sh->first[0]) {
					printf("%s/%s: FAIL: the unarmed run failed: %s\n", mode,
					       scn_names[s], sh->first);
					bad = 1;
					continue;
				}
				printf("%s/%s: %lu allocations in a clean run (%u ms)\n", mode,
				       scn_names[s], sh->calls, sh->ms);
				for (n = first; n <= last; n++) {
					if (!run_one((enum fa_scn)s, mode, n, &st))
						break;
				}
				total_points += st.points;
				printf("%s/%s: FAILED the Nth allocation for N = %lu..%lu: %lu problems "
				       "(%lu crashes, %lu hangs); %lu failures absorbed without a failed call;"
				       " slowest %lu ms; %.1f s\n",
				       mode, scn_names[s], first, n - 1, st.problems, st.crashes,
				       st.hangs, st.quiet_ok, st.max_ms,
				       (double)(ms_now() - t0) / 1000.0);
				if (st.problems)
					bad = 1;
			}
		}
	qsort(tallies, ntallies, sizeof(tallies[0]), tally_cmp);
	printf("failalloc: where the failed allocation was (first uiwarp function) and what the"
	       " scenario saw, in N over all runs:\n");
	for (unsigned i = 0; i < ntallies; i++)
		printf("  %-28s %5lu  %s\n", tallies[i].site, tallies[i].n, tallies[i].what);
	printf("failalloc: %lu allocation points in all, %.1f s: %s\n", total_points,
	       (double)(ms_now() - t_all) / 1000.0, bad ? "FAIL" : "ok");
	free(srv.buf);
	free(cli.buf);
	if (detail != stdout)
		fclose(detail);
	return bad;
}
