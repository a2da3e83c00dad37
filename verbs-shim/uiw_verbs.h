/* SPDX-License-Identifier: MIT */
/*
 * uiw_verbs.h - the one public header of uiwarp: verbs and connection
 * manager for a software iWARP stack (RDMAP/DDP/MPA over TCP).
 *
 * Names copy libibverbs and librdmacm one for one with the uiw_ prefix, so
 * that porting an rdma-core program is mechanical.  Differences, on purpose:
 *
 *  - Every function returns 0 or a negative errno value (libibverbs mixes
 *    positive errno, -errno and NULL+errno); objects come back through an
 *    out parameter.  uiw_poll_cq() returns a count or -errno, as
 *    ibv_poll_cq().  Convert at any libibverbs-compatible boundary.
 *  - uiw_get_cm_event() copies the event into the caller's struct: there is
 *    no rdma_ack_cm_event().
 *  - The connection manager and the verbs share one object, the context: a
 *    CM id is created in a context, and its events are read from it.
 *
 * Threading and progress: by default (UIW_CTX_PROGRESS_THREAD) a context
 * runs one progress thread that owns the sockets and an io_uring; remote
 * Reads and Writes progress while the application sleeps, as on an RNIC.
 * In polled mode (UIW_CTX_POLLED) there is no thread: uiw_poll_cq(),
 * uiw_get_cm_event() and uiw_get_cq_event() drive the engine, so an
 * application that stops calling them stops its peers too.  A polled
 * context belongs to the first thread that turns its engine (its io_uring
 * is single-issuer): the same calls from other threads only read what is
 * queued or wait for that thread.  Every call
 * takes the context's mutex for now (the lock-free data path is issue 7);
 * any thread may call any function.
 *
 * Not implemented yet (each returns the error named): memory windows and
 * atomics (not in iWARP RFC 5040 anyway), modify_qp to any state but
 * UIW_QPS_ERR (-EINVAL).
 */
#ifndef UIW_VERBS_H
#define UIW_VERBS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** uiw_version() - the library version, "MAJOR.MINOR.PATCH". */
const char *uiw_version(void);

/**
 * uiw_crc32c() - CRC32C (Castagnoli, as MPA and iSCSI use it) of @len
 * octets at @buf, with the fastest implementation this CPU runs.
 */
unsigned int uiw_crc32c(const void *buf, unsigned long len);

struct uiw_context;
struct uiw_pd;
struct uiw_cq;
struct uiw_qp;
struct uiw_cm_id;
struct sockaddr_storage; /* <sys/socket.h> */

/* ---- context ---------------------------------------------------------- */

enum uiw_ctx_mode {
	UIW_CTX_PROGRESS_THREAD = 0, /* default: a thread per context drives I/O */
	UIW_CTX_POLLED = 1	     /* uiw_poll_cq/uiw_get_cm_event drive I/O */
};

/* CRC preference announced in the MPA C bit (RFC 5044 §4.4: on by default;
 * CRCs are used when either side asks for them). */
enum uiw_crc_policy {
	UIW_CRC_DEFAULT = 0, /* ask for CRC */
	UIW_CRC_ON = 1,
	UIW_CRC_OFF = 2 /* do not ask; used anyway if the peer asks */
};

/**
 * struct uiw_context_attr - options of a context (zero: defaults).
 * @mode:        progress thread (default) or polled
 * @max_mr:      STag table size; 0: UIW_DEFAULT_MAX_MR (4096)
 * @crc:         MPA CRC preference
 * @markers:     1: require MPA markers in the FPDUs peers send us (M bit)
 * @mpa_rev:     MPA revision an initiator requests: 1, or 2 (RFC 6581,
 *               IRD/ORD exchange); 0: 2.  Responders answer with the peer's.
 * @fpdu_max:    cap on the ULPDU of FPDUs we send (128..64768); 0: from
 *               the TCP MSS, one FPDU per segment
 * @pd_max:      largest MPA private data (PD_Length) sent or accepted,
 *               0..512; 0: 512 (Linux siw accepts at most 256)
 * @handshake_timeout_ms: wait for the MPA Request or Reply, and a p2p
 *               responder's wait for the RTR; 0: 10000
 * @p2p:         RFC 6581 peer-to-peer mode (MPA revision 2 only): an
 *               initiator asks for it and sends the RTR; a responder
 *               accepts it when asked (it always does)
 * @rtr:         UIW_RTR_* kinds an initiator offers or a responder accepts;
 *               0: all three (the initiator picks Write, then Read, then Send)
 * @first_fpdu_delay_ms: initiator: hold the first FPDU this long after the
 *               MPA Reply arrived (0: none).  Linux siw as responder sends
 *               its Reply before it hands the socket to the QP and drops an
 *               FPDU that arrives in that gap (the connection then hangs);
 *               50 ms avoided it in every try here.  uiw-ping uses 50.
 * @tcp_user_timeout_ms: TCP_USER_TIMEOUT (tcp(7)) of every connection
 *               socket of the context, connecting and accepted: data sent
 *               and not acknowledged, or a zero window probed without
 *               progress, for this long ends the connection (its QP goes to
 *               error and flushes).  0: the kernel's default (about 15
 *               minutes of retransmissions; a zero window is probed for as
 *               long as the peer's kernel answers).  At most INT_MAX.  It
 *               does not cover an idle connection with nothing
 *               unacknowledged: that needs @tcp_keepalive_ms.
 * @tcp_keepalive_ms: TCP keepalive (SO_KEEPALIVE) on every connection
 *               socket: after this long without traffic a probe is sent,
 *               and again every this long; 3 probes unanswered (or
 *               @tcp_user_timeout_ms, when set, without an answer) end the
 *               connection, so that a peer that vanished while the
 *               connection was idle is noticed (posted receives flush).
 *               Rounded up to whole seconds.  0: off (the default).  At
 *               most 32767000.
 * @engine_threads: progress threads of a UIW_CTX_PROGRESS_THREAD context,
 *               1..64; 0: one.  Each thread has its own io_uring and serves
 *               the connections given to it, round-robin as they are created
 *               (uiw_create_id()) or accepted.  The threads share the
 *               context's lock for the protocol work and wait in their rings
 *               (where the kernel does the socket copies) in parallel: worth
 *               it with many busy connections and cores to spare.  A polled
 *               context has one engine (more: -EINVAL).
 */
