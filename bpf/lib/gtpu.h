/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * gtpu.h - GTP-U v1 (TS 29.281): header parsing with the extension header
 * chain and the PDU Session Container (TS 38.415), Echo Response, and the
 * outer headers pushed for a downlink G-PDU.
 */
#ifndef UPF_GTPU_H
#define UPF_GTPU_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include "common.h"
#include "parse.h"
#include "csum.h"

#define GTPU_ECHO_REQ 1
#define GTPU_ECHO_RESP 2
#define GTPU_ERROR_IND 26
#define GTPU_SUPP_EXT_NOTIF 31
#define GTPU_END_MARKER 254
#define GTPU_G_PDU 255

#define GTPU_F_VERSION1 0x20
#define GTPU_F_PT 0x10
#define GTPU_F_E 0x04
#define GTPU_F_S 0x02
#define GTPU_F_PN 0x01

#define GTPU_EXT_PDU_SESSION 0x85
#define GTPU_IE_RECOVERY 14

struct gtpu_hdr {
	__u8 flags;
	__u8 type;
	__be16 len; /* bytes after these 8 */
	__be32 teid;
};

/* Present when any of E, S, PN is set (TS 29.281 §5.1). */
struct gtpu_opt {
	__be16 seq;
	__u8 npdu;
	__u8 next_ext;
};

/* The PDU Session Container as we send it: one 4-octet extension. */
struct gtpu_pdu_session {
	__u8 len;  /* in 4-octet units: 1 */
	__u8 type; /* PDU type << 4; 0 = DL PDU SESSION INFORMATION */
	__u8 qfi;  /* PPP(1) RQI(1) QFI(6) */
	__u8 next; /* no further extension */
};

/* Index of the local GTP-U address dst (IPv4 in a[0]), or -1. */
static __always_inline int gtpu_ep_index(__u8 family, const struct upf_addr *dst)
{
#pragma unroll
	for (int i = 0; i < UPF_MAX_GTPU_EPS; i++) {
		const volatile struct upf_gtpu_ep *ep = &cfg_gtpu_eps[i];

		if (ep->family == family && ep->addr.a[0] == dst->a[0] &&
		    ep->addr.a[1] == dst->a[1] && ep->addr.a[2] == dst->a[2] &&
		    ep->addr.a[3] == dst->a[3])
			return i;
	}
	return -1;
}

/*
 * Walk the header at the cursor. On return *type is the message type, the
 * cursor is at the payload, and for a G-PDU p->teid and p->qfi are set.
 */
static __always_inline int gtpu_parse(struct cursor *c, struct upf_pkt *p, __u8 *type)
{
	struct gtpu_hdr *h = c->pos;
	struct gtpu_opt *opt;
	__u8 next;

	if ((void *)(h + 1) > c->end)
		return -UPF_DROP_TRUNCATED;
	if ((h->flags & 0xf0) != (GTPU_F_VERSION1 | GTPU_F_PT))
		return -UPF_DROP_MALFORMED_GTPU;
	if (cursor_narrow(c, h + 1, bpf_ntohs(h->len)))
		return -UPF_DROP_MALFORMED_GTPU;
	*type = h->type;
	p->teid = h->teid;
	p->qfi = 0;
	c->pos = h + 1;
	if (!(h->flags & (GTPU_F_E | GTPU_F_S | GTPU_F_PN)))
		return 0;

	opt = c->pos;
	if ((void *)(opt + 1) > c->end || (void *)(opt + 1) > c->limit)
		return -UPF_DROP_TRUNCATED;
	c->pos = opt + 1;
	next = (h->flags & GTPU_F_E) ? opt->next_ext : 0;

	/* Each extension: length in 4-octet units, content, next type (§5.2.1). */
	for (int i = 0; i < UPF_MAX_GTPU_EXT; i++) {
		__u8 *ext = c->pos, *last;
		__u32 elen;

		if (!next)
			return 0;
		/* every extension is a multiple of 4 octets, and at least one */
		if ((void *)(ext + 4) > c->end || (void *)(ext + 4) > c->limit)
			return -UPF_DROP_TRUNCATED;
		elen = (__u32)ext[0] * 4;
		if (!elen)
			return -UPF_DROP_GTPU_EXT;
		/*
		 * Bit 8 of the type: the receiving endpoint must comprehend it
		 * (§5.2.1). The PDU Session Container is the one it does.
		 */
		if ((next & 0x80) && next != GTPU_EXT_PDU_SESSION)
			return -UPF_DROP_GTPU_EXT_UNKNOWN;
		/* QFI is the low 6 bits of octet 2 in UL and DL PDU types alike. */
		if (next == GTPU_EXT_PDU_SESSION)
			p->qfi = ext[2] & 0x3f;
		last = ext + elen - 1;
		if ((void *)(last + 1) > c->end || (void *)(last + 1) > c->limit)
			return -UPF_DROP_TRUNCATED;
		next = *last;
		c->pos = last + 1;
	}
	return next ? -UPF_DROP_GTPU_EXT : 0;
}

