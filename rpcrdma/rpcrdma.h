/* SPDX-License-Identifier: MIT */
/*
 * RPC-over-RDMA version 1 (RFC 8166) transport header codec and the RFC 8797
 * connection private data, sans-I/O: no sockets, no verbs, no malloc.  The
 * transport that posts Sends and Receives and drives RDMA Read/Write is
 * built on top of this (docs/RPCRDMA.md).
 *
 * Transport header (RFC 8166 §4.1.2 XDR, §4.2 fixed fields, §4.3 chunk
 * lists):
 *   rdma_xid, rdma_vers (1), rdma_credit, rdma_proc, then for RDMA_MSG and
 *   RDMA_NOMSG the Read list (optional-data list of PHLOO), the Write list
 *   (optional-data list of counted arrays of HLOO) and the Reply chunk
 *   (optional counted array of HLOO); for RDMA_ERROR the error union.
 *
 * Decoding (rpcrdma_hdr_decode()) never trusts a count: every element is
 * checked against the octets present before it is read and against the
 * caller's caps before it is stored; decoded chunk lists go into arrays the
 * caller lends (struct rpcrdma_dec_cfg).  A failure is reported as -errno
 * plus a struct rpcrdma_dec_err saying which check failed and what the
 * RFC 8166 §4.5 error handling requires: discard silently, or (a Responder
 * receiving a call) answer RDMA_ERROR with ERR_VERS or ERR_CHUNK.
 *
 * Encoding (rpcrdma_hdr_encode()) writes any valid header into a caller
 * buffer, refusing what a sender must not send (RDMA_MSGP, RDMA_DONE,
 * misaligned positions, ...) with -EINVAL and a short buffer with -EMSGSIZE.
 * Whatever it writes, rpcrdma_hdr_decode() accepts and decodes back to the
 * same structure.
 *
 * Functions return a length (>= 0) or -errno.  Names are rpcrdma_*: internal
 * to libuiw (the shared library exports uiw_* only).
 */
#ifndef UIW_RPCRDMA_H
#define UIW_RPCRDMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ------------------------------------------------------------------ */
/* Wire constants (RFC 8166 §4.1.2) */

#define RPCRDMA_VERSION 1

/* enum rdma_proc */
#define RPCRDMA_MSG    0 /* chunk lists, then the Payload stream */
#define RPCRDMA_NOMSG  1 /* chunk lists only; the Payload stream is in a chunk */
#define RPCRDMA_MSGP   2 /* §4.6.1: not to be used */
#define RPCRDMA_DONE   3 /* §4.6.2: not to be used */
#define RPCRDMA_ERROR  4 /* error union follows */
#define RPCRDMA_NPROCS 5

/* enum rpc_rdma_errcode */
#define RPCRDMA_ERR_VERS  1
#define RPCRDMA_ERR_CHUNK 2

/* Sizes in octets. */
#define RPCRDMA_FIXED_LEN     16 /* xid, vers, credit, proc */
#define RPCRDMA_HDR_MIN	      28 /* §4.5: "a minimal size RPC-over-RDMA header (28 bytes)" */
#define RPCRDMA_SEG_LEN	      16 /* plain segment: handle, length, offset (HLOO) */
#define RPCRDMA_READ_SEG_LEN  20 /* read segment: position + plain segment (PHLOO) */
#define RPCRDMA_ERR_CHUNK_LEN 20 /* RDMA_ERROR, ERR_CHUNK: fixed fields + rdma_err */
#define RPCRDMA_ERR_VERS_LEN  28 /* RDMA_ERROR, ERR_VERS: + rdma_vers_low, rdma_vers_high */

/* ------------------------------------------------------------------ */
/* Decoded header */

/** struct rpcrdma_seg - a plain RDMA segment (§3.4.3, xdr_rdma_segment). */
struct rpcrdma_seg {
	uint32_t handle; /* STag */
	uint32_t length; /* octets; 0 is an "empty segment" */
	uint64_t offset; /* tagged offset */
};

