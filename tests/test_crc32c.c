/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (common/crc32c.h): the known answers of RFC 3720 B.4 for every
 * implementation, agreement of all implementations with an independent
 * bit-at-a-time reference at every length and alignment that matters to the
 * SSE4.2 block structure, streaming in pieces and over iovecs, the
 * zero-shift used to combine pieces, run-time selection, and the
 * UIW_CRC32C_IMPL override (checked in a child process, since the selection
 * is made once per process).
 */
#include "tests.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"

extern char **environ;

#define POLY_REFLECTED 0x82F63B78u

/*
 * The reference: one bit at a time, straight from the definition, sharing
 * no table or code with crc32c.c.  It works on the raw register, as
 * crc32c_update() does.
 */
static uint32_t ref_update(uint32_t reg, const uint8_t *p, size_t len)
{
	while (len--) {
		reg ^= *p++;
		for (int k = 0; k < 8; k++)
			reg = (reg >> 1) ^ (POLY_REFLECTED & (0u - (reg & 1)));
	}
	return reg;
}

static uint32_t with(enum crc32c_impl impl, const void *buf, size_t len)
{
	return crc32c_final(crc32c_update_with(impl, crc32c_init(), buf, len));
}

static const char *iname(int impl)
{
	return crc32c_impl_name((enum crc32c_impl)impl);
}

/*
 * The automatic choice when UIW_CRC32C_IMPL is unset: ISA-L when built in,
 * else the SSE4.2 path when the CPU has it, else the table (crc32c.h:
 * "the best available one").
 */
static enum crc32c_impl auto_choice(void)
{
	if (crc32c_available(CRC32C_ISAL))
		return CRC32C_ISAL;
	if (crc32c_available(CRC32C_SSE42))
		return CRC32C_SSE42;
	return CRC32C_TABLE;
}

/* Known answers: RFC 3720 B.4 (iSCSI), which RFC 5044 §4.4 refers to. */
struct kat {
	const char *name;
	uint8_t data[32];
	size_t len;
	uint32_t crc;
};

static void kat_build(struct kat *k)
{
	memset(k, 0, 6 * sizeof(*k));
	k[0].name = "32 x 00";
	k[0].len = 32;
	k[0].crc = 0x8A9136AAu;
	k[1].name = "32 x FF";
	memset(k[1].data, 0xFF, 32);
	k[1].len = 32;
	k[1].crc = 0x62A8AB43u;
	k[2].name = "00..1F";
	k[3].name = "1F..00";
	for (int i = 0; i < 32; i++) {
		k[2].data[i] = (uint8_t)i;
		k[3].data[i] = (uint8_t)(31 - i);
	}
	k[2].len = k[3].len = 32;
	k[2].crc = 0x46DD794Eu;
	k[3].crc = 0x113FDB5Cu;
	k[4].name = "\"123456789\"";
	memcpy(k[4].data, "123456789", 9);
	k[4].len = 9;
	k[4].crc = 0xE3069283u;
	k[5].name = "empty";
	k[5].len = 0;
	k[5].crc = 0;
}
#define NKAT 6

/*
 * Copy @len octets of @src to a fresh allocation at offset @align mod 64,
 * ending exactly at the end of the allocation, so that an overread by any
 * instrumented implementation trips AddressSanitizer.  Free *@base after.
 */
static const uint8_t *place(void **base, const uint8_t *src, size_t len, unsigned align)
{
	uint8_t *p;

	ck_assert_int_eq(posix_memalign(base, 64, align + len ? align + len : 1), 0);
	p = (uint8_t *)*base + align;
	if (len)
		memcpy(p, src, len);
	return p;
}

