/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the DDP/RDMAP receive path of a bound QP (RFC 5041 §7,
 * RFC 5040 §7, and RFC 7306's extensions when the configuration enables
 * them), reached through a real MPA connection in full operation.
 *
 * A pair of stacks is set up as tests/rdmap_pair.c does (markers off, so
 * that the input reaches DDP rather than the deframer); one of them, the
 * victim, registers memory regions with different rights, posts receives
 * and a few Reads, Writes and Sends, and is then fed FPDUs described by the
 * input.  Its output goes to a sink that checks it is well-formed.
 *
 * Input: one configuration octet, then records.
 *  config bit 0     CRC on (the harness computes each FPDU's CRC)
 *  config bit 1     the victim is the MPA initiator (else the responder)
 *  config bit 2     receive through mpa_rx_lend_ahead()/mpa_rx_ack() as the engine
 *                   does (else mpa_rx())
 *  config bits 3-4  split the stream: 0 whole FPDUs, 1, 2, 3: random runs of
 *                   1..1, 1..16, 1..1024 octets
 *  config bit 5     RFC 7306 on both QPs (atomics, Immediate Data): the
 *                   victim answers Atomic Requests into FZ_R_WRITE, the only
 *                   region of its PD with REMOTE_ATOMIC, and takes Immediate
 *                   Data into its receives; actions 10 and 11 post its own
 *  config bit 6     post no work at the start (only what records post)
 *  config bit 7     small queues (SQ 4, RQ 2, IRD/ORD 1) instead of 16, 8, 4
 *  record, first octet bit 7 clear: an FPDU
 *           bit 0   bad CRC (CRC on), or a non-zero CRC field (CRC off)
 *           bit 1   no TO relocation (below) for this FPDU
 *           bit 2   leave the victim's output queued (no sink after it), so
 *                   that its transmit queue and IRD can fill up
 *           bit 3   relocate TOs from the end of the region instead (TO is
 *                   then the distance back from the octet after the region,
 *                   so that small values probe the upper bound)
 *           then ULPDU_Length (2 octets, big-endian), then that many ULPDU
 *           octets (fewer if the input ends); the harness adds PAD and CRC
 *  record, first octet bit 7 set: an action, (octet & 0x7F) % 12, with one
 *           argument octet: 0 post a receive, 1 post a Read, 2 a Write,
 *           3 a Send, 4 a local invalidate, 5 deregister a region,
 *           6 re-validate a region, 7 graceful close, 8 move to ERROR,
 *           9 the TCP connection closes, 10 an atomic (FetchAdd, or
 *           CmpSwap with arg bit 0; its result into FZ_R_LOCAL), 11 a Write
 *           with Immediate (arg bit 0) or a Send with Immediate (refused
 *           without config bit 5, and then not counted)
 *
 * The victim's STags are random (ddp_mem draws each one), unknown to the
 * input, so the input names them and the harness maps the names: the STag
 * (0x10 + i) << 8 | k names region i (see enum fz_region_id) with key k,
 * where region i's own key is 0 after set-up and goes up by one with every
 * revalidation.  The harness puts in region i's real STag (its current one;
 * after deregistration, its last one) for its own key, and that STag with
 * another key (real key ^ k ^ own key) for another k: wrong keys stay
 * wrong, whatever the draws.  It does so, whatever record bit 1 says, for
 * the STag of a tagged header, a Read Request's source STag, an Atomic
 * Request's Remote STag and the STag a Send with Invalidate invalidates;
 * other STags are left as they are.  Tagged offsets are virtual addresses,
 * unknown to the input too, so the harness relocates them: in a tagged
 * header whose STag names region i (any key), and in a Read Request's
 * source and an Atomic Request's target, the TO is taken as an offset into
 * region i and the region's address is added (modulo 2^64, so every TO
 * stays reachable; record bit 3 counts back from the region's end).
 *
 * Checked after every record: the guard octets around every region are
 * intact; a region the peer may not write at that moment (no REMOTE_WRITE,
 * another PD, invalidated, deregistered, or QP out of RTS) is unchanged,
 * except, in the local-only region, the buffers of receives and Reads still
 * outstanding; the victim's output is a sequence of valid FPDUs with at
 * most one TERMINATE, last.  At the end the QP is moved to ERROR and every
 * work request posted must have completed exactly once, in posting order.
 * LeakSanitizer checks that nothing is left allocated.
 *
 * Speed (the target runs 10^7 inputs): the pair, its regions and the work
 * posted at the start are set up once per configuration that shapes them
 * (config bits 0, 1, 5, 6 and 7), saved once the start is checked, and put
 * back in place after each input, so that all pointers stay valid
 * (struct fz_snap: the structs of the pair and of the harness, the blocks
 * the victim owns: STag table, queues, MPA transmit slots; the regions
 * that changed).  If a block was replaced during the input (none is, today)
 * the configuration is set up anew.  Nothing passes from one input to the
 * next.  The regions nothing may ever write are read-only pages (a write
 * faults at once); a region the peer may write during a record has only
 * its guards compared after it, the others one memcmp against their
 * content after the previous record.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(a, n)	  ((void)(a), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(a, n) ((void)(a), (void)(n))
#endif

#include "byteorder.h"
#include "crc32c.h"
#include "rdmap_pair.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                 \
	do {                     \
		if (!(x))        \
			abort(); \
	} while (0)

enum fz_region_id {
	FZ_R_WRITE,   /* remote write: the peer may write anywhere in it */
	FZ_R_READSRC, /* remote read only */
	FZ_R_LOCAL,   /* local write only: receive buffers and Read sinks */
	FZ_R_OTHERPD, /* all rights, but another protection domain */
	FZ_R_INVAL,   /* remote write, invalidated before the input starts */
	FZ_R_SRC,     /* no rights: the source of the victim's Writes and Sends */
	FZ_NREG
};

#define FZ_STAG_BASE 0x10 /* inputs name region i by STag index FZ_STAG_BASE + i */
#define FZ_REG_LEN   4096
#define FZ_GUARD     64
#define FZ_MAXWR     512
#define FZ_PEER_STAG 0x00AB0000u /* the peer's STags, as the victim names them */
#define FZ_SINK_CAP  (256 * 1024)
#define FZ_PEND_CAP  (FZ_SINK_CAP + 2 + 65535 + 3 + 4)

static const unsigned fz_access[FZ_NREG] = {
	[FZ_R_WRITE] = DDP_ACC_LOCAL_WRITE | DDP_ACC_REMOTE_WRITE | DDP_ACC_REMOTE_ATOMIC,
	[FZ_R_READSRC] = DDP_ACC_REMOTE_READ,
	[FZ_R_LOCAL] = DDP_ACC_LOCAL_WRITE,
	[FZ_R_OTHERPD] = DDP_ACC_ALL,
	[FZ_R_INVAL] = DDP_ACC_ALL,
	[FZ_R_SRC] = 0,
};

/*
 * Regions nothing may ever write (no REMOTE_WRITE, another PD, no rights)
 * are read-only pages: a write faults at once, and they need no comparison
 * after each record.  Each sits at the end of its pages with an inaccessible
 * page after it and one before; what precedes it in its first page is
 * poisoned for ASan.
 */
static const int fz_fixed[FZ_NREG] = {[FZ_R_READSRC] = 1, [FZ_R_OTHERPD] = 1, [FZ_R_SRC] = 1};

#define FZ_BLK (FZ_REG_LEN + 2 * FZ_GUARD)

struct fz_region {
	uint8_t *map; /* fixed regions: their pages (see fz_fixed) */
	size_t map_len;
	uint8_t *block; /* guard, region, guard */
	uint8_t *base;
	uint8_t *snap;	/* the block as it must be: guards, content after the previous record */
	uint8_t *allow; /* FZ_R_LOCAL: octets the peer may write now */
	struct ddp_mr *mr;
	uint32_t stag; /* its real STag, or its last one once deregistered */
	uint8_t key;   /* its key as inputs name it: 0, +1 per revalidation */
	int registered;
	int dirty;	   /* (may have) changed since set-up */
	int stale;	   /* writable during the last record: snap not updated */
	uint8_t *pristine; /* the block after set-up */
};

/* A work request the victim posted, for the checks. */
struct fz_wr {
	uint64_t wr_id;
	int read;   /* send queue: a Read or an atomic (its sink, or result, is in FZ_R_LOCAL) */
	int atomic; /* an RFC 7306 atomic: its completion opcode (8 octets) */
	size_t off; /* receive or Read sink: range in FZ_R_LOCAL */
	size_t len;
	int nsge;
	struct rdmap_sge sge[RDMAP_MAX_SGE];
	int done;
};

/*
 * Saved memory: ranges copied after set-up and copied back after each
 * input, and the pointers to the blocks the pair owns, which must still be
 * the same for the copy to be valid.
 */
#define FZ_SNAP_MAX 64
struct fz_snap {
	int n, nown;
	struct {
		void *at;
		size_t len;
		uint8_t *copy;
	} r[FZ_SNAP_MAX];
	struct {
		void **field;
		void *was;
	} own[FZ_SNAP_MAX];
};

struct fz {
	struct rp_pair p;
	/* from v to sq: saved whole */
	struct rp_host *v; /* the victim */
	struct mpa_conn *vc;
	struct ddp_pd pd2;
	struct fz_region r[FZ_NREG];
	int crc;
	int ext; /* RFC 7306 on (config bit 5) */
	unsigned nsq, nrq;
	int nswc_seen, nrwc_seen;
	unsigned b_nsq, b_nrq; /* at the start of the record */
	int b_nswc, b_nrwc;
	/* the sink: victim output not yet parsed */
	uint8_t *pend;
	size_t pend_len;
	int term_seen;
	unsigned out_fpdus;
	struct fz_wr sq[FZ_MAXWR], rq[FZ_MAXWR];
	struct fz_snap snap;
};

static void reg_fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 73 + i * 31 + (i >> 8));
}

