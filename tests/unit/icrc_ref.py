#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Independent RoCEv2 ICRC reference (stdlib only).

Builds complete IPv4/IPv6 + UDP + IBA packets, masks the variant fields,
computes the ICRC with zlib.crc32 and writes a C header with the packet
bytes and expected ICRC wire bytes for the C unit test.

The ICRC is zlib.crc32 over: 8 bytes of 0xff, the IP header (IPv4 TOS, TTL
and checksum -> 0xff; IPv6 traffic class, flow label, hop limit -> 0xff),
the UDP header (checksum -> 0xffff), the BTH (byte 4 -> 0xff) and
everything after it up to the ICRC. It is transmitted little endian.
"""
import random
import struct
import sys
import zlib

ROCE_PORT = 4791


def ipv4_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ipv4_hdr(tos, ttl, ident, src, dst, total_len):
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, total_len, ident,
                              0x4000, ttl, 17, 0, bytes(src), bytes(dst)))
    struct.pack_into("!H", h, 10, ipv4_csum(h))
    return bytes(h)


def ipv6_hdr(tc, flow, hop, src, dst, payload_len):
    word = (6 << 28) | (tc << 20) | flow
    return struct.pack("!IHBB16s16s", word, payload_len, 17, hop,
                       bytes(src), bytes(dst))


def bth(opcode, se, mig, pad, pkey, fecn, becn, dqpn, ackreq, psn):
    b1 = (se << 7) | (mig << 6) | (pad << 4)
    b4 = (fecn << 7) | (becn << 6)
    return struct.pack("!BBHB", opcode, b1, pkey, b4) + \
        dqpn.to_bytes(3, "big") + bytes([ackreq << 7]) + \
        psn.to_bytes(3, "big")


def masked(pkt, ipv6):
    """Return the bytes the ICRC covers (without the ICRC)."""
    m = bytearray(pkt[:-4])
    if ipv6:
        m[0] |= 0x0F
        m[1] = m[2] = m[3] = 0xFF
        m[7] = 0xFF
        ip_len = 40
    else:
        ip_len = (m[0] & 0x0F) * 4
        m[1] = 0xFF
        m[8] = 0xFF
        m[10] = m[11] = 0xFF
    m[ip_len + 6] = m[ip_len + 7] = 0xFF
    m[ip_len + 8 + 4] = 0xFF
    return b"\xff" * 8 + bytes(m)


def icrc(pkt, ipv6):
    return zlib.crc32(masked(pkt, ipv6)).to_bytes(4, "little")


def build(ipv6, ext, opcode, payload, rng, fecn=0, becn=0, udp_csum=0):
    pad = (4 - len(payload) % 4) % 4
    b = bth(opcode, rng.randrange(2), rng.randrange(2), pad,
            rng.choice([0xFFFF, 0x8001, 0x1234]), fecn, becn,
            rng.randrange(1 << 24), rng.randrange(2), rng.randrange(1 << 24))
    l4 = b + ext + payload + bytes(pad) + bytes(4)
    udp_len = 8 + len(l4)
    udp = struct.pack("!HHHH", 0xC000 | rng.randrange(0x4000), ROCE_PORT,
                      udp_len, udp_csum)
    if ipv6:
        ip = ipv6_hdr(rng.randrange(256), rng.randrange(1 << 20),
                      rng.randrange(1, 256), rng.randbytes(16),
                      rng.randbytes(16), udp_len)
    else:
        ip = ipv4_hdr(rng.randrange(256), rng.randrange(1, 256),
                      rng.randrange(1 << 16), rng.randbytes(4),
                      rng.randbytes(4), 20 + udp_len)
    pkt = bytearray(ip + udp + l4)
    pkt[-4:] = icrc(pkt, ipv6)
    return bytes(pkt), len(payload)


def self_check():
    """Known answers from public captures (scapy RoCE tests)."""
    # CNP captured on a ConnectX-4 Lx (IP header onward).
    cnp = bytes.fromhex(
        "45c2003c718c400040119161 0a001101 0a001201"
        "000012b700280000"
        "8100ffff400001180000 0000"
        + "00" * 16 + "82fd002a")
    assert icrc(cnp, False) == cnp[-4:], "CNP known answer mismatch"
    # UC SEND ONLY example; its ICRC 0x78f353f3 is scapy's published value.
    payload = b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00"
    ip = ipv4_hdr(0x01, 64, 1144, [192, 168, 0, 7], [192, 168, 0, 7], 64)
    assert ip[10:12] == b"\xb4\xd5"
    uc = bytearray(ip + struct.pack("!HHHH", 49152, ROCE_PORT, 44, 0xACA2) +
                   bth(0x24, 0, 1, 2, 0xFFFF, 0, 0, 211, 0, 13571856) +
                   payload + bytes(4))
    assert icrc(uc, False) == b"\x78\xf3\x53\xf3", "UC known answer mismatch"
    uc[-4:] = b"\x78\xf3\x53\xf3"
    return cnp, bytes(uc)


def c_bytes(data):
    out = []
    for i in range(0, len(data), 12):
        out.append("\t" + " ".join("0x%02x," % x for x in data[i:i + 12]))
    return "\n".join(out)


def main():
    rng = random.Random(4791)
    cnp, uc = self_check()
    r = rng.randbytes
    u32 = lambda v: struct.pack("!I", v)  # noqa: E731
    u64 = lambda v: struct.pack("!Q", v)  # noqa: E731
    reth = lambda: u64(rng.getrandbits(64)) + r(4) + r(4)  # noqa: E731
    vecs = [
        ("v4_rc_send_only_pad3", False, b"", 0x04, r(13), {}),
        ("v4_rc_write_only_imm_fecn", False, reth() + r(4), 0x0B, r(64),
         {"fecn": 1, "udp_csum": 0x1234}),
        ("v6_ud_send_only", True, r(4) + b"\x00" + r(3), 0x64, r(20), {}),
        ("v6_rc_ack", True, b"\x1f" + r(3), 0x11, b"", {"becn": 1}),
        ("v4_rc_read_req_becn", False, reth(), 0x0C, b"", {"becn": 1}),
        ("v6_rc_cmp_swap", True, u64(rng.getrandbits(64)) + r(4) +
         r(8) + r(8), 0x13, b"", {}),
        ("v4_xrc_send_first", False, b"\x00" + r(3), 0xA0, r(256), {}),
        ("v4_rc_read_resp_middle", False, b"", 0x0E, r(1024), {}),
        ("v6_uc_write_last_imm_pad1", True, u32(0xDEADBEEF), 0x29, r(3),
         {"fecn": 1, "becn": 1}),
    ]
    out = sys.stdout
    out.write("/* Generated by icrc_ref.py; do not edit. */\n")
    out.write("#ifndef ICRC_VECTORS_H\n#define ICRC_VECTORS_H\n\n")
    names = []
    meta = []
    for name, v6, ext, op, payload, kw in vecs:
        pkt, plen = build(v6, ext, op, payload, rng, **kw)
        names.append(name)
        meta.append((name, v6, pkt, op, plen))
    meta.append(("v4_cnp_cx4_capture", False, cnp, 0x81, 16))
    meta.append(("v4_uc_send_only_scapy", False, uc, 0x24, 18))
    for name, v6, pkt, op, plen in meta:
        out.write("static const unsigned char pkt_%s[%d] = {\n%s\n};\n\n"
                  % (name, len(pkt), c_bytes(pkt)))
    out.write("static const struct icrc_vec icrc_vecs[] = {\n")
    for name, v6, pkt, op, plen in meta:
        out.write("\t{ \"%s\", %s, %d, pkt_%s, sizeof(pkt_%s), 0x%02x, %d,\n"
                  "\t  { 0x%02x, 0x%02x, 0x%02x, 0x%02x } },\n"
                  % (name, "true" if v6 else "false", 40 if v6 else 20,
                     name, name, op, plen, *pkt[-4:]))
    out.write("};\n\n")

    # CRC-32 vectors straight from zlib.
    out.write("static const struct crc_vec crc_vecs[] = {\n")
    lens = list(range(0, 20)) + [31, 32, 33, 63, 64, 65, 255, 1000, 4096]
    for n in lens:
        data = rng.randbytes(n)
        out.write("\t{ %d, (const unsigned char *)\"%s\", 0x%08xu },\n"
                  % (n, "".join("\\x%02x" % x for x in data),
                     zlib.crc32(data)))
    out.write("};\n\n#endif /* ICRC_VECTORS_H */\n")


if __name__ == "__main__":
    main()
