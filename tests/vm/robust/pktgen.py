#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
Malformed RoCEv2 packet generator for the robust VM suite (stdlib only).

Sends hand-made IPv4/UDP/IBA packets through a raw socket
(AF_INET, SOCK_RAW, IPPROTO_RAW: we write the IP header ourselves) to
DST:4791. A packet to the guest's own eth0 address loops through lo and
sroce maps it back to the device owning that address.

Each class predicts, per packet, which sroce receive counter must move
(see Documentation/user-guide.md: rcvd_malformed, rcvd_icrc_err,
rcvd_pkey_mismatch, rcvd_no_qp, rcvd_bad_opcode, rcvd_qp_state_drop).
With --check, the counters of `rdma statistic show link DEV/1` are read
before and after, and every predicted counter must have moved by exactly
the predicted amount; rcvd_pkts must have moved by the number sent.
Classes marked "loose" (attacks on a live QP in RTS) only require
rcvd_pkts to account for every packet.

  pktgen.py [--dev sroce0] [--dst 10.0.0.1] [--seed N] [--check]
            [--qpn QPN] [--psn PSN] [--count N] CLASS
  CLASS: garbage | opcodes | truncated | badpad | tver | pkey | noqp |
         live_init | live_rts | icrc | masked | gsi_big | mcast_qpn | fuzz

fuzz sends --count (default 100000) packets drawn at random from the
exact classes (every prediction kept, so the drop counters must add up);
with --qpn/--psn/--va/--rkey/--len (qp_helper hold) every tenth one is
instead a request at that live QP (RETHs past the MR, wrong R_Keys, PSNs in
and out of the window, any RC opcode): loose, except that it may only land
in rcvd_qp_state_drop among the drop counters.

Stream modes (one per run, not mixed with the classes above) drive a live
QP pair set up by tests/vm/robust/qp_helper.c, sending from the QP's peer
(--src, default --dst; UDP source port as sroce derives it for the peer QP
--peer-qpn) with a valid ICRC:

  pktgen.py read --qpn QPN --peer-qpn PQPN --psn PSN --va VA --rkey RKEY
            --len LEN [--mtu 1024] [--no-first] [--dups N] [--dup-psn P]
            [--psn-span S] [--rate PPS] [--duration SECS] [--mem-guard MB]
      An RDMA READ request (RETH va/rkey/len) at PSN (unless --no-first),
      then duplicates of the READ whose first PSN is --dup-psn (default
      PSN): duplicate i restarts at PSN dup_psn + (i % S) with the RETH
      moved on by as many MTUs (a requester retrying from the middle).
      Sends N duplicates, or for SECS seconds, at most PPS per second.
      --mem-guard stops the storm early if MemAvailable fell by more than
      MB since start (an unbounded responder must not take the guest down).
  pktgen.py write_flood --follow FILE [--duration SECS] [--check]
      Follows the CREATE/LIVE/DEAD/DONE lines qp_helper churn writes to
      FILE and floods RDMA WRITE_ONLY requests as fast as it can: in-order
      PSNs at the live QP (3 of 4 packets), and at the QPNs/R_Keys of the
      rounds already destroyed; nothing between CREATE and LIVE (a new QP
      may reuse a dead QPN). Stops at DONE. With --check the packets sent
      to destroyed QPs must all be counted in rcvd_no_qp (minus what the
      backlog dropped before sroce, from /proc/net/softnet_stat) and
      rcvd_pkts must account for every packet sent.
  pktgen.py seq_send --qpn Q --peer-qpn P --psn PSN [--mtu M]
      From the peer's UDP source port: SEND_FIRST of one MTU at PSN, then
      SEND_ONLY at PSN + 1, an opcode-sequence error in the middle of a
      SEND.
  pktgen.py uc_gap --qpn Q --peer-qpn P --psn PSN [--mtu M]
      At a UC QP (qp_helper hold -u), from its peer: SEND_FIRST (one MTU)
      at PSN, SEND_LAST (16 bytes) at PSN + 2 (PSN + 1 lost), then
      SEND_ONLY (16 bytes of 0x77) at PSN + 3.  Taken whole, the gapped
      message would fit the helper's two-MTU receive.
  All print a "STATS key=value ..." line with what was sent and the
  counter deltas.

