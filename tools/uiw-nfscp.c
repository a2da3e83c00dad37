/* SPDX-License-Identifier: MIT */
/*
 * uiw-nfscp - copy one file from or to an NFSv3 server (RFC 1813) over
 * RPC-over-RDMA on uiwarp (--rdma) or over TCP (--tcp), with libtirpc.
 *
 *   uiw-nfscp [options] HOST:/export/path LOCAL     download (READ)
 *   uiw-nfscp [options] LOCAL HOST:/export/path     upload (CREATE, WRITE
 *                                                   UNSTABLE, COMMIT, read back)
 *
 * The export's root file handle comes from MOUNT v3 over TCP (its port given
 * or asked from rpcbind), the path is walked with LOOKUP, and the transfer
 * size comes from FSINFO.  All the NFS code goes through clnt_call() on a
 * CLIENT: only the CLIENT's creation differs between TCP and RDMA.  Over
 * RDMA each READ names its destination with CLSET_RDMA_RESULT_BUF, so the
 * data lands in place by Write chunk; WRITE data is an ordinary opaque the
 * RDMA layer moves by Read chunk.
 *
 * Calls in flight: over RDMA --inflight N keeps N READs or WRITEs in flight
 * on the one CLIENT (clnt_rdma_call_start/_wait), up to the server's
 * credits, from one thread.  Over TCP libtirpc's CLIENT is synchronous, so
 * --inflight N opens N CLIENTs (N connections) driven by N threads that
 * take the file's chunks in
 * order from a shared offset.  The SHA-256 of the data as transferred is
 * computed in file order: a thread whose chunk is ahead waits for the ones
 * before it to be hashed (see docs/uiw-nfscp.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <rpc/rpc.h>

#include "nfs3.h"
#include "rpc_rdma.h"

#define PROG	     "uiw-nfscp"
#define MAX_XFER     (1u << 20)
#define MAX_INFLIGHT 64

enum dir { DOWNLOAD, UPLOAD, READBACK };

static struct {
	/* options */
	int rdma, port, mount_port, quiet, verify, inflight, tty, no_rbuf;
	uint32_t rsize, wsize;
	struct rpc_rdma_opts ro;
	struct timeval tmo;
	const char *host;
	/* state */
	CLIENT *cl[MAX_INFLIGHT];
	AUTH *auth;
	nfs_fh3 fh;
	uint64_t size;
	uint32_t chunk;
	int fd;
	enum dir dir;
	atomic_uint_fast64_t next_off, done;
	atomic_int stop, running;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t hashed;
	double t0, t_end, last_print;
	const char *what;
	EVP_MD_CTX *md;
	char verf[NFS3_WRITEVERFSIZE];
	int have_verf;
	char err[512];
} g = {
	.port = -1,
	.mount_port = 20048,
	.verify = 1,
	.inflight = 1,
	.rsize = 256 << 10,
	.wsize = 256 << 10,
	.ro = {.remote_inv = 1, .crc = -1},
	.tmo = {60, 0},
	.fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the first error wins; every worker stops at the next chunk */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g.lock);
	if (!g.err[0]) {
		va_start(ap, fmt);
		vsnprintf(g.err, sizeof(g.err), fmt, ap);
		va_end(ap);
	}
	atomic_store(&g.stop, 1);
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
}

static const char *nfsstat_name(nfsstat3 s)
{
	static const struct {
		int v;
		const char *n;
	} t[] = {
		{NFS3_OK, "NFS3_OK"},
		{NFS3ERR_PERM, "NFS3ERR_PERM"},
		{NFS3ERR_NOENT, "NFS3ERR_NOENT"},
		{NFS3ERR_IO, "NFS3ERR_IO"},
		{NFS3ERR_NXIO, "NFS3ERR_NXIO"},
		{NFS3ERR_ACCES, "NFS3ERR_ACCES"},
		{NFS3ERR_EXIST, "NFS3ERR_EXIST"},
		{NFS3ERR_XDEV, "NFS3ERR_XDEV"},
		{NFS3ERR_NODEV, "NFS3ERR_NODEV"},
		{NFS3ERR_NOTDIR, "NFS3ERR_NOTDIR"},
		{NFS3ERR_ISDIR, "NFS3ERR_ISDIR"},
		{NFS3ERR_INVAL, "NFS3ERR_INVAL"},
		{NFS3ERR_FBIG, "NFS3ERR_FBIG"},
		{NFS3ERR_NOSPC, "NFS3ERR_NOSPC"},
		{NFS3ERR_ROFS, "NFS3ERR_ROFS"},
		{NFS3ERR_MLINK, "NFS3ERR_MLINK"},
		{NFS3ERR_NAMETOOLONG, "NFS3ERR_NAMETOOLONG"},
		{NFS3ERR_NOTEMPTY, "NFS3ERR_NOTEMPTY"},
		{NFS3ERR_DQUOT, "NFS3ERR_DQUOT"},
		{NFS3ERR_STALE, "NFS3ERR_STALE"},
		{NFS3ERR_REMOTE, "NFS3ERR_REMOTE"},
		{NFS3ERR_BADHANDLE, "NFS3ERR_BADHANDLE"},
		{NFS3ERR_NOT_SYNC, "NFS3ERR_NOT_SYNC"},
		{NFS3ERR_BAD_COOKIE, "NFS3ERR_BAD_COOKIE"},
		{NFS3ERR_NOTSUPP, "NFS3ERR_NOTSUPP"},
		{NFS3ERR_TOOSMALL, "NFS3ERR_TOOSMALL"},
		{NFS3ERR_SERVERFAULT, "NFS3ERR_SERVERFAULT"},
		{NFS3ERR_BADTYPE, "NFS3ERR_BADTYPE"},
		{NFS3ERR_JUKEBOX, "NFS3ERR_JUKEBOX"},
	};
	static __thread char buf[32];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].v == (int)s)
			return t[i].n;
	snprintf(buf, sizeof(buf), "NFS3ERR_%d", (int)s);
	return buf;
}

