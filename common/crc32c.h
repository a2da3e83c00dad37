/* SPDX-License-Identifier: MIT */
/*
 * CRC32C (Castagnoli), in common/ because more than MPA uses it (MPA's FPDU
 * CRC, the tests and benchmarks that build or check wire octets, the
 * library's uiw_crc32c()).  As MPA uses it: RFC 5044 §4.4 refers to the iSCSI
 * digest (RFC 3720 B.4): reflected polynomial 0x82F63B78, initial value
 * 0xFFFFFFFF, final XOR 0xFFFFFFFF.  The value goes on the wire least
 * significant byte first (RFC 5044 Figure 5: 0x83992352 is sent 52 23 99 83).
 *
 * Streaming use: s = crc32c_init(); s = crc32c_update(s, p, n) over
 * any number of pieces; crc = crc32c_final(s).  The state is the raw
 * register, so pieces can be of any length and alignment.
 *
 * Implementations: ISA-L's crc32_iscsi() when the library was present at
 * build time, a built-in SSE4.2 path (three interleaved crc32q chains
 * recombined with a table shift) and a portable slicing-by-8 table path.
 * The best available one is selected on first use from the CPU flags; the
 * environment variable UIW_CRC32C_IMPL=isal|sse42|table overrides it (an
 * unknown or unavailable name falls back to the automatic choice and says
 * so on stderr once).
 */
#ifndef UIW_CRC32C_H
#define UIW_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

enum crc32c_impl { CRC32C_TABLE = 0, CRC32C_SSE42 = 1, CRC32C_ISAL = 2, CRC32C_NIMPL };

static inline uint32_t crc32c_init(void)
{
	return 0xFFFFFFFFu;
}

static inline uint32_t crc32c_final(uint32_t state)
{
	return ~state;
}

/**
 * crc32c_update() - feed @len bytes at @buf into the running @state
 * with the selected implementation.  Returns the new state.
 */
uint32_t crc32c_update(uint32_t state, const void *buf, size_t len);

/**
 * crc32c_update_iov() - feed the first @len bytes of an iovec array.
 * Stops early if the iovecs hold fewer bytes.
 */
uint32_t crc32c_update_iov(uint32_t state, const struct iovec *iov, int iovcnt, size_t len);

/** crc32c() - one-shot CRC32C of a buffer (init, update, final). */
uint32_t crc32c(const void *buf, size_t len);

/**
 * crc32c_update_with() - as crc32c_update() with a named
 * implementation, for tests and benchmarks.  The implementation must be
 * available (crc32c_available()).
 */
uint32_t crc32c_update_with(enum crc32c_impl impl, uint32_t state, const void *buf, size_t len);

/** crc32c_available() - 1 if @impl was built in and the CPU runs it. */
int crc32c_available(enum crc32c_impl impl);

/**
 * crc32c_select() - force an implementation.  Returns 0, or -ENOTSUP
 * if it is not available (the selection is then unchanged).
 */
int crc32c_select(enum crc32c_impl impl);

/** crc32c_selected() - the implementation in use (selecting it if needed). */
enum crc32c_impl crc32c_selected(void);

/** crc32c_impl_name() - "table", "sse42" or "isal". */
const char *crc32c_impl_name(enum crc32c_impl impl);

/**
 * crc32c_shift() - the register after feeding @len zero bytes to
 * @state, computed in O(log len) (GF(2) multiply by x^(8*len) mod P).
 * Used to combine CRCs of pieces computed independently; with reg(s, X)
 * the register after feeding X to state s:
 * reg(s, A||B) = crc32c_shift(reg(s, A), |B|) ^ reg(0, B).
 */
uint32_t crc32c_shift(uint32_t state, uint64_t len);

#endif /* UIW_CRC32C_H */