struct uiw_context_attr {
	enum uiw_ctx_mode mode;
	unsigned max_mr;
	enum uiw_crc_policy crc;
	int markers;
	unsigned mpa_rev;
	unsigned fpdu_max;
	unsigned pd_max;
	unsigned handshake_timeout_ms;
	int p2p;
	unsigned rtr;
	unsigned first_fpdu_delay_ms;
	unsigned tcp_user_timeout_ms;
	unsigned tcp_keepalive_ms;
	unsigned engine_threads;
};

#define UIW_DEFAULT_MAX_MR 4096 /* memory regions of a context opened with max_mr 0 */

/* RFC 6581 ready-to-receive message kinds (values as the MPA RTR bits). */
#define UIW_RTR_SEND  0x1 /* zero-length Send (consumes no receive) */
#define UIW_RTR_WRITE 0x2 /* zero-length RDMA Write to STag 1 */
#define UIW_RTR_READ  0x4 /* zero-length RDMA Read of STag 1 */

/**
 * uiw_open_context() - create a context (STag table, io_uring(s), progress
 * thread(s)).  @attr may be NULL for defaults.
 * Returns 0 with *@ctx set; -EINVAL (bad attr: unknown mode or CRC policy,
 * mpa_rev not 0/1/2, fpdu_max outside 128..64768, pd_max above 512, p2p
 * with mpa_rev 1, unknown rtr bits, max_mr of 2^24 or more,
 * tcp_user_timeout_ms above INT_MAX, tcp_keepalive_ms above 32767000,
 * engine_threads above 64, or above 1 in a polled context), -EIO (no
 * randomness for the STag table from OpenSSL),
 * -ENOMEM, or the -errno of io_uring_queue_init(), eventfd() or
 * pthread_create().
 */
int uiw_open_context(struct uiw_context **ctx, const struct uiw_context_attr *attr);

/**
 * uiw_close_context() - stop the progress thread(s) and free @ctx.  Returns 0,
 * or -EBUSY while PDs, CQs, QPs, SRQs, completion channels or CM ids still
 * exist (nothing is freed).
 */
int uiw_close_context(struct uiw_context *ctx);

/**
 * uiw_progress() - polled mode: turn the engine once, waiting up to
 * @timeout_ms (0: do not wait; -1: until something happens) for socket
 * I/O, and place what came.  Completions and CM events it produces can be
 * taken without waiting afterwards (uiw_poll_cq(), uiw_get_cm_event() with
 * timeout 0); a completion channel or the CM event fd becomes readable.
 * This is how a polled application sleeps with one wake-up per message.
 * Returns 0, -EINVAL in progress-thread mode, -EBUSY when another thread
 * owns the polled context.
 */
int uiw_progress(struct uiw_context *ctx, int timeout_ms);

/**
 * uiw_context_fd() - polled mode: an fd (an eventfd registered with the
 * context's io_uring) that becomes readable (POLLIN) when socket I/O of
 * @ctx has completed and uiw_progress() has work, so that a polled context
 * can sleep in the application's own poll()/epoll() loop (an RPC server's
 * svc_run(), an event library).  uiw_progress() consumes the readiness.
 * Rules: call uiw_progress(ctx, 0) after posting work requests or
 * accepting before going back to sleep (posting queues work for the next
 * turn, it does not make the fd readable), and turn the engine at least
 * every 100 ms or so: connection setup and teardown timers run only when
 * the engine turns.  Do not read or close the fd.  Call it from the
 * thread that owns the polled context (or before any thread turned it).
 * Returns the fd, -EINVAL in progress-thread mode, -EBUSY from another
 * thread, or io_uring's -errno.
 */
int uiw_context_fd(struct uiw_context *ctx);

/**
 * struct uiw_context_stats - what the connections of a context moved, summed
 * over every connection it has had, open or closed.  Payload octets are
 * those of RDMAP messages (Send, Write, Read Response, ... data), not
 * headers, markers or CRCs.  A user-space copy is one the library made
 * (the kernel's copy between socket and memory is not counted): on the
 * receive side the octets a read's look-ahead caught, copied to their
 * destination, and every octet of a peer whose FPDUs are small (under 8 KiB
 * on average: one read per FPDU would cost more); on the send side marked
 * FPDUs made contiguous and inline data.  copied / payload is the
 * benchmarks' "user-space copies per octet".
 */
struct uiw_context_stats {
	uint64_t rx_payload;	    /* received into destinations */
	uint64_t rx_payload_copied; /* of those, copied by the library */
	uint64_t tx_payload;	    /* queued for sending */
	uint64_t tx_payload_copied; /* of those, copied by the library first */
	uint64_t rx_reads;	    /* socket reads in full operation and before */
	/* of those, made by application threads in their own calls
	 * (uiw_poll_cq() on an empty CQ, uiw_get_cq_event()) rather than by
	 * the progress thread: progress-thread contexts only */
	uint64_t rx_reads_app;
	uint64_t reserved[2];
};

/** uiw_query_context_stats() - fill @stats.  Returns 0, -EINVAL (NULL). */
int uiw_query_context_stats(struct uiw_context *ctx, struct uiw_context_stats *stats);

/* ---- protection domains and memory regions ------------------------------ */

/** uiw_alloc_pd() - a protection domain.  Returns 0, -ENOMEM. */
int uiw_alloc_pd(struct uiw_context *ctx, struct uiw_pd **pd);

/** uiw_dealloc_pd() - free @pd.  Returns 0, -EBUSY while MRs, QPs or SRQs use it. */
int uiw_dealloc_pd(struct uiw_pd *pd);

/* Access flags, values as enum ibv_access_flags. */
#define UIW_ACCESS_LOCAL_WRITE	0x1
#define UIW_ACCESS_REMOTE_WRITE 0x2
#define UIW_ACCESS_REMOTE_READ	0x4
/* RFC 7306 Atomic Requests may target the region (needs LOCAL_WRITE) */
#define UIW_ACCESS_REMOTE_ATOMIC 0x8