/* The guard patterns: 0xA5 ^ i before region i, 0x5A ^ i after it. */
static void guard_fill(uint8_t *p, uint8_t v)
{
	memset(p, v, FZ_GUARD);
}

static int regions_init(struct fz *f)
{
	ddp_pd_init(&f->v->mem, &f->pd2);
	for (int i = 0; i < FZ_NREG; i++) {
		struct fz_region *r = &f->r[i];

		if (fz_fixed[i]) {
			size_t pg = (size_t)sysconf(_SC_PAGESIZE);
			size_t data = (FZ_BLK + pg - 1) / pg * pg;

			r->map_len = data + 2 * pg;
			r->map = mmap(NULL, r->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
				      0);
			if (r->map == MAP_FAILED) {
				r->map = NULL;
				return -ENOMEM;
			}
			if (mprotect(r->map + pg, data, PROT_READ | PROT_WRITE))
				return -ENOMEM;
			r->block = r->map + pg + data - FZ_BLK;
			ASAN_POISON_MEMORY_REGION(r->map + pg, data - FZ_BLK);
		} else {
			/* separate blocks: ASan's redzones around each */
			r->block = malloc(FZ_BLK);
		}
		r->snap = malloc(FZ_BLK);
		r->allow = calloc(1, FZ_REG_LEN);
		if (!r->block || !r->snap || !r->allow)
			return -ENOMEM;
		r->base = r->block + FZ_GUARD;
		guard_fill(r->block, 0xA5 ^ i);
		guard_fill(r->base + FZ_REG_LEN, 0x5A ^ i);
		reg_fill(r->base, FZ_REG_LEN, (unsigned)i);
		memcpy(r->snap, r->block, FZ_BLK);
		if (r->map) {
			size_t pg = (size_t)sysconf(_SC_PAGESIZE);

			if (mprotect(r->map + pg, r->map_len - 2 * pg, PROT_READ))
				return -ENOMEM;
		}
		if (ddp_mr_reg(&f->v->mem, i == FZ_R_OTHERPD ? &f->pd2 : &f->v->pd, r->base,
			       FZ_REG_LEN, fz_access[i], &r->mr))
			return -EINVAL;
		r->stag = r->mr->stag;
		r->registered = 1;
	}
	return ddp_stag_invalidate(&f->v->mem, f->r[FZ_R_INVAL].mr->stag, &f->v->pd);
}