/** struct rpcrdma_read_seg - an RDMA read segment (§3.4.5, xdr_read_chunk). */
struct rpcrdma_read_seg {
	uint32_t position; /* XDR offset in the unreduced Payload stream, multiple of 4 */
	struct rpcrdma_seg seg;
};

/**
 * struct rpcrdma_chunk - a Write chunk or the Reply chunk: a counted array
 * of plain segments (§3.4.6, xdr_write_chunk).  Zero segments is an "empty
 * Write chunk" (§3.4.6).
 */
struct rpcrdma_chunk {
	uint32_t nsegs;
	struct rpcrdma_seg *segs;
};

/**
 * struct rpcrdma_hdr - one transport header (struct rdma_msg).
 * @xid, @vers, @credits, @proc: the four fixed fields (§4.2); @credits is
 *            the requested (call) or granted (reply) credit value (§4.2.3)
 * RDMA_MSG / RDMA_NOMSG:
 * @nread, @read:   the Read list, in wire order; Read chunks are the
 *                  segments sharing a position (§4.3.1); 0: empty list
 * @nwrite, @write: the Write list (§4.3.2); 0: empty list
 * @has_reply, @reply: the Reply chunk (§4.3.3), if present
 * RDMA_ERROR:
 * @err:            RPCRDMA_ERR_VERS or RPCRDMA_ERR_CHUNK
 * @vers_low, @vers_high: ERR_VERS: the inclusive range the Responder speaks
 *
 * Decoding points @read, @write and the chunks' @segs into the caller's
 * arrays; for encoding the caller points them at its own (they are only
 * read).  Fields that do not belong to @proc are zero after a decode and
 * ignored by the encoder.
 */
struct rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc;
	uint32_t nread;
	struct rpcrdma_read_seg *read;
	uint32_t nwrite;
	struct rpcrdma_chunk *write;
	int has_reply;
	struct rpcrdma_chunk reply;
	uint32_t err;
	uint32_t vers_low;
	uint32_t vers_high;
};

/* ------------------------------------------------------------------ */
/* Decoding */

/**
 * struct rpcrdma_dec_cfg - where decoded chunk lists go, and the caps.
 * @read, @max_read:   Read list segments
 * @write, @max_write: Write chunks
 * @segs, @max_segs:   plain segments of every Write chunk and of the Reply
 *                     chunk together (each chunk gets a contiguous run)
 * @max_chunk_segs:    segments in any one Write or Reply chunk; 0: only
 *                     @max_segs bounds them
 * @flags:             RPCRDMA_DF_*
 * A count above a cap is an error (RPCRDMA_R_CAP, answered with ERR_CHUNK):
 * the Responder cannot process such a header.  Arrays may be NULL when
 * their cap is 0.
 */
struct rpcrdma_dec_cfg {
	struct rpcrdma_read_seg *read;
	uint32_t max_read;
	struct rpcrdma_chunk *write;
	uint32_t max_write;
	struct rpcrdma_seg *segs;
	uint32_t max_segs;
	uint32_t max_chunk_segs;
	unsigned flags;
};

/*
 * Accept an RDMA_ERROR of 20 to 27 octets (an ERR_CHUNK has exactly 20, as
 * the XDR encodes it and Linux svcrdma sends it), which §4.5's 28-octet
 * minimum would otherwise discard.  Off by default: the RFC text.
 */
#define RPCRDMA_DF_SHORT_ERROR 0x1
/* Do not compare the RDMA_MSG Payload stream's XID with rdma_xid (§4.5.2). */
#define RPCRDMA_DF_NO_XID_CHECK 0x2