/* A registered region; lkey and rkey are the same STag (RFC 5040 §6). */
struct uiw_mr {
	struct uiw_context *context;
	struct uiw_pd *pd;
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	void *priv; /* internal */
};

/**
 * uiw_reg_mr() - register [@addr, @addr + @length) with @access (UIW_ACCESS_*).
 * Tagged offsets are virtual addresses, as with siw: a peer Writes to
 * remote_addr = (uintptr_t)addr + offset.  Each registration gets a fresh
 * random STag (ddp/ddp_mem.h).  Returns 0 with *@mr set, -EINVAL (unknown
 * access bits, NULL @addr, REMOTE_WRITE without LOCAL_WRITE, a range that
 * wraps), -EFAULT (a page of the range is not mapped, or, with
 * LOCAL_WRITE, not mapped writable, else not readable: as the kernel's
 * verbs, which pin the pages; looked up in /proc/self/maps), -ENOSPC (STag
 * table full), -EIO (no randomness from OpenSSL for the STag), -ENOMEM.
 * Memory unmapped or made read-only after the registration is the
 * application's fault (docs/API.md 1.1, "The memory contract").
 */
int uiw_reg_mr(struct uiw_pd *pd, void *addr, size_t length, int access, struct uiw_mr **mr);

/**
 * uiw_dereg_mr() - remove @mr; its STag is refused from now on.  When it
 * returns 0 the memory is the caller's: nothing reads or writes it any more
 * (a QP whose stream still used it, an FPDU being placed there or queued
 * from there, fails with a TERMINATE, and the engine's I/O on it is
 * cancelled before the call returns: one engine turn).  Returns 0, or
 * -EBUSY when that took over 2 s (the region stays registered and refused
 * to peers; call again).  docs/API.md 1.1, "The memory contract".
 */
int uiw_dereg_mr(struct uiw_mr *mr);

/* ---- completion queues -------------------------------------------------- */

/* Status values are those of enum ibv_wc_status. */
enum uiw_wc_status {
	UIW_WC_SUCCESS = 0,
	UIW_WC_LOC_LEN_ERR = 1,
	UIW_WC_LOC_QP_OP_ERR = 2,
	UIW_WC_LOC_PROT_ERR = 4,
	UIW_WC_WR_FLUSH_ERR = 5,
	UIW_WC_REM_INV_REQ_ERR = 9,
	UIW_WC_REM_ACCESS_ERR = 10,
	UIW_WC_REM_OP_ERR = 11,
	UIW_WC_FATAL_ERR = 19,
	UIW_WC_GENERAL_ERR = 21
};

/* Opcodes, values as enum ibv_wc_opcode. */
enum uiw_wc_opcode {
	UIW_WC_SEND = 0,
	UIW_WC_RDMA_WRITE = 1,
	UIW_WC_RDMA_READ = 2,
	UIW_WC_COMP_SWAP = 3,
	UIW_WC_FETCH_ADD = 4,
	UIW_WC_LOCAL_INV = 6,
	UIW_WC_RECV = 128,
	UIW_WC_RECV_RDMA_WITH_IMM = 129 /* RFC 7306: Immediate Data right after an RDMA Write */
};

/* wc_flags */
#define UIW_WC_WITH_IMM	 0x02  /* as IBV_WC_WITH_IMM: @imm_data is valid (RFC 7306) */
#define UIW_WC_WITH_INV	 0x08  /* as IBV_WC_WITH_INV: @invalidated_rkey is valid */
#define UIW_WC_SOLICITED 0x100 /* uiwarp: the Send asked for a solicited event */
#define UIW_WC_TERM	 0x200 /* uiwarp: @term_* hold the TERMINATE cause */

struct uiw_wc {
	uint64_t wr_id;
	enum uiw_wc_status status;
	enum uiw_wc_opcode opcode;
	uint32_t byte_len;
	unsigned wc_flags;
	uint32_t invalidated_rkey;
	/* UIW_WC_WITH_IMM: the immediate, in network byte order as in
	 * ibv_wc (the first four octets of RFC 7306's eight); it fills what
	 * was padding, so arrays of uiw_wc keep their layout */
	uint32_t imm_data;
	/* the QP; NULL when the QP was destroyed before this completion was
	 * polled (@qp_num still names it) */
	struct uiw_qp *qp;
	/* RFC 5040 §4.8 TERMINATE layer, type and code (UIW_WC_TERM) */
	uint8_t term_layer, term_etype, term_ecode;
	uint32_t qp_num; /* the QP's number (uiw_qp_num()) */
};

/*
 * A completion channel: an fd (@fd, an eventfd in semaphore mode) that is
 * readable while CQ events are pending, for poll()/epoll().  As with
 * libibverbs: arm a CQ with uiw_req_notify_cq(); the next completion that
 * matches produces one event; uiw_get_cq_event() takes it (blocking unless
 * @fd was made O_NONBLOCK) and says which CQ; acknowledge every event with
 * uiw_ack_cq_events() before destroying the CQ.
 */
struct uiw_comp_channel {
	struct uiw_context *context;
	int fd;
	int refcnt; /* CQs using it */
};

/** uiw_create_comp_channel() - Returns 0, -ENOMEM, -EMFILE/-ENFILE (eventfd()). */
int uiw_create_comp_channel(struct uiw_context *ctx, struct uiw_comp_channel **channel);

/** uiw_destroy_comp_channel() - Returns 0, -EBUSY while a CQ uses it. */
int uiw_destroy_comp_channel(struct uiw_comp_channel *channel);

/**
 * uiw_create_cq() - a completion queue of @cqe entries, reporting events on
 * @channel (NULL: none) with @cq_context.  Returns 0, -EINVAL (@cqe not
 * positive, channel of another context), -ENOMEM.  A CQ that overflows loses
 * completions (uiw_poll_cq() then says -EOVERFLOW once) and, as a verbs CQ
 * error, moves every connected QP using it to error: their WRs are flushed
 * (into the same CQ: those that do not fit are lost too), their connections
 * close and DISCONNECTED is reported; so for any QP connected over it later
 * (the CQ stays in error: replace it).  Size it for the send and receive
 * queues it serves.
 */