START_TEST(impl_availability)
{
	/* The table is portable; the others follow the build and the CPU. */
	ck_assert_int_eq(crc32c_available(CRC32C_TABLE), 1);
#if defined(__x86_64__)
	ck_assert_int_eq(crc32c_available(CRC32C_SSE42), __builtin_cpu_supports("sse4.2") ? 1 : 0);
#else
	ck_assert_int_eq(crc32c_available(CRC32C_SSE42), 0);
#endif
#ifdef UIW_HAVE_ISAL
	ck_assert_int_eq(crc32c_available(CRC32C_ISAL), 1);
#else
	ck_assert_int_eq(crc32c_available(CRC32C_ISAL), 0);
#endif
	ck_assert_int_eq(crc32c_available(CRC32C_NIMPL), 0);
	ck_assert_int_eq(crc32c_available((enum crc32c_impl)77), 0);
	ck_assert_str_eq(crc32c_impl_name(CRC32C_TABLE), "table");
	ck_assert_str_eq(crc32c_impl_name(CRC32C_SSE42), "sse42");
	ck_assert_str_eq(crc32c_impl_name(CRC32C_ISAL), "isal");
	ck_assert_str_eq(crc32c_impl_name(CRC32C_NIMPL), "unknown");
}
END_TEST

START_TEST(kat_reference)
{
	struct kat k[NKAT];

	/* The test's own reference must agree with the standard first. */
	kat_build(k);
	for (int i = 0; i < NKAT; i++)
		ck_assert_msg(~ref_update(~0u, k[i].data, k[i].len) == k[i].crc, "reference: %s",
			      k[i].name);
}
END_TEST

/* Loop test: _i is the implementation. */
START_TEST(kat_impl)
{
	enum crc32c_impl impl = (enum crc32c_impl)_i;
	struct kat k[NKAT];

	if (!crc32c_available(impl))
		return;
	kat_build(k);
	for (int i = 0; i < NKAT; i++) {
		uint32_t s = crc32c_init();

		ck_assert_msg(with(impl, k[i].data, k[i].len) == k[i].crc,
			      "%s: %s: got 0x%08x want 0x%08x", iname(_i), k[i].name,
			      with(impl, k[i].data, k[i].len), k[i].crc);
		/* the same, one octet per call */
		for (size_t j = 0; j < k[i].len; j++)
			s = crc32c_update_with(impl, s, k[i].data + j, 1);
		ck_assert_msg(crc32c_final(s) == k[i].crc, "%s bytewise: %s", iname(_i), k[i].name);
	}
}
END_TEST

START_TEST(kat_selected)
{
	struct kat k[NKAT];

	kat_build(k);
	for (int i = 0; i < NKAT; i++) {
		ck_assert_msg(crc32c(k[i].data, k[i].len) == k[i].crc,
			      "selected (%s): %s: got 0x%08x want 0x%08x",
			      crc32c_impl_name(crc32c_selected()), k[i].name,
			      crc32c(k[i].data, k[i].len), k[i].crc);
		ck_assert(crc32c_final(crc32c_update(crc32c_init(), k[i].data, k[i].len)) ==
			  k[i].crc);
	}
	/* A NULL buffer of length 0 is an empty message, not a crash. */
	ck_assert_uint_eq(crc32c(NULL, 0), 0);
}
END_TEST

/*
 * Every length 0..4096 at every start alignment 0..63: covers the byte-wise
 * head up to 8-octet alignment, the 8-octet body and the tail of every
 * path, and the SSE4.2 three-chain rounds of 3 x 256 octets.
 */
#define SMALL_MAX 4096

