/* SPDX-License-Identifier: MIT */
/*
 * uiw-perf-tcp.c - uiw-perf's raw TCP baseline (tcp_bw, tcp_lat), the
 * figure the uiwarp tests are compared with: blocking (or busy-polled)
 * sockets, TCP_NODELAY, one send() call per message, recv() calls of the
 * message size (at most 256 KiB: a buffer that stays in cache), a new set
 * of connections per message size (EOF ends a size).  The settings travel
 * as uiw-perf's hello in a fixed-size frame (PERF_TCP_FRAME), as do the
 * results.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "uiw-perf.h"

/* recv() size of the TCP receiver for messages of @size */
size_t tcp_rx_len(uint32_t size)
{
	return size < PERF_TCP_RXBUF ? (size ? size : 1) : PERF_TCP_RXBUF;
}

/* --timeout on a blocking socket: send(), recv() and connect() give up */
static void tcp_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = (time_t)(stall_ns / 1000000000ull),
			     .tv_usec = (suseconds_t)(stall_ns % 1000000000ull / 1000)};

	if (stall_ns && !tv.tv_sec && !tv.tv_usec)
		tv.tv_usec = 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void tcp_sockopts(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tcp_timeouts(fd);
}

static void set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/*
 * TCP tests, --timeout: @t_act is the last time bytes moved; a call that
 * found nothing to do (EAGAIN: busy-polled, or a blocking call's
 * SO_RCVTIMEO/SO_SNDTIMEO ran out) ends the run once it is older than the
 * bound.
 */
static void tcp_stall_check(uint64_t t_act, const char *during)
{
	if (stall_ns && now_ns() - t_act > stall_ns)
		stall_die("the peer", during);
}