int uiw_create_cq(struct uiw_context *ctx, int cqe, void *cq_context,
		  struct uiw_comp_channel *channel, struct uiw_cq **cq);

/**
 * uiw_destroy_cq() - free @cq.  Returns 0, -EBUSY while a QP uses it
 * or while events taken from its channel are not acknowledged.
 */
int uiw_destroy_cq(struct uiw_cq *cq);

/**
 * uiw_req_notify_cq() - arm @cq: the next completion added to it (with
 * @solicited_only, the next receive of a Send with the Solicited Event flag
 * or the next completion with an error status) produces one event on its
 * channel.  Completions already queued do not count: poll after arming.
 * Returns 0, -EINVAL (no channel).
 */
int uiw_req_notify_cq(struct uiw_cq *cq, int solicited_only);

/**
 * uiw_get_cq_event() - take the next event of @channel: *@cq and
 * *@cq_context say whose it is.  Blocks until one arrives unless the
 * channel's fd is non-blocking; in polled mode it drives the engine while
 * it waits.  Returns 0, -EAGAIN (non-blocking, none pending), -EINTR.
 */
int uiw_get_cq_event(struct uiw_comp_channel *channel, struct uiw_cq **cq, void **cq_context);

/** uiw_ack_cq_events() - acknowledge @nevents events taken for @cq. */
void uiw_ack_cq_events(struct uiw_cq *cq, unsigned int nevents);

/**
 * uiw_poll_cq() - move up to @n completions into @wc.  Never blocks; in
 * polled mode it first runs the engine once (submit, reap, place).
 * -EOVERFLOW is returned once per overflow (completions were lost since the
 * previous poll); the next call returns what is queued.
 * Returns the number moved (0..@n), -EINVAL (@n < 0), or -EOVERFLOW once
 * completions were lost (reported once).
 */
int uiw_poll_cq(struct uiw_cq *cq, int n, struct uiw_wc *wc);

/* ---- queue pairs -------------------------------------------------------- */

#define UIW_MAX_SGE 6
#define UIW_MAX_INLINE 65536 /* max_inline_data */
#define UIW_MAX_IRD_ORD 16383 /* ird, ord: RFC 6581's 14-bit fields less the "ULP decides" value */
/*
 * UIW_IRD_ORD_ZERO - an IRD or ORD of 0 itself, where 0 means "the default":
 * in uiw_qp_init_attr's @ird/@ord and uiw_conn_param's
 * @responder_resources/@initiator_depth.  A QP with ORD 0 issues no RDMA
 * Read (uiw_post_send() refuses one with -EINVAL); a QP with IRD 0 serves
 * none (an inbound Read Request is answered with RFC 5040's TERMINATE,
 * RDMAP remote operation error, catastrophic to the stream: 0/2/7, as any
 * Read beyond the IRD).  RFC 6581 announces 0 in the MPA IRD/ORD words, so
 * a peer lowers its ORD to 0 too.  As librdmacm's initiator_depth and
 * responder_resources of 0 mean on iWARP.
 */
#define UIW_IRD_ORD_ZERO 0xffff

struct uiw_qp_cap {
	unsigned max_send_wr; /* 0: no send queue (the QP only receives and serves Reads) */
	unsigned max_recv_wr; /* 0 without an SRQ: no receive queue (an inbound Send is refused) */
	unsigned max_send_sge; /* SGEs per send WR, at most UIW_MAX_SGE; 0: 1 */
	unsigned max_recv_sge; /* SGEs per receive WR, at most UIW_MAX_SGE; 0: 1 */
	unsigned max_inline_data; /* at most 65536 */
};

struct uiw_srq;

struct uiw_qp_init_attr {
	struct uiw_cq *send_cq;
	struct uiw_cq *recv_cq;
	struct uiw_srq *srq; /* receives come from this SRQ (max_recv_wr ignored) */
	struct uiw_qp_cap cap;
	/* inbound / outbound Reads and atomics at once; 0: 16; UIW_IRD_ORD_ZERO: none */
	uint16_t ird;
	uint16_t ord;
	unsigned ext; /* UIW_QP_EXT_*: protocol extensions this QP's connection uses */
};

/*
 * RFC 7306 (remote atomics, Immediate Data, Write with Immediate) for the
 * QP's connection.  Off by default: iWARP has no way to learn on the wire
 * whether the peer implements it (RFC 7306 §1.1 leaves that to the
 * application), and a peer that does not (Linux siw, most RNICs) answers
 * the first such message with a TERMINATE that ends the connection.  Set it
 * only when the application knows its peer has it (its own protocol, or
 * configuration); without it the extension opcodes are refused by
 * uiw_post_send() (-EOPNOTSUPP) and never reach the wire, and received ones
 * are answered with RFC 7306's "Unexpected OpCode" TERMINATE.  docs/API.md
 * "RFC 7306".
 */
#define UIW_QP_EXT_RFC7306 0x1

/**
 * uiw_create_qp() - an RC QP in @pd.  It operates once attached to a
 * connection by uiw_connect() or uiw_accept(); receives may be posted
 * before.  A QP may have no send queue (max_send_wr 0: uiw_post_send()
 * refuses every WR with -EINVAL) or no receive queue (max_recv_wr 0 and no
 * SRQ: uiw_post_recv() answers -EINVAL, and an inbound Send is answered
 * with RFC 5040's TERMINATE for a missing buffer, DDP 1/2/0x02, as when
 * the receive queue is empty).  Returns 0, -EINVAL (no CQ, a CQ of another
 * context, SGEs above UIW_MAX_SGE, inline above 65536, IRD/ORD above 16383
 * other than UIW_IRD_ORD_ZERO, SRQ of another PD), -ENOMEM.
 */
int uiw_create_qp(struct uiw_pd *pd, const struct uiw_qp_init_attr *attr, struct uiw_qp **qp);