/* Which check a header failed (struct rpcrdma_dec_err.reason). */
enum rpcrdma_reason {
	RPCRDMA_R_NONE = 0,
	RPCRDMA_R_SHORT,       /* under 28 octets (§4.5): discard, the XID is not trusted */
	RPCRDMA_R_VERS,	       /* rdma_vers not 1 (§4.5.1) */
	RPCRDMA_R_PROC,	       /* rdma_proc not in enum rdma_proc (§4.5.2) */
	RPCRDMA_R_MSGP,	       /* RDMA_MSGP (§4.6.1) */
	RPCRDMA_R_DONE,	       /* RDMA_DONE (§4.6.2) */
	RPCRDMA_R_TRUNC,       /* an item runs past the end of the message */
	RPCRDMA_R_BOOL,	       /* optional-data discriminator neither 0 nor 1 (RFC 4506 §4.4) */
	RPCRDMA_R_CAP,	       /* more segments or chunks than the caller's caps */
	RPCRDMA_R_POSITION,    /* read segment position not a multiple of 4 (§3.4.5) */
	RPCRDMA_R_SEG_WRAP,    /* segment offset + length beyond 2^64 */
	RPCRDMA_R_NOMSG_EMPTY, /* RDMA_NOMSG with no chunk to hold the Payload stream (§4.2.4) */
	RPCRDMA_R_XID,	       /* RDMA_MSG Payload stream missing or its XID differs (§4.5.2) */
	RPCRDMA_R_ERR_CODE,    /* RDMA_ERROR with an unknown rdma_err (§4.5) */
	RPCRDMA_R_ERR_RANGE,   /* RDMA_ERROR ERR_VERS with low > high (§4.5) */
	/* rpcrdma_reply_check() */
	RPCRDMA_R_REPLY_READ,  /* a reply with a Read list (§4.3.1) */
	RPCRDMA_R_REPLY_WRITE, /* reply Write list does not match the call's (§3.4.6) */
	RPCRDMA_R_REPLY_CHUNK, /* reply Reply chunk does not match the call's (§4.3.3) */
	RPCRDMA_R_REPLY_XID,   /* reply XID differs from the call's */
	RPCRDMA_R_REPLY_PROC,  /* reply procedure not RDMA_MSG, RDMA_NOMSG or RDMA_ERROR */
	RPCRDMA_R_COUNT
};

/**
 * struct rpcrdma_dec_err - why a header was refused.
 * @reason:    the check that failed
 * @reply_err: what a Responder receiving it must do (§4.5): 0 discard
 *             silently, else answer RDMA_ERROR with this rdma_err
 *             (RPCRDMA_ERR_VERS or RPCRDMA_ERR_CHUNK).  A Requester
 *             receiving a reply always discards (§4.5).
 * @offset:    octet offset of the offending field in the message
 */
struct rpcrdma_dec_err {
	enum rpcrdma_reason reason;
	uint32_t reply_err;
	size_t offset;
};

/**
 * rpcrdma_hdr_decode() - decode the transport header at the start of the
 * @len octets of one received Send.
 * Returns the header length, which for RDMA_MSG is the offset at which the
 * Payload stream starts (for RDMA_NOMSG and RDMA_ERROR, octets after it are
 * not part of the message and are ignored), or
 *  -ENODATA         fewer than 28 octets (§4.5): discard silently; @h is
 *                   zeroed, its XID is not to be used
 *  -EPROTONOSUPPORT rdma_vers is not 1: answer ERR_VERS (§4.5.1); discard
 *                   if rdma_proc is RDMA_ERROR (its position and value are
 *                   fixed for all versions, §4.1.2)
 *  -EOPNOTSUPP      RDMA_MSGP: a Responder SHOULD answer ERR_CHUNK, a
 *                   Requester MUST discard (§4.6.1)
 *  -ENOMSG          RDMA_DONE: every receiver discards silently (§4.6.2)
 *  -EBADMSG         XDR error in a version 1 header: answer ERR_CHUNK
 *                   (§4.5.2); for a malformed RDMA_ERROR: discard (§4.5)
 *  -E2BIG           a count above the caps of @cfg: answer ERR_CHUNK
 *  -EINVAL          @cfg inconsistent (a non-zero cap with a NULL array)
 * On every error but -ENODATA and -EINVAL the four fixed fields of @h are
 * set (the RDMA_ERROR answer echoes rdma_xid and rdma_vers, §4.5) and
 * nothing else is; @e (may be NULL) says why and what to do.
 */
