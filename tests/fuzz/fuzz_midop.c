/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: application actions interleaved with wire input
 * (memory lifetime).  The input chooses one mid-operation case of
 * tests/midop.c (which peer operation, which application action, where
 * the wire stops for it, whether the engine's read or send is in flight
 * across it and how much it then moves, markers, receive path, wire
 * re-split, message size) and corrupts the rest of the peer's octets with
 * what remains of the input (xored in), so that hostile bytes arrive after
 * the application acted.  Released memory is PROT_NONE: a late access by
 * the stack is a crash; every invariant of the harness (exactly-once
 * completions, none while I/O is in flight, none successful after a move
 * to error, a deregistration never left waiting) aborts when broken.
 *
 * Input: op, act, split (2 octets), flags (bit 0 in flight, 1 markers,
 * 2 lend), io_len (2), chunk, msg (2), then the corruption.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "midop.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mo_case c = {0};
	char why[256];

	if (size < 10)
		return 0;
	c.op = (enum mo_op)(data[0] % MO_NOPS);
	c.act = (enum mo_act)(data[1] % MO_NACTS);
	c.split = (size_t)data[2] << 8 | data[3];
	c.inflight = data[4] & 1;
	c.markers = (data[4] >> 1) & 1;
	c.lend = (data[4] >> 2) & 1;
	c.io_len = (size_t)data[5] << 8 | data[6];
	c.chunk = data[7] % 64;
	c.msg = 1 + (((uint32_t)data[8] << 8 | data[9]) % MO_MSG_MAX);
	c.seed = 0x5eed;
	c.mut = data + 10;
	c.mut_len = size - 10;
	if (mo_run(&c, why, sizeof(why))) {
		fprintf(stderr, "fuzz_midop: %s, %s, split %zu, markers %d, in flight %d: %s\n",
			mo_op_name(c.op), mo_act_name(c.act), c.split, c.markers, c.inflight, why);
		abort();
	}
	return 0;
}
