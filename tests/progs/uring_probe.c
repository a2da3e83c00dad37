/* SPDX-License-Identifier: MIT */
/*
 * uring_probe: what this kernel's io_uring does in the situations engine v3
 * depends on (docs/ENGINE-V3-PLAN.md, section 4.2): who may submit to and
 * wait on a ring, which task runs a socket read's completion work, what a
 * thread that sleeps elsewhere sees, and what becomes of a read whose
 * submitter exits.  Each probe uses a fresh ring and a fresh socket pair;
 * the answers are printed, one line each, as facts of this kernel.  Run by
 * hand (docs/PERFORMANCE.md records the answers and the kernel).
 *
 * Usage: uring_probe [-h]
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 300

static void die(const char *what, int err)
{
	fprintf(stderr, "uring_probe: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(2);
}

static void pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		die("socketpair", errno);
}

static int ring_init(struct io_uring *r, unsigned flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	return io_uring_queue_init_params(8, r, &p);
}

/* wait up to WAIT_MS for one CQE on @r from the calling task: its res, or
 * a note that none came */
static int wait_one(struct io_uring *r, int *res)
{
	struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = WAIT_MS * 1000000ll};
	struct io_uring_cqe *cqe;
	int ret = io_uring_wait_cqe_timeout(r, &cqe, &ts);

	if (ret)
		return ret;
	*res = cqe->res;
	io_uring_cqe_seen(r, cqe);
	return 0;
}

/* ---- (a) another task submits to a SINGLE_ISSUER ring ------------------- */

struct submit_arg {
	struct io_uring *r;
	int fd;
	int ret;
};

static void *submit_nop(void *p)
{
	struct submit_arg *a = p;
	struct io_uring_sqe *sqe = io_uring_get_sqe(a->r);

	io_uring_prep_nop(sqe);
	a->ret = io_uring_submit(a->r);
	return NULL;
}

static void probe_single_issuer(void)
{
	struct io_uring r;
	struct submit_arg a = {.r = &r};
	pthread_t t;
	int ret = ring_init(&r, IORING_SETUP_SINGLE_ISSUER);

	if (ret) {
		printf("a  SINGLE_ISSUER: not supported (%s)\n", strerror(-ret));
		return;
	}
	/* the creating task is the submitter once it submits first */
	submit_nop(&a);
	if (a.ret != 1)
		die("first submit", a.ret);
	wait_one(&r, &ret);
	pthread_create(&t, NULL, submit_nop, &a);
	pthread_join(t, NULL);
	printf("a  SINGLE_ISSUER, a second thread submits: %s\n",
	       a.ret < 0 ? strerror(-a.ret) : "accepted");
	io_uring_queue_exit(&r);
}

/* ---- (b), (c) X submits a read and sleeps elsewhere; Y waits on the ring - */

struct sleeper {
	struct io_uring *r;
	int sock;
	uint8_t buf[64];
	struct iovec iov;
	int epfd;
	int ep_ret, ep_errno;
	pid_t tid;
	int enable; /* the ring was made disabled: X enables it (its issuer) */
	int submitted, submit_ret;
	pthread_mutex_t m;
	pthread_cond_t c;
};

static void *sleeper_main(void *p)
{
	struct sleeper *s = p;
	struct io_uring_sqe *sqe;
	struct epoll_event ev;

	s->tid = (pid_t)syscall(SYS_gettid);
	if (s->enable &&
	    syscall(__NR_io_uring_register, s->r->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0))
		die("enable rings", errno);
	sqe = io_uring_get_sqe(s->r);
	s->iov.iov_base = s->buf;
	s->iov.iov_len = sizeof(s->buf);
	io_uring_prep_readv(sqe, s->sock, &s->iov, 1, 0);
	io_uring_sqe_set_data64(sqe, 7);
	s->submit_ret = io_uring_submit(s->r);
	pthread_mutex_lock(&s->m);
	s->submitted = 1;
	pthread_cond_signal(&s->c);
	pthread_mutex_unlock(&s->m);
	/* sleep in epoll on an fd that never fires */
	s->ep_ret = epoll_wait(s->epfd, &ev, 1, 2 * WAIT_MS);
	s->ep_errno = s->ep_ret < 0 ? errno : 0;
	return NULL;
}

/* A probe's ring (made disabled for a SINGLE_ISSUER one: its thread X
 * enables it and so becomes the issuer) and socket pair; 0, or -1 when the
 * kernel refuses the ring (said on stdout). */
static int probe_begin(const char *name, unsigned flags, struct io_uring *r, struct sleeper *s,
		       int sv[2])
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->enable = !!(flags & IORING_SETUP_SINGLE_ISSUER);
	ret = ring_init(r, flags | (s->enable ? IORING_SETUP_R_DISABLED : 0));
	if (ret) {
		printf("%s: ring not supported (%s)\n", name, strerror(-ret));
		return -1;
	}
	pair(sv);
	s->r = r;
	s->sock = sv[0];
	return 0;
}