ssize_t rpcrdma_hdr_decode(const uint8_t *buf, size_t len, const struct rpcrdma_dec_cfg *cfg,
			   struct rpcrdma_hdr *h, struct rpcrdma_dec_err *e);

/** rpcrdma_reason_name() - printable name of a reason. */
const char *rpcrdma_reason_name(enum rpcrdma_reason r);

/** rpcrdma_proc_name() - "RDMA_MSG", ... or "unknown". */
const char *rpcrdma_proc_name(uint32_t proc);

/* What a receiver does with a message (rpcrdma_rx_verdict()). */
enum rpcrdma_verdict {
	RPCRDMA_V_ACCEPT = 0,	 /* process it */
	RPCRDMA_V_DROP,		 /* discard silently */
	RPCRDMA_V_SEND_ERR_VERS, /* answer RDMA_ERROR, ERR_VERS (rpcrdma_error_encode()) */
	RPCRDMA_V_SEND_ERR_CHUNK /* answer RDMA_ERROR, ERR_CHUNK */
};

/**
 * rpcrdma_rx_verdict() - RFC 8166 §4.5 and §4.6 applied to the result @ret
 * of rpcrdma_hdr_decode() (and the @h it filled) by a receiver acting as
 * Responder (@responder 1: the message is a call) or Requester (0: a reply).
 * A Requester discards every header in error (§4.5) and a reply with a
 * Read list (§4.3.1); a Responder discards short messages, RDMA_DONE and
 * every RDMA_ERROR, valid or not (§4.2.4), answers ERR_VERS to another
 * version and ERR_CHUNK to any other error, RDMA_MSGP included (§4.6.1).
 */
enum rpcrdma_verdict rpcrdma_rx_verdict(ssize_t ret, const struct rpcrdma_hdr *h, int responder);

/* ------------------------------------------------------------------ */
/* Encoding */

/*
 * Pad a message shorter than 28 octets (only ERR_CHUNK is) with zero
 * octets to 28, so that a receiver applying §4.5's minimum literally still
 * takes it; decoders ignore octets after an RDMA_ERROR's error union.
 */
#define RPCRDMA_EF_PAD_MIN 0x1

/**
 * rpcrdma_hdr_len() - octets rpcrdma_hdr_encode() writes for @h (without
 * RPCRDMA_EF_PAD_MIN), -EINVAL as rpcrdma_hdr_encode(), or -EMSGSIZE if
 * the length does not fit a ssize_t (absurd counts).
 */
ssize_t rpcrdma_hdr_len(const struct rpcrdma_hdr *h);

/**
 * rpcrdma_hdr_encode() - write the transport header @h into @buf (capacity
 * @cap).  @flags: RPCRDMA_EF_*.  Returns the length, -EMSGSIZE if @cap is
 * short (nothing useful written), or -EINVAL for what a sender must not
 * send: RDMA_MSGP, RDMA_DONE (§4.6), an unknown procedure; RDMA_MSG or
 * RDMA_NOMSG with rdma_vers other than 1, a position not a multiple of 4,
 * a segment wrapping 2^64, a NULL array with a non-zero count, RDMA_NOMSG
 * with no position-zero Read chunk and no Reply chunk; RDMA_ERROR with an
 * unknown rdma_err or an ERR_VERS range with low > high.  (RDMA_ERROR may
 * carry any rdma_vers: it echoes the failing request's, §4.5.)
 */
ssize_t rpcrdma_hdr_encode(uint8_t *buf, size_t cap, const struct rpcrdma_hdr *h, unsigned flags);

/**
 * rpcrdma_error_encode() - the RDMA_ERROR a Responder sends for the call
 * whose decode failed with @bad's fixed fields (§4.5): rdma_xid and
 * rdma_vers copied, rdma_credit @credits, rdma_err @err; ERR_VERS carries
 * the range 1..1.  Returns as rpcrdma_hdr_encode().
 */
ssize_t rpcrdma_error_encode(uint8_t *buf, size_t cap, const struct rpcrdma_hdr *bad,
			     uint32_t credits, uint32_t err, unsigned flags);

/* ------------------------------------------------------------------ */
/* Chunk helpers */