static void regions_free(struct fz *f)
{
	for (int i = 0; i < FZ_NREG; i++) {
		struct fz_region *r = &f->r[i];

		if (r->map) {
			size_t pg = (size_t)sysconf(_SC_PAGESIZE);

			ASAN_UNPOISON_MEMORY_REGION(r->map + pg, r->map_len - 2 * pg);
			munmap(r->map, r->map_len);
		} else {
			free(r->block);
		}
		free(r->snap);
		free(r->allow);
	}
}

static int region_open(const struct fz *f, int i)
{
	const struct fz_region *r = &f->r[i];
	enum rdmap_qp_state s = f->v->qp.state;

	return r->registered && r->mr->valid && r->mr->pd == &f->v->pd &&
	       (s == RDMAP_QPS_RTS || s == RDMAP_QPS_CLOSING);
}

/* What the peer may write during a record: the receives and Reads
 * outstanding before it (computed only when the local region changed;
 * completions come in posting order, so [b_nrwc, b_nrq) of the receives and
 * the Reads in [b_nswc, b_nsq) were outstanding). */
static void allow_compute(struct fz *f)
{
	struct fz_region *l = &f->r[FZ_R_LOCAL];

	memset(l->allow, 0, FZ_REG_LEN);
	for (unsigned i = (unsigned)f->b_nrwc; i < f->b_nrq; i++) {
		for (int k = 0; k < f->rq[i].nsge; k++) {
			const struct rdmap_sge *s = &f->rq[i].sge[k];
			uint8_t *a = (uint8_t *)(uintptr_t)s->addr;

			if (s->length && a >= l->base && a + s->length <= l->base + FZ_REG_LEN)
				memset(l->allow + (a - l->base), 1, s->length);
		}
	}
	for (unsigned i = (unsigned)f->b_nswc; i < f->b_nsq; i++)
		if (f->sq[i].read && f->sq[i].len)
			memset(l->allow + f->sq[i].off, 1, f->sq[i].len);
}

static void regions_check(struct fz *f, const int open[FZ_NREG])
{
	for (int i = 0; i < FZ_NREG; i++) {
		struct fz_region *r = &f->r[i];
		const uint8_t *was = r->snap + FZ_GUARD;

		if (fz_fixed[i])
			continue; /* read-only */
		if (open[i] && (fz_access[i] & DDP_ACC_REMOTE_WRITE)) {
			/* the peer may write anywhere in it: the guards only, and
			 * snap is brought up to date when it closes (step_begin) */
			CHECK(memcmp(r->block, r->snap, FZ_GUARD) == 0);
			CHECK(memcmp(r->base + FZ_REG_LEN, was + FZ_REG_LEN, FZ_GUARD) == 0);
			r->stale = r->dirty = 1;
			continue;
		}
		/* one comparison of the whole block when nothing changed */
		if (memcmp(r->block, r->snap, FZ_BLK) == 0)
			continue;
		/* the guards (0xA5 ^ i before, 0x5A ^ i after) are intact */
		CHECK(memcmp(r->block, r->snap, FZ_GUARD) == 0);
		CHECK(memcmp(r->base + FZ_REG_LEN, was + FZ_REG_LEN, FZ_GUARD) == 0);
		CHECK(i == FZ_R_LOCAL && open[i]);
		allow_compute(f);
		/* every run of octets not allowed is unchanged (memchr and
		 * memcmp, not a byte loop: it is slow under the fuzzer's
		 * comparison tracing) */
		for (size_t k = 0; k < FZ_REG_LEN;) {
			const uint8_t *a = memchr(r->allow + k, 1, FZ_REG_LEN - k);
			size_t end = a ? (size_t)(a - r->allow) : FZ_REG_LEN;
			const uint8_t *z;

			CHECK(memcmp(r->base + k, was + k, end - k) == 0);
			if (!a)
				break;
			z = memchr(a, 0, FZ_REG_LEN - end);
			k = z ? (size_t)(z - r->allow) : FZ_REG_LEN;
		}
		memcpy(r->snap + FZ_GUARD, r->base, FZ_REG_LEN);
		r->dirty = 1;
	}
}

