/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * parse.h - cursor parsers for Ethernet, IPv4, IPv6 and the L4 ports.
 *
 * Contract: each parser takes a cursor, checks that its header fits before
 * reading it, advances the cursor past it and returns 0 or a negative
 * UPF_DROP_* reason. Nothing is written to the packet.
 *
 * A cursor has two ends: end is the frame's, which the verifier needs for
 * every read; limit is where the enclosing header says its payload stops
 * (IP total length, UDP length, GTP-U length), so that padding after a
 * message is never parsed as part of it.
 */
#ifndef UPF_PARSE_H
#define UPF_PARSE_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include "common.h"

struct cursor {
	void *pos;
	void *start;
	void *end;
	void *limit;
};

static __always_inline void cursor_init(struct cursor *c, struct xdp_md *ctx)
{
	c->start = (void *)(long)ctx->data;
	c->pos = c->start;
	c->end = (void *)(long)ctx->data_end;
	c->limit = c->end;
}

/* A header at from says its message is n bytes: narrow the limit, or 1 if that lies. */
static __always_inline int cursor_narrow(struct cursor *c, void *from, __u32 n)
{
	if (from + n > c->limit)
		return 1;
	c->limit = from + n;
	return 0;
}

static __always_inline __u16 cursor_off(const struct cursor *c)
{
	return (__u16)(c->pos - c->start);
}

struct vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* Ethernet with at most one 802.1Q/802.1ad tag; *proto gets the EtherType. */
static __always_inline int parse_eth(struct cursor *c, __u16 *proto)
{
	struct ethhdr *eth = c->pos;

	if ((void *)(eth + 1) > c->end)
		return -UPF_DROP_TRUNCATED;
	c->pos = eth + 1;
	*proto = bpf_ntohs(eth->h_proto);
	if (*proto == ETH_P_8021Q || *proto == ETH_P_8021AD) {
		struct vlan_hdr *vh = c->pos;

		if ((void *)(vh + 1) > c->end)
			return -UPF_DROP_TRUNCATED;
		c->pos = vh + 1;
		*proto = bpf_ntohs(vh->proto);
	}
	return 0;
}

struct ip_info {
	__u8 family;
	__u8 proto;
	__u8 tos;
	__u8 ttl;
	__u16 len; /* total length claimed by the header, checked against the frame */
	__u32 flow_label;
	struct upf_addr src, dst;
};

static __always_inline int parse_ipv4(struct cursor *c, struct ip_info *ip)
{
	struct iphdr *h = c->pos;
	__u32 hlen;

	if ((void *)(h + 1) > c->end)
		return -UPF_DROP_TRUNCATED;
	hlen = h->ihl * 4;
	if (h->version != 4 || hlen < sizeof(*h))
		return -UPF_DROP_MALFORMED_IP;
	ip->len = bpf_ntohs(h->tot_len);
	if (ip->len < hlen || cursor_narrow(c, h, ip->len))
		return -UPF_DROP_MALFORMED_IP;
	ip->family = 4;
	ip->proto = h->protocol;
	ip->tos = h->tos;
	ip->ttl = h->ttl;
	ip->flow_label = 0;
	ip->src = (struct upf_addr){.a = {h->saddr}};
	ip->dst = (struct upf_addr){.a = {h->daddr}};
	/* A non-first fragment has no L4 header: leave the ports at 0. */
	if (h->frag_off & bpf_htons(0x1fff))
		ip->proto = 0;
	c->pos += hlen & 0x3c;
	return 0;
}

/* Extension headers are not walked: their next header is taken as the protocol. */
static __always_inline int parse_ipv6(struct cursor *c, struct ip_info *ip)
{
	struct ipv6hdr *h = c->pos;
	__u32 len;

	if ((void *)(h + 1) > c->end)
		return -UPF_DROP_TRUNCATED;
	if (h->version != 6)
		return -UPF_DROP_MALFORMED_IP;
	len = sizeof(*h) + bpf_ntohs(h->payload_len); /* in 32 bits: it can pass 65535 */
	if (cursor_narrow(c, h, len))
		return -UPF_DROP_MALFORMED_IP;
	ip->len = len;
	ip->family = 6;
	ip->proto = h->nexthdr;
	ip->tos = (h->priority << 4) | (h->flow_lbl[0] >> 4);
	ip->ttl = h->hop_limit;
	ip->flow_label =
	    ((__u32)(h->flow_lbl[0] & 0x0f) << 16) | ((__u32)h->flow_lbl[1] << 8) | h->flow_lbl[2];
	__builtin_memcpy(ip->src.a, &h->saddr, 16);
	__builtin_memcpy(ip->dst.a, &h->daddr, 16);
	c->pos = h + 1;
	return 0;
}

/* IPv4 or IPv6 by the version nibble. */
static __always_inline int parse_ip(struct cursor *c, struct ip_info *ip)
{
	__u8 *v = c->pos;

	if ((void *)(v + 1) > c->end)
		return -UPF_DROP_TRUNCATED;
	switch (*v >> 4) {
	case 4:
		return parse_ipv4(c, ip);
	case 6:
		return parse_ipv6(c, ip);
	}
	return -UPF_DROP_MALFORMED_IP;
}

/* Source and destination port of TCP, UDP and SCTP; both 0 otherwise. */
static __always_inline int parse_ports(struct cursor *c, __u8 proto, __u16 *sport, __u16 *dport)
{
	__be16 *ports = c->pos;

	*sport = 0;
	*dport = 0;
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP && proto != IPPROTO_SCTP)
		return 0;
	if ((void *)(ports + 2) > c->end || (void *)(ports + 2) > c->limit)
		return -UPF_DROP_TRUNCATED;
	*sport = bpf_ntohs(ports[0]);
	*dport = bpf_ntohs(ports[1]);
	return 0;
}

/* Fill the packet's flow key from the IP packet at the cursor. */
static __always_inline int parse_flow(struct cursor *c, struct upf_pkt *p, struct ip_info *ip)
{
	int ret;

	p->inner_off = cursor_off(c);
	ret = parse_ip(c, ip);
	if (ret < 0)
		return ret;
	p->family = ip->family;
	p->proto = ip->proto;
	p->tos = ip->tos;
	p->ttl = ip->ttl;
	p->ip_len = ip->len;
	p->flow_label = ip->flow_label;
	p->src = ip->src;
	p->dst = ip->dst;
	return parse_ports(c, ip->proto, &p->sport, &p->dport);
}

#endif /* UPF_PARSE_H */
