/*
 * mpa_frame: frame the MPA streams of a capture independently of tshark.
 *
 * The conformance cases check every capture with tshark's MPA dissector.
 * That dissector frames FPDUs segment by segment and can lose the FPDU
 * boundary (it once read one FPDU's zero-filled payload as 4092 empty
 * FPDUs), which made a clean capture fail.  This program reassembles each
 * TCP direction by sequence number and frames it from the first octet:
 * the MPA Request or Reply (RFC 5044 section 7.1), then FPDUs (section 4),
 * each CRC32C computed here with its own table, not the library's code.
 *
 * Markers (RFC 5044 section 5) are not removed: a stream whose connection
 * negotiated them is reported as "markers, not framed".
 *
 * Output: one line per direction, then a summary line of key=value pairs
 * (see usage()).  Exit 0 when every octet of every stream is in a frame,
 * every negotiated CRC is good and no ULPDU is shorter than a DDP header;
 * 1 otherwise; 2 on a usage or file error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIRS    512
#define DDP_MIN_HDR 14 /* a tagged DDP header; an untagged one is 18 */

static const char *prog = "mpa_frame";

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--quiet] PCAP\n"
		"Reassembles every TCP direction of a classic pcap file (Ethernet, Linux\n"
		"cooked v1/v2, raw IP or loopback; IPv4 and IPv6) and frames it as MPA\n"
		"(RFC 5044): Request/Reply frame, then FPDUs with their CRC32C checked when\n"
		"either side set C.  Prints one line per direction (unless --quiet), then\n"
		"  mpa_frame: streams=N mpa=N fpdus=N crc=on|off|mixed crc_good=N crc_bad=N\n"
		"  short=N leftover=N nonmpa=N gaps=N differ=N markers=N\n"
		"short: ULPDUs under %d octets; leftover: octets after the last whole frame;\n"
		"nonmpa: octets of streams that do not start with an MPA frame; gaps:\n"
		"octets missing from the capture (framing stops at the first); differ: retransmitted octets that differ\n"
		"from the first copy; markers: streams not framed because of markers.\n"
		"Exit 0 when all of crc_bad, short, leftover, nonmpa, gaps, differ and\n"
		"markers are 0, 1 otherwise, 2 on a usage or file error.\n",
		prog, DDP_MIN_HDR);
}

/* CRC32C (Castagnoli, reflected polynomial 0x82F63B78) */
static uint32_t crc_table[256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	while (n--)
		c = crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
	return c ^ 0xFFFFFFFFu;
}

struct dir {
	uint8_t src[16], dst[16];
	int family;
	uint16_t sport, dport;
	bool have_base, syn;
	uint32_t base;	      /* sequence number of stream octet 0 */
	uint8_t *data, *have; /* stream octets, and which were captured */
	size_t cap, len;
	uint64_t differ;
	/* framing results */
	int kind; /* 0 not MPA, 1 Request, 2 Reply */
	uint8_t flags, rev;
	uint16_t pdlen;
	uint64_t fpdus, good, bad, shortpdu, leftover, gap, nonmpa;
	uint64_t ops[16];
	bool markers;
};

static struct dir dirs[MAX_DIRS];
static int ndirs;

static struct dir *find_dir(int family, const uint8_t *src, const uint8_t *dst, uint16_t sport,
			    uint16_t dport, bool create)
{
	size_t alen = family == 4 ? 4 : 16;
	for (int i = 0; i < ndirs; i++) {
		struct dir *d = &dirs[i];
		if (d->family == family && d->sport == sport && d->dport == dport &&
		    !memcmp(d->src, src, alen) && !memcmp(d->dst, dst, alen))
			return d;
	}
	if (!create)
		return NULL;
	if (ndirs == MAX_DIRS) {
		fprintf(stderr, "%s: more than %d TCP directions in the capture\n", prog, MAX_DIRS);
		exit(2);
	}
	struct dir *d = &dirs[ndirs++];
	d->family = family;
	memcpy(d->src, src, alen);
	memcpy(d->dst, dst, alen);
	d->sport = sport;
	d->dport = dport;
	return d;
}

