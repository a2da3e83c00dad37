/* SPDX-License-Identifier: MIT */
#include "memwire.h"

#include <errno.h>
#include <string.h>

size_t mw_gather(struct mpa_conn *c, uint8_t *wire, size_t cap, struct iovec *iov, int max_iov)
{
	size_t total = 0;

	while (total < cap) {
		int n = mpa_tx_pending(c, iov, max_iov);
		size_t moved = 0;

		for (int i = 0; i < n && total + moved < cap; i++) {
			size_t k = iov[i].iov_len;

			if (k > cap - total - moved)
				k = cap - total - moved;
			memcpy(wire + total + moved, iov[i].iov_base, k);
			moved += k;
		}
		if (!moved || mpa_tx_advance(c, moved))
			break;
		total += moved;
	}
	return total;
}

ssize_t mw_lend_feed(struct mpa_conn *c, const uint8_t *in, size_t len)
{
	return mw_ahead_feed(c, in, len, 0);
}

__thread unsigned long mw_reads;

ssize_t mw_ahead_feed(struct mpa_conn *c, const uint8_t *in, size_t len, size_t ahead_len)
{
	static __thread uint8_t ahead[MW_AHEAD_MAX];
	size_t used = 0;

	if (ahead_len > sizeof(ahead))
		return -EINVAL;
	while (used < len) {
		struct iovec iov[16];
		int n = ahead_len ? mpa_rx_lend_ahead(c, iov, 16, ahead, ahead_len)
				  : mpa_rx_lend(c, iov, 16);
		size_t k = 0;
		int ret;

		if (n < 0)
			return n;
		if (n == 0)
			break;
		mw_reads++;
		for (int i = 0; i < n && used + k < len; i++) {
			size_t m = iov[i].iov_len;

			if (m > len - used - k)
				m = len - used - k;
			memcpy(iov[i].iov_base, in + used + k, m);
			k += m;
		}
		ret = mpa_rx_ack(c, k);
		used += k;
		if (ret < 0)
			return ret;
	}
	return (ssize_t)used;
}

int mw_move_hs(struct mpa_conn *from, struct mpa_conn *to, uint8_t *wire, size_t cap)
{
	struct iovec iov[4];
	size_t len = mw_gather(from, wire, cap, iov, 4);
	ssize_t used;

	if (!len)
		return 0;
	used = mpa_rx(to, wire, len);
	if (used < 0)
		return (int)used;
	return (size_t)used == len ? 1 : -EPROTO;
}