/**
 * uiw_qp_num() - @qp's number: 24 bits (verbs' qp_num), never 0 or 1,
 * unique among the live QPs of the process and handed out in increasing
 * order, so that a number is not seen again soon after its QP was
 * destroyed.  Work completions carry it (uiw_wc.qp_num).
 */
uint32_t uiw_qp_num(struct uiw_qp *qp);

/**
 * uiw_qp_by_num() - the live QP numbered @qp_num, of any context of the
 * process, in *@qp (verbs programs name a QP by number: librdmacm's
 * rdma_conn_param.qp_num).  Returns 0, or -ENOENT with *@qp NULL.  The QP
 * is the caller's to keep alive.
 */
int uiw_qp_by_num(uint32_t qp_num, struct uiw_qp **qp);

/**
 * uiw_qp_set_context() - attach the application's @context to @qp (NULL
 * when created), so that a work completion (uiw_wc.qp) leads to the
 * application's own object without a lookup; uiw_qp_context() reads it.
 * Either may be called from any thread without the context's lock.
 */
void uiw_qp_set_context(struct uiw_qp *qp, void *context);
void *uiw_qp_context(struct uiw_qp *qp);

/**
 * uiw_destroy_qp() - free @qp.  A QP whose connection still lives is
 * detached abortively, its CM id kept: the QP moves to error and every
 * outstanding WR completes with UIW_WC_WR_FLUSH_ERR, exactly once; the
 * connection is reset (RST); the id reports UIW_CM_EVENT_DISCONNECTED (an
 * initiator still in its handshake: CONNECT_ERROR, -ECONNABORTED) and stays
 * for uiw_destroy_id(); the QP is freed once the engine closed the socket
 * (about one engine turn: the call waits).  Otherwise outstanding WRs are
 * discarded.  Its completions still queued in CQs stay there with
 * uiw_wc.qp NULL (uiw_wc.qp_num names it).  Returns 0.
 */
int uiw_destroy_qp(struct uiw_qp *qp);

enum uiw_qp_state {
	UIW_QPS_RESET = 0, /* values as enum ibv_qp_state */
	UIW_QPS_INIT = 1,  /* created, not connected */
	UIW_QPS_RTS = 3,   /* connected */
	UIW_QPS_SQD = 4,   /* closing: draining the send queue (RFC 5040 §6.2) */
	UIW_QPS_SQE = 5,   /* a TERMINATE is being sent */
	UIW_QPS_ERR = 6
};

#define UIW_QP_STATE 0x1 /* attr_mask: qp_state is valid */

struct uiw_qp_attr {
	enum uiw_qp_state qp_state;
	struct uiw_qp_cap cap; /* uiw_query_qp() */
	uint16_t ird, ord;     /* uiw_query_qp(): after MPA negotiation */
	unsigned ext;	       /* uiw_query_qp(): UIW_QP_EXT_* in use */
};

/**
 * uiw_modify_qp() - with @attr_mask UIW_QP_STATE and qp_state UIW_QPS_ERR:
 * move @qp to error: every outstanding WR completes with
 * UIW_WC_WR_FLUSH_ERR, and a connection closes (no TERMINATE is sent: the
 * peer sees TCP close and flushes too); DISCONNECTED follows.  The flushes
 * are in the CQs when it returns (the engine's read or send in flight is
 * cancelled first; after that a WR's buffers are never touched again).
 * Also from SQE (a TERMINATE due).  Other transitions happen through the
 * connection manager.  Returns 0, -EINVAL (any other state or mask).
 */
int uiw_modify_qp(struct uiw_qp *qp, struct uiw_qp_attr *attr, int attr_mask);

/** uiw_query_qp() - current state, capabilities, IRD/ORD.  Returns 0. */
int uiw_query_qp(struct uiw_qp *qp, struct uiw_qp_attr *attr);

struct uiw_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* Opcodes, values as enum ibv_wr_opcode. */
enum uiw_wr_opcode {
	UIW_WR_RDMA_WRITE = 0,
	UIW_WR_RDMA_WRITE_WITH_IMM = 1, /* RFC 7306: a Write, then Immediate Data */
	UIW_WR_SEND = 2,
	UIW_WR_SEND_WITH_IMM = 3, /* RFC 7306 Immediate Data: no payload */
	UIW_WR_RDMA_READ = 4,
	UIW_WR_ATOMIC_CMP_AND_SWP = 5,	 /* RFC 7306 CmpSwap */
	UIW_WR_ATOMIC_FETCH_AND_ADD = 6, /* RFC 7306 FetchAdd */
	UIW_WR_LOCAL_INV = 7,
	UIW_WR_SEND_WITH_INV = 9
};

/* send_flags, values as enum ibv_send_flags */
#define UIW_SEND_FENCE	   0x1
#define UIW_SEND_SIGNALED  0x2
#define UIW_SEND_SOLICITED 0x4
#define UIW_SEND_INLINE	   0x8

struct uiw_send_wr {
	uint64_t wr_id;
	struct uiw_send_wr *next;
	struct uiw_sge *sg_list;
	int num_sge;
	enum uiw_wr_opcode opcode;
	unsigned send_flags;
	uint32_t invalidate_rkey; /* SEND_WITH_INV (remote), LOCAL_INV (local) */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		/* atomics: the 8-aligned word at @remote_addr; its value before
		 * goes to the WR's one SGE of 8 octets, in host byte order */
		struct {
			uint64_t remote_addr;
			uint64_t compare_add; /* FETCH_AND_ADD: addend; CMP_AND_SWP: compared */
			uint64_t swap;	      /* CMP_AND_SWP: stored when equal */
			uint32_t rkey;
		} atomic;
	} wr;
	/* *_WITH_IMM: network byte order, as ibv_send_wr's; last, and read
	 * only for those opcodes, so that a program built before it was
	 * added is read as it was */
	uint32_t imm_data;
};

struct uiw_recv_wr {
	uint64_t wr_id;
	struct uiw_recv_wr *next;
	struct uiw_sge *sg_list;
	int num_sge;
};