static const char *mntstat_name(mountstat3 s)
{
	static char buf[32];

	switch (s) {
	case MNT3_OK:
		return "MNT3_OK";
	case MNT3ERR_PERM:
		return "MNT3ERR_PERM";
	case MNT3ERR_NOENT:
		return "MNT3ERR_NOENT";
	case MNT3ERR_IO:
		return "MNT3ERR_IO";
	case MNT3ERR_ACCES:
		return "MNT3ERR_ACCES";
	case MNT3ERR_NOTDIR:
		return "MNT3ERR_NOTDIR";
	case MNT3ERR_INVAL:
		return "MNT3ERR_INVAL";
	case MNT3ERR_NAMETOOLONG:
		return "MNT3ERR_NAMETOOLONG";
	case MNT3ERR_NOTSUPP:
		return "MNT3ERR_NOTSUPP";
	case MNT3ERR_SERVERFAULT:
		return "MNT3ERR_SERVERFAULT";
	}
	snprintf(buf, sizeof(buf), "MNT3ERR_%d", (int)s);
	return buf;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uiw-nfscp [options] HOST:/export/path LOCAL    (download)\n"
		"       uiw-nfscp [options] LOCAL HOST:/export/path    (upload)\n"
		"       uiw-nfscp [options] --list HOST:/export/dir    (READDIRPLUS listing)\n"
		"       uiw-nfscp [options] --fsinfo HOST:/export      (FSINFO)\n"
		"Copy one file from or to an NFSv3 server over RPC-over-RDMA on uiwarp (--rdma)\n"
		"or TCP (--tcp, the default), print octets, seconds, MB/s and SHA-256 sums.\n"
		"The export's file handle comes from MOUNT v3 over TCP; the path below it is\n"
		"walked with LOOKUP.  Download: READ into LOCAL (a directory: LOCAL/NAME).\n"
		"Upload: CREATE (UNCHECKED, mode 0644, truncating), WRITE UNSTABLE, COMMIT,\n"
		"then the file is read back over NFS and its SHA-256 compared (a remote\n"
		"directory as target: DIR/basename of LOCAL).\n"
		"  --tcp             NFS over TCP (port default 2049)\n"
		"  --rdma            NFS over RPC-over-RDMA (RFC 8166) on uiwarp (port default 20049)\n"
		"  -p, --port N      the NFS port (no rpcbind lookup)\n"
		"  -m, --mount-port N  rpc.mountd's TCP port (default 20048); 0: ask rpcbind\n"
		"  -r, --rsize N     largest READ (K/M suffixes; default 256K, at most 1M; also\n"
		"                    capped by the server's FSINFO rtmax)\n"
		"  -w, --wsize N     largest WRITE (default 256K, at most 1M; capped by wtmax)\n"
		"  -n, --inflight N  calls in flight: over RDMA on one connection (up to the\n"
		"                    server's credits), over TCP N connections and threads\n"
		"                    (default 1, at most %d)\n"
		"  --no-verify       upload: do not read the file back\n"
		"  --list            list a directory with READDIRPLUS: type, size, fileid and\n"
		"                    name per entry (not with -q), then a summary line\n"
		"  --maxcount N      READDIRPLUS maxcount (reply size; default 256K, 1K..1M)\n"
		"  --fsinfo          print the export's FSINFO (alone: only that)\n"
		"  --timeout SECS    per call (default 60); given, it also bounds the RDMA\n"
		"                    connection setup (default 10)\n"
		"  -q, --quiet       no progress bar, only errors and the result lines\n"
		"  -h, --help        this text\n"
		"RDMA only:\n"
		"  --inline N        inline send/receive size advertised (RFC 8797; default 4K)\n"
		"  --credits N       credits asked for (default 32)\n"
		"  --info            print the negotiated settings and chunk counters at the end\n"
		"  --no-result-buf   no CLSET_RDMA_RESULT_BUF: READ data comes in the reply\n"
		"                    (inline or by Reply chunk) and is copied (diagnosis)\n"
		"Exit status: 0 copied (and the checksums equal), 1 an error or a checksum\n"
		"mismatch (the NFS status is named, e.g. NFS3ERR_NOENT), 2 bad usage.\n",
		MAX_INFLIGHT);
}

static long long parse_size(const char *s)
{
	char *e;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &e, 0);
	if (errno || e == s)
		return -1;
	if (*e == 'k' || *e == 'K')
		v <<= 10, e++;
	else if (*e == 'm' || *e == 'M')
		v <<= 20, e++;
	if (*e || v > (1ull << 40))
		return -1;
	return (long long)v;
}

static CLIENT *tcp_client(const char *host, int port, rpcprog_t prog, rpcvers_t vers)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai;
	struct sockaddr_in sa;
	int sock = RPC_ANYSOCK, rc;
	CLIENT *cl;

	rc = getaddrinfo(host, NULL, &hints, &ai);
	if (rc) {
		fprintf(stderr, PROG ": %s: %s\n", host, gai_strerror(rc));
		return NULL;
	}
	memcpy(&sa, ai->ai_addr, sizeof(sa));
	freeaddrinfo(ai);
	sa.sin_port = htons((uint16_t)port);
	cl = clnttcp_create(&sa, prog, vers, &sock, 0, 0);
	if (!cl) {
		char what[128];

		snprintf(what, sizeof(what), PROG ": %s TCP %s port %d",
			 prog == MOUNT_PROGRAM ? "MOUNT" : "NFS", host, port);
		clnt_pcreateerror(what);
	}
	return cl;
}

/* the largest reply of every procedure used here but READDIRPLUS, and of
 * READ when its data comes by Write chunk: the RPC reply header with an
 * AUTH_SYS-sized verifier, two fattr3, a file handle and a few words */
#define SMALL_REPLY 1024

/* CLSET_RDMA_REPLY_MAX, as Linux's client bounds each procedure's reply:
 * a Reply chunk is offered only when the reply may not fit inline (Linux
 * nfsd sends every reply through a Reply chunk it is offered) */
static void set_reply_max(CLIENT *cl, u_int n)
{
	if (g.rdma)
		clnt_control(cl, CLSET_RDMA_REPLY_MAX, (char *)&n);
}

static CLIENT *nfs_client(void)
{
	CLIENT *cl;

	if (g.rdma) {
		cl = clnt_rdma_create(g.host, g.port, NFS_PROGRAM, NFS_V3, &g.ro);
		if (!cl)
			fprintf(stderr, PROG ": NFS RPC-over-RDMA %s port %d: %s\n", g.host, g.port,
				clnt_rdma_strerror());
	} else {
		cl = tcp_client(g.host, g.port, NFS_PROGRAM, NFS_V3);
	}
	if (cl)
		cl->cl_auth = g.auth;
	if (cl && g.rdma)
		set_reply_max(cl, g.no_rbuf ? g.rsize + SMALL_REPLY : SMALL_REPLY);
	return cl;
}

/* ---- MOUNT */