/*
 * Echo Request -> Echo Response in place, sent back out the same port
 * (TS 29.281 §7.2.2): sequence number kept, one Recovery IE whose restart
 * counter is 0, nothing else.
 */
#define ECHO_RESP_LEN (sizeof(struct gtpu_hdr) + sizeof(struct gtpu_opt) + 2)

__cold int gtpu_echo_reply(struct xdp_md *ctx, struct upf_pkt *p, __u16 l4_off)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 want = (l4_off & UPF_OFF_MASK) + sizeof(struct udphdr) + ECHO_RESP_LEN;
	struct gtpu_hdr *h;
	struct gtpu_opt *opt;
	struct udphdr *udp;
	struct ethhdr *eth;
	__u8 *ie;
	__be16 seq = 0;
	__u64 len = end - data;

	asm volatile("" : "+r"(len)); /* a 64-bit difference: as 32 bits, pointer arithmetic */
	udp = data + (l4_off & UPF_OFF_MASK);
	h = (void *)(udp + 1);
	opt = (void *)(h + 1);
	if ((void *)(opt + 1) <= end && (h->flags & GTPU_F_S))
		seq = opt->seq;
	if (bpf_xdp_adjust_tail(ctx, (int)want - (int)len))
		return -UPF_DROP_ADJUST;

	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	udp = data + (l4_off & UPF_OFF_MASK);
	h = (void *)(udp + 1);
	opt = (void *)(h + 1);
	ie = (void *)(opt + 1);
	if ((void *)(eth + 1) > end || ie + 2 > (__u8 *)end)
		return -UPF_DROP_TRUNCATED;

	/* from our own address, whatever the request was sent to */
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, (const void *)cfg_mac[p->iface & 3], ETH_ALEN);

	h->flags = GTPU_F_VERSION1 | GTPU_F_PT | GTPU_F_S;
	h->type = GTPU_ECHO_RESP;
	h->len = bpf_htons(sizeof(*opt) + 2);
	h->teid = 0;
	*opt = (struct gtpu_opt){.seq = seq};
	ie[0] = GTPU_IE_RECOVERY;
	ie[1] = 0;

	udp->dest = udp->source;
	udp->source = bpf_htons(GTPU_PORT);
	udp->len = bpf_htons(sizeof(*udp) + ECHO_RESP_LEN);
	udp->check = 0;

	if (p->outer_family == 4) {
		struct iphdr *ip = data + (p->l3_off & UPF_OFF_MASK);
		__be32 a;

		if ((void *)(ip + 1) > end)
			return -UPF_DROP_TRUNCATED;
		if (ip->ihl != 5) /* options would have to be echoed or removed */
			return -UPF_DROP_UNSUPPORTED;
		a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
		ip->tot_len = bpf_htons((__u16)((void *)end - (void *)ip));
		ip->ttl = 64; /* a new datagram, not a forwarded one */
		ip->check = 0;
		ip->check = csum_ipv4(ip);
	} else {
		struct ipv6hdr *ip6 = data + (p->l3_off & UPF_OFF_MASK);
		struct in6_addr a;
		__u16 check;

		if ((void *)(ip6 + 1) > end)
			return -UPF_DROP_TRUNCATED;
		a = ip6->saddr;
		ip6->saddr = ip6->daddr;
		ip6->daddr = a;
		ip6->payload_len = udp->len;
		ip6->hop_limit = 64;
		check = csum_udp6(ctx, p->l3_off);
		/* csum_udp6 took the packet: derive the pointer again */
		data = (void *)(long)ctx->data;
		end = (void *)(long)ctx->data_end;
		udp = data + (l4_off & UPF_OFF_MASK);
		if ((void *)(udp + 1) > end)
			return -UPF_DROP_TRUNCATED;
		udp->check = check;
	}
	return XDP_TX;
}

#endif /* UPF_GTPU_H */