static void dir_put(struct dir *d, size_t off, const uint8_t *p, size_t n)
{
	if (off + n > d->cap) {
		size_t cap = d->cap ? d->cap : 65536;
		while (cap < off + n)
			cap *= 2;
		d->data = realloc(d->data, cap);
		d->have = realloc(d->have, cap);
		if (!d->data || !d->have) {
			fprintf(stderr, "%s: out of memory\n", prog);
			exit(2);
		}
		memset(d->have + d->cap, 0, cap - d->cap);
		d->cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		if (d->have[off + i]) {
			if (d->data[off + i] != p[i])
				d->differ++;
		} else {
			d->data[off + i] = p[i];
			d->have[off + i] = 1;
		}
	}
	if (off + n > d->len)
		d->len = off + n;
}

static void tcp_segment(int family, const uint8_t *src, const uint8_t *dst, const uint8_t *t,
			size_t n)
{
	if (n < 20)
		return;
	size_t hl = (size_t)(t[12] >> 4) * 4;
	if (hl < 20 || hl > n)
		return;
	uint16_t sport = (uint16_t)(t[0] << 8 | t[1]), dport = (uint16_t)(t[2] << 8 | t[3]);
	uint32_t seq = (uint32_t)t[4] << 24 | (uint32_t)t[5] << 16 | (uint32_t)t[6] << 8 | t[7];
	uint8_t fl = t[13];
	size_t plen = n - hl;
	struct dir *d = find_dir(family, src, dst, sport, dport, true);
	if (fl & 0x02) { /* SYN: the stream starts after it */
		d->base = seq + 1;
		d->have_base = d->syn = true;
		return;
	}
	if (!plen)
		return;
	if (!d->have_base) { /* capture began mid-connection */
		d->base = seq;
		d->have_base = true;
	}
	uint32_t rel = seq - d->base;
	if (rel > 0x80000000u) /* before the start: only a stale retransmission */
		return;
	dir_put(d, rel, t + hl, plen);
}

static void ip_packet(const uint8_t *p, size_t n)
{
	if (n < 1)
		return;
	int v = p[0] >> 4;
	if (v == 4 && n >= 20) {
		size_t ihl = (size_t)(p[0] & 15) * 4;
		size_t tot = (size_t)(p[2] << 8 | p[3]);
		if (ihl < 20 || tot < ihl || tot > n || p[9] != 6)
			return;
		if ((p[6] & 0x3F) || p[7]) /* a fragment: never seen with TCP here */
			return;
		tcp_segment(4, p + 12, p + 16, p + ihl, tot - ihl);
	} else if (v == 6 && n >= 40) {
		size_t plen = (size_t)(p[4] << 8 | p[5]);
		if (p[6] != 6 || 40 + plen > n)
			return;
		tcp_segment(6, p + 8, p + 24, p + 40, plen);
	}
}

static void link_frame(uint32_t linktype, const uint8_t *p, size_t n)
{
	uint16_t et;
	switch (linktype) {
	case 1: /* Ethernet */
		if (n < 14)
			return;
		et = (uint16_t)(p[12] << 8 | p[13]);
		p += 14;
		n -= 14;
		while ((et == 0x8100 || et == 0x88a8) && n >= 4) {
			et = (uint16_t)(p[2] << 8 | p[3]);
			p += 4;
			n -= 4;
		}
		if (et == 0x0800 || et == 0x86dd)
			ip_packet(p, n);
		return;
	case 113: /* Linux cooked v1 */
		if (n >= 16)
			ip_packet(p + 16, n - 16);
		return;
	case 276: /* Linux cooked v2 */
		if (n >= 20)
			ip_packet(p + 20, n - 20);
		return;
	case 101: /* raw IP */
	case 12:
	case 14:
		ip_packet(p, n);
		return;
	case 0: /* BSD loopback */
	case 108:
		if (n >= 4)
			ip_packet(p + 4, n - 4);
		return;
	default:
		fprintf(stderr, "%s: link type %" PRIu32 " is not supported\n", prog, linktype);
		exit(2);
	}
}