/* xdr_void with the argument list clnt_call() casts to */
static bool_t xdr_nothing(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

static CLIENT *mount_client(void)
{
	CLIENT *cl;

	if (g.mount_port > 0) {
		cl = tcp_client(g.host, g.mount_port, MOUNT_PROGRAM, MOUNT_V3);
	} else {
		cl = clnt_create(g.host, MOUNT_PROGRAM, MOUNT_V3, "tcp");
		if (!cl)
			clnt_pcreateerror(PROG ": MOUNT v3 over TCP (rpcbind lookup)");
	}
	if (cl)
		cl->cl_auth = g.auth;
	return cl;
}

/* does export @ex hold @path (at a component boundary)? */
static size_t export_match(const char *ex, const char *path)
{
	size_t n = strlen(ex);

	while (n > 1 && ex[n - 1] == '/')
		n--;
	if (n == 1 && ex[0] == '/')
		return 1;
	if (strncmp(ex, path, n) || (path[n] && path[n] != '/'))
		return 0;
	return n;
}

/*
 * mount_path() - MNT the export that holds @path; fills g.fh with its root
 * handle and @rest with the path below it.  The export is the longest one
 * of the EXPORT list that holds @path; without a match (EXPORT refused or
 * the list hides it), the path's own prefixes are tried, longest first.
 */
static int mount_path(CLIENT *mcl, const char *path, char *exp, size_t explen, const char **rest)
{
	exports3 ex = NULL;
	enum clnt_stat st;
	size_t best = 0, n;
	char cand[PATH_MAX];

	exp[0] = 0;
	st = clnt_call(mcl, MOUNTPROC3_EXPORT, (xdrproc_t)xdr_nothing, NULL,
		       (xdrproc_t)xdr_exports3, (caddr_t)&ex, g.tmo);
	if (st != RPC_SUCCESS) {
		clnt_perror(mcl, PROG ": MOUNT EXPORT");
		if (st == RPC_CANTSEND || st == RPC_CANTRECV || st == RPC_TIMEDOUT)
			return -1;
	} else {
		for (struct exportnode *e = ex; e; e = e->ex_next) {
			n = export_match(e->ex_dir, path);
			if (n > best && strlen(e->ex_dir) < explen) {
				best = n;
				snprintf(exp, explen, "%s", e->ex_dir);
			}
		}
		xdr_free((xdrproc_t)xdr_exports3, (char *)&ex);
	}
	snprintf(cand, sizeof(cand), "%s", exp[0] ? exp : path);
	for (;;) {
		mountres3 mr;
		char *dp = cand;

		memset(&mr, 0, sizeof(mr));
		st = clnt_call(mcl, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath3, (caddr_t)&dp,
			       (xdrproc_t)xdr_mountres3, (caddr_t)&mr, g.tmo);
		if (st != RPC_SUCCESS) {
			clnt_perror(mcl, PROG ": MOUNT MNT");
			return -1;
		}
		if (mr.fhs_status == MNT3_OK) {
			fhandle3 *fh = &mr.mountres3_u.mountinfo.fhandle;

			g.fh.data.data_len = fh->fhandle3_len;
			g.fh.data.data_val = malloc(fh->fhandle3_len ? fh->fhandle3_len : 1);
			memcpy(g.fh.data.data_val, fh->fhandle3_val, fh->fhandle3_len);
			xdr_free((xdrproc_t)xdr_mountres3, (char *)&mr);
			snprintf(exp, explen, "%s", cand);
			n = strlen(cand);
			while (n > 1 && cand[n - 1] == '/')
				n--;
			*rest = n == 1 ? path : path + n;
			return 0;
		}
		if (exp[0] || !strcmp(cand, "/")) {
			fprintf(stderr, PROG ": MOUNT MNT %s: %s\n", cand,
				mntstat_name(mr.fhs_status));
			return -1;
		}
		/* no export listed: the next shorter prefix */
		{
			char *sl = strrchr(cand, '/');

			if (!sl)
				return -1;
			if (sl == cand)
				sl[1] = 0;
			else
				*sl = 0;
		}
	}
}

/* ---- NFS helpers: each returns 0, an nfsstat3 > 0, or -1 (RPC failure, printed) */

static int nfs_getattr(CLIENT *cl, const nfs_fh3 *fh, fattr3 *attr)
{
	GETATTR3args a = {*fh};
	GETATTR3res r;

	memset(&r, 0, sizeof(r));
	if (clnt_call(cl, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args, (caddr_t)&a,
		      (xdrproc_t)xdr_GETATTR3res, (caddr_t)&r, g.tmo) != RPC_SUCCESS) {
		clnt_perror(cl, PROG ": GETATTR");
		return -1;
	}
	if (r.status == NFS3_OK)
		*attr = r.GETATTR3res_u.resok.obj_attributes;
	return (int)r.status;
}

/* LOOKUP @name in @dir: @out gets a malloc'd handle, @attr the attributes */
static int nfs_lookup(CLIENT *cl, const nfs_fh3 *dir, const char *name, nfs_fh3 *out, fattr3 *attr)
{
	LOOKUP3args a = {{*dir, (char *)name}};
	LOOKUP3res r;
	int s;

	memset(&r, 0, sizeof(r));
	if (clnt_call(cl, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args, (caddr_t)&a,
		      (xdrproc_t)xdr_LOOKUP3res, (caddr_t)&r, g.tmo) != RPC_SUCCESS) {
		clnt_perror(cl, PROG ": LOOKUP");
		return -1;
	}
	s = (int)r.status;
	if (s == NFS3_OK) {
		LOOKUP3resok *ok = &r.LOOKUP3res_u.resok;

		out->data.data_len = ok->object.data.data_len;
		out->data.data_val = malloc(out->data.data_len ? out->data.data_len : 1);
		memcpy(out->data.data_val, ok->object.data.data_val, out->data.data_len);
		if (ok->obj_attributes.attributes_follow)
			*attr = ok->obj_attributes.post_op_attr_u.attributes;
		else
			s = nfs_getattr(cl, out, attr);
	}
	xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
	return s;
}

static int nfs_fsinfo(CLIENT *cl, const nfs_fh3 *fh, FSINFO3resok *info)
{
	FSINFO3args a = {*fh};
	FSINFO3res r;

	memset(&r, 0, sizeof(r));
	if (clnt_call(cl, NFSPROC3_FSINFO, (xdrproc_t)xdr_FSINFO3args, (caddr_t)&a,
		      (xdrproc_t)xdr_FSINFO3res, (caddr_t)&r, g.tmo) != RPC_SUCCESS) {
		clnt_perror(cl, PROG ": FSINFO");
		return -1;
	}
	if (r.status == NFS3_OK)
		*info = r.FSINFO3res_u.resok;
	return (int)r.status;
}

/* CREATE @name in @dir UNCHECKED, mode 0644, size 0 (truncates an existing file) */
static int nfs_create(CLIENT *cl, const nfs_fh3 *dir, const char *name, nfs_fh3 *out)
{
	CREATE3args a;
	CREATE3res r;
	sattr3 *sa;
	int s;

	memset(&a, 0, sizeof(a));
	a.where.dir = *dir;
	a.where.name = (char *)name;
	a.how.mode = UNCHECKED;
	sa = &a.how.createhow3_u.obj_attributes;
	sa->mode.set_it = TRUE;
	sa->mode.set_mode3_u.mode = 0644;
	sa->size.set_it = TRUE;
	sa->size.set_size3_u.size = 0;
	sa->atime.set_it = DONT_CHANGE;
	sa->mtime.set_it = DONT_CHANGE;
	memset(&r, 0, sizeof(r));
	if (clnt_call(cl, NFSPROC3_CREATE, (xdrproc_t)xdr_CREATE3args, (caddr_t)&a,
		      (xdrproc_t)xdr_CREATE3res, (caddr_t)&r, g.tmo) != RPC_SUCCESS) {
		clnt_perror(cl, PROG ": CREATE");
		return -1;
	}
	s = (int)r.status;
	if (s == NFS3_OK) {
		post_op_fh3 *ph = &r.CREATE3res_u.resok.obj;

		if (ph->handle_follows) {
			out->data.data_len = ph->post_op_fh3_u.handle.data.data_len;
			out->data.data_val = malloc(out->data.data_len ? out->data.data_len : 1);
			memcpy(out->data.data_val, ph->post_op_fh3_u.handle.data.data_val,
			       out->data.data_len);
		} else {
			fattr3 at;

			/* RFC 1813 §3.3.8: the handle may be left out; LOOKUP it */
			s = nfs_lookup(cl, dir, name, out, &at);
		}
	}
	xdr_free((xdrproc_t)xdr_CREATE3res, (char *)&r);
	return s;
}

/* ---- READ with the data decoded straight into the caller's buffer */

struct read_res {
	nfsstat3 status;
	post_op_attr attr;
	count3 count;
	bool_t eof;
	u_int len, cap;
	char *data;
};

static bool_t xdr_read_res(XDR *x, struct read_res *r)
{
	if (!xdr_nfsstat3(x, &r->status) || !xdr_post_op_attr(x, &r->attr))
		return FALSE;
	if (r->status != NFS3_OK)
		return TRUE;
	/* xdr_bytes() into r->data (not NULL): at most r->cap octets */
	return xdr_count3(x, &r->count) && xdr_bool(x, &r->eof) &&
	       xdr_bytes(x, &r->data, &r->len, r->cap);
}

/* READ [off, off + len) into buf; 0, or fail() called */
static int read_range(CLIENT *cl, uint64_t off, char *buf, uint32_t len)
{
	uint32_t got = 0;

	while (got < len) {
		READ3args a = {g.fh, off + got, len - got};
		struct read_res r = {.data = buf + got, .cap = len - got};
		enum clnt_stat st;

		if (g.rdma && !g.no_rbuf) {
			struct rpc_rdma_buf rb = {buf + got, len - got};

			clnt_control(cl, CLSET_RDMA_RESULT_BUF, (char *)&rb);
		}
		st = clnt_call(cl, NFSPROC3_READ, (xdrproc_t)xdr_READ3args, (caddr_t)&a,
			       (xdrproc_t)xdr_read_res, (caddr_t)&r, g.tmo);
		if (st != RPC_SUCCESS) {
			fail("READ at %llu: %s", (unsigned long long)(off + got),
			     clnt_sperror(cl, "RPC"));
			return -1;
		}
		if (r.status != NFS3_OK) {
			fail("READ at %llu: %s", (unsigned long long)(off + got),
			     nfsstat_name(r.status));
			return -1;
		}
		if (r.data != buf + got) {
			fail("READ at %llu: data decoded out of place",
			     (unsigned long long)(off + got));
			return -1;
		}
		if (!r.len) {
			fail("READ at %llu: %s (the file shrank?)", (unsigned long long)(off + got),
			     r.eof ? "end of file" : "no data and no EOF");
			return -1;
		}
		got += r.len;
	}
	return 0;
}

/* WRITE UNSTABLE [off, off + len) from buf; 0, or fail() called */
static int write_range(CLIENT *cl, uint64_t off, char *buf, uint32_t len)
{
	uint32_t sent = 0;

	while (sent < len) {
		WRITE3args a = {g.fh, off + sent, len - sent, UNSTABLE, {len - sent, buf + sent}};
		WRITE3res r;
		enum clnt_stat st;
		int bad = 0;

		memset(&r, 0, sizeof(r));
		st = clnt_call(cl, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args, (caddr_t)&a,
			       (xdrproc_t)xdr_WRITE3res, (caddr_t)&r, g.tmo);
		if (st != RPC_SUCCESS) {
			fail("WRITE at %llu: %s", (unsigned long long)(off + sent),
			     clnt_sperror(cl, "RPC"));
			return -1;
		}
		if (r.status != NFS3_OK) {
			fail("WRITE at %llu: %s", (unsigned long long)(off + sent),
			     nfsstat_name(r.status));
			xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&r);
			return -1;
		}
		pthread_mutex_lock(&g.lock);
		if (!g.have_verf) {
			memcpy(g.verf, r.WRITE3res_u.resok.verf, sizeof(g.verf));
			g.have_verf = 1;
		} else if (memcmp(g.verf, r.WRITE3res_u.resok.verf, sizeof(g.verf))) {
			bad = 1;
		}
		pthread_mutex_unlock(&g.lock);
		if (bad) {
			fail("WRITE at %llu: the write verifier changed (the server restarted?): "
			     "unstable data may be lost",
			     (unsigned long long)(off + sent));
			return -1;
		}
		if (!r.WRITE3res_u.resok.count || r.WRITE3res_u.resok.count > len - sent) {
			fail("WRITE at %llu: the server took %u octets of %u",
			     (unsigned long long)(off + sent), r.WRITE3res_u.resok.count,
			     len - sent);
			return -1;
		}
		sent += r.WRITE3res_u.resok.count;
		xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&r);
	}
	return 0;
}

