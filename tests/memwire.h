/* SPDX-License-Identifier: MIT */
/*
 * In-memory "wire" helpers shared by the tests, the fuzz targets and the
 * benchmarks: what an engine does with a socket, done with memcpy.
 */
#ifndef UIW_TESTS_MEMWIRE_H
#define UIW_TESTS_MEMWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "mpa.h"

/*
 * mw_gather() - copy what @c has pending into @wire (at most @cap octets,
 * a "gathering send"), using @iov (@max_iov entries) as scratch, and
 * advance @c.  Returns the octets moved.
 */
size_t mw_gather(struct mpa_conn *c, uint8_t *wire, size_t cap, struct iovec *iov, int max_iov);

/*
 * mw_lend_feed() - receive @len octets into @c the way an engine's readv
 * would: mpa_rx_lend, copy into the lent iovecs, mpa_rx_ack.  Returns the
 * octets consumed (fewer when MPA lends nothing), or -errno.
 */
ssize_t mw_lend_feed(struct mpa_conn *c, const uint8_t *in, size_t len);

/*
 * mw_ahead_feed() - the same with a look-ahead of @ahead_len octets
 * (mpa_rx_lend_ahead(); 0: none, at most MW_AHEAD_MAX), as the engine
 * reads in full operation.
 */
#define MW_AHEAD_MAX 65536
/* the engine's look-ahead while FPDUs are large (UIW_CONN_AHEAD) */
#define UIW_TEST_AHEAD 1024
/* lends filled by mw_lend_feed()/mw_ahead_feed() in this thread ("reads") */
extern __thread unsigned long mw_reads;
ssize_t mw_ahead_feed(struct mpa_conn *c, const uint8_t *in, size_t len, size_t ahead_len);

/*
 * mw_move_hs() - move whole pending handshake frames from @from to @to
 * through mpa_rx(), via @wire (@cap).  Returns 1 if something moved, 0 if
 * nothing was pending, -errno.
 */
int mw_move_hs(struct mpa_conn *from, struct mpa_conn *to, uint8_t *wire, size_t cap);

#endif /* UIW_TESTS_MEMWIRE_H */
