/* SPDX-License-Identifier: MIT */
/*
 * MPA framing through memory: an initiator and a responder (mpa/mpa.h)
 * joined by a staging buffer standing for the TCP connection, one thread
 * doing both ends, so the figure is the per-core cost of MPA on both sides.
 *
 *  transmit: mpa_tx_fpdu() queues an FPDU per ULPDU (a 14-octet header
 *            shaped like a DDP tagged header, the payload referenced in the
 *            source buffer); mpa_tx_pending() is gathered into the "wire"
 *            buffer: the copy the kernel makes on send;
 *  receive:  mpa_rx_lend() says where the next octets go, they are copied
 *            there from the wire (the copy the kernel makes in readv), and
 *            mpa_rx_ack() accounts them; rx_begin places each payload at the
 *            offset its header names in the destination buffer.
 *
 * Every payload octet is therefore copied twice, as between two hosts, and
 * read twice more by the CRC when it is on.  memcpy of the same payload
 * octets, in pieces of one ULPDU payload, is measured alongside as the
 * baseline.  Only the initiator sends: a responder may send no FPDU before
 * it received one (RFC 5044 §7.1.2 rule 4), and one direction is the
 * figure wanted.  At the end the destination must equal the source, or the
 * program fails: a broken path is never reported as a fast one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "byteorder.h"
#include "mpa.h"
#include "memwire.h"

/* The ULPDU header: DDP tagged (T=1, L=1, DV=1), RDMAP Write, STag, TO. */
#define FR_HDR_LEN  14
#define FR_HDR_CTRL 0xC1
#define FR_HDR_RDMA 0x40
#define FR_STAG	    0x00C0FFEEu

#define FR_WIRE_CAP   (256u * 1024) /* octets per gathering send */
#define FR_TX_IOV_MAX 1024	    /* IOV_MAX: iovecs per sendmsg */
#define FR_RX_IOV_MAX 64	    /* iovecs per readv */
#define FR_EMSS_LO    1460	    /* Ethernet, 1500-octet MTU */
#define FR_EMSS_LOOP  65483	    /* loopback: 65536-octet MTU */

struct fr_ctx {
	struct mpa_conn ini;
	struct mpa_conn rsp;
	uint8_t *src;
	uint8_t *dst;
	size_t len;	/* payload octets per pass */
	size_t payload; /* payload octets per FPDU */
	uint8_t *wire;
	struct iovec *tx_iov;
	uint64_t rx_fpdus;
	uint64_t rx_bytes;
	int err; /* first failure, -errno */
	const char *what;
};

static void fr_fail(struct fr_ctx *x, int err, const char *what)
{
	if (!x->err) {
		x->err = err ? err : -EIO;
		x->what = what;
	}
}

static void fr_request(void *arg, const struct mpa_rr *req)
{
	struct fr_ctx *x = arg;
	int ret;

	(void)req;
	ret = mpa_conn_accept(&x->rsp, NULL, 0, 16, 16, 0);
	if (ret)
		fr_fail(x, ret, "mpa_conn_accept");
}

static void fr_reply(void *arg, const struct mpa_rr *rep)
{
	struct fr_ctx *x = arg;

	if (rep->reject)
		fr_fail(x, -ECONNREFUSED, "the responder rejected");
}

/* DDP-style tagged placement: the header names the offset; check it. */
static int fr_rx_begin(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		       unsigned flags, struct iovec *dst, int *ndst)
{
	struct fr_ctx *x = arg;
	uint64_t to = get_be64(hdr + 6);
	size_t n = ulpdu_len - hdr_len;

	(void)flags;
	if (hdr_len != FR_HDR_LEN || hdr[0] != FR_HDR_CTRL || hdr[1] != FR_HDR_RDMA ||
	    get_be32(hdr + 2) != FR_STAG || to > x->len || n > x->len - to)
		return -EINVAL;
	dst[0].iov_base = x->dst + to;
	dst[0].iov_len = n;
	*ndst = 1;
	return 0;
}