/* hash [off, off + len) once every chunk before it has been hashed */
static int ordered_hash(uint64_t off, const char *buf, uint32_t len)
{
	int rc = 0;

	pthread_mutex_lock(&g.lock);
	while (g.hashed != off && !atomic_load(&g.stop))
		pthread_cond_wait(&g.cond, &g.lock);
	if (atomic_load(&g.stop)) {
		rc = -1;
	} else {
		EVP_DigestUpdate(g.md, buf, len);
		g.hashed += len;
		pthread_cond_broadcast(&g.cond);
	}
	pthread_mutex_unlock(&g.lock);
	return rc;
}

static void progress(const char *what, double dt, int final);

/* a progress line at most every 200 ms, from whichever worker gets here */
static void maybe_progress(void)
{
	double t = now();

	if (!g.tty || g.quiet)
		return;
	pthread_mutex_lock(&g.lock);
	if (t - g.last_print >= 0.2) {
		g.last_print = t;
		progress(g.what, t - g.t0, 0);
	}
	pthread_mutex_unlock(&g.lock);
}

/*
 * worker() - move chunks until the file is done.  Worker 0 runs in the main
 * thread with the main CLIENT; worker i > 0 runs in its own thread with a
 * CLIENT it connects and destroys itself: a CLIENT over RDMA owns a polled
 * uiwarp context, which only the thread that first turned it may drive
 * afterwards (its io_uring is single-issuer), so a CLIENT never changes
 * threads here.
 */
static void *worker(void *arg)
{
	long idx = (long)arg;
	CLIENT *cl = idx ? NULL : g.cl[0];
	char *buf = malloc(g.chunk);

	if (!buf) {
		fail("out of memory");
		goto out;
	}
	if (idx) {
		cl = nfs_client();
		if (!cl) {
			fail("connection %ld of %d: cannot connect", idx + 1, g.inflight);
			goto out;
		}
	}
	while (!atomic_load(&g.stop)) {
		uint64_t off = atomic_fetch_add(&g.next_off, g.chunk);
		uint32_t len;

		if (off >= g.size)
			break;
		len = (uint32_t)(g.size - off < g.chunk ? g.size - off : g.chunk);
		if (g.dir == UPLOAD) {
			ssize_t n;

			for (uint32_t k = 0; k < len; k += (uint32_t)n) {
				n = pread(g.fd, buf + k, len - k, (off_t)(off + k));
				if (n <= 0) {
					fail("reading the local file at %llu: %s",
					     (unsigned long long)(off + k),
					     n ? strerror(errno) : "it shrank");
					goto out;
				}
			}
			if (write_range(cl, off, buf, len))
				goto out;
		} else {
			if (read_range(cl, off, buf, len))
				goto out;
			if (g.dir == DOWNLOAD) {
				ssize_t n;

				for (uint32_t k = 0; k < len; k += (uint32_t)n) {
					n = pwrite(g.fd, buf + k, len - k, (off_t)(off + k));
					if (n <= 0) {
						fail("writing the local file at %llu: %s",
						     (unsigned long long)(off + k),
						     strerror(errno));
						goto out;
					}
				}
			}
		}
		if (ordered_hash(off, buf, len))
			goto out;
		atomic_fetch_add(&g.done, len);
		maybe_progress();
	}
out:
	free(buf);
	if (idx && cl) {
		cl->cl_auth = NULL;
		clnt_destroy(cl);
	}
	pthread_mutex_lock(&g.lock);
	if (atomic_fetch_sub(&g.running, 1) == 1)
		g.t_end = now();
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

/* ---- over RDMA: g.inflight calls in flight on one CLIENT */

struct flight {
	uint32_t tag;
	uint64_t off;
	uint32_t len;
	char *buf;
	struct read_res rr;
	WRITE3args wa;
	WRITE3res wr;
};

/* a WRITE's reply checked as write_range() does; the octets taken, or -1 */
static long write_taken(uint64_t off, uint32_t len, WRITE3res *r)
{
	int bad = 0;

	if (r->status != NFS3_OK) {
		fail("WRITE at %llu: %s", (unsigned long long)off, nfsstat_name(r->status));
		return -1;
	}
	pthread_mutex_lock(&g.lock);
	if (!g.have_verf) {
		memcpy(g.verf, r->WRITE3res_u.resok.verf, sizeof(g.verf));
		g.have_verf = 1;
	} else if (memcmp(g.verf, r->WRITE3res_u.resok.verf, sizeof(g.verf))) {
		bad = 1;
	}
	pthread_mutex_unlock(&g.lock);
	if (bad) {
		fail("WRITE at %llu: the write verifier changed (the server restarted?): "
		     "unstable data may be lost",
		     (unsigned long long)off);
		return -1;
	}
	if (!r->WRITE3res_u.resok.count || r->WRITE3res_u.resok.count > len) {
		fail("WRITE at %llu: the server took %u octets of %u", (unsigned long long)off,
		     r->WRITE3res_u.resok.count, len);
		return -1;
	}
	return (long)r->WRITE3res_u.resok.count;
}

/* start the READ or WRITE of flight @f; 0 or -1 (fail() called) */
static int flight_start(CLIENT *cl, struct flight *f)
{
	enum clnt_stat st;

	if (g.dir == UPLOAD) {
		ssize_t n;

		for (uint32_t k = 0; k < f->len; k += (uint32_t)n) {
			n = pread(g.fd, f->buf + k, f->len - k, (off_t)(f->off + k));
			if (n <= 0) {
				fail("reading the local file at %llu: %s", (unsigned long long)(f->off + k),
				     n ? strerror(errno) : "it shrank");
				return -1;
			}
		}
		f->wa = (WRITE3args){g.fh, f->off, f->len, UNSTABLE, {f->len, f->buf}};
		memset(&f->wr, 0, sizeof(f->wr));
		st = clnt_rdma_call_start(cl, NFSPROC3_WRITE, (xdrproc_t)xdr_WRITE3args, (caddr_t)&f->wa,
					  (xdrproc_t)xdr_WRITE3res, (caddr_t)&f->wr, NULL, g.tmo, &f->tag);
	} else {
		READ3args a = {g.fh, f->off, f->len};
		struct rpc_rdma_buf rb = {f->buf, f->len};

		f->rr = (struct read_res){.data = f->buf, .cap = f->len};
		st = clnt_rdma_call_start(cl, NFSPROC3_READ, (xdrproc_t)xdr_READ3args, (caddr_t)&a,
					  (xdrproc_t)xdr_read_res, (caddr_t)&f->rr, g.no_rbuf ? NULL : &rb,
					  g.tmo, &f->tag);
	}
	if (st != RPC_SUCCESS) {
		fail("%s at %llu: %s", g.dir == UPLOAD ? "WRITE" : "READ", (unsigned long long)f->off,
		     clnt_sperror(cl, "RPC"));
		return -1;
	}
	return 0;
}

/* the end of flight @f (the oldest): checked, the rest of a short transfer
 * done synchronously, written locally, hashed; 0 or -1 */
static int flight_end(CLIENT *cl, struct flight *f)
{
	enum clnt_stat st = clnt_rdma_call_wait(cl, f->tag);
	uint32_t got;

	if (st != RPC_SUCCESS) {
		fail("%s at %llu: %s", g.dir == UPLOAD ? "WRITE" : "READ", (unsigned long long)f->off,
		     clnt_sperror(cl, "RPC"));
		if (g.dir == UPLOAD)
			xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&f->wr);
		return -1;
	}
	if (g.dir == UPLOAD) {
		long k = write_taken(f->off, f->len, &f->wr);

		xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&f->wr);
		if (k < 0)
			return -1;
		got = (uint32_t)k;
		if (got < f->len && write_range(cl, f->off + got, f->buf + got, f->len - got))
			return -1;
	} else {
		if (f->rr.status != NFS3_OK) {
			fail("READ at %llu: %s", (unsigned long long)f->off, nfsstat_name(f->rr.status));
			return -1;
		}
		if (f->rr.data != f->buf) {
			fail("READ at %llu: data decoded out of place", (unsigned long long)f->off);
			return -1;
		}
		if (!f->rr.len) {
			fail("READ at %llu: %s (the file shrank?)", (unsigned long long)f->off,
			     f->rr.eof ? "end of file" : "no data and no EOF");
			return -1;
		}
		got = f->rr.len;
		if (got < f->len && read_range(cl, f->off + got, f->buf + got, f->len - got))
			return -1;
		if (g.dir == DOWNLOAD) {
			ssize_t n;

			for (uint32_t k = 0; k < f->len; k += (uint32_t)n) {
				n = pwrite(g.fd, f->buf + k, f->len - k, (off_t)(f->off + k));
				if (n <= 0) {
					fail("writing the local file at %llu: %s",
					     (unsigned long long)(f->off + k), strerror(errno));
					return -1;
				}
			}
		}
	}
	if (ordered_hash(f->off, f->buf, f->len))
		return -1;
	atomic_fetch_add(&g.done, f->len);
	maybe_progress();
	return 0;
}