/**
 * uiw_post_send() - queue the chain @wr on @qp's send queue.  On failure
 * *@bad_wr (if non-NULL) is the first WR not queued.  Returns 0, -EINVAL
 * (bad opcode or send_flags, num_sge above the QP's max_send_sge, NULL
 * sg_list, Read with more than one SGE, local invalidate with SGEs, Read
 * on a QP whose ORD is 0, more than 4 GiB in one WR, inline too long, a
 * QP without a send queue; an atomic whose SGE list is not one SGE of 8
 * octets, or whose remote address is not 8-aligned; SEND_WITH_IMM with
 * payload: RFC 7306's Immediate Data carries none), -EOPNOTSUPP (an RFC
 * 7306 opcode on a QP without UIW_QP_EXT_RFC7306: nothing is sent),
 * -ENOMEM (send queue full), -EPERM (an SGE's lkey is not valid here),
 * -EPIPE (the QP is closing).  A Read posted before the connection that
 * then negotiated ORD 0 (the peer's IRD) completes with
 * UIW_WC_LOC_QP_OP_ERR in its turn and moves the QP to error (the WRs
 * behind it are flushed).  On a QP in error WRs are accepted and
 * complete with UIW_WC_WR_FLUSH_ERR.  As on every iWARP RNIC, a Send or
 * Write completes when handed to TCP, not when the peer has it.
 */
int uiw_post_send(struct uiw_qp *qp, struct uiw_send_wr *wr, struct uiw_send_wr **bad_wr);

/** uiw_post_recv() - as uiw_post_send() for the receive queue: 0, -EINVAL
 * (num_sge above max_recv_sge, the QP takes receives from an SRQ or has no
 * receive queue), -ENOMEM
 * (queue full), -EPERM (lkey); a QP in error flushes it at once. */
int uiw_post_recv(struct uiw_qp *qp, struct uiw_recv_wr *wr, struct uiw_recv_wr **bad_wr);

/* ---- shared receive queues -------------------------------------------- */

struct uiw_srq_init_attr {
	unsigned max_wr;  /* receives held at once */
	unsigned max_sge; /* at most UIW_MAX_SGE */
};

/**
 * uiw_create_srq() - a shared receive queue in @pd: QPs created with it take
 * the receive for each incoming Send from it, in posting order.  Returns 0,
 * -EINVAL (max_wr 0, max_sge above UIW_MAX_SGE), -ENOMEM.
 */
int uiw_create_srq(struct uiw_pd *pd, const struct uiw_srq_init_attr *attr, struct uiw_srq **srq);

/** uiw_destroy_srq() - Returns 0, -EBUSY while a QP uses it.  Posted WRs are dropped. */
int uiw_destroy_srq(struct uiw_srq *srq);

/**
 * uiw_post_srq_recv() - as uiw_post_recv(); -ENOMEM when @srq is full.
 * A receive completes on the recv_cq of the QP whose Send consumed it.
 */
int uiw_post_srq_recv(struct uiw_srq *srq, struct uiw_recv_wr *wr, struct uiw_recv_wr **bad_wr);

/* ---- connection manager ------------------------------------------------- */

#define UIW_PRIVATE_DATA_MAX 504 /* 512 less RFC 6581's IRD/ORD words */

struct uiw_conn_param {
	const void *private_data;
	uint16_t private_data_len;    /* at most UIW_PRIVATE_DATA_MAX (librdmacm: uint8_t) */
	/* IRD and ORD of the connection: at most the QP's (a larger value
	 * is lowered to it); 0: the QP's; UIW_IRD_ORD_ZERO: 0 */
	uint16_t responder_resources; /* IRD */
	uint16_t initiator_depth;     /* ORD */
};

enum uiw_cm_event_type {
	UIW_CM_EVENT_CONNECT_REQUEST = 4, /* values as enum rdma_cm_event_type */
	UIW_CM_EVENT_CONNECT_ERROR = 6,
	UIW_CM_EVENT_UNREACHABLE = 7,
	UIW_CM_EVENT_REJECTED = 8,
	UIW_CM_EVENT_ESTABLISHED = 9,
	UIW_CM_EVENT_DISCONNECTED = 10
};

/*
 * A CM event, copied out by uiw_get_cm_event().  The id of a
 * CONNECT_REQUEST is new and belongs to the application: answer it with
 * uiw_accept() or uiw_reject(), and free it with uiw_destroy_id().  A
 * CONNECT_REQUEST whose TCP connection dies before the answer makes
 * uiw_accept() fail with -EINVAL.  DISCONNECTED follows ESTABLISHED once the
 * connection's socket is closed (graceful close, peer close, TERMINATE):
 * status 0, or -ECONNABORTED with the term_* fields when a TERMINATE was
 * sent or received.
 */
struct uiw_cm_event {
	enum uiw_cm_event_type event;
	struct uiw_cm_id *id;	     /* CONNECT_REQUEST: the new id to accept/reject */
	struct uiw_cm_id *listen_id; /* CONNECT_REQUEST: the listener */
	int status;		     /* 0, or -errno: the reason of an error event; DISCONNECTED:
				      * -ECONNABORTED (a TERMINATE), the stream's error
				      * (-ECONNRESET, -EPIPE, -ETIMEDOUT, ...), 0: clean */
	uint8_t private_data[512];
	uint16_t private_data_len;
	uint16_t responder_resources; /* peer's IRD (MPA revision 2), else 0 */
	uint16_t initiator_depth;     /* peer's ORD */
	/* DISCONNECTED after a TERMINATE (status -ECONNABORTED): who sent it
	 * and its RFC 5040 §4.8 layer, type and code */
	uint8_t term_flags; /* UIW_CM_TERM_SENT (| UIW_CM_TERM_RESET) or UIW_CM_TERM_RECEIVED, or 0 */
	uint8_t term_layer, term_etype, term_ecode;
};

#define UIW_CM_TERM_SENT     1 /* we sent the TERMINATE (the peer broke a rule, or a local error:
				 * memory of an operation in progress was deregistered) */