/* Mark what completed since last time, checking the order as we go. */
static void completions_scan(struct fz *f)
{
	struct rp_host *v = f->v;

	for (; f->nswc_seen < v->nswc; f->nswc_seen++) {
		const struct rdmap_wc *wc = &v->swc[f->nswc_seen];
		struct fz_wr *w;

		/* RFC 5040 §5.5 rule 15: in the order submitted */
		CHECK((unsigned)f->nswc_seen < f->nsq);
		w = &f->sq[f->nswc_seen];
		CHECK(wc->wr_id == w->wr_id && !w->done);
		if (w->read && wc->status == RDMAP_WC_SUCCESS)
			CHECK(wc->byte_len == w->len &&
			      wc->opcode == (w->atomic ? (enum rdmap_wc_opcode)w->atomic : RDMAP_WC_RDMA_READ));
		w->done = 1;
	}
	for (; f->nrwc_seen < v->nrwc; f->nrwc_seen++) {
		const struct rdmap_wc *wc = &v->rwc[f->nrwc_seen];
		struct fz_wr *w;

		CHECK((unsigned)f->nrwc_seen < f->nrq);
		w = &f->rq[f->nrwc_seen];
		CHECK(wc->wr_id == w->wr_id && !w->done);
		CHECK(wc->opcode == RDMAP_WC_RECV || (f->ext && wc->opcode == RDMAP_WC_RECV_RDMA_WITH_IMM));
		if (wc->status == RDMAP_WC_SUCCESS && wc->opcode == RDMAP_WC_RECV)
			CHECK(wc->byte_len <= w->len);
		if (wc->flags & RDMAP_WC_F_WITH_IMM)
			CHECK(f->ext && (wc->opcode == RDMAP_WC_RECV_RDMA_WITH_IMM || wc->byte_len == 0));
		w->done = 1;
	}
}

/* One FPDU the victim sent: framing, CRC, DDP and RDMAP headers. */
static void out_fpdu(struct fz *f, const uint8_t *p, size_t ulen, size_t pad)
{
	const uint8_t *u = p + MPA_HDR_LEN;
	struct ddp_hdr h;
	uint8_t op;
	uint32_t crc = get_le32(u + ulen + pad);

	CHECK(!f->term_seen); /* nothing after a TERMINATE */
	CHECK(ulen >= DDP_TAGGED_HDR_LEN && ulen <= mpa_tx_mulpdu(f->vc));
	for (size_t i = 0; i < pad; i++)
		CHECK(u[ulen + i] == 0);
	if (f->crc)
		CHECK(crc == crc32c(p, MPA_HDR_LEN + ulen + pad));
	else
		CHECK(crc == 0);
	CHECK(ddp_hdr_decode(u, ulen, &h) > 0);
	CHECK(h.dv == DDP_VERSION && (u[0] & DDP_CTRL_RSVD) == 0);
	CHECK(h.ulp_ctrl >> RDMAP_CTRL_RV_SHIFT == RDMAP_VERSION);
	op = h.ulp_ctrl & RDMAP_CTRL_OPCODE;
	CHECK(op < RDMAP_NOPCODES || (f->ext && op <= RDMAP_OP_ATOMIC_RESP));
	CHECK(h.tagged == (op == RDMAP_OP_WRITE || op == RDMAP_OP_READ_RESP));
	if (op == RDMAP_OP_TERMINATE) {
		struct rdmap_term t;

		CHECK(h.last && h.qn == DDP_QN_TERMINATE && h.msn == 1 && h.mo == 0);
		CHECK(rdmap_term_decode(u + DDP_UNTAGGED_HDR_LEN, ulen - DDP_UNTAGGED_HDR_LEN,
					&t) == 0);
		CHECK(!t.siw_layout);
		f->term_seen = 1;
	} else if (op == RDMAP_OP_READ_REQ) {
		CHECK(ulen == DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN && h.qn == DDP_QN_READ_REQ);
	} else if (op == RDMAP_OP_ATOMIC_REQ) {
		CHECK(ulen == DDP_UNTAGGED_HDR_LEN + RDMAP_AREQ_LEN && h.qn == DDP_QN_READ_REQ && h.last);
	} else if (op == RDMAP_OP_ATOMIC_RESP) {
		CHECK(ulen == DDP_UNTAGGED_HDR_LEN + RDMAP_ARESP_LEN && h.qn == DDP_QN_ATOMIC_RESP && h.last);
	} else if (op == RDMAP_OP_IMM || op == RDMAP_OP_IMM_SE) {
		CHECK(ulen == DDP_UNTAGGED_HDR_LEN + RDMAP_IMM_LEN && h.qn == DDP_QN_SEND && h.last);
	} else if (!h.tagged) {
		CHECK(h.qn == DDP_QN_SEND);
	}
	f->out_fpdus++;
}

/* Drain the victim's output and parse it as an FPDU stream. */
static void sink(struct fz *f)
{
	for (;;) {
		size_t n =
			rp_capture(&f->p, f->v, f->pend + f->pend_len, FZ_PEND_CAP - f->pend_len);
		size_t off = 0;

		f->pend_len += n;
		while (f->pend_len - off >= MPA_HDR_LEN) {
			size_t ulen = get_be16(f->pend + off);
			size_t pad = (4 - ((MPA_HDR_LEN + ulen) & 3)) & 3;
			size_t total = MPA_HDR_LEN + ulen + pad + MPA_CRC_LEN;

			if (f->pend_len - off < total)
				break;
			out_fpdu(f, f->pend + off, ulen, pad);
			off += total;
		}
		memmove(f->pend, f->pend + off, f->pend_len - off);
		f->pend_len -= off;
		if (!n)
			break;
	}
}

static struct fz_region *region_by_stag(struct fz *f, uint32_t stag)
{
	uint32_t idx = stag >> 8;

