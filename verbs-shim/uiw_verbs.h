/* SPDX-License-Identifier: MIT */
/*
 * uiw_verbs.h - the one public header of uiwarp.
 *
 * The verbs and connection-manager API (uiw_alloc_pd, uiw_reg_mr,
 * uiw_create_cq, uiw_create_qp, uiw_post_send, uiw_connect, ...) is NOT YET
 * IMPLEMENTED: it arrives with the verbs/engine work (issue 4).  Today the
 * library holds the MPA layer (RFC 5044, RFC 6581) and CRC32C, used through
 * the internal headers by the tests and benchmarks.
 *
 * Conventions (they differ from libibverbs on purpose): every function
 * returns 0 or a negative errno value; byte counts are ssize_t or -errno.
 */
#ifndef UIW_VERBS_H
#define UIW_VERBS_H

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

#ifdef __cplusplus
}
#endif

#endif /* UIW_VERBS_H */