START_TEST(agree_small)
{
	uint64_t rnd = tu_seed() ^ 0xA11;
	uint8_t *src = malloc(SMALL_MAX);
	uint32_t *ref = malloc((SMALL_MAX + 1) * sizeof(*ref));

	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(ref);
	tu_rand_fill(&rnd, src, SMALL_MAX);
	for (unsigned align = 0; align < 64; align++) {
		/* Register states: the usual start, zero, and random ones. */
		uint32_t s0 = (uint32_t)tu_rand(&rnd);

		if (align == 0)
			s0 = crc32c_init();
		else if (align == 1)
			s0 = 0;

		ref[0] = s0;
		for (size_t len = 1; len <= SMALL_MAX; len++)
			ref[len] = ref_update(ref[len - 1], src + len - 1, 1);
		for (size_t len = 0; len <= SMALL_MAX; len++) {
			void *base;
			const uint8_t *p = place(&base, src, len, align);

			for (int impl = 0; impl < CRC32C_NIMPL; impl++) {
				uint32_t got;

				if (!crc32c_available((enum crc32c_impl)impl))
					continue;
				got = crc32c_update_with((enum crc32c_impl)impl, s0, p, len);
				if (got != ref[len]) {
					free(base);
					ck_abort_msg("%s: len %zu align %u state 0x%08x: got "
						     "0x%08x want 0x%08x",
						     iname(impl), len, align, s0, got, ref[len]);
				}
			}
			free(base);
		}
	}
	free(ref);
	free(src);
}
END_TEST

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Lengths around the SSE4.2 round sizes (3 x 4096 and 3 x 256, alone and
 * combined) and up to 1 MiB, sorted and without duplicates.
 */
static size_t large_lengths(size_t *out, size_t cap)
{
	static const size_t fixed[] = {
		0,    1,     7,	    8,	   767,	  768,	 769,	4095,		4096,
		4097, 12287, 12288, 12289, 65535, 65536, 65537, (1u << 20) - 3, 1u << 20};
	static const size_t ks[] = {1, 2, 3, 5, 8, 21, 85};
	size_t n = 0, m = 0;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		out[n++] = fixed[i];
	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		size_t base[2] = {3 * 4096 * ks[i], 3 * 4096 * ks[i] + 3 * 256};

		for (int b = 0; b < 2; b++)
			for (int d = -8; d <= 8; d++)
				out[n++] = base[b] + (size_t)(ptrdiff_t)d;
	}
	ck_assert_uint_le(n, cap);
	qsort(out, n, sizeof(*out), cmp_size);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || out[m - 1] != out[i])
			out[m++] = out[i];
	return m;
}

#define LARGE_MAX (1u << 20)

START_TEST(agree_large)
{
	static const unsigned aligns[] = {0, 1, 3, 4, 7, 8, 13, 31, 63};
	uint64_t rnd = tu_seed() ^ 0xB16;
	uint8_t *src = malloc(LARGE_MAX);
	size_t lens[256];
	size_t nlens = large_lengths(lens, 256);

	ck_assert_ptr_nonnull(src);
	ck_assert_uint_eq(lens[nlens - 1], LARGE_MAX);
	tu_rand_fill(&rnd, src, LARGE_MAX);
	for (size_t a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++) {
		uint32_t s0 = a == 0 ? crc32c_init() : (uint32_t)tu_rand(&rnd);
		uint32_t ref = s0;
		size_t done = 0;

		for (size_t i = 0; i < nlens; i++) {
			size_t len = lens[i];
			void *base;
			const uint8_t *p;

			/* The reference walks the prefix incrementally. */
			ref = ref_update(ref, src + done, len - done);
			done = len;
			p = place(&base, src, len, aligns[a]);
			for (int impl = 0; impl < CRC32C_NIMPL; impl++) {
				uint32_t got;

				if (!crc32c_available((enum crc32c_impl)impl))
					continue;
				got = crc32c_update_with((enum crc32c_impl)impl, s0, p, len);
				if (got != ref) {
					free(base);
					ck_abort_msg("%s: len %zu align %u: got 0x%08x want 0x%08x",
						     iname(impl), len, aligns[a], got, ref);
				}
			}
			/* and the selected one, through the one-shot entry */
			if (a == 0)
				ck_assert_msg(crc32c(p, len) == ~ref, "selected: len %zu", len);
			free(base);
		}
	}
	free(src);
}
END_TEST