	if (idx < FZ_STAG_BASE || idx >= FZ_STAG_BASE + FZ_NREG)
		return NULL;
	return &f->r[idx - FZ_STAG_BASE];
}

/* The STag the input names @stag (see the top): the real one of a region. */
static uint32_t real_stag(struct fz *f, uint32_t stag)
{
	struct fz_region *r = region_by_stag(f, stag);

	if (!r)
		return stag;
	return r->stag ^ ((stag ^ r->key) & 0xFF);
}

static void map_stag(struct fz *f, uint8_t *stag_p)
{
	put_be32(stag_p, real_stag(f, get_be32(stag_p)));
}

static void relocate(struct fz *f, uint8_t *off_p, uint32_t stag, int from_end)
{
	struct fz_region *r = region_by_stag(f, stag);
	uint64_t base;

	if (!r)
		return;
	base = (uint64_t)(uintptr_t)r->base;
	if (from_end)
		put_be64(off_p, base + FZ_REG_LEN - get_be64(off_p));
	else
		put_be64(off_p, base + get_be64(off_p));
}

/* Frame one ULPDU and feed it to the victim. */
static void inject(struct fz *f, uint8_t kind, const uint8_t *ulpdu, size_t ulen)
{
	static uint8_t buf[MPA_HDR_LEN + 65535 + 3 + MPA_CRC_LEN];
	uint8_t *u = buf + MPA_HDR_LEN;
	size_t pad = (4 - ((MPA_HDR_LEN + ulen) & 3)) & 3;
	uint32_t crc = 0;

	put_be16(buf, (uint16_t)ulen);
	memcpy(u, ulpdu, ulen);
	memset(u + ulen, 0, pad);
	if (ulen >= DDP_TAGGED_HDR_LEN) {
		uint8_t op = u[1] & RDMAP_CTRL_OPCODE;
		uint8_t *src = u + DDP_UNTAGGED_HDR_LEN;

		if (u[0] & DDP_CTRL_T) {
			if (!(kind & 2))
				relocate(f, u + DDP_OFF_TO, get_be32(u + DDP_OFF_STAG), kind & 8);
			map_stag(f, u + DDP_OFF_STAG);
		} else if (op == RDMAP_OP_READ_REQ &&
			   ulen >= DDP_UNTAGGED_HDR_LEN + RDMAP_RREQ_LEN) {
			if (!(kind & 2))
				relocate(f, src + RDMAP_RREQ_OFF_SRC_TO,
					 get_be32(src + RDMAP_RREQ_OFF_SRC_STAG), kind & 8);
			map_stag(f, src + RDMAP_RREQ_OFF_SRC_STAG);
		} else if (op == RDMAP_OP_ATOMIC_REQ && ulen >= DDP_UNTAGGED_HDR_LEN + RDMAP_AREQ_LEN) {
			if (!(kind & 2))
				relocate(f, src + RDMAP_AREQ_OFF_TO, get_be32(src + RDMAP_AREQ_OFF_STAG),
					 kind & 8);
			map_stag(f, src + RDMAP_AREQ_OFF_STAG);
		} else if (op == RDMAP_OP_SEND_INV || op == RDMAP_OP_SEND_SE_INV) {
			map_stag(f, u + DDP_OFF_RSVDULP2);
		}
	}
	if (f->crc)
		crc = crc32c(buf, MPA_HDR_LEN + ulen + pad) ^ ((kind & 1) ? 0x00800000u : 0);
	else if (kind & 1)
		crc = 0xDEADBEEF; /* RFC 5044 §4.4: "may contain any value" */
	put_le32(u + ulen + pad, crc);
	rp_inject(&f->p, f->v, buf, MPA_HDR_LEN + ulen + pad + MPA_CRC_LEN);
}

static struct fz_wr *new_wr(struct fz_wr *tab, unsigned *n)
{
	struct fz_wr *w;

	if (*n == FZ_MAXWR)
		return NULL;
	w = &tab[*n];
	memset(w, 0, sizeof(*w));
	w->wr_id = 0x1000 + *n;
	return w;
}

static void post_recv(struct fz *f, uint8_t arg)
{
	struct fz_region *l = &f->r[arg == 0xFF ? FZ_R_WRITE : FZ_R_LOCAL];
	struct fz_wr *w = new_wr(f->rq, &f->nrq);
	struct rdmap_recv_wr r = {0};
	size_t off = (size_t)(arg & 7) * 256, len = (size_t)32 << ((arg >> 3) & 3);
	int nsge = 1 + (arg >> 5) % 3;

	if (!w)
		return;
	r.wr_id = w->wr_id;
	r.num_sge = nsge;
	for (int k = 0; k < nsge; k++) {
		size_t piece = k == nsge - 1 ? len - (len / nsge) * k : len / nsge;

		r.sge[k].addr = (uint64_t)(uintptr_t)(l->base + off + (len / nsge) * k);
		r.sge[k].length = (uint32_t)piece;
		r.sge[k].lkey = l->mr ? l->mr->stag : 0;
	}
	w->off = off;
	w->len = len;
	w->nsge = nsge;
	memcpy(w->sge, r.sge, sizeof(r.sge));
	if (rdmap_post_recv(&f->v->qp, &r) == 0)
		f->nrq++;
}