#define UIW_CM_TERM_RECEIVED 2 /* the peer sent it */
/* with UIW_CM_TERM_SENT: the TERMINATE could not be queued (or not sent
 * within the 2 s drain): the connection was reset instead; the term_*
 * fields still give the cause */
#define UIW_CM_TERM_RESET    4

/** uiw_create_id() - a CM id in @ctx (@context is returned in events).  Returns 0, -ENOMEM. */
int uiw_create_id(struct uiw_context *ctx, void *context, struct uiw_cm_id **id);

/**
 * uiw_id_context() - the @context given to uiw_create_id() or set by
 * uiw_set_id_context() (an id from a CONNECT_REQUEST starts with NULL).
 * uiw_set_id_context() - set it, typically on an id from a CONNECT_REQUEST,
 * so that its later events (uiw_cm_event.id) lead to the application's own
 * object without a lookup.  Either may be called from any thread.
 */
void *uiw_id_context(struct uiw_cm_id *id);
void uiw_set_id_context(struct uiw_cm_id *id, void *context);

/**
 * uiw_destroy_id() - close the connection (abortively if still live) and
 * free @id.  A QP attached to a connection goes to error (its WRs are
 * flushed) and may then be destroyed; a QP whose connection never came up
 * stays usable.  Destroying a listener also ends the handshakes it accepted
 * that were not yet reported.  The close is a FIN (input nobody will read is
 * discarded first, so the kernel does not turn it into a reset); a
 * TERMINATE the connection owes its peer is sent before it, waiting at most
 * 2 s for a peer that does not read (then a reset).  Returns 0.
 */
int uiw_destroy_id(struct uiw_cm_id *id);

/**
 * uiw_listen() - listen on @host:@port (IPv4 or IPv6 literal or host name;
 * NULL: any address, IPv6 and IPv4) with
 * @backlog, or, on an id bound by uiw_bind_addr() (@host NULL, @port 0),
 * where it is bound.  @port 0 lets the kernel choose; read it with uiw_get_port().
 * Incoming connections arrive as UIW_CM_EVENT_CONNECT_REQUEST.  At most
 * min(@backlog, 256) connections (@backlog <= 0: 256) are held by the
 * listener at a time, counting those in the MPA handshake and those reported
 * as CONNECT_REQUEST not yet accepted or rejected; more wait in the kernel's
 * backlog, listen(2)'s (@backlog; <= 0: SOMAXCONN, as rdma_listen() takes
 * 0 for its maximum), and beyond it in TCP's SYN retries, until one of
 * those is answered or fails its handshake.  Returns 0,
 * -EINVAL (id in use; @host or @port on a bound id), -ENXIO (name not
 * resolved; -EAGAIN: the resolver failed temporarily), -EADDRINUSE (the
 * port is another id's of this process, see uiw_bind_addr(), or another
 * socket's), or the -errno of socket/bind/listen.
 */
int uiw_listen(struct uiw_cm_id *id, const char *host, uint16_t port, int backlog);

/** uiw_get_port() - the port a listening or bound (uiw_bind_addr()) @id is
 * bound to, host order; 0 for any other id. */
uint16_t uiw_get_port(struct uiw_cm_id *id);

/**
 * uiw_get_peer_addr() - the address and port of @id's peer, as TCP sees it,
 * into *@addr (a struct sockaddr_in or sockaddr_in6 by ss_family): for an
 * id from a CONNECT_REQUEST, and for a connecting id once its TCP
 * connection is made (before ESTABLISHED); kept after the connection
 * ended.  uiw_get_local_addr() - the same for our end: the address the
 * connection leaves from, or a listener's or bound id's address and port.
 * Both return 0, or -ENOTCONN with *@addr untouched (no connection yet: a
 * new, bound or listening id, a connect still in TCP's hands or refused
 * there; uiw_get_local_addr(): a new id not bound).
 */
int uiw_get_peer_addr(struct uiw_cm_id *id, struct sockaddr_storage *addr);
int uiw_get_local_addr(struct uiw_cm_id *id, struct sockaddr_storage *addr);

/**
 * uiw_bind_addr() - bind @id to the local address @host (IPv4 or IPv6
 * literal or host name, resolved now; "0.0.0.0" or "::": any) and @port
 * (0: the kernel chooses, read it with uiw_get_port() or
 * uiw_get_local_addr()), as rdma_bind_addr(): the port is taken now, by a
 * socket the id keeps.  A later uiw_listen() (@host NULL, @port 0)
 * listens on it; a later uiw_connect() connects from it (rping -I), trying
 * only destinations of the same address family.  As the kernel's RDMA CM
 * port space, a port is held by one id of the process until that id is
 * destroyed (even if it never listened or connected), except by ids bound
 * to distinct specific addresses, or to two families each only
 * (uiw_set_afonly()).  Returns 0, -EINVAL (NULL @host, id in
 * use or bound already), -ENXIO (name not resolved), -EADDRNOTAVAIL (not an
 * address of this host; or the port is held by another id and one of the
 * two addresses is a wildcard), -EADDRINUSE (the port is held by another
 * id bound to the same address, or by another socket), or the -errno of
 * socket()/bind().  uiw_connect() then fails with -EAFNOSUPPORT when no
 * destination has the family.
 */
int uiw_bind_addr(struct uiw_cm_id *id, const char *host, uint16_t port);

/**
 * uiw_set_afonly() - bind @id to its address family only (@afonly 1), or
 * not (0), as RDMA_OPTION_ID_AFONLY of the kernel's rdma_cm: an IPv6 id so
 * bound to "::" is not reached over IPv4, and shares its port with an
 * IPv4 id bound to its family only (IPv4 ids are, unless told otherwise):
 * tgtd listens on 0.0.0.0 and [::] at one port.  Without it the IPv6
 * wildcard serves IPv4 too, unless net.ipv6.bindv6only says otherwise.
 * Before uiw_bind_addr(), or after it until uiw_listen() or
 * uiw_connect().  Returns 0, -EINVAL (listening or connected), or the
 * -errno of socket()/bind() when a bound id's socket is remade.
 */