/* A random piece length: mostly small, sometimes up to 16 KiB. */
static size_t piece_len(uint64_t *rnd, size_t left)
{
	size_t n = (size_t)(tu_rand(rnd) % ((size_t)1 << (tu_rand(rnd) % 15)));

	return n < left ? n : left;
}

#define STREAM_MAX 65536

/* Loop test over implementations; the selected one through update(). */
START_TEST(stream_pieces)
{
	uint64_t rnd = tu_seed() ^ 0x57;
	uint8_t *buf = malloc(STREAM_MAX);
	int sel = _i == CRC32C_NIMPL;

	ck_assert_ptr_nonnull(buf);
	if (!sel && !crc32c_available((enum crc32c_impl)_i)) {
		free(buf);
		return;
	}
	for (int round = 0; round < 200; round++) {
		size_t len = (size_t)(tu_rand(&rnd) % (STREAM_MAX + 1));
		uint32_t want, s = crc32c_init();
		size_t off = 0;
		int pieces = 0;

		if (round < 4)
			len = (size_t[]){0, 1, 12288 + 768 + 5, STREAM_MAX}[round];
		tu_rand_fill(&rnd, buf, len);
		want = crc32c_final(ref_update(crc32c_init(), buf, len));
		ck_assert_uint_eq(crc32c(buf, len), want);
		while (off < len || pieces == 0) {
			size_t n = piece_len(&rnd, len - off);

			s = sel ? crc32c_update(s, buf + off, n)
				: crc32c_update_with((enum crc32c_impl)_i, s, buf + off, n);
			off += n;
			pieces++;
		}
		ck_assert_msg(crc32c_final(s) == want, "%s: round %d len %zu in %d pieces",
			      sel ? "selected" : iname(_i), round, len, pieces);
	}
	free(buf);
}
END_TEST

#define IOV_MAXN 16

START_TEST(stream_iov)
{
	uint64_t rnd = tu_seed() ^ 0x10F;
	uint8_t *src = malloc(STREAM_MAX), *flat = malloc(STREAM_MAX);
	uint32_t s0 = 0x12345678u;
	struct iovec one;

	ck_assert_ptr_nonnull(src);
	ck_assert_ptr_nonnull(flat);
	tu_rand_fill(&rnd, src, STREAM_MAX);
	/* No iovecs, or a length of 0: the state comes back unchanged. */
	ck_assert_uint_eq(crc32c_update_iov(s0, NULL, 0, 100), s0);
	one.iov_base = src;
	one.iov_len = 10;
	ck_assert_uint_eq(crc32c_update_iov(s0, &one, 1, 0), s0);

	for (int round = 0; round < 300; round++) {
		struct iovec iov[IOV_MAXN];
		int cnt = 1 + (int)(tu_rand(&rnd) % IOV_MAXN);
		size_t total = 0, cut;
		uint32_t whole;
		/* small arrays in early rounds, so that every cut gets tried */
		size_t lim = round < 100 ? 32 : STREAM_MAX / IOV_MAXN;

		/* Pieces taken from scattered places, zero-length ones included. */
		for (int i = 0; i < cnt; i++) {
			size_t n = (size_t)(tu_rand(&rnd) % (lim + 1));
			size_t at = (size_t)(tu_rand(&rnd) % (STREAM_MAX - n + 1));

			if (tu_rand(&rnd) % 5 == 0)
				n = 0;
			iov[i].iov_base = src + at;
			iov[i].iov_len = n;
			memcpy(flat + total, src + at, n);
			total += n;
		}
		whole = crc32c_update(s0, flat, total);

		ck_assert_uint_eq(whole, ref_update(s0, flat, total));
		ck_assert_msg(crc32c_update_iov(s0, iov, cnt, total) == whole,
			      "round %d: %d iovecs, %zu octets", round, cnt, total);
		/* A length beyond what the iovecs hold stops at their end. */
		ck_assert_uint_eq(crc32c_update_iov(s0, iov, cnt, total + 1), whole);
		ck_assert_uint_eq(crc32c_update_iov(s0, iov, cnt, SIZE_MAX), whole);
		/* A shorter length: only that prefix. */
		if (total <= 512) {
			for (cut = 0; cut < total; cut++)
				ck_assert_msg(crc32c_update_iov(s0, iov, cnt, cut) ==
						      crc32c_update(s0, flat, cut),
					      "round %d: cut %zu of %zu", round, cut, total);
		} else {
			for (int k = 0; k < 8; k++) {
				cut = (size_t)(tu_rand(&rnd) % total);
				ck_assert_msg(crc32c_update_iov(s0, iov, cnt, cut) ==
						      crc32c_update(s0, flat, cut),
					      "round %d: cut %zu of %zu", round, cut, total);
			}
		}
	}
	free(flat);
	free(src);
}
END_TEST