/* The standard receives: sizes and SGE layouts of every kind. */
static void post_recv_set(struct fz *f)
{
	static const struct {
		uint16_t off, len;
	} sg[4][3] = {
		{{0, 512}},
		{{512, 100}, {700, 324}},
		{{1024, 1}, {0, 0}, {1100, 436}},
		{{1536, 64}},
	};
	static const int nsge[4] = {1, 2, 3, 1};
	struct fz_region *l = &f->r[FZ_R_LOCAL];

	for (int i = 0; i < 4; i++) {
		struct fz_wr *w = new_wr(f->rq, &f->nrq);
		struct rdmap_recv_wr r = {0};

		if (!w)
			return;
		r.wr_id = w->wr_id;
		r.num_sge = nsge[i];
		for (int k = 0; k < nsge[i]; k++) {
			r.sge[k].length = sg[i][k].len;
			/* a zero-length SGE needs no valid address or key */
			if (sg[i][k].len) {
				r.sge[k].addr = (uint64_t)(uintptr_t)(l->base + sg[i][k].off);
				r.sge[k].lkey = l->mr->stag;
			}
			w->len += sg[i][k].len;
		}
		w->nsge = nsge[i];
		memcpy(w->sge, r.sge, sizeof(r.sge));
		if (rdmap_post_recv(&f->v->qp, &r) == 0)
			f->nrq++;
	}
}

static void post_send(struct fz *f, enum rdmap_wr_opcode op, size_t off, size_t len, unsigned flags,
		      uint32_t rkey)
{
	struct fz_wr *w = new_wr(f->sq, &f->nsq);
	struct fz_region *src = &f->r[op == RDMAP_WR_READ ? FZ_R_LOCAL : FZ_R_SRC];
	struct rdmap_send_wr s = {0};

	if (!w)
		return;
	s.wr_id = w->wr_id;
	s.opcode = op;
	s.flags = RDMAP_WR_SIGNALED | flags;
	if (op != RDMAP_WR_LOCAL_INV) {
		s.num_sge = 1;
		s.sge[0].addr = (uint64_t)(uintptr_t)(src->base + off);
		s.sge[0].length = (uint32_t)len;
		s.sge[0].lkey = src->mr ? src->mr->stag : 0;
	}
	s.rkey = rkey;
	s.remote_addr = 0x100000 + off;
	s.inv_stag = rkey;
	w->read = op == RDMAP_WR_READ;
	w->off = off;
	w->len = len;
	if (rdmap_post_send(&f->v->qp, &s) == 0)
		f->nsq++;
}

/* An RFC 7306 atomic on the peer, its result into FZ_R_LOCAL [3840, 4096),
 * or a Write or Send with Immediate from FZ_R_SRC. */
static void post_ext(struct fz *f, int atomic, uint8_t arg)
{
	struct fz_wr *w = new_wr(f->sq, &f->nsq);
	struct rdmap_send_wr s = {0};
	size_t off = atomic ? 3840 + (size_t)(arg >> 3) * 8 : 0;

	if (!w)
		return;
	s.wr_id = w->wr_id;
	s.flags = RDMAP_WR_SIGNALED | ((arg & 2) ? RDMAP_WR_SOLICITED : 0);
	s.rkey = FZ_PEER_STAG | arg;
	s.remote_addr = 0x100000 + (size_t)arg * 8;
	if (atomic) {
		s.opcode = (arg & 1) ? RDMAP_WR_ATOMIC_CSWAP : RDMAP_WR_ATOMIC_FADD;
		s.num_sge = 1;
		s.sge[0].addr = (uint64_t)(uintptr_t)(f->r[FZ_R_LOCAL].base + off);
		s.sge[0].length = 8;
		s.sge[0].lkey = f->r[FZ_R_LOCAL].mr ? f->r[FZ_R_LOCAL].mr->stag : 0;
		s.compare_add = arg;
		s.swap = ~(uint64_t)arg;
		w->read = 1;
		w->atomic = (arg & 1) ? RDMAP_WC_COMP_SWAP : RDMAP_WC_FETCH_ADD;
		w->off = off;
		w->len = 8;
	} else if (arg & 1) {
		s.opcode = RDMAP_WR_WRITE_IMM;
		s.num_sge = 1;
		s.sge[0].addr = (uint64_t)(uintptr_t)f->r[FZ_R_SRC].base;
		s.sge[0].length = (uint32_t)(arg >> 1) * 5;
		s.sge[0].lkey = f->r[FZ_R_SRC].mr ? f->r[FZ_R_SRC].mr->stag : 0;
		s.imm_data = 0x01020304u * arg;
	} else {
		s.opcode = RDMAP_WR_SEND_IMM;
		s.imm_data = arg;
	}
	if (rdmap_post_send(&f->v->qp, &s) == 0)
		f->nsq++;
}

/* Reads into FZ_R_LOCAL [2048, 4096), a Write and Sends from FZ_R_SRC. */
static void post_send_set(struct fz *f)
{
	post_send(f, RDMAP_WR_READ, 2048, 256, 0, FZ_PEER_STAG | 0x100);
	post_send(f, RDMAP_WR_WRITE, 0, 300, 0, FZ_PEER_STAG | 0x200);
	post_send(f, RDMAP_WR_SEND, 0, 100, 0, 0);
	post_send(f, RDMAP_WR_READ, 2304, 1000, 0, FZ_PEER_STAG | 0x300);
	post_send(f, RDMAP_WR_SEND_INV, 0, 0, RDMAP_WR_SOLICITED, FZ_PEER_STAG | 0x400);
	post_send(f, RDMAP_WR_READ, 3400, 0, 0, FZ_PEER_STAG | 0x500);
}