int uiw_set_afonly(struct uiw_cm_id *id, int afonly);

/**
 * uiw_connect() - connect @id to @host:@port (IPv4 or IPv6 literal, or a
 * host name resolved now with getaddrinfo(); its addresses are tried in
 * turn, up to 16, until a TCP connection is made), then run
 * the MPA handshake carrying @param's private data, attaching @qp.  Returns
 * 0 when started; the outcome arrives as ESTABLISHED, REJECTED (status
 * -ECONNREFUSED: an MPA Reject, with its private data, or, as librdmacm
 * reports iWARP, a refused TCP connection, without), UNREACHABLE (TCP
 * failed otherwise: status -ETIMEDOUT, -EHOSTUNREACH, -ENETUNREACH, ...)
 * or CONNECT_ERROR (MPA failed: status -EPROTO,
 * -ETIMEDOUT, or -ECONNRESET/-EPIPE/-ECONNABORTED when the connection
 * broke during the handshake).  Returns -EINVAL (NULL host or QP, id in
 * use, QP already attached or of another context),
 * -ENXIO (name not resolved; -EAGAIN: the resolver failed temporarily),
 * -EMSGSIZE (private data above
 * UIW_PRIVATE_DATA_MAX or the context's pd_max less 8 octets of IRD/ORD),
 * -ENOMEM, or the -errno of
 * socket().
 */
int uiw_connect(struct uiw_cm_id *id, const char *host, uint16_t port, struct uiw_qp *qp,
		const struct uiw_conn_param *param);

/**
 * uiw_accept() - accept the CONNECT_REQUEST of @id, attaching @qp, with
 * @param's private data.  ESTABLISHED follows on @id.  Returns 0, -EINVAL
 * (no request pending, QP attached elsewhere or of another context, NULL
 * private data with a length), -EMSGSIZE, -ENOMEM, or -ECONNABORTED when
 * the RFC 6581 IRD/ORD check failed on entering full operation (a
 * TERMINATE is sent and the connection closes).
 */
int uiw_accept(struct uiw_cm_id *id, struct uiw_qp *qp, const struct uiw_conn_param *param);

/**
 * uiw_reject() - refuse the CONNECT_REQUEST of @id with an MPA Reject
 * carrying @len octets at @pd; the TCP connection is closed once it is sent.
 * uiw_destroy_id() right after waits (up to 2 s) for the Reject to leave.
 * Returns 0, -EINVAL (no request pending, NULL @pd with a length), -EMSGSIZE.
 */
int uiw_reject(struct uiw_cm_id *id, const void *pd, uint16_t len);

/**
 * uiw_disconnect() - graceful close (RFC 5040 §6.2): no new work, what is
 * queued is sent, then TCP is closed.  Both sides then get DISCONNECTED and
 * their QPs go to error, flushing outstanding WRs (UIW_WC_WR_FLUSH_ERR).
 * A peer that never closes its side is cut off after 10 s (2 s after a
 * TERMINATE).  What is queued must be handed to TCP within 10 s (2 s when
 * the close comes from an error or uiw_modify_qp() to ERR): a peer that
 * stops reading gets the connection reset, the rest is flushed and
 * DISCONNECTED follows.  Returns 0, -EINVAL (not connected).
 */
int uiw_disconnect(struct uiw_cm_id *id);

/**
 * uiw_get_cm_event() - wait up to @timeout_ms (-1: forever) for the next CM
 * event in @ctx's own queue (ids not moved to an event channel) and copy it
 * to @ev.  Returns 0, -ETIMEDOUT, -EINVAL.
 */
int uiw_get_cm_event(struct uiw_context *ctx, struct uiw_cm_event *ev, int timeout_ms);

/**
 * uiw_cm_event_fd() - an fd (eventfd, semaphore mode) readable while CM
 * events of @ctx are queued, for poll()/epoll(); uiw_get_cm_event() consumes
 * the readiness.  Do not read or close it.
 */
int uiw_cm_event_fd(struct uiw_context *ctx);

/*
 * Event channels: CM events of an id go to one queue.  By default that is
 * the context's own (uiw_get_cm_event(), uiw_cm_event_fd()); an
 * application that waits for the events of different ids in different
 * places (librdmacm's rdma_event_channel) makes more channels and moves
 * ids to them.  A connection accepted by a listener reports to the
 * listener's channel.
 */
struct uiw_event_channel;

/** uiw_create_event_channel() - a new, empty CM event queue of @ctx.
 * Returns 0, -EINVAL, -ENOMEM, or the -errno of eventfd(). */
int uiw_create_event_channel(struct uiw_context *ctx, struct uiw_event_channel **ch);

/** uiw_destroy_event_channel() - free @ch.  Returns 0, -EBUSY while an id
 * reports to it (move it away or destroy it first).  Channels left are
 * freed by uiw_close_context(). */
int uiw_destroy_event_channel(struct uiw_event_channel *ch);

/**
 * uiw_migrate_id() - @id reports to @ch (NULL: the context's own queue)
 * from now on.  Its events already queued move along, in order, behind
 * what @ch holds; so do, for a listener, the CONNECT_REQUESTs it reported
 * that were not taken yet (with their connections' later events) and the
 * connections it is still accepting.  Returns 0, -EINVAL (@ch of another
 * context).  As with rdma_migrate_id(), no thread may be waiting for @id's
 * events on the old channel.
 */
int uiw_migrate_id(struct uiw_cm_id *id, struct uiw_event_channel *ch);

/** uiw_get_channel_event() - uiw_get_cm_event() for @ch. */
int uiw_get_channel_event(struct uiw_event_channel *ch, struct uiw_cm_event *ev, int timeout_ms);

/** uiw_event_channel_fd() - uiw_cm_event_fd() for @ch: readable exactly
 * while events are queued in @ch.  Do not read or close it. */
int uiw_event_channel_fd(struct uiw_event_channel *ch);

/** uiw_event_str() - the event's name ("ESTABLISHED", ...). */
const char *uiw_event_str(enum uiw_cm_event_type ev);

#ifdef __cplusplus
}
#endif

#endif /* UIW_VERBS_H */