/** rpcrdma_chunk_len() - sum of the segment lengths of @c (no overflow). */
uint64_t rpcrdma_chunk_len(const struct rpcrdma_chunk *c);

/**
 * struct rpcrdma_chunk_info - which chunks the Requester provided in a
 * call, i.e. what the Responder may use for its reply (and must pull).
 * @read_segs:    Read list segments
 * @read_chunks:  Read chunks: distinct positions (§4.3.1)
 * @read_len:     octets of all Read segments
 * @long_call:    a Position Zero Read chunk carries the call (§3.5.3)
 * @pos0_len:     its length
 * @write_chunks: Write chunks in the Write list
 * @write_empty:  of which empty (zero segments: return the item inline,
 *                §4.3.2.3)
 * @write_len:    octets of all Write chunks
 * @write_max:    octets of the largest Write chunk
 * @reply_chunk:  a Reply chunk was provided (a Long Reply is possible)
 * @reply_segs, @reply_len: its segments and octets
 */
struct rpcrdma_chunk_info {
	uint32_t read_segs;
	uint32_t read_chunks;
	uint64_t read_len;
	int long_call;
	uint64_t pos0_len;
	uint32_t write_chunks;
	uint32_t write_empty;
	uint64_t write_len;
	uint64_t write_max;
	int reply_chunk;
	uint32_t reply_segs;
	uint64_t reply_len;
};

/** rpcrdma_chunk_info() - summarise the chunk lists of the call @h. */
void rpcrdma_chunk_info(const struct rpcrdma_hdr *h, struct rpcrdma_chunk_info *ci);

/**
 * rpcrdma_reply_form() - Responder: how to send a reply whose RDMA_MSG
 * header would be @hdr_len octets and whose reduced Payload stream is
 * @payload_len octets, to a call that provided @ci, under the reply inline
 * threshold @inline_max (§3.3.2, §3.5.3, §4.3.3).  Returns RPCRDMA_MSG (a
 * Short or Chunked Message), RPCRDMA_NOMSG (a Long Reply: the Payload stream
 * goes into the Reply chunk), or -EMSGSIZE: too large and no Reply chunk, or
 * a Reply chunk too small for @payload_len (§4.5.3: answer ERR_CHUNK).
 */
int rpcrdma_reply_form(const struct rpcrdma_chunk_info *ci, size_t hdr_len, size_t payload_len,
		       uint32_t inline_max);

/**
 * rpcrdma_reply_check() - Requester: validate the decoded reply @rep
 * against the call @call it answers (same XID).  RDMA_ERROR passes.
 * Otherwise: no Read list (§4.3.1); each returned Write chunk has the
 * segment count, handles and offsets of the call's chunk in the same
 * position and lengths no larger (§3.4.6: the Responder copies the chunk
 * and updates the lengths), at most as many chunks as the call had; a
 * returned Reply chunk likewise matches the call's (§4.3.3); one may be
 * absent (an inline reply: Linux then returns none).  Returns 0, or
 * -EPROTO with @e (may be NULL) set: the Requester discards the reply (§4.5).
 */
int rpcrdma_reply_check(const struct rpcrdma_hdr *call, const struct rpcrdma_hdr *rep,
			struct rpcrdma_dec_err *e);

/* ------------------------------------------------------------------ */
/* RFC 8797: CM private data */

#define RPCRDMA_CM_MAGIC	0xf6ab0e18u /* Format Identifier, network byte order */
#define RPCRDMA_CM_VERSION	1
#define RPCRDMA_CM_LEN		8    /* version 1: exactly eight octets */
#define RPCRDMA_CM_F_REMOTE_INV 0x01 /* R: bit 15 of the second word */
#define RPCRDMA_INLINE_DEFAULT	1024 /* RFC 8166 §3.3.3 */
#define RPCRDMA_INLINE_MIN	1024
#define RPCRDMA_INLINE_MAX	262144 /* (255 + 1) * 1024 */