/*
 * worker_rdma() - the transfer over RDMA: g.inflight READs or WRITEs in
 * flight on the main CLIENT (clnt_rdma_call_start/_wait), from this one
 * thread, up to the credits the server grants; they end in file order.
 */
static void worker_rdma(void)
{
	struct flight f[MAX_INFLIGHT];
	CLIENT *cl = g.cl[0];
	int n = g.inflight, head = 0, inq = 0, failed = 0;

	memset(f, 0, sizeof(f));
	for (int i = 0; i < n; i++) {
		f[i].buf = malloc(g.chunk);
		if (!f[i].buf) {
			fail("out of memory");
			failed = 1;
		}
	}
	while (!failed && !atomic_load(&g.stop)) {
		while (inq < n && atomic_load(&g.next_off) < g.size) {
			struct flight *x = &f[(head + inq) % n];
			uint64_t off = atomic_fetch_add(&g.next_off, g.chunk);

			x->off = off;
			x->len = (uint32_t)(g.size - off < g.chunk ? g.size - off : g.chunk);
			if (flight_start(cl, x)) {
				failed = 1;
				break;
			}
			inq++;
		}
		if (!inq || failed)
			break;
		if (flight_end(cl, &f[head]))
			failed = 1;
		head = (head + 1) % n;
		inq--;
	}
	/* calls still in flight name our buffers: end them before freeing */
	for (; inq > 0; inq--, head = (head + 1) % n) {
		clnt_rdma_call_wait(cl, f[head].tag);
		if (g.dir == UPLOAD)
			xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&f[head].wr);
	}
	for (int i = 0; i < n; i++)
		free(f[i].buf);
	pthread_mutex_lock(&g.lock);
	if (atomic_fetch_sub(&g.running, 1) == 1)
		g.t_end = now();
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
}