static void action(struct fz *f, uint8_t a, uint8_t arg)
{
	struct fz_region *r = &f->r[arg % FZ_NREG];

	switch (a % 12) {
	case 0:
		post_recv(f, arg);
		break;
	case 1:
		post_send(f, RDMAP_WR_READ, 2048 + (size_t)(arg & 7) * 128, (size_t)(arg >> 3) * 16,
			  (arg & 0x80) ? RDMAP_WR_FENCE : 0, FZ_PEER_STAG | arg);
		break;
	case 2:
		post_send(f, RDMAP_WR_WRITE, 0, (size_t)arg * 7, 0, FZ_PEER_STAG | arg);
		break;
	case 3:
		post_send(f, (arg & 2) ? RDMAP_WR_SEND_INV : RDMAP_WR_SEND, 0,
			  (arg & 4) ? (size_t)(arg >> 3) * 2 : (size_t)(arg >> 3) * 33,
			  ((arg & 1) ? RDMAP_WR_SOLICITED : 0) | ((arg & 4) ? RDMAP_WR_INLINE : 0),
			  FZ_PEER_STAG | arg);
		break;
	case 4:
		post_send(f, RDMAP_WR_LOCAL_INV, 0, 0, 0, r->stag);
		break;
	case 5:
		if (r->registered) {
			ddp_mr_dereg(&f->v->mem, r->mr);
			r->registered = 0;
			r->mr = NULL;
		}
		break;
	case 6:
		if (r->registered && !r->mr->valid) {
			CHECK(ddp_mr_revalidate(&f->v->mem, r->mr) == 0);
			r->stag = r->mr->stag;
			r->key++;
		}
		break;
	case 7:
		rdmap_qp_close(&f->v->qp);
		break;
	case 8:
		rdmap_qp_modify_error(&f->v->qp);
		break;
	case 9:
		/* the engine saw TCP close: nothing more is received */
		rdmap_qp_conn_failed(&f->v->qp, -ECONNRESET);
		f->v->conn_failed = 1;
		break;
	default:
		post_ext(f, a % 12 == 10, arg);
		break;
	}
}

static void step_begin(struct fz *f, int open[FZ_NREG])
{
	completions_scan(f);
	f->b_nsq = f->nsq;
	f->b_nrq = f->nrq;
	f->b_nswc = f->nswc_seen;
	f->b_nrwc = f->nrwc_seen;
	for (int i = 0; i < FZ_NREG; i++) {
		struct fz_region *r = &f->r[i];

		open[i] = region_open(f, i);
		/* no longer writable: what it holds now must stay */
		if (r->stale && !(open[i] && (fz_access[i] & DDP_ACC_REMOTE_WRITE))) {
			memcpy(r->snap + FZ_GUARD, r->base, FZ_REG_LEN);
			r->stale = 0;
		}
	}
}

static void step_end(struct fz *f, const int open[FZ_NREG], int drain)
{
	if (drain)
		sink(f);
	completions_scan(f);
	regions_check(f, open);
}

static void snap_range(struct fz_snap *s, void *at, size_t len)
{
	if (!len)
		return;
	CHECK(s->n < FZ_SNAP_MAX);
	s->r[s->n].at = at;
	s->r[s->n].len = len;
	s->r[s->n].copy = malloc(len);
	CHECK(s->r[s->n].copy);
	memcpy(s->r[s->n].copy, at, len);
	s->n++;
}

/* *@field must still point where it does now; with @owned, the block it
 * points to (a heap block of the pair) is saved too. */
static void snap_block(struct fz_snap *s, void *field, int owned)
{
	void **fp = field;

	CHECK(s->nown < FZ_SNAP_MAX);
	s->own[s->nown].field = fp;
	s->own[s->nown].was = *fp;
	s->nown++;
	if (owned && *fp)
		snap_range(s, *fp, malloc_usable_size(*fp));
}

static void snap_take(struct fz *f)
{
	struct fz_snap *s = &f->snap;
	struct tp_side *side[2] = {&f->p.mpa.ini, &f->p.mpa.rsp};
	struct rp_host *host[2] = {&f->p.a, &f->p.b};

	/* the regions: put back by snap_put() only if they changed (allow is
	 * scratch, filled before each use) */
	for (int i = 0; i < FZ_NREG; i++) {
		f->r[i].pristine = malloc(FZ_BLK);
		CHECK(f->r[i].pristine);
		memcpy(f->r[i].pristine, f->r[i].block, FZ_BLK);
		CHECK(memcmp(f->r[i].snap, f->r[i].block, FZ_BLK) == 0);
	}
	snap_range(s, &f->p.mpa, sizeof(f->p.mpa));
	for (int i = 0; i < 2; i++) {
		struct mpa_conn *c = &side[i]->c;
		/* the victim's blocks; the other side's are only checked to be
		 * the same (nothing calls into it: it neither sends nor receives) */
		int mine = host[i] == f->v;

		snap_block(s, &c->tx_slots, mine);
		snap_block(s, &c->tx_iov_pool, mine);
		snap_block(s, &c->tx_mk_pool, mine);
		snap_block(s, &c->tx_bounce, mine);
		snap_block(s, &side[i]->payload, mine);
		snap_block(s, &side[i]->hdrs, mine);
		snap_block(s, &side[i]->ulpdu_lens, mine);
	}
	for (int i = 0; i < 2; i++) {
		struct rp_host *h = host[i];
		int mine = h == f->v;

		/* the completion arrays only up to their counts */
		snap_range(s, h, offsetof(struct rp_host, swc));
		snap_range(s, h->swc, (size_t)h->nswc * sizeof(h->swc[0]));
		snap_range(s, h->rwc, (size_t)h->nrwc * sizeof(h->rwc[0]));
		snap_range(s, &h->nswc, sizeof(*h) - offsetof(struct rp_host, nswc));
		snap_block(s, &h->mem.slots, mine);
		snap_block(s, &h->mem.keys, mine);
		snap_block(s, &h->mem.free, mine);
		snap_block(s, &h->qp.sq, mine);
		snap_block(s, &h->qp.rq, mine);
		snap_block(s, &h->qp.srq_cur, mine);
		snap_block(s, &h->qp.orq, mine);
		snap_block(s, &h->qp.irq, mine);
		snap_block(s, &h->qp.inline_buf, mine);
		snap_block(s, &h->qp.srq, 0);
	}
	snap_range(s, &f->v, offsetof(struct fz, sq) - offsetof(struct fz, v));
	snap_range(s, f->sq, f->nsq * sizeof(f->sq[0]));
	snap_range(s, f->rq, f->nrq * sizeof(f->rq[0]));
	snap_range(s, f->pend, f->pend_len);
}