static void probe_other_waits(const char *name, unsigned flags)
{
	struct io_uring r;
	struct sleeper s;
	pthread_t t;
	int sv[2], res = 0, ret;

	if (probe_begin(name, flags, &r, &s, sv))
		return;
	s.epfd = epoll_create1(0);
	pthread_mutex_init(&s.m, NULL);
	pthread_cond_init(&s.c, NULL);
	pthread_create(&t, NULL, sleeper_main, &s);
	pthread_mutex_lock(&s.m);
	while (!s.submitted)
		pthread_cond_wait(&s.c, &s.m);
	pthread_mutex_unlock(&s.m);
	if (s.submit_ret != 1)
		die("X's submit", s.submit_ret);
	usleep(50000); /* X is in epoll_wait(), the read parked on the empty socket */
	if (write(sv[1], "x", 1) != 1)
		die("write", errno);
	ret = wait_one(&r, &res); /* Y: this thread waits for the completion */
	pthread_join(t, NULL);
	printf("%s: X submitted a read and sleeps in epoll_wait; Y waits on the ring: "
	       "Y %s; X's epoll_wait %s\n",
	       name,
	       ret == 0 ? (res == 1 ? "got the read (1 octet)" : "got a CQE with another result")
	       : ret == -ETIME ? "timed out (the completion waits for X)"
			       : strerror(-ret),
	       s.ep_ret < 0 ? strerror(s.ep_errno) : "timed out undisturbed");
	if (ret == -ETIME) {
		/* does X's next entry deliver it? */
		ret = wait_one(&r, &res);
		printf("%s: after X left, Y waits again: %s\n", name,
		       ret == 0 ? "got the read" : strerror(-ret));
	}
	close(sv[0]);
	close(sv[1]);
	close(s.epfd);
	io_uring_queue_exit(&r);
}

/* ---- (d) the submitter of a pending read exits --------------------------- */

static void *submit_and_exit(void *p)
{
	struct sleeper *s = p;
	struct io_uring_sqe *sqe = io_uring_get_sqe(s->r);

	s->iov.iov_base = s->buf;
	s->iov.iov_len = sizeof(s->buf);
	io_uring_prep_readv(sqe, s->sock, &s->iov, 1, 0);
	if (io_uring_submit(s->r) != 1)
		die("submit READV", errno);
	return NULL; /* exits with the read parked */
}

static void probe_exit(const char *name, unsigned flags)
{
	struct io_uring r;
	struct sleeper s;
	pthread_t t;
	int sv[2], res = 0, ret;

	if (probe_begin(name, flags, &r, &s, sv))
		return;
	pthread_create(&t, NULL, submit_and_exit, &s);
	pthread_join(t, NULL);
	usleep(50000);
	ret = wait_one(&r, &res);
	printf("%s: the submitter of a parked read exited: %s\n", name,
	       ret ? (ret == -ETIME ? "no completion (the read stays parked)" : strerror(-ret))
	       : res < 0 ? strerror(-res)
			 : "completed with data?");
	if (ret == -ETIME) {
		if (write(sv[1], "x", 1) != 1)
			die("write", errno);
		ret = wait_one(&r, &res);
		printf("%s: ... then data arrives: %s\n", name,
		       ret ? strerror(-ret) : res == 1 ? "the read completes (1 octet)" : strerror(-res));
	}
	close(sv[0]);
	close(sv[1]);
	io_uring_queue_exit(&r);
}

int main(int argc, char **argv)
{
	struct utsname u;

	if (argc > 1) {
		printf("Usage: uring_probe\n\n"
		       "Prints what this kernel's io_uring does in the cases engine v3 depends on\n"
		       "(a second submitter of a SINGLE_ISSUER ring; a read submitted by a thread\n"
		       "that then sleeps in epoll_wait while another waits on the ring, on a\n"
		       "plain ring, with COOP_TASKRUN and with DEFER_TASKRUN; a read whose\n"
		       "submitter exits).  Facts, not a test: exit 0 unless a probe could not\n"
		       "run (2).\n");
		return strcmp(argv[1], "-h") && strcmp(argv[1], "--help") ? 2 : 0;
	}
	signal(SIGPIPE, SIG_IGN);
	uname(&u);
	printf("kernel %s %s\n", u.sysname, u.release);
	probe_single_issuer();
	probe_other_waits("b  plain ring", 0);
	probe_other_waits("c  COOP_TASKRUN", IORING_SETUP_COOP_TASKRUN);
	probe_other_waits("c' COOP_TASKRUN|TASKRUN_FLAG",
			  IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
	probe_other_waits("e  SINGLE_ISSUER|DEFER_TASKRUN",
			  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	probe_exit("d  plain ring", 0);
	probe_exit("d' COOP_TASKRUN", IORING_SETUP_COOP_TASKRUN);
	return 0;
}