static uint32_t rd32(const uint8_t *b, bool swap)
{
	uint32_t v;
	memcpy(&v, b, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static void read_pcap(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		exit(2);
	}
	uint8_t gh[24];
	if (fread(gh, 1, 24, f) != 24) {
		fprintf(stderr, "%s: %s: not a pcap file (shorter than its header)\n", prog, path);
		exit(2);
	}
	uint32_t magic;
	memcpy(&magic, gh, 4);
	bool swap;
	if (magic == 0xa1b2c3d4u || magic == 0xa1b23c4du)
		swap = false;
	else if (magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u)
		swap = true;
	else {
		fprintf(stderr,
			"%s: %s: not a classic pcap file (magic %08" PRIx32
			"; pcapng is not read)\n",
			prog, path, magic);
		exit(2);
	}
	uint32_t linktype = rd32(gh + 20, swap) & 0x0FFFFFFF;
	uint8_t rh[16];
	size_t bufcap = 0;
	uint8_t *buf = NULL;
	while (fread(rh, 1, 16, f) == 16) {
		uint32_t incl = rd32(rh + 8, swap), orig = rd32(rh + 12, swap);
		if (incl > (1u << 26)) {
			fprintf(stderr, "%s: %s: a record of %" PRIu32 " octets: corrupt file\n",
				prog, path, incl);
			exit(2);
		}
		if (incl > bufcap) {
			bufcap = incl;
			buf = realloc(buf, bufcap);
			if (!buf) {
				fprintf(stderr, "%s: out of memory\n", prog);
				exit(2);
			}
		}
		if (fread(buf, 1, incl, f) != incl)
			break; /* a capture cut short by its writer: the last record is partial */
		/* a packet cut by the snapshot length (incl < orig) fails
		 * ip_packet's length checks and so shows as a gap */
		(void)orig;
		link_frame(linktype, buf, incl);
	}
	free(buf);
	fclose(f);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* the MPA Request/Reply frame at the start of a stream: 1 Request, 2 Reply */
static int mpa_kind(const struct dir *d)
{
	if (d->len < 20 || !d->have_base)
		return 0;
	for (int i = 0; i < 20; i++)
		if (!d->have[i])
			return 0;
	if (!memcmp(d->data, "MPA ID Req Frame", 16))
		return 1;
	if (!memcmp(d->data, "MPA ID Rep Frame", 16))
		return 2;
	return 0;
}

static struct dir *reverse(const struct dir *d)
{
	return find_dir(d->family, d->dst, d->src, d->dport, d->sport, false);
}

/* frames one direction; crc: CRCs in use on the connection */
static void frame_dir(struct dir *d, bool crc)
{
	size_t off = 20 + d->pdlen, end = d->len;
	bool gap = false;
	/* the first missing octet ends what can be framed; a frame cut by
	 * it is the capture's loss, not octets outside a frame */
	for (size_t i = 0; i < end; i++)
		if (!d->have[i]) {
			for (size_t j = i; j < end; j++)
				d->gap += !d->have[j];
			end = i;
			gap = true;
			break;
		}
	if (off > end) {
		d->leftover = gap ? 0 : end;
		return;
	}
	while (off + 2 <= end) {
		uint16_t ulen = be16(d->data + off);
		size_t body = 2 + (size_t)ulen, pad = (4 - body % 4) % 4, total = body + pad + 4;
		if (off + total > end)
			break;
		d->fpdus++;
		if (ulen < DDP_MIN_HDR)
			d->shortpdu++;
		else
			d->ops[d->data[off + 3] & 15]++;
		if (crc) {
			/* the CRC goes on the wire in the byte order of
			 * RFC 3385's iSCSI digest: least significant octet
			 * first */
			const uint8_t *w = d->data + off + body + pad;
			uint32_t want = (uint32_t)w[0] | (uint32_t)w[1] << 8 |
					(uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
			if (crc32c(d->data + off, body + pad) == want)
				d->good++;
			else
				d->bad++;
		}
		off += total;
	}
	d->leftover = gap ? 0 : end - off;
}

static void addr_str(const struct dir *d, const uint8_t *a, uint16_t port, char *out, size_t n)
{
	char s[INET6_ADDRSTRLEN];
	inet_ntop(d->family == 4 ? AF_INET : AF_INET6, a, s, sizeof(s));
	snprintf(out, n, d->family == 4 ? "%s:%u" : "[%s]:%u", s, port);
}

int main(int argc, char **argv)
{
	bool quiet = false;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			quiet = true;
		else if (argv[i][0] == '-' || path) {
			usage(stderr);
			return 2;
		} else
			path = argv[i];
	}
	if (!path) {
		usage(stderr);
		return 2;
	}
	crc_init();
	read_pcap(path);

	for (int i = 0; i < ndirs; i++) {
		struct dir *d = &dirs[i];
		d->kind = mpa_kind(d);
		if (d->kind) {
			d->flags = d->data[16];
			d->rev = d->data[17];
			d->pdlen = be16(d->data + 18);
		}
	}
	uint64_t streams = 0, mpa = 0, fpdus = 0, good = 0, bad = 0, shortp = 0, left = 0,
		 nonmpa = 0, gaps = 0, differ = 0, markers = 0;
	int crc_on = 0, crc_off = 0;
	for (int i = 0; i < ndirs; i++) {
		struct dir *d = &dirs[i], *r = reverse(d);
		if (!d->len)
			continue;
		streams++;
		differ += d->differ;
		if (!d->kind) {
			d->nonmpa = d->len;
			nonmpa += d->len;
		} else {
			/* RFC 5044 section 7.1.2: CRCs are used both ways when
			 * either side set C; markers are asked for per
			 * direction (M), and any of them stops the framing */
			uint8_t rf = r && r->kind ? r->flags : 0;
			bool crc = ((d->flags | rf) & 0x40) != 0;
			mpa++;
			if ((d->flags | rf) & 0x80) {
				d->markers = true;
				markers++;
			} else {
				frame_dir(d, crc);
				crc ? crc_on++ : crc_off++;
			}
			fpdus += d->fpdus;
			good += d->good;
			bad += d->bad;
			shortp += d->shortpdu;
			left += d->leftover;
			gaps += d->gap;
		}
		if (!quiet) {
			char a[64], b[64];
			addr_str(d, d->src, d->sport, a, sizeof(a));
			addr_str(d, d->dst, d->dport, b, sizeof(b));
			printf("%s -> %s: %zu octets%s", a, b, d->len,
			       d->syn ? "" : " (no SYN captured)");
			if (!d->kind)
				printf(", not an MPA stream\n");
			else if (d->markers)
				printf(", MPA %s rev %u flags %02x, markers, not framed\n",
				       d->kind == 1 ? "Request" : "Reply", d->rev, d->flags);
			else {
				printf(", MPA %s rev %u flags %02x pd %u; %" PRIu64 " FPDUs",
				       d->kind == 1 ? "Request" : "Reply", d->rev, d->flags,
				       d->pdlen, d->fpdus);
				if (d->good || d->bad)
					printf(", CRC good %" PRIu64 " bad %" PRIu64, d->good,
					       d->bad);
				printf(", short %" PRIu64 ", left over %" PRIu64
				       ", missing %" PRIu64 ", retransmitted differently %" PRIu64,
				       d->shortpdu, d->leftover, d->gap, d->differ);
				printf("; opcodes");
				for (int k = 0; k < 16; k++)
					if (d->ops[k])
						printf(" %d:%" PRIu64, k, d->ops[k]);
				printf("\n");
			}
		}
	}
	printf("mpa_frame: streams=%" PRIu64 " mpa=%" PRIu64 " fpdus=%" PRIu64
	       " crc=%s crc_good=%" PRIu64 " crc_bad=%" PRIu64 " short=%" PRIu64
	       " leftover=%" PRIu64 " nonmpa=%" PRIu64 " gaps=%" PRIu64 " differ=%" PRIu64
	       " markers=%" PRIu64 "\n",
	       streams, mpa, fpdus,
	       crc_on && crc_off ? "mixed"
	       : crc_on		 ? "on"
				 : "off",
	       good, bad, shortp, left, nonmpa, gaps, differ, markers);
	for (int i = 0; i < ndirs; i++) {
		free(dirs[i].data);
		free(dirs[i].have);
	}
	return bad || shortp || left || nonmpa || gaps || differ || markers ? 1 : 0;
}