static int fr_rx_end(void *arg, const uint8_t *hdr, size_t hdr_len, size_t ulpdu_len,
		     unsigned flags)
{
	struct fr_ctx *x = arg;

	(void)hdr;
	(void)flags;
	x->rx_fpdus++;
	x->rx_bytes += ulpdu_len - hdr_len;
	return 0;
}

static const struct mpa_ops fr_ops = {
	.request = fr_request,
	.reply = fr_reply,
	.rx_begin = fr_rx_begin,
	.rx_end = fr_rx_end,
};

static int fr_setup(struct fr_ctx *x, uint32_t emss, int crc, int markers)
{
	struct mpa_cfg ci, cr;
	int ret;

	mpa_cfg_init(&ci, MPA_ROLE_INITIATOR);
	mpa_cfg_init(&cr, MPA_ROLE_RESPONDER);
	ci.emss = cr.emss = emss;
	/* Either side's C bit turns CRCs on (RFC 5044 §7.1.1): both say off. */
	ci.crc = cr.crc = crc;
	/* M asks for markers toward the side that sets it: the receiver. */
	cr.markers = markers;
	ci.rx_hdr_min = cr.rx_hdr_min = FR_HDR_LEN;
	x->rx_fpdus = x->rx_bytes = 0;
	ret = mpa_conn_init(&x->ini, &ci, &fr_ops, x);
	if (!ret)
		ret = mpa_conn_init(&x->rsp, &cr, &fr_ops, x);
	if (!ret)
		ret = mpa_conn_start(&x->rsp, NULL, 0, 0);
	if (!ret)
		ret = mpa_conn_start(&x->ini, NULL, 0, 0);
	for (int round = 0; !ret && round < 4; round++) {
		int a = mw_move_hs(&x->ini, &x->rsp, x->wire, FR_WIRE_CAP);
		int b = a < 0 ? a : mw_move_hs(&x->rsp, &x->ini, x->wire, FR_WIRE_CAP);

		ret = a < 0 ? a : b < 0 ? b : 0;
		if (!ret && x->ini.state == MPA_S_FULL && x->rsp.state == MPA_S_FULL)
			break;
	}
	if (ret || x->err) {
		fprintf(stderr, "uiw-bench-mpa_frame: handshake failed: %s (%s; %s / %s)\n",
			strerror(-(ret ? ret : x->err)), x->what ? x->what : "mpa",
			mpa_state_name(x->ini.state), mpa_state_name(x->rsp.state));
		return -1;
	}
	/* The variant must be the one reported. */
	if (x->ini.state != MPA_S_FULL || x->rsp.state != MPA_S_FULL || x->ini.crc_on != crc ||
	    x->rsp.crc_on != crc || x->ini.tx_markers != markers || x->rsp.rx_markers != markers ||
	    mpa_tx_mulpdu(&x->ini) != mpa_mulpdu(emss, markers)) {
		fprintf(stderr,
			"uiw-bench-mpa_frame: negotiated %s/%s crc %d/%d markers %d/%d "
			"MULPDU %u, wanted crc %d markers %d MULPDU %u\n",
			mpa_state_name(x->ini.state), mpa_state_name(x->rsp.state), x->ini.crc_on,
			x->rsp.crc_on, x->ini.tx_markers, x->rsp.rx_markers, mpa_tx_mulpdu(&x->ini),
			crc, markers, mpa_mulpdu(emss, markers));
		return -1;
	}
	x->payload = mpa_tx_mulpdu(&x->ini) - FR_HDR_LEN;
	return 0;
}

/* The receive side of one "readv": lend, copy, ack, until @len is in. */
static void fr_receive(struct fr_ctx *x, const uint8_t *in, size_t len)
{
	ssize_t r = mw_lend_feed(&x->rsp, in, len);

	if (r < 0)
		fr_fail(x, (int)r, "mpa_rx_lend/ack");
	else if ((size_t)r != len)
		fr_fail(x, -EPROTO, "mpa_rx_lend: nothing lent");
}

