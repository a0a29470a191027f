// SPDX-License-Identifier: GPL-2.0
/*
 * The copy ceiling for make bench: 64 KiB memcpy()s from one 64 MiB ring
 * into another (both far larger than the caches), as one byte copy per
 * payload byte would cost a soft RDMA device in the same guest.
 * Prints "memcpy_64k <MB/s>" in perftest's MB (2^20 bytes), so that the two
 * compare.  The clock is read once per 256 copies: under TCG without a
 * stable TSC a clock read may cost as much as a copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RING (64UL << 20)
#define CHUNK (64UL << 10)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, t0, t;
	unsigned long off = 0, bytes = 0;
	unsigned char *src = malloc(RING), *dst = malloc(RING);
	volatile unsigned char sink;

	if (!src || !dst || secs <= 0) {
		fprintf(stderr, "usage: memcpy_bw [SECONDS > 0]\n");
		return 2;
	}
	/* fault every page in before timing */
	memset(src, 0x5a, RING);
	memset(dst, 0, RING);
	t0 = now();
	do {
		for (int i = 0; i < 256; i++) {
			memcpy(dst + off, src + off, CHUNK);
			bytes += CHUNK;
			off = (off + CHUNK) % RING;
		}
		t = now();
	} while (t - t0 < secs);
	sink = dst[off ? off - 1 : RING - 1];
	(void)sink;
	printf("memcpy_64k %.1f\n", bytes / (t - t0) / 1048576.0);
	free(src);
	free(dst);
	return 0;
}
