// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness for sroce_hdrs_parse(): whatever parses must rebuild
 * to the same headers (modulo reserved bits) and parse again identically.
 * Also exercises the ICRC header masking on in-bounds pointers.
 *
 * Built with -DSROCE_FUZZ_STANDALONE it gets its own main(): replays files
 * or directories given on the command line, or with "--seeds DIR" writes a
 * seed corpus of one valid packet per opcode.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sroce/wire/hdr.h"
#include "sroce/wire/icrc.h"

#define FUZZ_ASSERT(c)							\
	do {								\
		if (!(c)) {						\
			fprintf(stderr, "%s:%d: assertion %s failed\n",	\
				__FILE__, __LINE__, #c);		\
			abort();					\
		}							\
	} while (0)

static void check_icrc(const u8 *d, size_t n)
{
	size_t l3;
	bool v6;

	if (n < 1)
		return;
	v6 = (d[0] >> 4) == 6;
	l3 = v6 ? SROCE_IPV6_HDR_BYTES : (size_t)(d[0] & 0xf) * 4;
	if (l3 < SROCE_IPV4_HDR_BYTES)
		l3 = SROCE_IPV4_HDR_BYTES;
	if (n < l3 + SROCE_UDP_HDR_BYTES + SROCE_BTH_BYTES)
		return;
	(void)sroce_icrc_final(sroce_icrc_update(
		sroce_icrc_begin(d, v6, d + l3, d + l3 + SROCE_UDP_HDR_BYTES),
		d, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sroce_pkt_hdrs h, h2;
	u8 out[SROCE_MAX_HDR_BYTES];
	u32 len, i, hl;
	int err;

	check_icrc(data, size);
	if (size > 0x10000)
		return 0;
	len = (u32)size;

	err = sroce_hdrs_parse(data, len, &h);
	FUZZ_ASSERT(err <= 0 && -err < SROCE_DROP_NUM);
	FUZZ_ASSERT(sroce_drop_reason_name(err) != NULL);
	if (err)
		return 0;

	FUZZ_ASSERT(h.info && h.info == sroce_opcode_info(data[0]));
	FUZZ_ASSERT(h.hdr_len <= SROCE_MAX_HDR_BYTES);
	FUZZ_ASSERT(h.hdr_len + h.payload_len + h.bth.padcnt +
		    SROCE_ICRC_BYTES == len);
	FUZZ_ASSERT(h.bth.tver == 0);
	if (!(h.info->mask & SROCE_M_PAYLOAD))
		FUZZ_ASSERT(h.payload_len == 0 && h.bth.padcnt == 0);

	/* rebuild: only bits present in the input, same header length */
	hl = sroce_hdrs_build(out, &h);
	FUZZ_ASSERT(hl == h.hdr_len);
	for (i = 0; i < hl; i++)
		FUZZ_ASSERT((out[i] & ~data[i]) == 0);

	/* the rebuilt headers parse to the same thing and rebuild identically */
	{
		u8 out2[SROCE_MAX_HDR_BYTES];
		u8 *pkt = malloc(len);

		FUZZ_ASSERT(pkt);
		memcpy(pkt, data, len);
		memcpy(pkt, out, hl);
		err = sroce_hdrs_parse(pkt, len, &h2);
		FUZZ_ASSERT(err == 0);
		FUZZ_ASSERT(h2.info == h.info && h2.hdr_len == h.hdr_len &&
			    h2.payload_len == h.payload_len);
		FUZZ_ASSERT(sroce_hdrs_build(out2, &h2) == hl);
		FUZZ_ASSERT(!memcmp(out, out2, hl));
		free(pkt);
	}
	return 0;
}

#ifdef SROCE_FUZZ_STANDALONE
#include <dirent.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	u8 *buf;
	long n;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	/* exact-size copy so ASan sees any overread */
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int replay(const char *path, unsigned long *count)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	char sub[4096];

	if (stat(path, &st))
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (stat(sub, &st) || !S_ISREG(st.st_mode))
			continue;
		(*count)++;
		replay_file(sub);
	}
	closedir(d);
	return 0;
}

static int write_seeds(const char *dir)
{
	unsigned int op;
	char path[4096];

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode_info((u8)op);
		struct sroce_pkt_hdrs h;
		u8 pkt[SROCE_MAX_HDR_BYTES + 16 + 4];
		u32 plen, len;
		FILE *f;

		if (!info)
			continue;
		memset(&h, 0, sizeof(h));
		h.bth.opcode = (u8)op;
		h.bth.pkey = 0xffff;
		h.bth.dqpn = 0x11 + op;
		h.bth.psn = 0xfffff0 + (op & 0xf);
		h.reth.len = 13;
		h.deth.qkey = 0x80010000;
		plen = (info->mask & SROCE_M_PAYLOAD) ? 13 : 0;
		h.bth.padcnt = sroce_pad_len(plen);
		memset(pkt, 0x5a, sizeof(pkt));
		len = sroce_hdrs_build(pkt, &h) + plen + h.bth.padcnt + 4;
		snprintf(path, sizeof(path), "%s/op_%02x", dir, op);
		f = fopen(path, "wb");
		if (!f || fwrite(pkt, 1, len, f) != len) {
			perror(path);
			if (f)
				fclose(f);
			return 1;
		}
		fclose(f);
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int i, bad = 0;

	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	for (i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;	/* tolerate libFuzzer-style flags */
		if (replay(argv[i], &count)) {
			fprintf(stderr, "cannot read %s\n", argv[i]);
			bad = 1;
		}
	}
	printf("replayed %lu inputs, no crashes\n", count);
	/* an empty or unreadable corpus proves nothing */
	return bad || !count;
}
#endif