/* Back to the state after set-up: 0, or -1 if a block was replaced. */
static int snap_put(struct fz *f)
{
	struct fz_snap *s = &f->snap;

	for (int i = 0; i < s->nown; i++)
		if (*s->own[i].field != s->own[i].was)
			return -1;
	/* a region not seen changed by the check after the last library
	 * call is as after set-up (block and snap) */
	for (int i = 0; i < FZ_NREG; i++) {
		if (!f->r[i].dirty)
			continue;
		memcpy(f->r[i].block, f->r[i].pristine, FZ_BLK);
		memcpy(f->r[i].snap, f->r[i].pristine, FZ_BLK);
	}
	for (int i = 0; i < s->n; i++)
		memcpy(s->r[i].at, s->r[i].copy, s->r[i].len);
	return 0;
}

static void fz_free(struct fz *f)
{
	rp_destroy(&f->p);
	for (int i = 0; i < FZ_NREG; i++)
		free(f->r[i].pristine);
	regions_free(f);
	for (int i = 0; i < f->snap.n; i++)
		free(f->snap.r[i].copy);
	free(f->pend);
	free(f);
}

/* Set up the pair, its regions and the work of the start for @cfg. */
static struct fz *fz_build(uint8_t cfg)
{
	struct fz *f = malloc(sizeof(*f));
	struct mpa_cfg ic, rc;
	struct rdmap_qp_cfg q = {.max_send_wr = 16,
				 .max_recv_wr = 8,
				 .max_inline = 64,
				 .ird = 4,
				 .ord = 4,
				 .ext = (cfg & 0x20) ? RDMAP_EXT_RFC7306 : 0};
	int open[FZ_NREG];

	CHECK(f);
	memset((uint8_t *)f + offsetof(struct fz, v), 0, sizeof(*f) - offsetof(struct fz, v));
	f->crc = cfg & 1;
	f->ext = !!(cfg & 0x20);
	f->pend = malloc(FZ_PEND_CAP);
	CHECK(f->pend);
	if (cfg & 0x80) {
		q.max_send_wr = 4;
		q.max_recv_wr = 2;
		q.ird = q.ord = 1;
	}
	mpa_cfg_init(&ic, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&rc, MPA_ROLE_RESPONDER);
	ic.crc = rc.crc = f->crc;
	ic.markers = rc.markers = 0;
	ic.ird = ic.ord = rc.ird = rc.ord = q.ird;
	CHECK(rp_init(&f->p, &ic, &rc, &q, cfg) == 0);
	CHECK(f->p.mpa.ini.c.crc_on == f->crc);
	f->v = (cfg & 2) ? &f->p.a : &f->p.b;
	f->vc = (cfg & 2) ? &f->p.mpa.ini.c : &f->p.mpa.rsp.c;
	CHECK(regions_init(f) == 0);

	step_begin(f, open);
	if (!(cfg & 0x40)) {
		post_recv_set(f);
		post_send_set(f);
	}
	step_end(f, open, 1);
	snap_take(f);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[4] = {0, 1, 16, 1024};
	/* one pair per configuration that shapes the set-up: bits 0, 1, 5, 6, 7 */
	static struct fz *sets[256];
	struct fz *f;
	int open[FZ_NREG];
	uint8_t cfg;
	size_t i = 1;

	if (size < 1)
		return 0;
	cfg = data[0];
	if (!sets[cfg & 0xE3])
		sets[cfg & 0xE3] = fz_build(cfg);
	f = sets[cfg & 0xE3];
	f->p.rng = cfg;
	f->p.lend = (cfg & 4) ? 2 : 0; /* 2: lend/ack with the engine's look-ahead */
	f->p.max_chunk = chunks[(cfg >> 3) & 3];

	while (i < size) {
		uint8_t c = data[i++];
		int drain = 1;

		step_begin(f, open);
		if (c & 0x80) {
			action(f, c & 0x7F, i < size ? data[i] : 0);
			i++;
		} else {
			size_t ulen;

			if (size - i < 2)
				break;
			ulen = get_be16(data + i);
			i += 2;
			if (ulen > size - i)
				ulen = size - i;
			if (!f->v->conn_failed)
				inject(f, c, data + i, ulen);
			i += ulen;
			drain = !(c & 4);
		}
		step_end(f, open, drain);
	}

	/* the end: everything posted completes exactly once, in order */
	step_begin(f, open);
	rdmap_qp_modify_error(&f->v->qp);
	step_end(f, open, 1);
	CHECK(f->v->qp.state == RDMAP_QPS_ERROR);
	CHECK((unsigned)f->nswc_seen == f->nsq && (unsigned)f->nrwc_seen == f->nrq);

	/* back to the state after set-up for the next input */
	if (snap_put(f)) {
		fz_free(f);
		sets[cfg & 0xE3] = NULL;
	}
	return 0;
}