#define ZEROS_MAX ((1u << 22) + 8)

START_TEST(shift_zeros)
{
	static const uint64_t big[] = {
		301,   511,   512,   1000,     4095,	       4096,	12288,
		65535, 65536, 65537, 1u << 20, (1u << 20) + 5, 3000017, (uint64_t)ZEROS_MAX};
	uint64_t rnd = tu_seed() ^ 0x5F1;
	uint8_t *zeros = calloc(1, ZEROS_MAX);

	ck_assert_ptr_nonnull(zeros);
	for (uint64_t n = 0; n <= 300; n++) {
		for (int k = 0; k < 4; k++) {
			uint32_t s = k == 0 ? crc32c_init() : (uint32_t)tu_rand(&rnd);
			uint32_t want = crc32c_update_with(CRC32C_TABLE, s, zeros, n);

			ck_assert_msg(crc32c_shift(s, n) == want,
				      "state 0x%08x n %llu: got 0x%08x want 0x%08x", s,
				      (unsigned long long)n, crc32c_shift(s, n), want);
		}
	}
	/* Zero stays zero: the register is linear in the state. */
	ck_assert_uint_eq(crc32c_shift(0, 12345), 0);
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
		uint32_t s = (uint32_t)tu_rand(&rnd);
		uint32_t want = crc32c_update_with(CRC32C_TABLE, s, zeros, big[i]);

		ck_assert_msg(crc32c_shift(s, big[i]) == want, "n %llu",
			      (unsigned long long)big[i]);
	}
	/*
	 * Lengths past 32 bits: shift(s, a + b) == shift(shift(s, a), b) with a
	 * and b below 2^32 and the sum above, so a length truncated anywhere to
	 * 32 bits breaks the identity.
	 */
	for (int k = 0; k < 16; k++) {
		uint32_t s = (uint32_t)tu_rand(&rnd);
		uint64_t a = 0xFFFFFFFFull - (tu_rand(&rnd) % 1000);
		uint64_t b = 1000 + (tu_rand(&rnd) % 0x7FFFFFFFull);

		ck_assert_uint_eq(crc32c_shift(s, a + b), crc32c_shift(crc32c_shift(s, a), b));
	}
	ck_assert_uint_eq(crc32c_shift(0xDEADBEEFu, 1ull << 40),
			  crc32c_shift(crc32c_shift(0xDEADBEEFu, 1ull << 39), 1ull << 39));
	free(zeros);
}
END_TEST

