/* SPDX-License-Identifier: MIT */
/*
 * tests/progs/mpi/mpi_apps.c - the MPI check of tests/sh/apps.sh: a
 * ping-pong between ranks 0 and 1 and an all-to-all over every rank, each
 * message's every octet checked.  Built by apps.sh with mpicc at test time
 * (not by the Makefile, whose rule for tests/progs has no MPI headers).
 *
 * Prints one line, from rank 0:
 *   mpi_apps: ranks N pingpong ITERSxBYTES ok USEC us/round-trip alltoall BYTES ok
 * Exit status 0 when every check passed; MPI_Abort (non-zero) otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the octet at @i of the message of round @r from @src to @dst */
static unsigned char pat(int r, int src, int dst, size_t i)
{
	return (unsigned char)(r * 131 + src * 29 + dst * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, size_t n, int r, int src, int dst)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(r, src, dst, i);
}

static int check(const unsigned char *b, size_t n, int r, int src, int dst, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(r, src, dst, i)) {
			fprintf(stderr, "mpi_apps: %s: round %d from %d to %d: octet %zu is %u, not %u\n",
				what, r, src, dst, i, b[i], pat(r, src, dst, i));
			return -1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 100;
	size_t len = argc > 2 ? (size_t)atol(argv[2]) : 65536;
	size_t a2a = argc > 3 ? (size_t)atol(argv[3]) : 4096;
	unsigned char *sb, *rb;
	double t0, t = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2 || iters < 1 || !len || !a2a) {
		if (!rank)
			fprintf(stderr, "mpi_apps: needs 2 ranks or more, ITERS BYTES A2A_BYTES > 0\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	sb = malloc(len > a2a * size ? len : a2a * size);
	rb = malloc(len > a2a * size ? len : a2a * size);
	if (!sb || !rb)
		MPI_Abort(MPI_COMM_WORLD, 3);

	/* ping-pong: 0 sends round r, 1 checks it and answers with its own */
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int r = 0; r < iters && rank < 2; r++) {
		int peer = !rank;

		if (rank == 0) {
			fill(sb, len, r, 0, 1);
			MPI_Send(sb, (int)len, MPI_BYTE, peer, r, MPI_COMM_WORLD);
			MPI_Recv(rb, (int)len, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (check(rb, len, r, 1, 0, "pingpong"))
				MPI_Abort(MPI_COMM_WORLD, 4);
		} else {
			MPI_Recv(rb, (int)len, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (check(rb, len, r, 0, 1, "pingpong"))
				MPI_Abort(MPI_COMM_WORLD, 4);
			fill(sb, len, r, 1, 0);
			MPI_Send(sb, (int)len, MPI_BYTE, peer, r, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		t = (MPI_Wtime() - t0) * 1e6 / iters;

	/* all-to-all: block d of rank s's buffer goes to rank d */
	for (int r = 0; r < 3; r++) {
		for (int d = 0; d < size; d++)
			fill(sb + (size_t)d * a2a, a2a, r, rank, d);
		memset(rb, 0, a2a * size);
		MPI_Alltoall(sb, (int)a2a, MPI_BYTE, rb, (int)a2a, MPI_BYTE, MPI_COMM_WORLD);
		for (int s = 0; s < size; s++)
			if (check(rb + (size_t)s * a2a, a2a, r, s, rank, "alltoall"))
				MPI_Abort(MPI_COMM_WORLD, 5);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_apps: ranks %d pingpong %dx%zu ok %.1f us/round-trip alltoall %zu ok\n", size,
		       iters, len, t, a2a);
	free(sb);
	free(rb);
	MPI_Finalize();
	return 0;
}