/* One pass: all of src, FPDU by FPDU, into dst. */
static void fr_pass(void *arg)
{
	struct fr_ctx *x = arg;
	uint64_t want = x->rx_bytes + x->len;
	size_t sent = 0;

	while (x->rx_bytes < want && !x->err) {
		size_t wired;

		while (sent < x->len && mpa_tx_space(&x->ini)) {
			uint8_t hdr[FR_HDR_LEN];
			struct iovec pl;
			int ret;

			pl.iov_base = x->src + sent;
			pl.iov_len = x->len - sent < x->payload ? x->len - sent : x->payload;
			hdr[0] = FR_HDR_CTRL;
			hdr[1] = FR_HDR_RDMA;
			put_be32(hdr + 2, FR_STAG);
			put_be64(hdr + 6, sent);
			ret = mpa_tx_fpdu(&x->ini, hdr, FR_HDR_LEN, &pl, 1, NULL);
			if (ret) {
				fr_fail(x, ret, "mpa_tx_fpdu");
				return;
			}
			sent += pl.iov_len;
		}
		/* The send: gather what fits into the wire. */
		wired = mw_gather(&x->ini, x->wire, FR_WIRE_CAP, x->tx_iov, FR_TX_IOV_MAX);
		if (!wired) {
			fr_fail(x, -EPIPE, "nothing to send before the pass was received");
			return;
		}
		fr_receive(x, x->wire, wired);
	}
}

struct copy_arg {
	struct fr_ctx *x;
};

/* The baseline: the same payload octets, one memcpy per ULPDU payload. */
static void copy_pass(void *arg)
{
	struct fr_ctx *x = ((struct copy_arg *)arg)->x;

	for (size_t off = 0; off < x->len; off += x->payload) {
		size_t n = x->len - off < x->payload ? x->len - off : x->payload;

		memcpy(x->dst + off, x->src + off, n);
	}
	bench_clobber(x->dst);
}

/* One clean pass over fresh data; 0 if every octet arrived where it should. */
static int fr_verify(struct fr_ctx *x, uint64_t seed)
{
	uint64_t fpdus = x->rx_fpdus, bytes = x->rx_bytes;
	uint64_t want_fpdus = (x->len + x->payload - 1) / x->payload;

	bench_fill(x->src, x->len, seed);
	memset(x->dst, 0, x->len);
	fr_pass(x);
	if (x->err)
		return -1;
	if (x->rx_fpdus - fpdus != want_fpdus || x->rx_bytes - bytes != x->len) {
		fprintf(stderr,
			"uiw-bench-mpa_frame: %llu FPDUs / %llu octets received, "
			"want %llu / %zu\n",
			(unsigned long long)(x->rx_fpdus - fpdus),
			(unsigned long long)(x->rx_bytes - bytes), (unsigned long long)want_fpdus,
			x->len);
		return -1;
	}
	if (memcmp(x->dst, x->src, x->len)) {
		size_t i = 0;

		while (x->dst[i] == x->src[i])
			i++;
		fprintf(stderr,
			"uiw-bench-mpa_frame: destination differs from source at "
			"octet %zu\n",
			i);
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uiw-bench-mpa_frame [--help] [--quick]\n"
		"MPA framing through memory (initiator -> responder), GB/s of payload per core\n"
		"for transmit + receive, beside memcpy of the same octets, for EMSS 1460 and\n"
		"65483 (loopback), CRC off/on, markers off/on.\n"
		"  --help, -h     this text\n"
		"  --quick        a short run (as make demo does); figures are indicative only\n");
}