/* reg(s, A||B) == shift(reg(s, A), |B|) ^ reg(0, B), as crc32c.h promises. */
START_TEST(shift_combine)
{
	uint64_t rnd = tu_seed() ^ 0xC0B;
	size_t cap = 3 * 4096 * 3 + 1000;
	uint8_t *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	for (int round = 0; round < 400; round++) {
		size_t la = (size_t)(tu_rand(&rnd) % (round < 300 ? 600 : cap / 2));
		size_t lb = (size_t)(tu_rand(&rnd) % (round < 300 ? 600 : cap / 2));
		uint32_t s = round == 0 ? crc32c_init() : (uint32_t)tu_rand(&rnd);
		uint32_t whole, ra, rb;

		tu_rand_fill(&rnd, buf, la + lb);
		whole = ref_update(s, buf, la + lb);
		ra = crc32c_update_with(CRC32C_TABLE, s, buf, la);
		rb = crc32c_update_with(CRC32C_TABLE, 0, buf + la, lb);
		ck_assert_msg((crc32c_shift(ra, lb) ^ rb) == whole, "round %d: |A| %zu |B| %zu",
			      round, la, lb);
		/* the same with the selected implementation */
		ra = crc32c_update(s, buf, la);
		rb = crc32c_update(0, buf + la, lb);
		ck_assert_uint_eq(crc32c_shift(ra, lb) ^ rb, whole);
	}
	free(buf);
}
END_TEST

START_TEST(select_impl)
{
	enum crc32c_impl orig = crc32c_selected();
	static const uint8_t msg[] = "123456789";

	/* With no override, the automatic choice is the best available. */
	if (!getenv("UIW_CRC32C_IMPL"))
		ck_assert_msg(orig == auto_choice(), "selected %s, expected %s",
			      crc32c_impl_name(orig), crc32c_impl_name(auto_choice()));

	/* Unknown or unavailable: -ENOTSUP and nothing changes. */
	ck_assert_int_eq(crc32c_select(CRC32C_NIMPL), -ENOTSUP);
	ck_assert_int_eq(crc32c_selected(), orig);
	ck_assert_int_eq(crc32c_select((enum crc32c_impl)77), -ENOTSUP);
	ck_assert_int_eq(crc32c_selected(), orig);
	for (int impl = 0; impl < CRC32C_NIMPL; impl++) {
		if (crc32c_available((enum crc32c_impl)impl))
			continue;
		ck_assert_int_eq(crc32c_select((enum crc32c_impl)impl), -ENOTSUP);
		ck_assert_int_eq(crc32c_selected(), orig);
	}

	/* Each available one can be selected and is then the one in use. */
	for (int impl = 0; impl < CRC32C_NIMPL; impl++) {
		if (!crc32c_available((enum crc32c_impl)impl))
			continue;
		ck_assert_int_eq(crc32c_select((enum crc32c_impl)impl), 0);
		ck_assert_int_eq(crc32c_selected(), impl);
		ck_assert_uint_eq(crc32c(msg, 9), 0xE3069283u);
		ck_assert_int_eq(crc32c_select(CRC32C_NIMPL), -ENOTSUP);
		ck_assert_int_eq(crc32c_selected(), impl);
	}
	ck_assert_int_eq(crc32c_select(orig), 0);
	ck_assert_int_eq(crc32c_selected(), orig);
}
END_TEST

/*
 * UIW_CRC32C_IMPL is read once, on the first CRC of a process, and this
 * process made its choice long ago: ask a fresh process instead.  The CRC32C
 * benchmark prints the selected implementation with --selected.
 */
#define BENCH_NAME    "uiw-bench-crc32c"
#define CHILD_WAIT_MS 20000
#define CHILD_OUT_MAX 4096

