/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * labpkt.h - the lab's own view of the headers it sends and checks: GTP-U
 * (TS 29.281 §5) with the PDU Session Container (TS 38.415 §5.5.2), Internet
 * checksums (RFC 1071), and the walk from a frame's start to its stamp.
 *
 * The lab does not include the UPF's headers (bpf/lib): a checker that
 * shared the UPF's parser would share its mistakes.
 */
#ifndef LAB_PKT_H
#define LAB_PKT_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include "stamp.h"

#define IP_HLEN(version) ((version) == 4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr))

#define GTPU_G_PDU 255
#define GTPU_F_E 0x04	  /* an extension header follows (§5.1) */
#define GTPU_F_OPT 0x07	  /* E, S or PN: the 4 optional octets are present */
#define GTPU_EXT_PSC 0x85 /* PDU Session Container (§5.2.2.7) */
#define GTPU_MAX_EXT 4	  /* extension headers walked before giving up */

/* PDU types of the PDU Session Container (TS 38.415 §5.5.2). */
#define PSC_DL 0 /* DL PDU SESSION INFORMATION */
#define PSC_UL 1 /* UL PDU SESSION INFORMATION */

struct gtpu_hdr {
	__u8 flags;
	__u8 type;
	__be16 len; /* octets after these 8 */
	__be32 teid;
};

/* Present when any of E, S, PN is set (§5.1). */
struct gtpu_opt {
	__be16 seq;
	__u8 npdu;
	__u8 next_ext;
};

static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Sum of n 32-bit words at p, n at most 32 and known at load time. */
static __always_inline __u64 csum_words(const void *p, __u32 n)
{
	const __u32 *w = p;
	__u64 sum = 0;

	for (int i = 0; i < 32; i++) {
		if (i >= n)
			break;
		sum += w[i];
	}
	return sum;
}

/*
 * Checksum of an option-less IPv4 header; 0 over a header whose checksum is
 * right. Summed field by field, not as 32-bit words: the generator has just
 * stored the length and the checksum on their own, and a word spanning two
 * stores waits for both to reach the cache (no store forwarding: 20 ns of
 * the generator's 63 a frame went there).
 */
static __always_inline __u16 csum_ipv4(const struct iphdr *ip)
{
	const __u8 *b = (const __u8 *)ip;
	__u64 sum = (b[0] | b[1] << 8) + ip->tot_len + ip->id + ip->frag_off + (b[8] | b[9] << 8) +
		    ip->check + ip->saddr + ip->daddr;

	return csum_fold(sum);
}

/*
 * UDP checksum over IPv6 of a datagram of len octets whose own words sum to
 * sum: with the pseudo-header (RFC 8200 §8.1), and never 0, which IPv6
 * does not allow.
 */
static __always_inline __u16 csum_udp6(const struct ipv6hdr *ip6, __u32 len, __u64 sum)
{
	sum += csum_words(&ip6->saddr, 8) + bpf_htonl(len) + bpf_htonl(IPPROTO_UDP);
	return csum_fold(sum) ?: 0xffff;
}

/* Where a walk found the stamp, and what it passed on the way. */
struct stamped {
	void *l3;	       /* the first IP header */
	struct gtpu_hdr *gtpu; /* NULL unless a G-PDU */
	void *inner;	       /* the IP header of the datagram the stamp is in */
	struct udphdr *udp;
	struct stamp *stamp;
	__u32 teid; /* host order */
	__u8 psc;   /* 1 + the PDU type of a PDU Session Container, 0 if none */
	__u8 qfi;
};

/* An IP header at pos, then UDP: returns the UDP header, or NULL. */
static __always_inline struct udphdr *walk_ip_udp(void *pos, void *end)
{
	struct iphdr *ip = pos;
	struct ipv6hdr *ip6 = pos;

	if ((void *)(ip + 1) > end)
		return NULL;
	if (ip->version == 4) {
		if (ip->protocol != IPPROTO_UDP || ip->ihl < 5)
			return NULL;
		pos += (ip->ihl * 4) & 0x3c;
	} else if (ip->version == 6) {
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return NULL;
		pos = ip6 + 1;
	} else {
		return NULL;
	}
	if (pos + sizeof(struct udphdr) > end)
		return NULL;
	return pos;
}

/* The GTP-U header at g and its extensions: returns the T-PDU, or NULL. */
static __always_inline void *walk_gtpu(struct gtpu_hdr *g, void *end, struct stamped *s)
{
	struct gtpu_opt *opt = (void *)(g + 1);
	__u8 *ext, next;

	if ((void *)(g + 1) > end || (g->flags & 0xf0) != 0x30 || g->type != GTPU_G_PDU)
		return NULL;
	s->gtpu = g;
	s->teid = bpf_ntohl(g->teid);
	if (!(g->flags & GTPU_F_OPT))
		return g + 1;
	if ((void *)(opt + 1) > end)
		return NULL;
	next = (g->flags & GTPU_F_E) ? opt->next_ext : 0;
	ext = (void *)(opt + 1);
	/* Each extension: length in 4-octet units, content, next type (§5.2.1). */
#pragma unroll
	for (int i = 0; i < GTPU_MAX_EXT; i++) {
		__u8 *last;

		if (!next)
			return ext;
		if ((void *)(ext + 4) > end || !ext[0])
			return NULL;
		/* PDU type in the high nibble of octet 1, QFI in the low 6 bits of octet 2 */
		if (next == GTPU_EXT_PSC) {
			s->psc = 1 + (ext[1] >> 4);
			s->qfi = ext[2] & 0x3f;
		}
		last = ext + ((ext[0] * 4) & 0x3fc) - 1;
		if ((void *)(last + 1) > end)
			return NULL;
		next = *last;
		ext = last + 1;
	}
	return NULL;
}

/*
 * Walk Ethernet, IP, UDP and, for a G-PDU, the inner IP and UDP to the
 * innermost UDP payload. Returns 1 with *s filled if a stamp is there, 0 if
 * not (not the lab's frame: leave it alone). Only that each header fits the
 * frame is checked here; lengths and checksums are the sink's to judge.
 */
static __always_inline int stamp_find(void *data, void *end, struct stamped *s)
{
	struct ethhdr *eth = data;
	struct udphdr *udp;
	void *inner;

	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto != bpf_htons(ETH_P_IP) && eth->h_proto != bpf_htons(ETH_P_IPV6))
		return 0;
	s->l3 = eth + 1;
	s->inner = s->l3;
	udp = walk_ip_udp(s->l3, end);
	if (!udp)
		return 0;
	if (udp->dest == bpf_htons(LAB_GTPU_PORT)) {
		inner = walk_gtpu((void *)(udp + 1), end, s);
		if (!inner)
			return 0;
		s->inner = inner;
		udp = walk_ip_udp(inner, end);
		if (!udp)
			return 0;
	}
	s->udp = udp;
	s->stamp = (void *)(udp + 1);
	if ((void *)(s->stamp + 1) > end || s->stamp->magic != bpf_htonl(STAMP_MAGIC))
		return 0;
	return 1;
}

#endif /* LAB_PKT_H */