int main(int argc, char **argv)
{
	static const uint32_t emss[] = {FR_EMSS_LO, FR_EMSS_LOOP};
	struct bench_args a = {0};
	struct bench_timing t = {.run_ms = 100, .runs = 5};
	struct fr_ctx x;
	struct copy_arg ca = {&x};
	uint8_t layer, etype, ecode;
	char term[96] = "";
	int status = 0;

	for (int i = 1; i < argc; i++) {
		int r = bench_arg_common(&a, argc, argv, &i);

		if (r < 0)
			return 2;
		if (a.nsizes) {
			/* the sizes here follow from the EMSS (RFC 5044 §4.5) */
			fprintf(stderr, "uiw-bench-mpa_frame: --sizes is not used: the ULPDU sizes "
					"are the MULPDUs of EMSS 1460 and 65483\n");
			return 2;
		}
		if (r == 0) {
			fprintf(stderr, "uiw-bench-mpa_frame: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	memset(&x, 0, sizeof(x));
	x.len = 4u << 20;
	if (a.quick) {
		t.run_ms = 10;
		t.runs = 2;
		x.len = 1u << 20;
	}
	x.src = bench_alloc(x.len, 0x5eed);
	x.dst = bench_alloc(x.len, 0);
	x.wire = bench_alloc(FR_WIRE_CAP, 0);
	x.tx_iov = calloc(FR_TX_IOV_MAX, sizeof(*x.tx_iov));
	if (!x.src || !x.dst || !x.wire || !x.tx_iov) {
		fprintf(stderr, "uiw-bench-mpa_frame: out of memory\n");
		return 1;
	}

	printf("uiwarp MPA framing through memory, initiator -> responder, one thread doing both "
	       "ends:\nGB/s of payload per core (1 GB = 10^9 octets), best of %u runs of >= %u ms, "
	       "%zu MiB per pass.\n"
	       "tx: mpa_tx_fpdu + mpa_tx_pending gathered into a %u KiB wire buffer (the send "
	       "copy);\nrx: mpa_rx_lend + memcpy + mpa_rx_ack (readv), payload placed by "
	       "rx_begin.\nmemcpy: the same payload octets copied once, one call per ULPDU "
	       "payload, measured alongside.\nThe framed path copies each octet twice, so "
	       "0.50 of memcpy is the bound without CRC.%s\n\n",
	       t.runs, t.run_ms, x.len >> 20, FR_WIRE_CAP >> 10,
	       a.quick ? "\n(--quick: indicative only)" : "");
	printf("%6s %6s %4s %7s %9s %8s %8s %6s\n", "EMSS", "ULPDU", "CRC", "markers", "MFPDU/s",
	       "GB/s", "memcpy", "ratio");
	fflush(stdout);

	for (size_t e = 0; e < sizeof(emss) / sizeof(emss[0]); e++) {
		for (int crc = 0; crc <= 1; crc++) {
			for (int markers = 0; markers <= 1; markers++) {
				double g, m;

				if (fr_setup(&x, emss[e], crc, markers)) {
					status = 1;
					goto out_destroy;
				}
				/* correct before timing, and still correct after */
				if (fr_verify(&x,
					      1 + e * 4 + (unsigned)crc * 2 + (unsigned)markers))
					goto out_broken;
				g = bench_gbps(fr_pass, &x, x.len, &t);
				if (x.err)
					goto out_broken;
				m = bench_gbps(copy_pass, &ca, x.len, &t);
				if (fr_verify(&x, 100 + e))
					goto out_broken;
				printf("%6u %6u %4s %7s %9.3f %8.2f %8.2f %6.2f\n", emss[e],
				       mpa_tx_mulpdu(&x.ini), crc ? "on" : "off",
				       markers ? "on" : "off",
				       g * 1e9 / (double)x.len *
					       (double)((x.len + x.payload - 1) / x.payload) / 1e6,
				       g, m, g / m);
				fflush(stdout);
				mpa_conn_destroy(&x.ini);
				mpa_conn_destroy(&x.rsp);
			}
		}
	}
	goto out_free;

out_broken:
	if (mpa_conn_term(&x.rsp, &layer, &etype, &ecode))
		snprintf(term, sizeof(term), "; responder TERMINATE: %s", mpa_ecode_name(ecode));
	fprintf(stderr,
		"uiw-bench-mpa_frame: the framed path is broken%s%s%s%s (initiator %s, "
		"responder %s%s): no figure reported\n",
		x.err ? ": " : "", x.err ? strerror(-x.err) : "", x.what ? " in " : "",
		x.what ? x.what : "", mpa_state_name(x.ini.state), mpa_state_name(x.rsp.state),
		term);
	status = 1;
out_destroy:
	mpa_conn_destroy(&x.ini);
	mpa_conn_destroy(&x.rsp);
out_free:
	free(x.tx_iov);
	free(x.wire);
	free(x.dst);
	free(x.src);
	return status;
}