/* all of @n bytes; @spin: busy-poll a non-blocking socket.  0, 1 on EOF, -errno */
static int read_full(int fd, void *buf, size_t n, int spin)
{
	uint8_t *b = buf;
	uint64_t t_act = now_ns();

	while (n) {
		ssize_t r = recv(fd, b, n, spin ? MSG_DONTWAIT : 0);

		if (r > 0) {
			b += r;
			n -= (size_t)r;
			t_act = now_ns();
		} else if (r == 0) {
			return 1;
		} else if (errno == EAGAIN) {
			tcp_stall_check(t_act, "TCP receive");
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n, int spin)
{
	const uint8_t *b = buf;
	uint64_t t_act = now_ns();

	while (n) {
		ssize_t r = send(fd, b, n, MSG_NOSIGNAL | (spin ? MSG_DONTWAIT : 0));

		if (r > 0) {
			b += r;
			n -= (size_t)r;
			t_act = now_ns();
		} else if (r < 0 && errno == EAGAIN) {
			tcp_stall_check(t_act, "TCP send");
		} else if (r < 0 && errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

struct tcp_frame {
	uint8_t kind; /* 1 ok, 2 error, 3 result */
	uint64_t bytes, errors;
	char msg[200];
	uint64_t cpu_us; /* result: the sender's CPU time over the size, +1 (0: unknown) */
};

static void frame_send(int fd, const struct tcp_frame *f)
{
	uint8_t buf[PERF_TCP_FRAME] = {0};
	struct wbuf w = {buf, 0, sizeof(buf)};

	w_u32(&w, PERF_FRAME_MAGIC);
	w_u8(&w, f->kind);
	w_u64(&w, f->bytes);
	w_u64(&w, f->errors);
	w_bytes(&w, f->msg, sizeof(f->msg));
	w_u64(&w, f->cpu_us);
	if (write_full(fd, buf, sizeof(buf), 0))
		die(EXIT_ERR, "TCP: cannot send to the peer: %s", strerror(errno));
}

static int frame_recv(int fd, struct tcp_frame *f)
{
	uint8_t buf[PERF_TCP_FRAME];
	struct rbuf r = {buf, sizeof(buf), 0, 0};

	if (read_full(fd, buf, sizeof(buf), 0))
		return -1;
	if (r_u32(&r) != PERF_FRAME_MAGIC)
		return -1;
	f->kind = r_u8(&r);
	f->bytes = r_u64(&r);
	f->errors = r_u64(&r);
	r_bytes(&r, f->msg, sizeof(f->msg));
	f->msg[sizeof(f->msg) - 1] = 0;
	f->cpu_us = r_u64(&r);
	return r.err ? -1 : 0;
}

/* the congestion control the data socket really uses */
static void tcp_facts(int fd, struct sysfacts *s)
{
	char cc[32] = {0};
	socklen_t cl = sizeof(cc) - 1;

	if (!getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &cl))
		snprintf(s->cc, sizeof(s->cc), "%s", cc);
}

/* a connection to @host:@port: every address the name resolves to, in turn */
static int tcp_connect(const char *host, unsigned port)
{
	struct addrinfo hints = {0}, *res = NULL, *ai;
	char serv[8];
	int fd = -1, r, err = 0;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", port);
	r = getaddrinfo(host, serv, &hints, &res);
	if (r)
		die(EXIT_ERR, "cannot resolve %s: %s", host, gai_strerror(r));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			err = errno;
			continue;
		}
		tcp_sockopts(fd); /* SO_SNDTIMEO bounds connect() too */
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0 && err == EINPROGRESS)
		stall_die(host, "TCP connect");
	if (fd < 0)
		die(EXIT_ERR, "cannot connect to %s port %u: %s", host, port, strerror(err));
	return fd;
}

static int tcp_listen(const char *addr, unsigned port, unsigned *bound)
{
	struct addrinfo hints = {0}, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char serv[8];
	int fd, one = 1, r;

	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(serv, sizeof(serv), "%u", port);
	/* no -B: every address, IPv6 dual-stack where the host has IPv6 */
	hints.ai_family = addr ? AF_UNSPEC : AF_INET6;
	r = getaddrinfo(addr ? addr : "::", serv, &hints, &res);
	fd = r ? -1 : socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!addr && fd < 0) {
		if (!r)
			freeaddrinfo(res);
		hints.ai_family = AF_INET;
		r = getaddrinfo("0.0.0.0", serv, &hints, &res);
		fd = r ? -1 : socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	if (r)
		die(EXIT_ERR, "cannot resolve %s: %s", addr ? addr : "*", gai_strerror(r));
	if (fd < 0)
		die(EXIT_ERR, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!addr && res->ai_family == AF_INET6) {
		int zero = 0;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	}
	if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&ss, &sl))
		die(EXIT_ERR, "cannot listen on %s port %u: %s", addr ? addr : "*", port,
		    strerror(errno));
	freeaddrinfo(res);
	*bound = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						: ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* client side of one tcp_bw size over @fds */
static void tcp_bw_send(const struct opts *o, int *fds, unsigned n, uint32_t size,
			struct bw_result *r)
{
	uint8_t **buf = calloc(n, sizeof(*buf));
	uint64_t *msg = calloc(n, sizeof(*msg)), *off = calloc(n, sizeof(*off));
	uint64_t t0, deadline, total = 0, tlast, t_act;
	struct samples smp = {0};
	struct progress pg;
	int stop = 0, spin = o->poll || n > 1;

	if (!buf || !msg || !off)
		die(EXIT_ERR, "out of memory");
	for (unsigned c = 0; c < n; c++) {
		buf[c] = malloc(size);
		if (!buf[c])
			die(EXIT_ERR, "out of memory");
		memset(buf[c], 0xa5, size);
		if (spin)
			set_nonblock(fds[c], 1);
	}
	t0 = now_ns();
	tlast = t0;
	t_act = t0;
	deadline = o->duration_us ? t0 + o->duration_us * 1000 : UINT64_MAX;
	progress_init(&pg, o, t0);
	samples_push(&smp, t0, 0);
	for (;;) {
		unsigned active = 0;
		struct pollfd pfd[PERF_MAX_QPS];

		for (unsigned c = 0; c < n; c++) {
			ssize_t w;

			if (off[c] == 0) {
				/* start message msg[c]? */
				if (stop || (!o->duration_us && msg[c] >= o->iters))
					continue;
				if (o->verify) {
					pat_fill(buf[c], pat_seed(c, msg[c]), 0, size);
					maybe_inject(o, msg[c], buf[c], size);
				}
			}
			active++;
			/* one send() call per message (its remainder after a short write) */
			w = send(fds[c], buf[c] + off[c], size - off[c],
				 MSG_NOSIGNAL | (spin ? MSG_DONTWAIT : 0));
			if (w < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				die(EXIT_ERR, "TCP send: %s", strerror(errno));
			}
			if (w > 0)
				t_act = now_ns();
			off[c] += (uint64_t)w;
			if (off[c] == size) {
				off[c] = 0;
				msg[c]++;
				total++;
				tlast = now_ns();
				if (total % o->cq_mod == 0)
					samples_push(&smp, tlast, total * size);
			}
		}
		if (!active)
			break;
		tcp_stall_check(t_act, "tcp_bw: the receiver takes nothing");
		if (!stop && o->duration_us) {
			uint64_t t = now_ns();

			if (t >= deadline)
				stop = 1;
			progress_tick(&pg, o, t, size, total);
		}
		if (n > 1 && !o->poll) {
			/* wait until a socket takes more */
			for (unsigned c = 0; c < n; c++)
				pfd[c] = (struct pollfd){.fd = fds[c], .events = POLLOUT};
			poll(pfd, n, 100);
		}
	}
	samples_push(&smp, tlast, total * size);
	bw_compute(&smp, size, total, t0, tlast, r);
	samples_free(&smp);
	for (unsigned c = 0; c < n; c++) {
		free(buf[c]);
		set_nonblock(fds[c], 0);
	}
	free(buf);
	free(msg);
	free(off);
}

/* server side of one tcp_bw size: read until EOF on all @fds */
static void tcp_bw_recv(const struct opts *o, int *fds, unsigned n, uint32_t size, uint64_t *bytes,
			uint64_t *t_first, uint64_t *t_end)
{
	/* a buffer of the message size (capped) stays in cache, as uiwarp's
	 * placement into message-size buffers does; a 4 MiB one cost raw TCP
	 * about 40% on loopback */
	size_t rxlen = tcp_rx_len(size);
	uint8_t *buf = malloc(rxlen);
	uint64_t *pos = calloc(n, sizeof(*pos));
	int *open = calloc(n, sizeof(*open));
	unsigned nopen = n;
	int spin = o->poll || n > 1;
	uint64_t t_act = now_ns();

	if (!buf || !pos || !open)
		die(EXIT_ERR, "out of memory");
	*t_first = 0;
	for (unsigned c = 0; c < n; c++) {
		open[c] = 1;
		if (spin)
			set_nonblock(fds[c], 1);
	}
	while (nopen) {
		struct pollfd pfd[PERF_MAX_QPS];

		if (n > 1 && !o->poll) {
			for (unsigned c = 0; c < n; c++)
				pfd[c] = (struct pollfd){.fd = open[c] ? fds[c] : -1,
							 .events = POLLIN};
			poll(pfd, n, 1000);
		}
		for (unsigned c = 0; c < n; c++) {
			ssize_t r;

			if (!open[c])
				continue;
			r = recv(fds[c], buf, rxlen, spin ? MSG_DONTWAIT : 0);
			if (r < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				die(EXIT_ERR, "TCP recv: %s", strerror(errno));
			}
			t_act = now_ns();
			if (r == 0) {
				open[c] = 0;
				nopen--;
				continue;
			}
			if (!*t_first)
				*t_first = now_ns();
			if (o->verify) {
				/* the stream is messages of @size: check each piece */
				uint64_t p0 = pos[c];
				size_t done = 0;

				while (done < (size_t)r) {
					uint64_t m = (p0 + done) / size, mo = (p0 + done) % size;
					size_t k = size - mo < (size_t)r - done ? size - mo
										: (size_t)r - done;

					verify_msg("tcp_bw", c, m, buf + done, mo, k);
					done += k;
				}
			}
			pos[c] += (uint64_t)r;
		}
		tcp_stall_check(t_act, "tcp_bw: the sender sends nothing");
	}
	*t_end = now_ns();
	*bytes = 0;
	for (unsigned c = 0; c < n; c++) {
		*bytes += pos[c];
		set_nonblock(fds[c], 0);
	}
	free(buf);
	free(pos);
	free(open);
}

static void tcp_lat_client(const struct opts *o, int fd, uint32_t size, struct lat_result *r)
{
	uint8_t *tx = malloc(size), *rx = malloc(size);
	struct samples smp = {0};
	struct progress pg;
	uint64_t t0, deadline;

	if (!tx || !rx)
		die(EXIT_ERR, "out of memory");
	memset(tx, 0xa5, size);
	if (o->poll)
		set_nonblock(fd, 1);
	t0 = now_ns();
	deadline = o->duration_us ? t0 + o->duration_us * 1000 : UINT64_MAX;
	progress_init(&pg, o, t0);
	for (uint64_t i = 0;; i++) {
		uint64_t a, b;

		if (o->duration_us ? now_ns() >= deadline : i >= o->iters)
			break;
		if (o->verify) {
			pat_fill(tx, pat_seed(0, i), 0, size);
			maybe_inject(o, i, tx, size);
		}
		a = now_ns();
		if (write_full(fd, tx, size, o->poll))
			die(EXIT_ERR, "TCP send: %s", strerror(errno));
		if (read_full(fd, rx, size, o->poll))
			die(EXIT_ERR, "TCP: the server closed the connection");
		b = now_ns();
		if (o->verify)
			verify_msg("tcp_lat", STREAM_REPLY, i, rx, 0, size);
		samples_push(&smp, b, (b - a) / 2);
		progress_tick(&pg, o, b, size, i + 1);
	}
	if (o->poll)
		set_nonblock(fd, 0);
	lat_compute(smp.v, smp.n, size, r);
	samples_free(&smp);
	free(tx);
	free(rx);
}

static uint64_t tcp_lat_server(const struct opts *o, int fd, uint32_t size)
{
	uint8_t *buf = malloc(size);
	uint64_t i;

	if (!buf)
		die(EXIT_ERR, "out of memory");
	if (o->poll)
		set_nonblock(fd, 1);
	for (i = 0;; i++) {
		int r = read_full(fd, buf, size, o->poll);

		if (r == 1)
			break;
		if (r < 0)
			die(EXIT_ERR, "TCP recv: %s", strerror(-r));
		if (o->verify) {
			verify_msg("tcp_lat", 0, i, buf, 0, size);
			pat_fill(buf, pat_seed(STREAM_REPLY, i), 0, size);
		}
		if (write_full(fd, buf, size, o->poll))
			die(EXIT_ERR, "TCP send: %s", strerror(errno));
	}
	if (o->poll)
		set_nonblock(fd, 0);
	free(buf);
	return i;
}

void run_tcp_client(struct opts *o)
{
	struct sysfacts sf;
	uint32_t sizes[32];
	unsigned nsizes = run_sizes(o, sizes);
	int fds[PERF_MAX_QPS];
	uint64_t peer_errors = 0;

	sysfacts_get(&sf, o);
	for (unsigned k = 0; k < nsizes; k++) {
		struct hello h;
		struct tcp_frame f;
		uint8_t buf[PERF_TCP_FRAME] = {0};

		for (unsigned c = 0; c < o->qps; c++) {
			fds[c] = tcp_connect(o->server, o->port);
			hello_from_opts(o, &h);
			h.qp_index = (uint16_t)c;
			h.size = sizes[k];
			h.addr = k + 1 == nsizes; /* TCP: the last size */
			hello_encode(&h, buf, sizeof(buf));
			if (write_full(fds[c], buf, sizeof(buf), 0))
				die(EXIT_ERR, "TCP: cannot send to the server: %s",
				    strerror(errno));
			if (frame_recv(fds[c], &f))
				die(EXIT_ERR,
				    "TCP: the server at %s port %u did not answer (is it "
				    "a uiw-perf %s server?)",
				    o->server, o->port, tests[o->test].name);
			if (f.kind != 1)
				die(EXIT_ERR, "the server refused: %s", f.msg);
		}
		if (k == 0) {
			tcp_facts(fds[0], &sf);
			print_header(o, &sf, 0);
		}
		if (o->test == T_TCP_BW) {
			struct bw_result r;
			double cpu0 = cpu_now();

			tcp_bw_send(o, fds, o->qps, sizes[k], &r);
			r.cpu_self = cpu_now() - cpu0;
			for (unsigned c = 0; c < o->qps; c++)
				shutdown(fds[c], SHUT_WR);
			for (unsigned c = 0; c < o->qps; c++) {
				if (frame_recv(fds[c], &f) || f.kind != 3)
					die(EXIT_ERR, "TCP: no result from the server");
				peer_errors += f.errors;
				if (c == 0 && f.cpu_us)
					r.cpu_peer = (double)(f.cpu_us - 1) / 1e6;
				close(fds[c]);
			}
			print_bw(o, &sf, 0, &r);
		} else {
			struct lat_result r;

			tcp_lat_client(o, fds[0], sizes[k], &r);
			shutdown(fds[0], SHUT_WR);
			if (frame_recv(fds[0], &f) || f.kind != 3)
				die(EXIT_ERR, "TCP: no result from the server");
			peer_errors += f.errors;
			close(fds[0]);
			print_lat(o, &sf, 0, &r);
		}
	}
	print_footer(o);
	if (verify_errors || peer_errors)
		die(EXIT_VERIFY,
		    "VERIFY FAILED: %" PRIu64 " mismatches here, %" PRIu64 " at the server",
		    verify_errors, peer_errors);
}

/* read a hello from a new connection; settings merged on the first */
static void tcp_server_hello(struct opts *o, int fd, int first, uint32_t size, int *last)
{
	uint8_t buf[PERF_TCP_FRAME];
	struct hello h;
	struct tcp_frame f = {0};
	char msg[256];

	/* the magic first: an MPA Request ("MPA ID Req Frame") is shorter than a hello */
	if (read_full(fd, buf, 8, 0) || memcmp(buf, PERF_PD_MAGIC, 8)) {
		close(fd);
		die(EXIT_ERR, "TCP: a connection that is not from a uiw-perf %s client%s",
		    tests[o->test].name,
		    memcmp(buf, "MPA ID R", 8) ? "" : " (an MPA Request: a uiwarp test?)");
	}
	if (read_full(fd, buf + 8, sizeof(buf) - 8, 0) ||
	    pd_decode(buf, sizeof(buf), &h, msg, sizeof(msg)))
		die(EXIT_ERR, "TCP: a connection that is not from uiw-perf");
	if (first) {
		if (settings_merge(o, &h, msg, sizeof(msg))) {
			f.kind = 2;
			snprintf(f.msg, sizeof(f.msg), "%.199s", msg);
			frame_send(fd, &f);
			die(EXIT_ERR, "%s", msg);
		}
	} else if (h.session != o->session || h.size != size || h.qp_index >= o->qps) {
		f.kind = 2;
		snprintf(f.msg, sizeof(f.msg), "unexpected connection (another client?)");
		frame_send(fd, &f);
		die(EXIT_ERR, "TCP: unexpected connection");
	}
	*last = h.addr != 0;
	f.kind = 1;
	frame_send(fd, &f);
}

void run_tcp_server(struct opts *o)
{
	struct sysfacts sf;
	unsigned port;
	int lfd = tcp_listen(o->bind, o->port, &port);
	int fds[PERF_MAX_QPS];
	uint32_t sizes[32];
	unsigned nsizes = 1;
	uint64_t errors_before;

	sysfacts_get(&sf, o);
	listening_line(o, port);
	for (unsigned k = 0; k < nsizes; k++) {
		int last = 0;

		for (unsigned c = 0; c < o->qps; c++) {
			/* the first client is awaited without bound (as perftest);
			 * its further connections within --timeout */
			if (k || c) {
				struct pollfd pfd = {.fd = lfd, .events = POLLIN};
				int ms = stall_ns ? (int)((stall_ns + 999999) / 1000000) : -1;

				if (poll(&pfd, 1, ms) == 0)
					stall_die("the client", "its next TCP connection");
			}
			fds[c] = accept(lfd, NULL, NULL);
			if (fds[c] < 0)
				die(EXIT_ERR, "accept: %s", strerror(errno));
			tcp_sockopts(fds[c]);
			tcp_server_hello(o, fds[c], k == 0 && c == 0, k || c ? sizes[k] : 0, &last);
			if (k == 0 && c == 0) {
				nsizes = run_sizes(o, sizes);
				tcp_facts(fds[0], &sf);
				print_header(o, &sf, 1);
			}
		}
		if (last != (k + 1 == nsizes))
			die(EXIT_ERR, "the client's run and ours disagree on the sizes");
		errors_before = verify_errors;
		if (o->test == T_TCP_BW) {
			struct bw_result r;
			uint64_t bytes, t1, t2;
			double cpu0 = cpu_now(), cpu;

			tcp_bw_recv(o, fds, o->qps, sizes[k], &bytes, &t1, &t2);
			cpu = cpu_now() - cpu0;
			for (unsigned c = 0; c < o->qps; c++) {
				struct tcp_frame f = {.kind = 3, .bytes = bytes};

				f.cpu_us = (uint64_t)(cpu * 1e6) + 1;
				f.errors = c == 0 ? verify_errors - errors_before : 0;
				frame_send(fds[c], &f);
				close(fds[c]);
			}
			/* the server's view: first byte to EOF */
			memset(&r, 0, sizeof(r));
			bw_compute(&(struct samples){0}, sizes[k], bytes / sizes[k], t1, t2, &r);
			r.cpu_self = cpu;
			r.bytes = bytes;
			print_bw(o, &sf, 1, &r);
		} else {
			struct tcp_frame f = {.kind = 3};
			struct lat_result r = {.size = sizes[k]};

			r.iters = tcp_lat_server(o, fds[0], sizes[k]);
			f.errors = verify_errors - errors_before;
			frame_send(fds[0], &f);
			close(fds[0]);
			if (o->json)
				print_lat(o, &sf, 1, &r);
			else
				printf(" %-9" PRIu32 " %-12" PRIu64 " (round trips served; "
				       "latency: see the client)\n",
				       r.size, r.iters);
		}
	}
	print_footer(o);
	close(lfd);
	if (verify_errors)
		die(EXIT_VERIFY, "VERIFY FAILED: %" PRIu64 " mismatches", verify_errors);
}