/**
 * struct rpcrdma_cm_pd - one peer's RFC 8797 private data, decoded.
 * @remote_inv: R: the sender supports remote invalidation (RFC 8797 §3.2, §4.1)
 * @send_size:  largest message it will Send, octets (1024..262144)
 * @recv_size:  largest message it can Receive, octets
 */
struct rpcrdma_cm_pd {
	int remote_inv;
	uint32_t send_size;
	uint32_t recv_size;
};

/**
 * rpcrdma_cm_size_encode() - RFC 8797 §4.2: @bytes / 1024 - 1, rounded down
 * (advertising less than one can take is safe), capped at 255.  Sizes below
 * 1024 cannot be represented: 0 (1024) is returned, the RFC 8166 minimum
 * every receiver must support.
 */
uint8_t rpcrdma_cm_size_encode(uint32_t bytes);

/** rpcrdma_cm_size_decode() - (@v + 1) * 1024. */
uint32_t rpcrdma_cm_size_decode(uint8_t v);

/**
 * rpcrdma_cm_pd_init() - our own private data: sizes clamped to
 * 1024..262144 and rounded down to a multiple of 1024, exactly as the peer
 * will decode them.  A Requester sets @remote_inv when every STag it
 * exposes may be invalidated remotely; a Responder when it can send RDMA
 * Send with Invalidate (RFC 8797 §3.2, §4.1).
 */
void rpcrdma_cm_pd_init(struct rpcrdma_cm_pd *pd, uint32_t send_size, uint32_t recv_size,
			int remote_inv);

/**
 * rpcrdma_cm_encode() - the eight octets of version 1 private data for @pd
 * into @buf (capacity @cap).  Reserved bits are zero.  Returns 8 or
 * -EMSGSIZE.  On MPA, they follow the RFC 6581 IRD/ORD words.
 */
ssize_t rpcrdma_cm_encode(uint8_t *buf, size_t cap, const struct rpcrdma_cm_pd *pd);

/**
 * rpcrdma_cm_decode() - find the peer's RFC 8797 private data in the @len
 * octets of @buf (the private data of the MPA Request or Reply after the
 * IRD/ORD words; the whole of it works too) and decode it into @pd.
 * RFC 8797 §5.2: the buffer is searched for the Format Identifier at any
 * offset; the first occurrence is parsed.  Returns its offset (>= 0), or,
 * with @pd set to the defaults (R clear, both sizes 1024, §5.1) that a peer
 * without RFC 8797 data implies:
 *  -ENOENT          no Format Identifier (no data, or another layer's)
 *  -EPROTONOSUPPORT the Version octet is not 1 (not "a valid and
 *                   recognized version number")
 *  -EBADMSG         fewer than 8 octets from the identifier on (the
 *                   content would overrun the buffer)
 * Reserved bits are ignored.
 */
ssize_t rpcrdma_cm_decode(const uint8_t *buf, size_t len, struct rpcrdma_cm_pd *pd);

/**
 * struct rpcrdma_inline - what a connection uses, as seen from one end.
 * @send_max:   largest RPC-over-RDMA message we may Send (our direction's
 *              inline threshold)
 * @recv_max:   largest message the peer may Send us (size of our Receives)
 * @remote_inv: both ends set R: the Responder MAY reply with Send with
 *              Invalidate (RFC 8797 §4.1); else it MUST use plain Send
 * @peer_pd:    the peer sent valid RFC 8797 data
 */
struct rpcrdma_inline {
	uint32_t send_max;
	uint32_t recv_max;
	int remote_inv;
	int peer_pd;
};

/**
 * rpcrdma_cm_negotiate() - RFC 8797 §4.2, as either end: send_max =
 * min(our send size, peer's receive size) (for the client the call inline
 * threshold, for the server the reply one), recv_max = min(our receive
 * size, peer's send size).  @peer is what rpcrdma_cm_decode() set (the
 * defaults when it failed), @peer_ret its return value.
 */
void rpcrdma_cm_negotiate(const struct rpcrdma_cm_pd *mine, const struct rpcrdma_cm_pd *peer,
			  ssize_t peer_ret, struct rpcrdma_inline *out);

#endif /* UIW_RPCRDMA_H */
