/* SPDX-License-Identifier: MIT */
/*
 * CRC32C throughput of every built-in implementation (table, sse42, isal)
 * and of the selected one through crc32c_update() (the path MPA uses,
 * dispatch included), per buffer size, beside memcpy of the same octets
 * measured in the same run.  One thread; the buffer stays in cache, so this
 * is the compute cost the MPA layer pays per octet, not memory bandwidth.
 *
 * --selected prints only the name of the implementation the library picks
 * in this environment (UIW_CRC32C_IMPL honoured) and exits: the unit tests
 * use it to check the override in a fresh process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "crc32c.h"

/* Columns: the implementations by enum value, then the selected one. */
#define COL_SELECTED CRC32C_NIMPL
#define NCOL	     (CRC32C_NIMPL + 1)

static const size_t default_sizes[] = {64,	  256,	     1024,	 4096,
				       16 * 1024, 64 * 1024, 256 * 1024, 1024 * 1024};

struct crc_arg {
	int col;
	const uint8_t *buf;
	size_t len;
	uint32_t sink;
};

static void crc_once(void *arg)
{
	struct crc_arg *c = arg;
	uint32_t s;

	/* Each call starts from the initial state, as each FPDU does, so that
	 * consecutive calls do not form one long dependency chain. */
	if (c->col == COL_SELECTED)
		s = crc32c_update(crc32c_init(), c->buf, c->len);
	else
		s = crc32c_update_with((enum crc32c_impl)c->col, crc32c_init(), c->buf, c->len);
	c->sink ^= s;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uiw-bench-crc32c [options]\n"
		"CRC32C GB/s per core of each implementation beside memcpy of the same octets.\n");
	bench_usage_common(f);
	fprintf(f, "  --selected     print the implementation selected here (UIW_CRC32C_IMPL\n"
		   "                 honoured) and exit\n");
}

static void col_name(char *buf, size_t cap, int col)
{
	if (col == COL_SELECTED)
		snprintf(buf, cap, "sel:%s", crc32c_impl_name(crc32c_selected()));
	else
		snprintf(buf, cap, "%s", crc32c_impl_name((enum crc32c_impl)col));
}

static int col_available(int col)
{
	return col == COL_SELECTED || crc32c_available((enum crc32c_impl)col);
}

static void print_ratio(double num, double den)
{
	if (num > 0 && den > 0)
		printf(" %9.2f", num / den);
	else
		printf(" %9s", "n/a");
}

int main(int argc, char **argv)
{
	struct bench_args a = {0};
	struct bench_timing t = {.run_ms = 60, .runs = 5};
	const size_t *sizes = default_sizes;
	int nsizes = (int)(sizeof(default_sizes) / sizeof(default_sizes[0]));
	size_t max = 0;
	uint8_t *src, *dst;
	struct row {
		double memcpy;
		double col[NCOL];
	} * rows;
	char name[32], sz[32];
	uint32_t check = 0;
	int have_isal = crc32c_available(CRC32C_ISAL);

	for (int i = 1; i < argc; i++) {
		int r;

		if (strcmp(argv[i], "--selected") == 0) {
			printf("%s\n", crc32c_impl_name(crc32c_selected()));
			return 0;
		}
		r = bench_arg_common(&a, argc, argv, &i);
		if (r < 0)
			return 2;
		if (r == 0) {
			fprintf(stderr, "uiw-bench-crc32c: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (a.help) {
		usage(stdout);
		return 0;
	}
	if (a.quick) {
		t.run_ms = 10;
		t.runs = 2;
	}
	if (a.nsizes) {
		sizes = a.sizes;
		nsizes = a.nsizes;
	}
	for (int i = 0; i < nsizes; i++)
		if (sizes[i] > max)
			max = sizes[i];
	src = bench_alloc(max, 0xC5C32C);
	dst = bench_alloc(max, 1);
	rows = calloc((size_t)nsizes, sizeof(*rows));
	if (!src || !dst || !rows) {
		fprintf(stderr, "uiw-bench-crc32c: out of memory\n");
		return 1;
	}

	/* Every implementation must agree before any is timed. */
	for (int col = 0; col < NCOL; col++) {
		struct crc_arg c = {col, src, max, 0};

		if (!col_available(col))
			continue;
		crc_once(&c);
		if (col == 0)
			check = c.sink;
		else if (c.sink != check) {
			col_name(name, sizeof(name), col);
			fprintf(stderr,
				"uiw-bench-crc32c: %s disagrees with table: 0x%08x 0x%08x\n", name,
				c.sink, check);
			return 1;
		}
	}

	printf("uiwarp CRC32C: GB/s per core (1 thread, 1 GB = 10^9 octets), best of %u runs of "
	       ">= %u ms,\ncache-warm buffer; memcpy of the same octets measured alongside as the "
	       "baseline.\nselected implementation: %s%s\n\n",
	       t.runs, t.run_ms, crc32c_impl_name(crc32c_selected()),
	       a.quick ? " (--quick: indicative only)" : "");
	printf("%9s %9s", "size", "memcpy");
	for (int col = 0; col < NCOL; col++) {
		col_name(name, sizeof(name), col);
		printf(" %9s", name);
	}
	printf("\n");
	fflush(stdout);
	for (int i = 0; i < nsizes; i++) {
		printf("%9s", bench_fmt_size(sz, sizeof(sz), sizes[i]));
		fflush(stdout);
		rows[i].memcpy = bench_memcpy_gbps(dst, src, sizes[i], &t);
		printf(" %9.2f", rows[i].memcpy);
		for (int col = 0; col < NCOL; col++) {
			struct crc_arg c = {col, src, sizes[i], 0};

			if (!col_available(col)) {
				printf(" %9s", "n/a");
				continue;
			}
			rows[i].col[col] = bench_gbps(crc_once, &c, sizes[i], &t);
			bench_clobber(&c.sink);
			printf(" %9.2f", rows[i].col[col]);
			fflush(stdout);
		}
		printf("\n");
	}

	printf("\nratio to memcpy of the same octets (1.00: as fast as copying them)\n");
	printf("%9s", "size");
	for (int col = 0; col < NCOL; col++) {
		col_name(name, sizeof(name), col);
		printf(" %9s", name);
	}
	printf("\n");
	for (int i = 0; i < nsizes; i++) {
		printf("%9s", bench_fmt_size(sz, sizeof(sz), sizes[i]));
		for (int col = 0; col < NCOL; col++)
			print_ratio(rows[i].col[col], rows[i].memcpy);
		printf("\n");
	}

	if (have_isal) {
		printf("\nratio to ISA-L crc32_iscsi (1.00: as fast as ISA-L)\n");
		printf("%9s", "size");
		for (int col = 0; col < NCOL; col++) {
			if (col == CRC32C_ISAL)
				continue;
			col_name(name, sizeof(name), col);
			printf(" %9s", name);
		}
		printf("\n");
		for (int i = 0; i < nsizes; i++) {
			printf("%9s", bench_fmt_size(sz, sizeof(sz), sizes[i]));
			for (int col = 0; col < NCOL; col++)
				if (col != CRC32C_ISAL)
					print_ratio(rows[i].col[col], rows[i].col[CRC32C_ISAL]);
			printf("\n");
		}
	} else {
		printf("\nISA-L is not built in (no libisal-dev at build time): no ratio to it.\n");
	}
	free(rows);
	free(dst);
	free(src);
	return 0;
}