The ICRC is computed like tests/unit/icrc_ref.py: zlib.crc32 over 8 x 0xff,
the IPv4 header with TOS, TTL and checksum set to ones, the UDP header with
the checksum set to ones, the BTH with byte 4 set to ones, and the rest up
to the ICRC; it is stored little endian.
"""
import argparse
import random
import socket
import struct
import subprocess
import sys
import time
import zlib

ROCE_PORT = 4791
BTH, RDETH, DETH, XRCETH, FETH, RETH, ATMETH, AETH, ATMACK, IMM, IETH = \
    12, 4, 8, 4, 4, 16, 28, 4, 8, 4, 4

# --- independent IBA opcode table (IBA vol 1, 9.2 table 35) ----------------
# low 5 bits -> (headers after BTH for the *common* part, payload?, request?)
_COMMON = {
    0x00: ([], True, True),            # SEND_FIRST
    0x01: ([], True, True),            # SEND_MIDDLE
    0x02: ([], True, True),            # SEND_LAST
    0x03: ([IMM], True, True),         # SEND_LAST_IMM
    0x04: ([], True, True),            # SEND_ONLY
    0x05: ([IMM], True, True),         # SEND_ONLY_IMM
    0x06: ([RETH], True, True),        # WRITE_FIRST
    0x07: ([], True, True),            # WRITE_MIDDLE
    0x08: ([], True, True),            # WRITE_LAST
    0x09: ([IMM], True, True),         # WRITE_LAST_IMM
    0x0a: ([RETH], True, True),        # WRITE_ONLY
    0x0b: ([RETH, IMM], True, True),   # WRITE_ONLY_IMM
    0x0c: ([RETH], False, True),       # READ_REQUEST
    0x0d: ([AETH], True, False),       # READ_RESP_FIRST
    0x0e: ([], True, False),           # READ_RESP_MIDDLE
    0x0f: ([AETH], True, False),       # READ_RESP_LAST
    0x10: ([AETH], True, False),       # READ_RESP_ONLY
    0x11: ([AETH], False, False),      # ACKNOWLEDGE
    0x12: ([AETH, ATMACK], False, False),  # ATOMIC_ACKNOWLEDGE
    0x13: ([ATMETH], False, True),     # COMPARE_SWAP
    0x14: ([ATMETH], False, True),     # FETCH_ADD
    0x15: ([], False, True),           # RESYNC (RD only)
    0x16: ([IETH], True, True),        # SEND_LAST_INV
    0x17: ([IETH], True, True),        # SEND_ONLY_INV
    0x1c: ([FETH, RETH], False, True),  # FLUSH (RC only)
    0x1d: ([RETH], True, True),        # ATOMIC_WRITE (RC only)
}
_RC_LOW = list(range(0x00, 0x15)) + [0x16, 0x17, 0x1c, 0x1d]
_UC_LOW = list(range(0x00, 0x0c))
_RD_LOW = list(range(0x00, 0x16))
_XRC_LOW = list(range(0x00, 0x15)) + [0x16, 0x17]


def _build_table():
    t = {}
    for base, lows, tr in ((0x00, _RC_LOW, "RC"), (0x20, _UC_LOW, "UC"),
                           (0x40, _RD_LOW, "RD"), (0xa0, _XRC_LOW, "XRC")):
        for lo in lows:
            hdrs, pay, req = _COMMON[lo]
            if tr == "RD":
                ext = [RDETH, DETH] if req else [RDETH]
            elif tr == "XRC":
                ext = [XRCETH] if req else []
            else:
                ext = []
            t[base | lo] = dict(tr=tr, ext=ext + hdrs, pay=pay, req=req,
                                hlen=BTH + sum(ext) + sum(hdrs))
    t[0x64] = dict(tr="UD", ext=[DETH], pay=True, req=True, hlen=BTH + DETH)
    t[0x65] = dict(tr="UD", ext=[DETH, IMM], pay=True, req=True,
                   hlen=BTH + DETH + IMM)
    # CNP: 16 reserved bytes after the BTH (carried as "payload")
    t[0x81] = dict(tr="CNP", ext=[], pay=True, req=False, hlen=BTH)
    return t


OPS = _build_table()
UNKNOWN = [op for op in range(256) if op not in OPS]


# --- packet construction -------------------------------------------------------
def ipv4_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Gen:
    def __init__(self, rng, src, dst, sport=None):
        self.rng = rng
        self.src = socket.inet_aton(src)
        self.dst = socket.inet_aton(dst)
        self.sport = sport

    def ip_udp(self, l4len, tos=0, ttl=64):
        rng = self.rng
        total = 20 + 8 + l4len
        ident = rng.randrange(1, 0x10000)
        ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, tos, total, ident,
                                   0x4000, ttl, 17, 0, self.src, self.dst))
        struct.pack_into("!H", ip, 10, ipv4_csum(ip))
        sport = self.sport if self.sport is not None else \
            0xC000 | rng.randrange(0x4000)
        udp = struct.pack("!HHHH", sport, ROCE_PORT, 8 + l4len, 0)
        return bytes(ip), udp

    @staticmethod
    def icrc(ip, udp, l4_no_icrc):
        m = bytearray(ip + udp + l4_no_icrc)
        m[1] = 0xFF                  # TOS
        m[8] = 0xFF                  # TTL
        m[10] = m[11] = 0xFF         # IP checksum
        m[20 + 6] = m[20 + 7] = 0xFF  # UDP checksum
        m[28 + 4] = 0xFF             # BTH FECN/BECN/resv
        return zlib.crc32(b"\xff" * 8 + bytes(m)).to_bytes(4, "little")

    def bth(self, op, pad=0, tver=0, pkey=0xFFFF, qpn=0, psn=None,
            ackreq=None):
        rng = self.rng
        b1 = (rng.randrange(2) << 7) | ((pad & 3) << 4) | (tver & 0xF)
        if psn is None:
            psn = rng.randrange(1 << 24)
        if ackreq is None:
            ackreq = rng.randrange(2)
        return (struct.pack("!BBHB", op, b1, pkey, rng.randrange(2) << 6) +
                (qpn & 0xFFFFFF).to_bytes(3, "big") +
                bytes([ackreq << 7]) + (psn & 0xFFFFFF).to_bytes(3, "big"))

    def ext(self, op, reth=None):
        """Plausible extension headers for op (RETH overridable)."""
        rng = self.rng
        out = b""
        for h in OPS[op]["ext"]:
            if h == RETH:
                va, rkey, ln = reth or (rng.getrandbits(64),
                                        rng.getrandbits(32),
                                        rng.randrange(0, 4096))
                out += struct.pack("!QII", va & (2**64 - 1),
                                   rkey & 0xFFFFFFFF, ln & 0xFFFFFFFF)
            elif h == ATMETH:
                out += struct.pack("!QIQQ", rng.getrandbits(64) & ~7,
                                   rng.getrandbits(32), rng.getrandbits(64),
                                   rng.getrandbits(64))
            elif h == AETH:
                out += bytes([rng.choice([0x00, 0x1f, 0x20, 0x60, 0x61,
                                          0x62, 0x63, 0x64,
                                          rng.randrange(256)])]) + \
                    rng.randbytes(3)
            elif h == DETH:
                out += rng.randbytes(4) + b"\0" + rng.randbytes(3)
            elif h in (RDETH, XRCETH):
                out += b"\0" + rng.randbytes(3)
            elif h == FETH:
                out += bytes(3) + bytes([rng.randrange(256) & 0x3F])
            else:  # IMM, IETH, ATMACK
                out += rng.randbytes(h)
        assert len(out) + BTH == OPS[op]["hlen"], hex(op)
        return out

    def payload(self, op):
        rng = self.rng
        if op == 0x81:
            return bytes(16), 0
        if not OPS[op]["pay"]:
            return b"", 0
        if op == 0x1d:
            return rng.randbytes(8), 0
        n = rng.randrange(0, 65)
        pad = (4 - n % 4) % 4
        return rng.randbytes(n) + bytes(pad), pad

    def packet(self, op, qpn, pkey=0xFFFF, tver=0, pad=None, psn=None,
               reth=None, tos=0, ttl=64, udp_csum_ok=False, body=None,
               ackreq=None):
        """A complete packet with a correct ICRC (unless the caller breaks
        it afterwards). body overrides the bytes after the BTH."""
        if body is None:
            pay, p = self.payload(op) if op in OPS else (b"", 0)
            body = (self.ext(op, reth) if op in OPS else b"") + pay
        else:
            p = 0
        if pad is None:
            pad = p
        bth = self.bth(op, pad=pad, tver=tver, pkey=pkey, qpn=qpn, psn=psn,
                       ackreq=ackreq)
        l4len = len(bth) + len(body) + 4
        ip, udp = self.ip_udp(l4len, tos=tos, ttl=ttl)
        l4 = bth + body + self.icrc(ip, udp, bth + body)
        if udp_csum_ok:
            # a real UDP checksum (covers the ICRC; the ICRC masks it)
            udp = bytearray(udp)
            pseudo = self.src + self.dst + struct.pack("!BBH", 0, 17,
                                                       8 + l4len)
            data = pseudo + bytes(udp) + l4
            if len(data) % 2:
                data += b"\0"
            struct.pack_into("!H", udp, 6, ipv4_csum(data) or 0xFFFF)
            udp = bytes(udp)
        return ip + udp + l4

    def raw(self, l4):
        """IP/UDP around arbitrary bytes (no ICRC logic)."""
        ip, udp = self.ip_udp(len(l4))
        return ip + udp + l4


# --- prediction of sroce's drop counter for a packet (sroce_rcv order) -------
def classify_parse(l4):
    """Counter a packet lands in if it fails header parsing, else None.
    l4 = bytes after the UDP header (BTH .. ICRC)."""
    n = len(l4)
    if n < BTH + 4:
        return "rcvd_malformed"
    op = l4[0]
    if op not in OPS:
        return "rcvd_bad_opcode"
    if l4[1] & 0xF:
        return "rcvd_malformed"
    info = OPS[op]
    if n < info["hlen"] + 4:
        return "rcvd_malformed"
    rest = n - info["hlen"] - 4
    if rest & 3:
        return "rcvd_malformed"
    pad = (l4[1] >> 4) & 3
    if not info["pay"] and (rest or pad):
        return "rcvd_malformed"
    if pad > rest:
        return "rcvd_malformed"
    return None


# --- counters ----------------------------------------------------------------
def read_counters(dev):
    out = subprocess.run(["rdma", "statistic", "show", "link", dev + "/1"],
                         capture_output=True, text=True, check=True).stdout
    tok = out.split()
    c = {}
    # "link sroce0/1 name value name value ..."
    i = 2 if tok[:1] == ["link"] else 0
    while i + 1 < len(tok):
        try:
            c[tok[i]] = int(tok[i + 1])
        except ValueError:
            pass
        i += 2
    return c


# --- classes -------------------------------------------------------------------
def c_garbage(g, a):
    rng = g.rng
    for _ in range(a.count or 600):
        n = rng.randrange(0, 301)
        l4 = bytearray(rng.randbytes(n))
        if n > 1 and rng.randrange(2):
            l4[1] &= 0xF0        # TVer 0: get past the TVer check more often
        if n > 0 and rng.randrange(2):
            l4[0] = rng.choice(list(OPS))  # a known opcode
        yield g.raw(bytes(l4)), classify_parse(bytes(l4)) or "rcvd_icrc_err"


NOQP_BASE = 0xF00000


def noqp(rng):
    return NOQP_BASE | rng.randrange(0x0FFFFF)


def c_opcodes(g, a):
    """All 256 opcodes, plausible headers, correct ICRC, to a QPN that does
    not exist: unknown opcodes -> rcvd_bad_opcode, the rest -> rcvd_no_qp."""
    for op in range(256):
        pkt = g.packet(op, noqp(g.rng))
        yield pkt, "rcvd_bad_opcode" if op not in OPS else "rcvd_no_qp"


def c_truncated(g, a):
    """A spread of known opcodes (every header shape) cut at every length
    inside their headers, with a correct ICRC over what is left: always too
    short -> rcvd_malformed."""
    ops = sorted(OPS)
    pick = sorted(set(ops[::5]) | {0x0b, 0x0c, 0x12, 0x13, 0x1c, 0x4b,
                                   0x52, 0x53, 0x65, 0x81, 0xab, 0xb3})
    for op in pick:
        full = g.packet(op, noqp(g.rng))
        ip, udp, l4 = full[:20], full[20:28], full[28:]
        hlen = OPS[op]["hlen"]
        for n in range(0, hlen + 4):
            cut = l4[:n]
            if n >= 4 + 5:
                # n-4 bytes of headers, then an ICRC over them
                ip2, udp2 = g.ip_udp(n)
                cut = l4[:n - 4] + g.icrc(ip2, udp2, l4[:n - 4])
                pkt = ip2 + udp2 + cut
            else:
                pkt = g.raw(cut)
            yield pkt, "rcvd_malformed"


def c_badpad(g, a):
    rng = g.rng
    nopay = [op for op in OPS if not OPS[op]["pay"]]
    pay = [op for op in OPS if OPS[op]["pay"] and op not in (0x81, 0x1d)]
    for _ in range(100):
        # pad count on an opcode that carries no payload
        op = rng.choice(nopay)
        yield g.packet(op, noqp(rng), pad=rng.randrange(1, 4)), \
            "rcvd_malformed"
        # pad count larger than the (empty) payload
        op = rng.choice(pay)
        body = g.ext(op)
        yield g.packet(op, noqp(rng), pad=rng.randrange(1, 4), body=body), \
            "rcvd_malformed"


def c_tver(g, a):
    rng = g.rng
    for _ in range(150):
        op = rng.choice(list(OPS))
        yield g.packet(op, noqp(rng), tver=rng.randrange(1, 16)), \
            "rcvd_malformed"


def c_pkey(g, a):
    rng = g.rng
    for i in range(200):
        op = rng.choice(list(OPS))
        pk = [0x1234, 0x0000, 0x8001, 0x7FFE, 0xFFFE, 0x1234][i % 6]
        yield g.packet(op, noqp(rng), pkey=pk), "rcvd_pkey_mismatch"
    # positive control: 0x7FFF is the limited-member default P_Key, which
    # matches the full-member 0xFFFF entry: accepted, then no QP.
    for _ in range(20):
        op = rng.choice(list(OPS))
        yield g.packet(op, noqp(rng), pkey=0x7FFF), "rcvd_no_qp"


def c_noqp(g, a):
    rng = g.rng
    for _ in range(200):
        op = rng.choice(list(OPS))
        yield g.packet(op, noqp(rng)), "rcvd_no_qp"


def c_icrc(g, a):
    """Correct packets with one bit flipped in the ICRC or in the payload."""
    rng = g.rng
    pay = [op for op in OPS if OPS[op]["pay"] and op != 0x81]
    for i in range(300):
        op = rng.choice(list(OPS))
        pkt = bytearray(g.packet(op, noqp(rng)))
        if i % 2 and op in pay and len(pkt) > 28 + OPS[op]["hlen"] + 4:
            lo = 28 + OPS[op]["hlen"]
            pos = rng.randrange(lo, len(pkt) - 4)
        else:
            pos = rng.randrange(len(pkt) - 4, len(pkt))
        pkt[pos] ^= 1 << rng.randrange(8)
        yield bytes(pkt), "rcvd_icrc_err"


def c_masked(g, a):
    """Positive control for the ICRC masks: TOS, TTL, a real UDP checksum,
    FECN/BECN are not covered, so these packets pass the ICRC check."""
    rng = g.rng
    for _ in range(60):
        op = rng.choice(list(OPS))
        yield g.packet(op, noqp(rng), tos=rng.randrange(256),
                       ttl=rng.randrange(1, 256),
                       udp_csum_ok=bool(rng.randrange(2))), "rcvd_no_qp"


def c_live_init(g, a):
    """Every known opcode to a live RC QP that is still in INIT: opcodes of
    other transports -> rcvd_bad_opcode, RC opcodes -> rcvd_qp_state_drop
    (requests need RTR, responses RTS/SQD)."""
    for rnd in range(2):
        for op in sorted(OPS):
            exp = "rcvd_qp_state_drop" if OPS[op]["tr"] == "RC" \
                else "rcvd_bad_opcode"
            yield g.packet(op, a.qpn), exp


def c_live_rts(g, a):
    """Attack a connected RC QP: random RC opcodes, PSNs around and far from
    the expected one, hostile RETH/AtomicETH values. Loose: the QP may end in
    the error state; only rcvd_pkts must account for every packet."""
    rng = g.rng
    rc = [op for op in OPS if OPS[op]["tr"] == "RC"]
    base = a.psn if a.psn is not None else rng.randrange(1 << 24)
    reths = [(0, 0, 0xFFFFFFFF), (2**64 - 16, 0, 4096),
             (2**64 - 1, rng.getrandbits(32), 0x80000000),
             (0x1000, 0xFFFFFFFF, 0x7FFFFFFF), (rng.getrandbits(64), 0, 1)]
    for i in range(a.count or 600):
        op = rng.choice(rc)
        if i % 3 == 0:
            psn = base + rng.randrange(-8, 64)
        elif i % 3 == 1:
            psn = base - rng.randrange(1, 1 << 23)
        else:
            psn = rng.randrange(1 << 24)
        yield g.packet(op, a.qpn, psn=psn & 0xFFFFFF,
                       reth=rng.choice(reths)), None


def c_gsi_big(g, a):
    """UD SENDs to QP1 (the GSI QP that rdma_cm's MADs use) with the GSI
    Q_Key and a payload too long for its 256-byte MAD buffers: each costs
    that datagram only (rcvd_ud_too_long), never the QP; a wrong Q_Key is
    a silent drop (C10-14)."""
    rng = g.rng
    for i in range(60):
        qkey = 0x80010000 if i % 6 else 0x80010001
        deth = struct.pack("!II", qkey, rng.randrange(1 << 24))
        n = rng.choice([300, 512, 900])
        body = deth + rng.randbytes(n)
        yield g.packet(0x64, 1, body=body, pad=0), \
            "rcvd_ud_too_long" if i % 6 else "rcvd_qkey_mismatch"


MCAST_GROUP = "239.192.47.91"


def c_mcast_qpn(g, a):
    """UD SENDs to a multicast group this host joined (run_class joins it
    and sends to it), with the GSI Q_Key and a MAD-sized payload, but to
    DQPN 1 instead of the multicast QPN 0xFFFFFF: o10-35 drops them
    (rcvd_no_qp); delivered, QP1 would have taken them."""
    rng = g.rng
    mg = Gen(rng, a.src or a.dst, MCAST_GROUP)
    for _ in range(40):
        deth = struct.pack("!II", 0x80010000, rng.randrange(1 << 24))
        yield mg.packet(0x64, 1, body=deth + rng.randbytes(64), pad=0), \
            "rcvd_no_qp"


# a loose packet that may also land in rcvd_malformed (c_live_fuzz)
LOOSE_MALFORMED = "loose:rcvd_malformed"

# the classes whose every packet has an exact prediction
EXACT = ["garbage", "opcodes", "truncated", "badpad", "tver", "pkey", "noqp",
         "icrc", "masked", "gsi_big"]


def c_live_fuzz(g, a):
    """Requests at a live RC QP (qp_helper hold: --qpn/--psn, an MR at
    --va/--rkey/--len): in-window and far PSNs, wrong-context opcodes, RETH
    lengths past the MR's end, wrong R_Keys. Loose: the QP may go to ERR.
    A response whose AETH has a type its opcode may not carry (reserved,
    or a NAK on anything but an ACKNOWLEDGE) is LOOSE_MALFORMED: the
    completer counts it in rcvd_malformed while the QP is in RTS."""
    rng = g.rng
    rc = [op for op in OPS if OPS[op]["tr"] == "RC"]
    base = a.psn if a.psn is not None else rng.randrange(1 << 24)
    va, rkey, ln = a.va or 0, a.rkey or 0, a.len or 0
    reths = [(va, rkey, ln + 1), (va + ln - 1, rkey, 2), (va - 1, rkey, 1),
             (va, rkey ^ 0x100, 64), (va, rkey, 0x80000000),
             (2**64 - 1, rkey, 2), (va, rkey, 64)]
    while True:
        op = rng.choice(rc)
        psn = base + rng.randrange(-4, 16) if rng.randrange(2) else \
            rng.randrange(1 << 24)
        p = g.packet(op, a.qpn, psn=psn & 0xFFFFFF, reth=rng.choice(reths))
        # READ_RESPONSE_FIRST/LAST/ONLY, ACKNOWLEDGE, ATOMIC_ACKNOWLEDGE
        # carry an AETH first, after IP, UDP and the BTH
        syn = p[20 + 8 + BTH] if op in (0x0d, 0x0f, 0x10, 0x11, 0x12) \
            else None
        bad = syn is not None and ((syn & 0x60) == 0x40 or
                                   (op != 0x11 and syn & 0x60))
        yield p, LOOSE_MALFORMED if bad else None


def c_fuzz(g, a):
    """--count packets (default 100000) interleaved at random from the exact
    classes, each keeping its prediction; with --qpn every tenth packet is a
    loose c_live_fuzz request at that live QP instead."""
    rng = g.rng
    sub = argparse.Namespace(**vars(a))
    sub.count = 0
    gens = {}
    live = c_live_fuzz(g, a) if a.qpn is not None else None
    for i in range(a.count or 100000):
        if live is not None and i % 10 == 9:
            yield next(live)
            continue
        cls = rng.choice(EXACT)
        for _ in range(2):
            if cls not in gens:
                gens[cls] = CLASSES[cls](g, sub)
            try:
                yield next(gens[cls])
                break
            except StopIteration:
                del gens[cls]


CLASSES = {
    "fuzz": c_fuzz,
    "garbage": c_garbage, "opcodes": c_opcodes, "truncated": c_truncated,
    "badpad": c_badpad, "tver": c_tver, "pkey": c_pkey, "noqp": c_noqp,
    "icrc": c_icrc, "masked": c_masked, "live_init": c_live_init,
    "live_rts": c_live_rts, "gsi_big": c_gsi_big, "mcast_qpn": c_mcast_qpn,
}
DROP_COUNTERS = ["rcvd_malformed", "rcvd_icrc_err", "rcvd_pkey_mismatch",
                 "rcvd_no_qp", "rcvd_bad_opcode", "rcvd_qp_state_drop",
                 "rcvd_ud_too_long", "rcvd_qkey_mismatch"]


def sysfs_counter(dev, name):
    try:
        with open("/sys/class/infiniband/%s/ports/1/hw_counters/%s"
                  % (dev, name)) as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


def sysfs_rcvd(dev):
    return sysfs_counter(dev, "rcvd_pkts")


def run_class(cls, a, sock):
    """Send one class; with --check compare the counter deltas. Returns
    (ok, reason)."""
    g = Gen(random.Random(a.seed * 1000 + sorted(CLASSES).index(cls)),
            a.src or a.dst, a.dst)
    t0 = time.time()
    pkts = list(CLASSES[cls](g, a))
    expect = {}
    loose = loose_mal = 0
    for _, e in pkts:
        if e == LOOSE_MALFORMED:
            loose_mal += 1
            loose += 1
        elif e:
            expect[e] = expect.get(e, 0) + 1
        else:
            loose += 1
    t1 = time.time()
    dst = a.dst
    if cls == "mcast_qpn":
        # join the group on the interface (else IP drops the looped copy)
        # and send to it from that interface
        join = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        join.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                        socket.inet_aton(MCAST_GROUP) +
                        socket.inet_aton(a.dst))
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                             socket.IPPROTO_RAW)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF,
                        socket.inet_aton(a.dst))
        dst = MCAST_GROUP
    before = read_counters(a.dev) if a.check else None
    for i, (p, _) in enumerate(pkts):
        sock.sendto(p, (dst, 0))
        if i % 64 == 63:
            time.sleep(0.002)
    n = len(pkts)
    print("%s: sent %d packets (%d loose, seed %d; built in %.1fs, sent in "
          "%.1fs)" % (cls, n, loose, a.seed, t1 - t0, time.time() - t1))
    if not a.check:
        return True, ""
    # Wait until sroce has seen them all (sysfs: cheaper than rdma(8)).
    # fuzz runs next to live traffic, so rcvd_pkts says nothing: wait for
    # the drop counters to reach what was predicted.
    end = time.time() + (60 if cls == "fuzz" else 15)
    r0 = before.get("rcvd_pkts", 0)
    d0 = sum(before.get(k, 0) for k in DROP_COUNTERS)
    want = sum(expect.values())
    while time.time() < end:
        if cls == "fuzz":
            d = [sysfs_counter(a.dev, k) for k in DROP_COUNTERS]
            if None in d or sum(d) - d0 >= want:
                break
        else:
            r = sysfs_rcvd(a.dev)
            if r is None or r - r0 >= n:
                break
        time.sleep(0.1)
    time.sleep(0.5 if cls == "fuzz" else 0)
    after = read_counters(a.dev)
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in after}
    bad = []
    got = delta.get("rcvd_pkts", 0)
    line = "  rcvd_pkts: +%d (sent %d)" % (got, n)
    # live_rts: the attacked QP's ACKs/NAKs to its (frozen) peer are
    # received too, so there can be more; fuzz: live traffic as well
    if got < n or (got != n and cls not in ("live_rts", "fuzz")):
        bad.append("rcvd_pkts got +%d expected +%d" % (got, n))
        line += "  <-- MISMATCH"
    print(line)
    for k in DROP_COUNTERS:
        if k not in after:
            print("  %s: counter missing from rdma statistic" % k)
            bad.append("%s missing" % k)
            continue
        d = delta[k]
        if cls == "live_rts":
            print("  %s: +%d" % (k, d))
            continue
        e = expect.get(k, 0)
        # a live QP attacked into ERR drops the rest of its packets here
        # or, while it is in RTS, a response it may not take as one here
        hi = e + loose if k == "rcvd_qp_state_drop" else \
            e + loose_mal if k == "rcvd_malformed" else e
        line = "  %s: +%d (expected +%d%s)" % (
            k, d, e, "..+%d" % hi if hi != e else "")
        if not e <= d <= hi:
            bad.append("%s got +%d expected +%d%s" % (
                k, d, e, "..+%d" % hi if hi != e else ""))
            line += "  <-- MISMATCH"
        print(line)
    if cls == "live_rts":
        for k in ("duplicate_request", "out_of_seq_request",
                  "send_nak_seq_err", "send_nak_other",
                  "out_of_seq_response"):
            if k in delta:
                print("  %s: +%d" % (k, delta[k]))
    return not bad, "; ".join(bad)


# --- stream modes: a live QP pair from qp_helper ------------------------------
def udp_sport(lqpn, rqpn):
    """UDP source port sroce uses for QP lqpn talking to rqpn
    (include/sroce/wire/udp.h sroce_udp_sport())."""
    m = 0xFFFFFFFF
    h = ((lqpn & 0xFFFFFF) * 0x9E3779B1) & m
    h ^= ((rqpn & 0xFFFFFF) * 0x85EBCA77) & m
    h ^= h >> 15
    h = (h * 0xC2B2AE3D) & m
    h ^= h >> 13
    h ^= h >> 16
    return 0xC000 | (h & 0x3FFF)


def mem_available_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return 0


def softnet_drops():
    """Packets the per-CPU input backlog dropped before any protocol saw
    them (second column of /proc/net/softnet_stat)."""
    n = 0
    try:
        with open("/proc/net/softnet_stat") as f:
            for line in f:
                n += int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
    return n


STAT_COUNTERS = ["rcvd_pkts", "sent_pkts", "loopback_pkts",
                 "duplicate_request", "out_of_seq_request",
                 "out_of_seq_response", "send_nak_seq_err", "send_nak_other",
                 "rcvd_no_qp", "rcvd_qp_state_drop", "rcvd_malformed",
                 "rcvd_icrc_err", "rcvd_bad_opcode", "rcvd_uc_msg_drop",
                 "rcvd_no_recv_wqe"]


def settle(a, r0, n, secs):
    """Wait until rcvd_pkts moved by n since r0 (or secs passed)."""
    end = time.time() + secs
    while time.time() < end:
        r = sysfs_rcvd(a.dev)
        if r is None or r - r0 >= n:
            return
        time.sleep(0.1)


def settle_counts(a, before, want):
    """rcvd_pkts moves as a packet is queued, before its QP's pass counts
    it: wait (up to --settle) until each counter in want moved that far."""
    end = time.time() + a.settle
    while time.time() < end:
        d = counter_deltas(a, before)
        if all(d.get(k, 0) >= n for k, n in want.items()):
            return
        time.sleep(0.1)


def counter_deltas(a, before):
    after = read_counters(a.dev)
    return {k: after[k] - before.get(k, 0) for k in after}


def stats_line(kv, delta):
    out = ["STATS"] + ["%s=%s" % (k, v) for k, v in kv]
    out += ["d_%s=%d" % (k, delta[k]) for k in STAT_COUNTERS if k in delta]
    return " ".join(out)


def stream_gen(a, lqpn, rqpn):
    """Packets of QP lqpn to QP rqpn (their UDP source port)."""
    return Gen(random.Random(a.seed), a.src or a.dst, a.dst,
               udp_sport(lqpn, rqpn))


def stream_begin(a, mode, need, to_peer=False):
    """A stream mode's frame: exit unless every option in need is given;
    return a generator for packets from --peer-qpn to --qpn (with to_peer,
    the other way) and the counters before anything is sent."""
    for k in need:
        if getattr(a, k) is None:
            sys.exit("pktgen: %s needs --%s" % (mode, k.replace("_", "-")))
    g = stream_gen(a, a.qpn, a.peer_qpn) if to_peer else \
        stream_gen(a, a.peer_qpn, a.qpn)
    return g, read_counters(a.dev)


def stream_end(a, before, sent, want, extra=()):
    """Wait until the sent packets are received and each counter in want
    moved that far (or --settle passed); print the STATS line."""
    settle(a, before.get("rcvd_pkts", 0), sent, a.settle)
    settle_counts(a, before, want)
    print(stats_line([("sent", sent)] + list(extra),
                     counter_deltas(a, before)))
    return 0


def s_read(a, sock):
    """One READ request and/or a storm of duplicates of a READ."""
    for k in ("qpn", "psn", "va", "rkey", "len"):
        if getattr(a, k) is None:
            sys.exit("pktgen: read needs --%s" % k)
    src = a.src or a.dst
    sport = udp_sport(a.peer_qpn, a.qpn) if a.peer_qpn is not None else None
    g = Gen(random.Random(a.seed), src, a.dst, sport)
    mtu = a.mtu
    before = read_counters(a.dev)
    r0 = before.get("rcvd_pkts", 0)
    mem0 = mem_available_kb()
    t0 = time.time()
    sent = 0
    print("read: sending")
    sys.stdout.flush()
    if not a.no_first:
        sock.sendto(g.packet(0x0c, a.qpn, psn=a.psn & 0xFFFFFF,
                             reth=(a.va, a.rkey, a.len), ackreq=1),
                    (a.dst, 0))
        sent += 1
        print("read: READ request psn %#x va %#x rkey %#x len %d sent "
              "(sendto returned after %.1fs)" % (a.psn, a.va, a.rkey, a.len,
                                                 time.time() - t0))
        sys.stdout.flush()
    dpsn = a.psn if a.dup_psn is None else a.dup_psn
    span = max(1, min(a.psn_span, max(1, (a.len + mtu - 1) // mtu)))
    # a duplicate starting k packets in asks for the rest of the message
    dups = [g.packet(0x0c, a.qpn, psn=(dpsn + k) & 0xFFFFFF,
                     reth=(a.va + k * mtu, a.rkey, max(0, a.len - k * mtu)),
                     ackreq=1) for k in range(span)]
    ndup = 0
    why = "done"
    td = time.time()
    if a.dups or a.duration:
        time.sleep(a.gap)
        td = time.time()
        gap = 1.0 / a.rate if a.rate else 0
        nxt = td
        while True:
            if a.dups and ndup >= a.dups:
                break
            now = time.time()
            if a.duration and now - td >= a.duration:
                break
            if a.mem_guard and ndup % 20 == 0:
                drop = (mem0 - mem_available_kb()) // 1024
                if drop > a.mem_guard:
                    why = ("mem-guard: MemAvailable fell by %d MB after %d "
                           "duplicates; storm stopped" % (drop, ndup))
                    break
            if gap:
                if now < nxt:
                    time.sleep(nxt - now)
                nxt += gap
            sock.sendto(dups[ndup % span], (a.dst, 0))
            ndup += 1
    el = time.time() - td
    sent += ndup
    print("read: %d duplicate READ requests (psn %#x + 0..%d) in %.1fs "
          "(%.0f/s): %s" % (ndup, dpsn, span - 1, el,
                            ndup / el if el > 0 else 0, why))
    sys.stdout.flush()
    settle(a, r0, sent, a.settle)
    delta = counter_deltas(a, before)
    print(stats_line([("sent", sent), ("dups", ndup),
                      ("mem_drop_mb", (mem0 - mem_available_kb()) // 1024),
                      ("aborted", int(why != "done"))], delta))
    return 0


def parse_kv(line):
    f = line.split()
    d = {"ev": f[0]} if f else {}
    for t in f[1:]:
        k, _, v = t.partition("=")
        d[k] = v
    return d


def s_write_flood(a, sock):
    """WRITE_ONLY flood at the QPs qp_helper churn creates and destroys."""
    if not a.follow:
        sys.exit("pktgen: write_flood needs --follow FILE")
    src = a.src or a.dst
    g = Gen(random.Random(a.seed), src, a.dst)
    rng = g.rng
    before = read_counters(a.dev)
    r0 = before.get("rcvd_pkts", 0)
    nd0 = softnet_drops()
    live = None          # dict(qpn, peer, psn, rkey, va, len)
    dead = []            # [(qpn, peer_qpn, rkey)] of destroyed rounds
    creating = False
    sent = sent_live = sent_dead = rounds = 0
    payload = bytes(range(256))
    buf = ""
    print("flood: ready, following %s" % a.follow)
    sys.stdout.flush()
    t0 = time.time()
    done = False
    with open(a.follow) as fh:
        while not done and time.time() - t0 < (a.duration or 120):
            buf += fh.read()
            while "\n" in buf:
                line, buf = buf.split("\n", 1)
                d = parse_kv(line)
                ev = d.get("ev")
                if ev == "CREATE":
                    creating = True
                    live = None
                elif ev == "LIVE":
                    creating = False
                    live = dict(qpn=int(d["qpn"]), peer=int(d["peer_qpn"]),
                                psn=int(d["psn"]), rkey=int(d["rkey"]),
                                va=int(d["va"]), len=int(d["len"]))
                    # a dead QPN handed out again is not dead any more
                    dead = [x for x in dead
                            if x[0] not in (live["qpn"], live["peer"])]
                    rounds += 1
                elif ev == "DEAD":
                    live = None
                    r = int(d["rkey"])
                    dead += [(int(d["qpn"]), int(d["peer_qpn"]), r),
                             (int(d["peer_qpn"]), int(d["qpn"]), r)]
                elif ev == "DONE":
                    done = True
                if ev in ("LIVE", "DEAD"):
                    print("flood %5.1fs: %s (sent %d: %d live, %d dead)"
                          % (time.time() - t0, line, sent, sent_live,
                             sent_dead))
                    sys.stdout.flush()
                if ev == "FAIL":
                    print("write_flood: helper failed: %s" % line)
                    done = True
            if creating or (live is None and not dead):
                time.sleep(0.005)
                continue
            for i in range(32):
                if live is not None and (i % 4 or not dead):
                    off = rng.randrange(0, live["len"] - 256 + 1) & ~3
                    g.sport = udp_sport(live["peer"], live["qpn"])
                    pkt = g.packet(0x0a, live["qpn"], psn=live["psn"],
                                   body=struct.pack("!QII", live["va"] + off,
                                                    live["rkey"], 256) +
                                   payload, ackreq=int(live["psn"] % 16 == 0))
                    live["psn"] = (live["psn"] + 1) & 0xFFFFFF
                    sent_live += 1
                else:
                    q, peer, rkey = dead[(sent_dead + i) % len(dead)]
                    g.sport = udp_sport(peer, q)
                    pkt = g.packet(0x0a, q, psn=rng.randrange(1 << 24),
                                   body=struct.pack("!QII", 0x1000, rkey,
                                                    256) + payload, ackreq=1)
                    sent_dead += 1
                sock.sendto(pkt, (a.dst, 0))
                sent += 1
    el = time.time() - t0
    settle(a, r0, sent, a.settle)
    delta = counter_deltas(a, before)
    nd = softnet_drops() - nd0
    print(stats_line([("sent", sent), ("sent_live", sent_live),
                      ("sent_dead", sent_dead), ("rounds", rounds),
                      ("secs", "%.1f" % el), ("pps", "%.0f" % (sent / el)),
                      ("backlog_drops", nd), ("helper_done", int(done))],
                     delta))
    if not a.check:
        return 0
    bad = []
    if "rcvd_no_qp" not in delta:
        print("SKIP write_flood: no rcvd_no_qp counter on %s" % a.dev)
        return 0
    if rounds < 2 or sent_dead == 0:
        bad.append("only %d rounds / %d packets to dead QPs seen (helper "
                   "output in %s)" % (rounds, sent_dead, a.follow))
    if delta["rcvd_no_qp"] < sent_dead - nd:
        bad.append("rcvd_no_qp +%d < %d packets sent to destroyed QPs "
                   "(backlog drops %d)" % (delta["rcvd_no_qp"], sent_dead, nd))
    if delta.get("rcvd_pkts", 0) < sent - nd:
        bad.append("rcvd_pkts +%d < %d sent (backlog drops %d)"
                   % (delta.get("rcvd_pkts", 0), sent, nd))
    ceiling = sent + delta.get("loopback_pkts", 0)
    if delta["rcvd_no_qp"] > ceiling:
        bad.append("rcvd_no_qp +%d > everything sent (%d incl. loopback)"
                   % (delta["rcvd_no_qp"], ceiling))
    print("PASS write_flood" if not bad else
          "FAIL write_flood: " + "; ".join(bad))
    return 1 if bad else 0


def s_seq_send(a, sock):
    """An opcode-sequence error in the middle of a SEND, from the QP's own
    peer: SEND_FIRST (one MTU) at --psn, then SEND_ONLY at --psn + 1 where
    a SEND_MIDDLE or SEND_LAST must come."""
    g, before = stream_begin(a, "seq_send", ("qpn", "psn", "peer_qpn"))
    psn = a.psn & 0xFFFFFF
    sock.sendto(g.packet(0x00, a.qpn, psn=psn, body=bytes(a.mtu), pad=0),
                (a.dst, 0))
    sock.sendto(g.packet(0x04, a.qpn, psn=(psn + 1) & 0xFFFFFF,
                         body=bytes(16), pad=0, ackreq=1), (a.dst, 0))
    print("seq_send: SEND_FIRST psn %#x, SEND_ONLY psn %#x to QP %#x"
          % (psn, (psn + 1) & 0xFFFFFF, a.qpn))
    return stream_end(a, before, 2, {})


def s_uc_gap(a, sock):
    """A PSN gap inside a UC SEND, from the QP's own peer (qp_helper hold
    -u): SEND_FIRST (one MTU of 0x11) at --psn, SEND_LAST (16 bytes) at
    --psn + 2 (--psn + 1 lost), then a new message, SEND_ONLY of 16 bytes
    of 0x77 at --psn + 3.  A receiver that missed the gap would complete
    the first message (MTU + 16 bytes, which fit) and put the second in
    the next receive."""
    g, before = stream_begin(a, "uc_gap", ("qpn", "psn", "peer_qpn"))
    psn = a.psn & 0xFFFFFF
    for op, off, body in ((0x20, 0, b"\x11" * a.mtu),
                          (0x22, 2, b"\x33" * 16),
                          (0x24, 3, b"\x77" * 16)):
        sock.sendto(g.packet(op, a.qpn, psn=(psn + off) & 0xFFFFFF,
                             body=body, pad=0), (a.dst, 0))
    print("uc_gap: SEND_FIRST psn %#x, LAST %#x, ONLY %#x to QP %#x"
          % (psn, (psn + 2) & 0xFFFFFF, (psn + 3) & 0xFFFFFF, a.qpn))
    return stream_end(a, before, 3, {})


def s_late_dups(a, sock):
    """Late copies of packets whose completions were polled (C10-107), for
    qp_helper hold -r LEN -R N -W. --phase send: a SEND_ONLY of 16 bytes
    of 0x11 to QP --qpn at --psn, from its peer --peer-qpn. --phase dup:
    that SEND again at --psn with 16 bytes of 0x22 (a duplicate: the
    responder acknowledges it and places nothing), then READ responses
    to the peer for the PSNs of its completed READ of --len bytes at
    --dup-psn, 0xEE: each as an ONLY, then as FIRST, MIDDLE..., LAST (the
    requester has no READ open: it drops them all).  --phase resp: those
    READ responses alone (for qp_helper hold -r LEN -O -W, whose peer has
    a later READ open: they are older than it and dropped).  With --uc
    (qp_helper hold -u -R N -W): --phase send is a SEND_FIRST of one MTU
    and a SEND_LAST of 16 bytes, of 0x11, at --psn and --psn + 1; --phase
    dup is that LAST again and a SEND_MIDDLE of one MTU, of 0x22, both at
    --psn + 1 (behind the PSN the receiver expects: dropped)."""
    need = ("qpn", "peer_qpn") + (("psn",) if a.phase != "resp" else ())
    to_a, before = stream_begin(a, "late_dups", need)
    if a.phase != "send" and not a.uc and (a.dup_psn is None or not a.len):
        sys.exit("pktgen: late_dups --phase %s needs --dup-psn and --len"
                 % a.phase)
    if a.phase not in ("send", "dup", "resp"):
        sys.exit("pktgen: late_dups --phase send|dup|resp")
    if a.phase == "resp" and a.uc:
        sys.exit("pktgen: late_dups --phase resp is RC only")
    to_b = stream_gen(a, a.qpn, a.peer_qpn)
    psn = (a.psn or 0) & 0xFFFFFF
    fill = 0x11 if a.phase == "send" else 0x22
    pkts, want, nresp = [], {}, 0
    if a.uc:
        nxt = (psn + 1) & 0xFFFFFF
        if a.phase == "send":
            pkts = [to_a.packet(0x20, a.qpn, psn=psn,
                                body=bytes([fill]) * a.mtu, pad=0),
                    to_a.packet(0x22, a.qpn, psn=nxt,
                                body=bytes([fill]) * 16, pad=0)]
        else:
            pkts = [to_a.packet(0x22, a.qpn, psn=nxt,
                                body=bytes([fill]) * 16, pad=0),
                    to_a.packet(0x21, a.qpn, psn=nxt,
                                body=bytes([fill]) * a.mtu, pad=0)]
            want["out_of_seq_request"] = len(pkts)
        what = "UC SEND packets of 0x%02x psn %#x.. to QP %#x" % (
            fill, psn, a.qpn)
    else:
        if a.phase != "resp":
            pkts.append(to_a.packet(0x04, a.qpn, psn=psn,
                                    body=bytes([fill]) * 16, pad=0,
                                    ackreq=1))
            what = "SEND_ONLY of 0x%02x psn %#x to QP %#x, " % (
                fill, psn, a.qpn)
        else:
            what = ""
        if a.phase != "send":
            n = max(1, (a.len + a.mtu - 1) // a.mtu)
            aeth = b"\x1f" + bytes(3)      # ACK, no credit limit, MSN 0
            for k in range(n):
                body = aeth + b"\xee" * a.mtu
                pkts.append(to_b.packet(0x10, a.peer_qpn,
                                        psn=(a.dup_psn + k) & 0xFFFFFF,
                                        body=body, pad=0))
            for k in range(n):
                op = 0x10 if n == 1 else 0x0d if k == 0 else \
                    0x0f if k == n - 1 else 0x0e
                body = (b"" if op == 0x0e else aeth) + b"\xee" * a.mtu
                pkts.append(to_b.packet(op, a.peer_qpn,
                                        psn=(a.dup_psn + k) & 0xFFFFFF,
                                        body=body, pad=0))
            nresp = 2 * n
            want["out_of_seq_response"] = nresp
            if a.phase == "dup":
                want["duplicate_request"] = 1
        what += "%d READ responses to QP %#x" % (nresp, a.peer_qpn)
    for p in pkts:
        sock.sendto(p, (a.dst, 0))
    print("late_dups %s: %s" % (a.phase, what))
    return stream_end(a, before, len(pkts), want, [("responses", nresp)])


def s_bad_answers(a, sock):
    """Answers a requester must not take, for qp_helper hold -r LEN -O -W,
    whose QP --peer-qpn has a READ of --len bytes (more than --mtu) open
    at --psn that its peer never answers; one per --phase, each at that
    PSN, each with 0xEE where it has a payload. nak_resp: a
    READ_RESPONSE_ONLY of the whole READ whose AETH is a NAK (only an
    ACKNOWLEDGE may carry one): rcvd_malformed. rsvd_ack: an ACKNOWLEDGE
    with the reserved AETH type (10b): rcvd_malformed. big_resp: a
    READ_RESPONSE_ONLY of the whole READ with an ACK, longer than the
    path MTU: out_of_seq_response."""
    g, before = stream_begin(a, "bad_answers",
                             ("qpn", "psn", "peer_qpn", "len"), True)
    if a.len <= a.mtu:
        sys.exit("pktgen: bad_answers needs --len larger than --mtu")
    psn = a.psn & 0xFFFFFF
    msn = bytes(3)
    if a.phase == "nak_resp":
        # NAK, remote access error
        pkt = g.packet(0x10, a.peer_qpn, psn=psn,
                       body=b"\x62" + msn + b"\xee" * a.len, pad=0)
        want = {"rcvd_malformed": 1}
    elif a.phase == "rsvd_ack":
        pkt = g.packet(0x11, a.peer_qpn, psn=psn, body=b"\x40" + msn,
                       pad=0)
        want = {"rcvd_malformed": 1}
    elif a.phase == "big_resp":
        pkt = g.packet(0x10, a.peer_qpn, psn=psn,
                       body=b"\x1f" + msn + b"\xee" * a.len, pad=0)
        want = {"out_of_seq_response": 1}
    else:
        sys.exit("pktgen: bad_answers --phase nak_resp|rsvd_ack|big_resp")
    sock.sendto(pkt, (a.dst, 0))
    print("bad_answers %s: psn %#x to QP %#x" % (a.phase, psn, a.peer_qpn))
    return stream_end(a, before, 1, want)


def s_uc_no_rwqe(a, sock):
    """A UC SEND_ONLY of 16 bytes of 0x11 to QP --qpn at --psn, from its
    peer --peer-qpn, when it has no receive WQE (qp_helper hold -u): UC
    has no RNR, the message is lost and counted in rcvd_no_recv_wqe."""
    g, before = stream_begin(a, "uc_no_rwqe", ("qpn", "psn", "peer_qpn"))
    psn = a.psn & 0xFFFFFF
    sock.sendto(g.packet(0x24, a.qpn, psn=psn, body=b"\x11" * 16, pad=0),
                (a.dst, 0))
    print("uc_no_rwqe: SEND_ONLY psn %#x to QP %#x" % (psn, a.qpn))
    return stream_end(a, before, 1, {"rcvd_no_recv_wqe": 1})


def s_big_write(a, sock):
    """An RDMA WRITE_ONLY of two path MTUs of 0xEE (RETH --va, --rkey, that
    length) to QP --qpn at --psn, from its peer --peer-qpn (qp_helper hold
    -m heap -w -W): longer than the path MTU, it is refused with an
    Invalid Request NAK (send_nak_other) and writes nothing."""
    g, before = stream_begin(a, "big_write",
                             ("qpn", "psn", "peer_qpn", "va", "rkey"))
    n = 2 * a.mtu
    psn = a.psn & 0xFFFFFF
    body = struct.pack("!QII", a.va, a.rkey, n) + b"\xee" * n
    sock.sendto(g.packet(0x0a, a.qpn, psn=psn, body=body, pad=0, ackreq=1),
                (a.dst, 0))
    print("big_write: WRITE_ONLY of %d bytes psn %#x to QP %#x"
          % (n, psn, a.qpn))
    return stream_end(a, before, 1, {"send_nak_other": 1})


STREAMS = {"read": s_read, "write_flood": s_write_flood,
           "seq_send": s_seq_send, "uc_gap": s_uc_gap,
           "late_dups": s_late_dups, "bad_answers": s_bad_answers,
           "uc_no_rwqe": s_uc_no_rwqe, "big_write": s_big_write}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cls", nargs="+", choices=sorted(CLASSES) +
                    sorted(STREAMS))
    ap.add_argument("--dev", default="sroce0")
    ap.add_argument("--dst", default="10.0.0.1")
    ap.add_argument("--src", default=None)
    ap.add_argument("--seed", type=int, default=4791)
    ap.add_argument("--qpn", type=lambda s: int(s, 0), default=None)
    ap.add_argument("--psn", type=lambda s: int(s, 0), default=None)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--check", action="store_true",
                    help="print PASS/FAIL CLASS per class from the "
                    "counter deltas; exit 1 if any failed")
    num = lambda s: int(s, 0)  # noqa: E731
    st = ap.add_argument_group("stream modes (read, write_flood)")
    st.add_argument("--peer-qpn", type=num, default=None)
    st.add_argument("--va", type=num, default=None)
    st.add_argument("--rkey", type=num, default=None)
    st.add_argument("--len", type=num, default=None)
    st.add_argument("--mtu", type=num, default=1024)
    st.add_argument("--no-first", action="store_true")
    st.add_argument("--dups", type=int, default=0)
    st.add_argument("--dup-psn", type=num, default=None)
    st.add_argument("--psn-span", type=int, default=1)
    st.add_argument("--gap", type=float, default=0.5,
                    help="seconds between the READ and the duplicates")
    st.add_argument("--rate", type=float, default=0)
    st.add_argument("--duration", type=float, default=0)
    st.add_argument("--mem-guard", type=int, default=0)
    st.add_argument("--settle", type=float, default=10)
    st.add_argument("--follow", default=None)
    st.add_argument("--phase", choices=("send", "dup", "resp", "nak_resp",
                                        "rsvd_ack", "big_resp"),
                    default="send")
    st.add_argument("--uc", action="store_true")
    a = ap.parse_args()
    streams = [c for c in a.cls if c in STREAMS]
    if streams:
        if len(a.cls) != 1:
            ap.error("a stream mode (%s) runs alone" % ", ".join(streams))
        sock = socket.socket(socket.AF_INET, socket.SOCK_RAW,
                             socket.IPPROTO_RAW)
        return STREAMS[streams[0]](a, sock)
    if any(c.startswith("live") for c in a.cls) and a.qpn is None:
        ap.error("--qpn is required for the live_* classes")
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    nfail = 0
    for cls in a.cls:
        ok, why = run_class(cls, a, sock)
        if a.check:
            print("PASS %s" % cls if ok else "FAIL %s: %s" % (cls, why))
            sys.stdout.flush()
            nfail += not ok
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