static void bench_path(char *out, size_t cap)
{
	const char *dir = getenv("UIW_BENCH_DIR");
	char self[PATH_MAX];
	char *slash;
	ssize_t n;
	int w;

	if (dir && *dir) {
		w = snprintf(out, cap, "%s/%s", dir, BENCH_NAME);
		ck_assert_msg(w > 0 && (size_t)w < cap, "UIW_BENCH_DIR too long");
		return;
	}
	/* <O>/tests/check_uiw -> <O>/bench/uiw-bench-crc32c */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_msg(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	self[n] = '\0';
	for (int up = 0; up < 2; up++) {
		slash = strrchr(self, '/');
		ck_assert_ptr_nonnull(slash);
		*slash = '\0';
	}
	w = snprintf(out, cap, "%s/bench/%s", self, BENCH_NAME);
	ck_assert_msg(w > 0 && (size_t)w < cap, "path too long");
}

static int64_t ms_left(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 +
	       (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

struct child_out {
	char out[CHILD_OUT_MAX];
	char err[CHILD_OUT_MAX];
	int status;
	int timed_out;
};

/* Read a pipe into @buf (NUL-terminated, excess dropped); 0 at EOF. */
static int drain_fd(int fd, char *buf, size_t *have)
{
	char tmp[512];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 1 : 0;
	if (n == 0)
		return 0;
	for (ssize_t i = 0; i < n && *have < CHILD_OUT_MAX - 1; i++)
		buf[(*have)++] = tmp[i];
	buf[*have] = '\0';
	return 1;
}

/*
 * Run @path --selected with UIW_CRC32C_IMPL set to @val (NULL: unset), the
 * rest of the environment inherited; collect stdout, stderr and the exit
 * status within CHILD_WAIT_MS, killing the child if it overruns.  The child
 * is always reaped.
 */
static void run_selected(const char *path, const char *val, struct child_out *co)
{
	static const char key[] = "UIW_CRC32C_IMPL=";
	char *argv[] = {(char *)path, (char *)"--selected", NULL};
	char setting[128];
	size_t nenv = 0, i, have_out = 0, have_err = 0;
	char **envp;
	int out[2], err[2], open_out = 1, open_err = 1, ret;
	posix_spawn_file_actions_t fa;
	struct timespec deadline;
	pid_t pid, w;

	memset(co, 0, sizeof(*co));
	while (environ[nenv])
		nenv++;
	envp = calloc(nenv + 2, sizeof(*envp));
	ck_assert_ptr_nonnull(envp);
	nenv = 0;
	for (i = 0; environ[i]; i++)
		if (strncmp(environ[i], key, sizeof(key) - 1) != 0)
			envp[nenv++] = environ[i];
	if (val) {
		snprintf(setting, sizeof(setting), "%s%s", key, val);
		envp[nenv++] = setting;
	}

	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	ck_assert_int_eq(posix_spawn_file_actions_init(&fa), 0);
	ck_assert_int_eq(posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO), 0);
	ck_assert_int_eq(posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO), 0);
	ret = posix_spawn(&pid, path, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	close(out[1]);
	close(err[1]);
	if (ret != 0) {
		close(out[0]);
		close(err[0]);
		ck_abort_msg("posix_spawn %s: %s", path, strerror(ret));
	}

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += CHILD_WAIT_MS / 1000;
	while (open_out || open_err) {
		struct pollfd pfd[2];
		int np = 0, t = (int)ms_left(&deadline);

		if (t <= 0) {
			co->timed_out = 1;
			break;
		}
		if (open_out)
			pfd[np++] = (struct pollfd){.fd = out[0], .events = POLLIN};
		if (open_err)
			pfd[np++] = (struct pollfd){.fd = err[0], .events = POLLIN};
		if (poll(pfd, (nfds_t)np, t) < 0 && errno != EINTR)
			break;
		for (int k = 0; k < np; k++) {
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (pfd[k].fd == out[0])
				open_out = drain_fd(out[0], co->out, &have_out);
			else
				open_err = drain_fd(err[0], co->err, &have_err);
		}
	}
	close(out[0]);
	close(err[0]);

	/* Reap, bounded: a child that outlives the deadline is killed. */
	for (;;) {
		w = waitpid(pid, &co->status, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (co->timed_out || ms_left(&deadline) <= 0) {
			co->timed_out = 1;
			kill(pid, SIGKILL);
			while (waitpid(pid, &co->status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		usleep(1000);
	}
}

struct env_case {
	const char *val; /* NULL: unset */
	int impl;	 /* expected choice; -1: the automatic one */
	int warn;	 /* a warning naming the value on stderr */
};

static const struct env_case env_cases[] = {
	{"table", CRC32C_TABLE, 0},
	{"sse42", CRC32C_SSE42, 0},
	{"isal", CRC32C_ISAL, 0},
	{"bogus", -1, 1},
	{NULL, -1, 0},
	{"", -1, 0},
};

/* Loop test over env_cases. */
START_TEST(env_override)
{
	const struct env_case *ec = &env_cases[_i];
	char path[PATH_MAX];
	struct child_out co;
	enum crc32c_impl want;
	int warn = ec->warn;
	char expect[32];

	if (ec->impl >= 0 && crc32c_available((enum crc32c_impl)ec->impl)) {
		want = (enum crc32c_impl)ec->impl;
	} else {
		/* crc32c.h: "an unknown or unavailable name falls back to the
		 * automatic choice and says so on stderr" */
		want = auto_choice();
		if (ec->impl >= 0)
			warn = 1;
	}
	bench_path(path, sizeof(path));
	ck_assert_msg(access(path, X_OK) == 0,
		      "%s not found (%s); build it (make) or set UIW_BENCH_DIR", path,
		      strerror(errno));
	run_selected(path, ec->val, &co);
	ck_assert_msg(!co.timed_out, "%s --selected did not finish in %d ms", path, CHILD_WAIT_MS);
	ck_assert_msg(WIFEXITED(co.status) && WEXITSTATUS(co.status) == 0,
		      "%s --selected: status 0x%x, stderr: %s", path, co.status, co.err);
	snprintf(expect, sizeof(expect), "%s\n", crc32c_impl_name(want));
	ck_assert_msg(strcmp(co.out, expect) == 0,
		      "UIW_CRC32C_IMPL=%s: selected \"%s\", want \"%s\"",
		      ec->val ? ec->val : "(unset)", co.out, crc32c_impl_name(want));
	if (warn) {
		ck_assert_msg(strstr(co.err, "UIW_CRC32C_IMPL=") && strstr(co.err, ec->val),
			      "UIW_CRC32C_IMPL=%s: no warning on stderr (got \"%s\")", ec->val,
			      co.err);
	} else {
		ck_assert_msg(strstr(co.err, "UIW_CRC32C_IMPL") == NULL,
			      "UIW_CRC32C_IMPL=%s: unexpected warning \"%s\"",
			      ec->val ? ec->val : "(unset)", co.err);
	}
}
END_TEST

/**
 * crc32c_suite() - the CRC32C tests: known answers, agreement with the
 * reference, streaming, shift/combine, selection and the environment
 * override.  The agreement and override cases are slow under ASan, hence
 * their longer timeouts.
 */
Suite *crc32c_suite(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc;

	tc = tcase_create("known_answers");
	tcase_add_test(tc, impl_availability);
	tcase_add_test(tc, kat_reference);
	tcase_add_loop_test(tc, kat_impl, 0, CRC32C_NIMPL);
	tcase_add_test(tc, kat_selected);
	suite_add_tcase(s, tc);

	/* 4097 x 64 allocations and CRCs per implementation: slow under ASan. */
	tc = tcase_create("agreement");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, agree_small);
	tcase_add_test(tc, agree_large);
	suite_add_tcase(s, tc);

	tc = tcase_create("streaming");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stream_pieces, 0, CRC32C_NIMPL + 1);
	tcase_add_test(tc, stream_iov);
	suite_add_tcase(s, tc);

	tc = tcase_create("shift");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, shift_zeros);
	tcase_add_test(tc, shift_combine);
	suite_add_tcase(s, tc);

	tc = tcase_create("selection");
	tcase_set_timeout(tc, 2 * CHILD_WAIT_MS / 1000 + 10);
	tcase_add_test(tc, select_impl);
	tcase_add_loop_test(tc, env_override, 0, (int)(sizeof(env_cases) / sizeof(env_cases[0])));
	suite_add_tcase(s, tc);
	return s;
}