static void progress(const char *what, double dt, int final)
{
	uint64_t d = atomic_load(&g.done);
	double mb = (double)d / 1048576.0, rate = dt > 0 ? mb / dt : 0;
	double pct = g.size ? 100.0 * (double)d / (double)g.size : 100.0;
	char eta[32] = "--:--";
	char bar[31];
	int fill = (int)(pct * 30 / 100);

	if (rate > 0 && d < g.size) {
		double s = ((double)(g.size - d) / 1048576.0) / rate;

		snprintf(eta, sizeof(eta), "%02d:%02d", (int)s / 60, (int)s % 60);
	} else if (d >= g.size) {
		snprintf(eta, sizeof(eta), "00:00");
	}
	for (int i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[30] = 0;
	fprintf(stderr, "\r%-8s [%s] %5.1f%% %8.1f MB %7.1f MB/s ETA %s ", what, bar, pct, mb, rate,
		eta);
	if (final)
		fputc('\n', stderr);
}

/* run a transfer of g.size octets with g.inflight workers; the SHA-256 of
 * the data in file order goes to @sum; returns the seconds, or -1 */
static double transfer(enum dir dir, unsigned char *sum)
{
	static const char *const what[] = {"download", "upload", "verify"};
	pthread_t th[MAX_INFLIGHT];
	double t0, dt;
	int n = g.rdma ? 1 : g.inflight; /* RDMA: one thread, calls in flight */
	unsigned int sl;

	g.dir = dir;
	atomic_store(&g.next_off, 0);
	atomic_store(&g.done, 0);
	g.hashed = 0;
	g.md = EVP_MD_CTX_new();
	if (!g.md || !EVP_DigestInit_ex(g.md, EVP_sha256(), NULL)) {
		fprintf(stderr, PROG ": cannot set up SHA-256\n");
		return -1;
	}
	atomic_store(&g.running, n);
	t0 = now();
	g.t_end = t0;
	g.t0 = t0;
	g.last_print = t0;
	g.what = what[dir];
	for (int i = 1; i < n; i++) {
		if (pthread_create(&th[i], NULL, worker, (void *)(long)i)) {
			fail("cannot start a thread");
			pthread_mutex_lock(&g.lock);
			atomic_fetch_sub(&g.running, n - i);
			pthread_mutex_unlock(&g.lock);
			n = i;
			break;
		}
	}
	/* worker 0 in this thread, with the main CLIENT */
	if (g.rdma)
		worker_rdma();
	else
		worker((void *)0L);
	for (int i = 1; i < n; i++)
		pthread_join(th[i], NULL);
	dt = g.t_end - t0;
	if (g.tty && !g.quiet)
		progress(what[dir], dt, 1);
	EVP_DigestFinal_ex(g.md, sum, &sl);
	EVP_MD_CTX_free(g.md);
	g.md = NULL;
	if (atomic_load(&g.stop))
		return -1;
	if (atomic_load(&g.done) != g.size) {
		fail("%s moved %llu of %llu octets", what[dir],
		     (unsigned long long)atomic_load(&g.done), (unsigned long long)g.size);
		return -1;
	}
	return dt;
}

static int sha256_file(const char *path, unsigned char *sum)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *buf = malloc(1 << 20);
	int fd = open(path, O_RDONLY), rc = -1;
	unsigned int sl;
	ssize_t n;

	if (fd < 0 || !md || !buf || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		goto out;
	while ((n = read(fd, buf, 1 << 20)) > 0)
		EVP_DigestUpdate(md, buf, (size_t)n);
	if (n == 0 && EVP_DigestFinal_ex(md, sum, &sl))
		rc = 0;
out:
	if (rc)
		fprintf(stderr, PROG ": cannot checksum %s: %s\n", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	free(buf);
	EVP_MD_CTX_free(md);
	return rc;
}

static void hex(const unsigned char *sum, char *out)
{
	for (int i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", sum[i]);
}

/* "HOST:/path": host and path split in place; NULL if @s is not remote */
static char *split_remote(char *s)
{
	char *c = strchr(s, ':');

	if (!c || c == s || c[1] != '/')
		return NULL;
	/* [v6addr]:/path */
	if (s[0] == '[') {
		char *e = strstr(s, "]:/");

		if (!e)
			return NULL;
		*e = 0;
		memmove(s, s + 1, strlen(s));
		return e + 2;
	}
	*c = 0;
	return c + 1;
}

/* ---- --fsinfo and --list */

static const char *ftype_name(ftype3 t)
{
	static const char *const n[] = {"?", "reg", "dir", "blk", "chr", "lnk", "sock", "fifo"};

	return (unsigned)t < sizeof(n) / sizeof(n[0]) ? n[t] : "?";
}

static void print_fsinfo(const FSINFO3resok *f)
{
	printf(PROG ": fsinfo rtmax %u rtpref %u rtmult %u wtmax %u wtpref %u wtmult %u dtpref %u "
		    "maxfilesize %llu time_delta %u.%09u properties 0x%x%s%s%s%s\n",
	       f->rtmax, f->rtpref, f->rtmult, f->wtmax, f->wtpref, f->wtmult, f->dtpref,
	       (unsigned long long)f->maxfilesize, f->time_delta.seconds, f->time_delta.nseconds,
	       f->properties, f->properties & FSF3_LINK ? " LINK" : "",
	       f->properties & FSF3_SYMLINK ? " SYMLINK" : "",
	       f->properties & FSF3_HOMOGENEOUS ? " HOMOGENEOUS" : "",
	       f->properties & FSF3_CANSETTIME ? " CANSETTIME" : "");
}

/* READDIRPLUS @dir to its end, @maxcount octets per reply: one line per
 * entry (unless quiet) and a summary; 0, an nfsstat3 > 0, or -1 */
static int list_dir(CLIENT *cl, const nfs_fh3 *dir, uint32_t maxcount)
{
	READDIRPLUS3args a;
	uint64_t n = 0, ndir = 0, nreg = 0, calls = 0, octets = 0, maxreply = 0, nofh = 0;
	int s = 0;
	double t0 = now();

	memset(&a, 0, sizeof(a));
	a.dir = *dir;
	a.dircount = maxcount;
	a.maxcount = maxcount;
	/* the reply may need a Reply chunk: maxcount bounds READDIRPLUS3resok
	 * with its XDR (RFC 1813 §3.3.17) */
	set_reply_max(cl, maxcount + SMALL_REPLY);
	for (;;) {
		READDIRPLUS3res r;
		struct rpc_rdma_info i0, i1;
		int eof, got = 0;

		memset(&r, 0, sizeof(r));
		if (g.rdma)
			clnt_control(cl, CLGET_RDMA_INFO, (char *)&i0);
		if (clnt_call(cl, NFSPROC3_READDIRPLUS, (xdrproc_t)xdr_READDIRPLUS3args, (caddr_t)&a,
			      (xdrproc_t)xdr_READDIRPLUS3res, (caddr_t)&r, g.tmo) != RPC_SUCCESS) {
			clnt_perror(cl, PROG ": READDIRPLUS");
			s = -1;
			break;
		}
		calls++;
		if (g.rdma) {
			clnt_control(cl, CLGET_RDMA_INFO, (char *)&i1);
			if (i1.reply_chunk_octets - i0.reply_chunk_octets > maxreply)
				maxreply = i1.reply_chunk_octets - i0.reply_chunk_octets;
			octets += i1.reply_chunk_octets - i0.reply_chunk_octets;
		}
		if (r.status != NFS3_OK) {
			s = (int)r.status;
			xdr_free((xdrproc_t)xdr_READDIRPLUS3res, (char *)&r);
			break;
		}
		for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
			const fattr3 *at = e->name_attributes.attributes_follow
						   ? &e->name_attributes.post_op_attr_u.attributes
						   : NULL;

			n++;
			got++;
			ndir += at && at->type == NF3DIR;
			nreg += at && at->type == NF3REG;
			nofh += !e->name_handle.handle_follows;
			if (!g.quiet)
				printf("%-4s %12llu %20llu  %s\n", at ? ftype_name(at->type) : "-",
				       at ? (unsigned long long)at->size : 0ull,
				       (unsigned long long)e->fileid, e->name);
			a.cookie = e->cookie;
		}
		memcpy(a.cookieverf, r.READDIRPLUS3res_u.resok.cookieverf, sizeof(a.cookieverf));
		eof = r.READDIRPLUS3res_u.resok.reply.eof;
		xdr_free((xdrproc_t)xdr_READDIRPLUS3res, (char *)&r);
		if (eof)
			break;
		if (!got) { /* no entry and no EOF: the cookie would not move */
			fprintf(stderr, PROG ": READDIRPLUS: no entries and no EOF (maxcount %u too "
					     "small?)\n", maxcount);
			s = -1;
			break;
		}
	}
	set_reply_max(cl, SMALL_REPLY);
	if (s > 0)
		fprintf(stderr, PROG ": READDIRPLUS: %s\n", nfsstat_name((nfsstat3)s));
	if (s)
		return s;
	printf(PROG ": listed %llu entries (%llu directories, %llu regular files, %llu without a "
		    "handle) in %llu READDIRPLUS call%s of maxcount %u, %.3f s (%s)",
	       (unsigned long long)n, (unsigned long long)ndir, (unsigned long long)nreg,
	       (unsigned long long)nofh, (unsigned long long)calls, calls == 1 ? "" : "s", maxcount,
	       now() - t0, g.rdma ? "rdma" : "tcp");
	if (g.rdma)
		printf("; %llu octets by Reply chunk, largest reply %llu", (unsigned long long)octets,
		       (unsigned long long)maxreply);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"tcp", no_argument, NULL, 'T'},
					   {"rdma", no_argument, NULL, 'R'},
					   {"port", required_argument, NULL, 'p'},
					   {"mount-port", required_argument, NULL, 'm'},
					   {"rsize", required_argument, NULL, 'r'},
					   {"wsize", required_argument, NULL, 'w'},
					   {"inflight", required_argument, NULL, 'n'},
					   {"no-verify", no_argument, NULL, 'N'},
					   {"timeout", required_argument, NULL, 't'},
					   {"inline", required_argument, NULL, 'i'},
					   {"credits", required_argument, NULL, 'c'},
					   {"info", no_argument, NULL, 'I'},
					   {"no-result-buf", no_argument, NULL, 'B'},
					   {"quiet", no_argument, NULL, 'q'},
					   {"list", no_argument, NULL, 'L'},
					   {"fsinfo", no_argument, NULL, 'F'},
					   {"maxcount", required_argument, NULL, 'x'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	char *src, *dst, *rpath, *local, exp[PATH_MAX], lpath[PATH_MAX], *walk, *tok, *save = NULL;
	const char *rest, *name = NULL;
	int c, up, show_info = 0, rc = 1, s, ncl = 0, list = 0, fsinfo = 0;
	uint32_t maxcount = 256 << 10;
	long long v;
	unsigned char sum_x[32], sum_l[32], sum_r[32];
	char hx[65], hl[65], hr[65];
	CLIENT *mcl = NULL, *cl;
	nfs_fh3 dirfh, fh;
	fattr3 attr;
	FSINFO3resok fsi;
	double secs;
	struct stat st;

	while ((c = getopt_long(argc, argv, "p:m:r:w:n:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'T':
			g.rdma = 0;
			break;
		case 'R':
			g.rdma = 1;
			break;
		case 'p':
			g.port = atoi(optarg);
			break;
		case 'm':
			g.mount_port = atoi(optarg);
			break;
		case 'r':
		case 'w':
			v = parse_size(optarg);
			if (v < 512 || v > MAX_XFER) {
				fprintf(stderr, PROG ": --%csize: 512 to 1M\n", c);
				return 2;
			}
			if (c == 'r')
				g.rsize = (uint32_t)v;
			else
				g.wsize = (uint32_t)v;
			break;
		case 'n':
			g.inflight = atoi(optarg);
			if (g.inflight < 1 || g.inflight > MAX_INFLIGHT) {
				fprintf(stderr, PROG ": --inflight: 1 to %d\n", MAX_INFLIGHT);
				return 2;
			}
			break;
		case 'N':
			g.verify = 0;
			break;
		case 't':
			g.tmo.tv_sec = atoi(optarg) > 0 ? atoi(optarg) : 60;
			/* given: it bounds the RDMA connection setup too (else 10 s) */
			g.ro.connect_timeout_ms = (int)g.tmo.tv_sec * 1000;
			break;
		case 'i':
			v = parse_size(optarg);
			if (v < 1024 || v > (1 << 20)) {
				fprintf(stderr, PROG ": --inline: 1K to 1M\n");
				return 2;
			}
			g.ro.inline_send = g.ro.inline_recv = (uint32_t)v;
			break;
		case 'c':
			g.ro.credits = (uint32_t)atoi(optarg);
			break;
		case 'I':
			show_info = 1;
			break;
		case 'B':
			g.no_rbuf = 1;
			break;
		case 'q':
			g.quiet = 1;
			break;
		case 'L':
			list = 1;
			break;
		case 'F':
			fsinfo = 1;
			break;
		case 'x':
			v = parse_size(optarg);
			if (v < 1024 || v > MAX_XFER) {
				fprintf(stderr, PROG ": --maxcount: 1K to 1M\n");
				return 2;
			}
			maxcount = (uint32_t)v;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 2 != argc && !((list || fsinfo) && optind + 1 == argc)) {
		usage(stderr);
		return 2;
	}
	if (list && optind + 1 != argc) {
		fprintf(stderr, PROG ": --list takes one HOST:/path\n");
		return 2;
	}
	/* split in copies: argv stays as given (ps) */
	src = strdup(argv[optind]);
	dst = strdup(optind + 1 < argc ? argv[optind + 1] : "");
	if (!src || !dst) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	if (optind + 1 == argc) { /* --list or --fsinfo alone */
		if (!(rpath = split_remote(src))) {
			fprintf(stderr, PROG ": %s: not HOST:/path\n", src);
			return 2;
		}
		up = 0;
		g.host = src;
		local = NULL;
	} else if ((rpath = split_remote(src))) {
		up = 0;
		g.host = src;
		local = dst;
	} else if ((rpath = split_remote(dst))) {
		up = 1;
		g.host = dst;
		local = src;
	} else {
		fprintf(stderr, PROG ": one of the two paths must be HOST:/path\n");
		usage(stderr);
		return 2;
	}
	if (local && split_remote(local)) {
		fprintf(stderr, PROG ": only one side may be remote\n");
		return 2;
	}
	if (g.port < 0)
		g.port = g.rdma ? RPC_RDMA_PORT : 2049;
	if (g.port <= 0 || g.port > 65535 || g.mount_port < 0 || g.mount_port > 65535) {
		fprintf(stderr, PROG ": bad port\n");
		return 2;
	}
	g.tty = isatty(STDERR_FILENO);
	signal(SIGPIPE, SIG_IGN);
	g.auth = authunix_create_default();
	if (!g.auth) {
		fprintf(stderr, PROG ": cannot make AUTH_SYS credentials\n");
		return 1;
	}

	/* the local side first: no network traffic for a usage mistake */
	if (up) {
		g.fd = open(local, O_RDONLY);
		if (g.fd < 0 || fstat(g.fd, &st) || !S_ISREG(st.st_mode)) {
			fprintf(stderr, PROG ": %s: %s\n", local,
				g.fd < 0 ? strerror(errno) : "not a regular file");
			return 1;
		}
		g.size = (uint64_t)st.st_size;
	}

	/* 1. MOUNT: the export's root handle */
	mcl = mount_client();
	if (!mcl)
		return 1;
	if (mount_path(mcl, rpath, exp, sizeof(exp), &rest))
		goto out;
	if (!g.quiet)
		fprintf(stderr, PROG ": mounted %s:%s (MOUNT v3 over TCP)\n", g.host, exp);

	/* 2. the NFS CLIENTs, all before any transfer */
	/* the main CLIENT (metadata calls, worker 0); workers 1..N-1 connect
	 * their own in their threads */
	g.cl[0] = nfs_client();
	if (!g.cl[0])
		goto out;
	ncl = 1;
	cl = g.cl[0];
	if (!g.quiet)
		fprintf(stderr, PROG ": NFSv3 over %s to %s port %d, %d %s\n",
			g.rdma ? "RPC-over-RDMA" : "TCP", g.host, g.port, g.inflight,
			g.rdma ? "calls in flight on one connection"
			       : g.inflight > 1 ? "connections" : "connection");
	s = nfs_fsinfo(cl, &g.fh, &fsi);
	if (s) {
		if (s > 0)
			fprintf(stderr, PROG ": FSINFO: %s\n", nfsstat_name((nfsstat3)s));
		goto out;
	}
	if (fsinfo)
		print_fsinfo(&fsi);
	if (fsinfo && !list && !local) {
		rc = 0;
		goto info;
	}

	/* 3. LOOKUP down the path; upload: stop at the parent */
	walk = strdup(rest);
	dirfh = g.fh;
	memset(&attr, 0, sizeof(attr));
	attr.type = NF3DIR;
	{
		char *comps[PATH_MAX / 2];
		int nc = 0;
		const char *cur = exp;

		for (tok = strtok_r(walk, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
			if (nc == (int)(sizeof(comps) / sizeof(comps[0]))) {
				fprintf(stderr, PROG ": %s: too many path components\n", rpath);
				goto out;
			}
			comps[nc++] = tok;
		}
		/* the mounted handle itself is the target: its attributes */
		if (!nc && !up) {
			s = nfs_getattr(cl, &g.fh, &attr);
			if (s) {
				if (s > 0)
					fprintf(stderr, PROG ": GETATTR %s: %s\n", exp,
						nfsstat_name((nfsstat3)s));
				goto out;
			}
		}
		for (int i = 0; i < nc; i++) {
			int last = i == nc - 1;

			s = nfs_lookup(cl, &dirfh, comps[i], &fh, &attr);
			if (up && last && s == NFS3ERR_NOENT) {
				name = comps[i];
				break;
			}
			if (s) {
				if (s > 0)
					fprintf(stderr, PROG ": LOOKUP %s in %s: %s\n", comps[i],
						cur, nfsstat_name((nfsstat3)s));
				goto out;
			}
			if (!last && attr.type != NF3DIR) {
				fprintf(stderr, PROG ": %s: not a directory (NFS3ERR_NOTDIR)\n",
					comps[i]);
				goto out;
			}
			if (up && last && attr.type != NF3DIR) {
				name = comps[i];
				break;
			}
			dirfh = fh;
			cur = comps[i];
		}
	}
	if (list) {
		if (attr.type != NF3DIR) {
			fprintf(stderr, PROG ": %s:%s: not a directory (NFS3ERR_NOTDIR)\n", g.host,
				rpath);
			goto out;
		}
		s = list_dir(cl, &dirfh, maxcount);
		rc = s ? 1 : 0;
		goto info;
	}
	if (up) {
		char *lc = strdup(local);

		/* the target is a directory: DIR/basename(LOCAL) */
		if (!name)
			name = strdup(basename(lc));
		if (!name[0] || !strcmp(name, "/") || !strcmp(name, ".") || !strcmp(name, "..")) {
			fprintf(stderr, PROG ": no file name for the upload\n");
			goto out;
		}
		s = nfs_create(cl, &dirfh, name, &fh);
		if (s) {
			if (s > 0)
				fprintf(stderr, PROG ": CREATE %s: %s\n", name,
					nfsstat_name((nfsstat3)s));
			goto out;
		}
		g.fh = fh;
		g.chunk = g.wsize < fsi.wtmax || !fsi.wtmax ? g.wsize : fsi.wtmax;
	} else {
		if (attr.type != NF3REG) {
			fprintf(stderr, PROG ": %s:%s: not a regular file%s\n", g.host, rpath,
				attr.type == NF3DIR ? " (NFS3ERR_ISDIR)" : "");
			goto out;
		}
		g.fh = dirfh;
		g.size = attr.size;
		if (!stat(local, &st) && S_ISDIR(st.st_mode)) {
			char *rc2 = strdup(rpath);

			snprintf(lpath, sizeof(lpath), "%s/%s", local, basename(rc2));
			local = lpath;
		}
		g.fd = open(local, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (g.fd < 0) {
			fprintf(stderr, PROG ": %s: %s\n", local, strerror(errno));
			goto out;
		}
		g.chunk = g.rsize < fsi.rtmax || !fsi.rtmax ? g.rsize : fsi.rtmax;
	}
	if (!g.quiet)
		fprintf(stderr, PROG ": %s %llu octets, %u-octet %s (server %s max %u)\n",
			up ? "upload" : "download", (unsigned long long)g.size, g.chunk,
			up ? "WRITEs" : "READs", up ? "wtmax" : "rtmax",
			up ? fsi.wtmax : fsi.rtmax);

	/* 4. the transfer */
	secs = transfer(up ? UPLOAD : DOWNLOAD, sum_x);
	if (secs < 0) {
		fprintf(stderr, PROG ": %s\n", g.err);
		goto out;
	}
	if (up) {
		COMMIT3args ca = {g.fh, 0, 0};
		COMMIT3res cr;
		double t1 = now();

		memset(&cr, 0, sizeof(cr));
		if (clnt_call(cl, NFSPROC3_COMMIT, (xdrproc_t)xdr_COMMIT3args, (caddr_t)&ca,
			      (xdrproc_t)xdr_COMMIT3res, (caddr_t)&cr, g.tmo) != RPC_SUCCESS) {
			clnt_perror(cl, PROG ": COMMIT");
			goto out;
		}
		if (cr.status != NFS3_OK) {
			fprintf(stderr, PROG ": COMMIT: %s\n", nfsstat_name(cr.status));
			goto out;
		}
		if (g.have_verf && memcmp(cr.COMMIT3res_u.resok.verf, g.verf, sizeof(g.verf))) {
			fprintf(stderr, PROG ": COMMIT: the write verifier changed (the server "
					     "restarted?): the data must be written again\n");
			goto out;
		}
		secs += now() - t1;
		/* the file has exactly the local size: CREATE truncated it */
		s = nfs_getattr(cl, &g.fh, &attr);
		if (s) {
			if (s > 0)
				fprintf(stderr, PROG ": GETATTR after COMMIT: %s\n",
					nfsstat_name((nfsstat3)s));
			goto out;
		}
		if (attr.size != g.size) {
			fprintf(stderr,
				PROG ": the server's file has %llu octets, %llu were written\n",
				(unsigned long long)attr.size, (unsigned long long)g.size);
			goto out;
		}
	} else {
		if (fsync(g.fd) && errno != EINVAL) {
			fprintf(stderr, PROG ": %s: %s\n", local, strerror(errno));
			goto out;
		}
	}
	close(g.fd);
	g.fd = -1;
	printf(PROG ": %s %llu octets in %.3f s, %.1f MB/s (%s, %d in flight, %u-octet %s)\n",
	       up ? "uploaded" : "downloaded", (unsigned long long)g.size, secs,
	       secs > 0 ? (double)g.size / 1048576.0 / secs : 0.0, g.rdma ? "rdma" : "tcp",
	       g.inflight, g.chunk, up ? "WRITEs" : "READs");
	if (sha256_file(local, sum_l))
		goto out;
	hex(sum_x, hx);
	hex(sum_l, hl);
	printf(PROG ": sha256 local    %s  %s\n", hl, local);
	printf(PROG ": sha256 transfer %s\n", hx);
	rc = memcmp(sum_x, sum_l, 32) ? 1 : 0;
	if (up && g.verify) {
		g.chunk = g.rsize < fsi.rtmax || !fsi.rtmax ? g.rsize : fsi.rtmax;
		secs = transfer(READBACK, sum_r);
		if (secs < 0) {
			fprintf(stderr, PROG ": read back: %s\n", g.err);
			rc = 1;
			goto out;
		}
		hex(sum_r, hr);
		printf(PROG ": sha256 readback %s (%.3f s, %.1f MB/s)\n", hr, secs,
		       secs > 0 ? (double)g.size / 1048576.0 / secs : 0.0);
		if (memcmp(sum_r, sum_l, 32))
			rc = 1;
	}
	if (rc)
		fprintf(stderr, PROG ": CHECKSUM MISMATCH\n");
	else
		printf(PROG ": checksums equal\n");
info:
	if (g.rdma && show_info) {
		struct rpc_rdma_info ri;

		if (clnt_control(cl, CLGET_RDMA_INFO, (char *)&ri))
			printf(PROG
			       ": rdma: inline send %u recv %u, credits %u, remote invalidation "
			       "%s, peer RFC 8797 data %s; octets by Read chunk %llu, Write chunk "
			       "%llu, Reply chunk %llu; %llu calls, %llu Reply chunks offered; "
			       "at most %u calls in flight\n",
			       ri.inline_send, ri.inline_recv, ri.credits,
			       ri.remote_inv ? "on" : "off", ri.peer_pd ? "yes" : "no",
			       (unsigned long long)ri.read_chunk_octets,
			       (unsigned long long)ri.write_chunk_octets,
			       (unsigned long long)ri.reply_chunk_octets,
			       (unsigned long long)ri.calls,
			       (unsigned long long)ri.reply_chunks_offered, ri.max_outstanding);
	}
out:
	if (mcl) {
		char *dp = exp;

		/* tell mountd we are gone (RFC 1813 Appendix I, UMNT) */
		if (exp[0])
			clnt_call(mcl, MOUNTPROC3_UMNT, (xdrproc_t)xdr_dirpath3, (caddr_t)&dp,
				  (xdrproc_t)xdr_nothing, NULL, g.tmo);
		mcl->cl_auth = NULL;
		clnt_destroy(mcl);
	}
	for (int i = 0; i < ncl; i++) {
		g.cl[i]->cl_auth = NULL;
		clnt_destroy(g.cl[i]);
	}
	if (g.fd >= 0)
		close(g.fd);
	return rc;
}
