/* SPDX-License-Identifier: MIT */
/*
 * rdma_dl.h - what the drop-in's test programs (rdma_api, rdma_cm_srv,
 * rdma_qpx) share: they are not linked with rdma-core and find every
 * libibverbs/librdmacm function with dlsym() at start (under uiw-run,
 * libuiw-rdma's), so they build without rdma-core's libraries.
 *
 *   F(name);     declares p_name, a pointer of name's type;
 *   LOAD(name);  sets it, or fails "name not found (run under uiw-run)";
 *   CHECK(cond, fmt, ...); die(fmt, ...): "FAIL: ..." on stdout, exit 1.
 */
#ifndef UIW_TESTS_RDMA_DL_H
#define UIW_TESTS_RDMA_DL_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#define F(name) static __typeof__(&name) p_##name

#define LOAD(name)                                                                             \
	do {                                                                                   \
		p_##name = (__typeof__(p_##name))dlsym(RTLD_DEFAULT, #name);                   \
		if (!p_##name)                                                                 \
			die("%s not found (run under uiw-run)", #name);                        \
	} while (0)

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	_exit(1); /* other threads may be stuck in the library: no exit handlers */
}

#define CHECK(cond, ...)                                                                       \
	do {                                                                                   \
		if (!(cond))                                                                   \
			die(__VA_ARGS__);                                                      \
	} while (0)

#endif
