/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fwd.h - routing the packet out: next hop from the kernel FIB, the inner
 * TTL, the frame rebuilt around the IP packet (outer headers removed and/or
 * a GTP-U tunnel pushed), and the redirect to the egress device.
 *
 * The next hop is looked up before anything is counted or rewritten, so a
 * packet that cannot leave is neither counted as forwarded nor altered.
 */
#ifndef UPF_FWD_H
#define UPF_FWD_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include "common.h"
#include "csum.h"
#include "gtpu.h"
#include "event.h"

#define AF_INET 2
#define AF_INET6 10
#define OUTER_TTL 64

/* A G-PDU's header: with a PDU Session Container when a QER gives a QFI. */
static __always_inline __u32 gtpu_len_for(__u8 qfi)
{
	return sizeof(struct gtpu_hdr) +
	       (qfi ? sizeof(struct gtpu_opt) + sizeof(struct gtpu_pdu_session) : 0);
}

static __always_inline __u32 gtpu_hdr_len(const struct upf_pkt *p)
{
	return gtpu_len_for(p->mark_qfi);
}

/* Bytes in front of the IP packet once it leaves: Ethernet plus any tunnel. */
static __always_inline __u32 fwd_hdr_len(const struct upf_pkt *p, const struct upf_far *far)
{
	switch (far->ohc) {
	case UPF_OHC_GTPU_V4:
		return ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + gtpu_hdr_len(p);
	case UPF_OHC_GTPU_V6:
		return ETH_HLEN + sizeof(struct ipv6hdr) + sizeof(struct udphdr) + gtpu_hdr_len(p);
	}
	return ETH_HLEN;
}

/*
 * How long a cached next hop is trusted, in jiffies: route and neighbour
 * changes are seen within this time. 0 disables the cache (the loader sets
 * it from datapath.Options.NextHopTTL).
 */
const volatile __u64 cfg_nexthop_ttl_jiffies;

/*
 * The next-hop cache's clock: jiffies, which the verifier inlines as one
 * load, where bpf_ktime_get_coarse_ns (which ticks with them) is a call.
 */
static __always_inline __u64 nh_now(void)
{
	return bpf_jiffies64();
}

static __always_inline struct upf_nexthop *nh_slot(__u8 family, const struct upf_addr *dst)
{
	__u32 h = dst->a[0] ^ dst->a[1] ^ dst->a[2] ^ dst->a[3] ^ family;
	__u32 key = (h * 0x9e3779b1u) >> 24; /* Fibonacci hashing into 256 slots */

	return bpf_map_lookup_elem(&nexthops, &key);
}

static __always_inline int nh_hit(const struct upf_nexthop *nh, __u8 family,
				  const struct upf_addr *dst, __u32 ifindex, __u32 len, __u64 now)
{
	return nh->family == family && nh->in_ifindex == ifindex && len <= nh->ok_len &&
	       now < nh->expires && nh->dst.a[0] == dst->a[0] && nh->dst.a[1] == dst->a[1] &&
	       nh->dst.a[2] == dst->a[2] && nh->dst.a[3] == dst->a[3];
}

static __always_inline void nh_use(struct upf_pkt *p, const struct upf_nexthop *nh)
{
	p->egress = nh->out_ifindex;
	__builtin_memcpy(p->dmac, nh->dmac, ETH_ALEN);
	__builtin_memcpy(p->smac, nh->smac, ETH_ALEN);
}

static __always_inline void nh_store(struct upf_nexthop *nh, __u8 family,
				     const struct upf_addr *dst, const struct upf_pkt *p, __u32 len,
				     __u64 now)
{
	if (nh->family != family || nh->in_ifindex != p->ifindex || now >= nh->expires ||
	    nh->dst.a[0] != dst->a[0] || nh->dst.a[1] != dst->a[1] || nh->dst.a[2] != dst->a[2] ||
	    nh->dst.a[3] != dst->a[3] || nh->out_ifindex != p->egress) {
		nh->ok_len = 0; /* a new destination or a new answer: forget what fitted */
		nh->expires = now + cfg_nexthop_ttl_jiffies;
	}
	nh->dst = *dst;
	nh->family = family;
	nh->in_ifindex = p->ifindex;
	nh->out_ifindex = p->egress;
	nh->ok_len = len > nh->ok_len ? len : nh->ok_len;
	__builtin_memcpy(nh->dmac, p->dmac, ETH_ALEN);
	__builtin_memcpy(nh->smac, p->smac, ETH_ALEN);
}

/* The destination the FAR sends the packet to, and its family. */
static __always_inline const struct upf_addr *fwd_dst(const struct upf_pkt *p,
						      const struct upf_far *far, __u8 *family)
{
	if (far->ohc) {
		*family = far->ohc == UPF_OHC_GTPU_V4 ? 4 : 6;
		return &far->peer;
	}
	*family = p->family;
	return &p->dst;
}

/*
 * The kernel FIB's next hop, when the cache has none (nh, if not NULL, is
 * the cache slot to keep it in): sets p->egress and the MACs.
 */
__cold int fwd_fib(struct xdp_md *ctx, struct upf_pkt *p, const struct upf_far *far,
		   struct upf_nexthop *nh, __u64 now)
{
	struct bpf_fib_lookup f = {.ifindex = p->ifindex};
	const struct upf_addr *src = far->ohc ? &far->local : &p->src;
	__u32 len = fwd_hdr_len(p, far) - ETH_HLEN + p->ip_len; /* IP length as sent */
	__u8 family;
	const struct upf_addr *dst = fwd_dst(p, far, &family);
	int rc;

	f.tot_len = len;
	if (far->ohc) {
		f.l4_protocol = IPPROTO_UDP;
		f.sport = bpf_htons(GTPU_PORT);
		f.dport = bpf_htons(GTPU_PORT);
	} else {
		f.l4_protocol = p->proto;
		f.sport = bpf_htons(p->sport);
		f.dport = bpf_htons(p->dport);
	}
	if (family == 4) {
		f.family = AF_INET;
		f.ipv4_src = src->a[0];
		f.ipv4_dst = dst->a[0];
	} else {
		f.family = AF_INET6;
		__builtin_memcpy(f.ipv6_src, src->a, 16);
		__builtin_memcpy(f.ipv6_dst, dst->a, 16);
	}

	rc = bpf_fib_lookup(ctx, &f, sizeof(f), 0);
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
		p->egress = f.ifindex;
		__builtin_memcpy(p->dmac, f.dmac, ETH_ALEN);
		__builtin_memcpy(p->smac, f.smac, ETH_ALEN);
		if (nh)
			nh_store(nh, family, dst, p, len, now);
		return 0;
	case BPF_FIB_LKUP_RET_NO_NEIGH: {
		/* f holds the gateway (or the destination) and the egress device. */
		struct upf_addr gw = {};

		if (family == 4)
			gw.a[0] = f.ipv4_dst;
		else
			__builtin_memcpy(gw.a, f.ipv6_dst, 16);
		event_send_limited(UPF_EV_NO_NEIGH, p, f.ifindex, family, &gw);
		return -UPF_DROP_NO_NEIGH;
	}
	case BPF_FIB_LKUP_RET_FRAG_NEEDED:
		return -UPF_DROP_MTU;
	case BPF_FIB_LKUP_RET_NOT_FWDED: /* local, broadcast, multicast, or no route */
		if (p->uplink && !far->ohc && local_addr(family, dst))
			return -UPF_DROP_UE_TO_LOCAL;
		return -UPF_DROP_NO_ROUTE;
	}
	return -UPF_DROP_NO_ROUTE;
}

/* Next hop for the packet as the FAR sends it: sets p->egress and the MACs. */
static __always_inline int fwd_lookup(struct xdp_md *ctx, struct upf_pkt *p,
				      const struct upf_far *far)
{
	struct upf_nexthop *nh = NULL;
	__u32 len = fwd_hdr_len(p, far) - ETH_HLEN + p->ip_len;
	__u64 now = 0;
	__u8 family;
	const struct upf_addr *dst = fwd_dst(p, far, &family);

	if (p->ttl <= 1)
		return -UPF_DROP_TTL_EXPIRED;
	if (cfg_nexthop_ttl_jiffies) {
		now = nh_now();
		nh = nh_slot(family, dst);
		if (nh && nh_hit(nh, family, dst, p->ifindex, len, now)) {
			nh_use(p, nh);
			return 0;
		}
	}
	return fwd_fib(ctx, p, far, nh, now);
}

/*
 * Move the frame's head so that the IP packet of ip_len octets at inner_off
 * starts at hdr_len, and cut any padding after it: one adjustment serves
 * decapsulation, encapsulation and both at once (N9).
 */
static __always_inline int fwd_reframe(struct xdp_md *ctx, __u32 inner_off, __u16 ip_len,
				       __u32 hdr_len)
{
	__u32 frame = ctx->data_end - ctx->data;
	__u32 end = inner_off + ip_len;

	if (frame > end && bpf_xdp_adjust_tail(ctx, -(int)(frame - end)))
		return -UPF_DROP_ADJUST;
	if (bpf_xdp_adjust_head(ctx, (int)inner_off - (int)hdr_len))
		return -UPF_DROP_ADJUST;
	return 0;
}

/* 32- and 16-bit words that may alias any object (here MAC addresses, a byte array). */
typedef __u32 __attribute__((may_alias)) fwd_u32;
typedef __u16 __attribute__((may_alias)) fwd_u16;

/*
 * The Ethernet header's addresses and type, a word at a time: clang copies
 * into struct ethhdr, which is packed, a byte at a time (x86 loads and
 * stores words at any address).
 */
static __always_inline void fwd_eth_write(void *eth, const __u8 *dmac, const __u8 *smac,
					  __u16 eth_proto)
{
	*(fwd_u32 *)eth = *(const fwd_u32 *)dmac;
	*(fwd_u16 *)(eth + 4) = *(const fwd_u16 *)(dmac + 4);
	*(fwd_u16 *)(eth + 6) = *(const fwd_u16 *)smac;
	*(fwd_u32 *)(eth + 8) = *(const fwd_u32 *)(smac + 2);
	*(fwd_u16 *)(eth + 12) = bpf_htons(eth_proto);
}

/* The frame's Ethernet header toward the next hop, and the redirect to its device. */
static __always_inline int fwd_send(struct xdp_md *ctx, const __u8 *dmac, const __u8 *smac,
				    __u16 eth_proto, __u32 egress)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	int ret;

	if ((void *)(eth + 1) > end)
		return -UPF_DROP_TRUNCATED;
	fwd_eth_write(eth, dmac, smac, eth_proto);
	ret = bpf_redirect_map(&tx_ports, egress, 0);
	return ret == XDP_REDIRECT ? ret : -UPF_DROP_REDIRECT;
}

static __always_inline void fwd_dec_ttl(struct xdp_md *ctx, struct upf_pkt *p)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	void *ip = data + (p->inner_off & UPF_OFF_MASK);

	if (p->family == 4) {
		if (ip + sizeof(struct iphdr) <= end)
			csum_ipv4_dec_ttl(ip);
	} else if (ip + sizeof(struct ipv6hdr) <= end) {
		((struct ipv6hdr *)ip)->hop_limit--;
	}
}

/* The G-PDU header of a packet of ip_len octets, marked with qfi and rqi if qfi. */
static __always_inline void gtpu_write(struct gtpu_hdr *h, __be32 teid, __u8 qfi, __u8 rqi,
				       __u16 ip_len)
{
	struct gtpu_opt *opt = (void *)(h + 1);
	struct gtpu_pdu_session *psc = (void *)(opt + 1);

	h->flags = GTPU_F_VERSION1 | GTPU_F_PT;
	h->type = GTPU_G_PDU;
	h->teid = teid;
	h->len = bpf_htons(gtpu_len_for(qfi) - sizeof(*h) + ip_len);
	if (!qfi)
		return;
	/* 5G: DL PDU SESSION INFORMATION, PDU type 0 (TS 38.415 §5.5.2.1). */
	h->flags |= GTPU_F_E;
	*opt = (struct gtpu_opt){.next_ext = GTPU_EXT_PDU_SESSION};
	*psc = (struct gtpu_pdu_session){.len = 1, .qfi = (rqi ? 0x40 : 0) | qfi};
}

static __always_inline void udp_write(struct udphdr *udp, __u16 len)
{
	udp->source = bpf_htons(GTPU_PORT);
	udp->dest = bpf_htons(GTPU_PORT);
	udp->len = bpf_htons(len);
	udp->check = 0;
}

/* The tunnel a FAR sends a packet in: the outer header's fields, the marks. */
struct gtpu_out {
	__be32 local, peer; /* IPv4 */
	__be32 teid;
	__u8 tos;
	__u8 qfi, rqi; /* qfi 0: no PDU Session Container */
};

/*
 * Outer IPv4/UDP/GTP-U in front of the packet of ip_len octets at
 * data + ETH_HLEN + the headers; the UDP checksum is 0, as IPv4 allows.
 */
static __always_inline int gtpu_push_v4(void *data, void *end, const struct gtpu_out *t,
					__u16 ip_len)
{
	struct iphdr *ip = data + ETH_HLEN;
	struct udphdr *udp = (void *)(ip + 1);
	struct gtpu_hdr *h = (void *)(udp + 1);
	__u16 udp_len = sizeof(*udp) + gtpu_len_for(t->qfi) + ip_len;

	/* the frame holds at least an IPv4 header after the longest GTP-U header */
	if ((void *)(h + 1) + sizeof(struct gtpu_opt) + sizeof(struct gtpu_pdu_session) > end)
		return -UPF_DROP_TRUNCATED;
	*ip = (struct iphdr){
	    .version = 4,
	    .ihl = 5,
	    .tos = t->tos,
	    .tot_len = bpf_htons(sizeof(*ip) + udp_len),
	    .frag_off = bpf_htons(0x4000), /* DF: we never fragment */
	    .ttl = OUTER_TTL,
	    .protocol = IPPROTO_UDP,
	    .saddr = t->local,
	    .daddr = t->peer,
	};
	ip->check = csum_ipv4(ip);
	udp_write(udp, udp_len);
	gtpu_write(h, t->teid, t->qfi, t->rqi, ip_len);
	return 0;
}

static __always_inline int fwd_push_v4(void *data, void *end, const struct upf_pkt *p,
				       const struct upf_far *far)
{
	struct gtpu_out t = {
	    .local = far->local.a[0],
	    .peer = far->peer.a[0],
	    .teid = far->teid,
	    .tos = (far->flags & UPF_FAR_F_TOS) ? far->tos : 0,
	    .qfi = p->mark_qfi,
	    .rqi = p->mark_rqi,
	};

	return gtpu_push_v4(data, end, &t, p->ip_len);
}

/* Outer IPv6/UDP/GTP-U; the caller adds the UDP checksum IPv6 requires (RFC 8200 §8.1). */
__cold int fwd_push_v6(void *data, void *end, const struct upf_pkt *p, const struct upf_far *far)
{
	struct ipv6hdr *ip6 = data + ETH_HLEN;
	struct udphdr *udp = (void *)(ip6 + 1);
	struct gtpu_hdr *h = (void *)(udp + 1);
	__u16 udp_len = sizeof(*udp) + gtpu_hdr_len(p) + p->ip_len;
	__u8 tc = (far->flags & UPF_FAR_F_TOS) ? far->tos : 0;

	if ((void *)(h + 1) + sizeof(struct gtpu_opt) + sizeof(struct gtpu_pdu_session) > end)
		return -UPF_DROP_TRUNCATED;
	*ip6 = (struct ipv6hdr){
	    .version = 6,
	    .priority = tc >> 4,
	    .flow_lbl = {(tc & 0x0f) << 4},
	    .payload_len = bpf_htons(udp_len),
	    .nexthdr = IPPROTO_UDP,
	    .hop_limit = OUTER_TTL,
	};
	__builtin_memcpy(&ip6->saddr, far->local.a, 16);
	__builtin_memcpy(&ip6->daddr, far->peer.a, 16);
	udp_write(udp, udp_len);
	gtpu_write(h, far->teid, p->mark_qfi, p->mark_rqi, p->ip_len);
	return 0;
}

static __always_inline int fwd_udp6_check(struct xdp_md *ctx)
{
	__u16 check = csum_udp6(ctx, ETH_HLEN);
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct udphdr *udp = data + ETH_HLEN + sizeof(struct ipv6hdr);

	if ((void *)(udp + 1) > end || !check)
		return -UPF_DROP_TRUNCATED;
	udp->check = check;
	return 0;
}

/* Rewrite the frame as the FAR sends it and hand it to the egress device. */
static __always_inline int fwd_emit(struct xdp_md *ctx, struct upf_pkt *p,
				    const struct upf_far *far)
{
	__u32 hdr_len = fwd_hdr_len(p, far);
	__u8 family = p->family;
	void *data, *end;
	int ret;

	fwd_dec_ttl(ctx, p);
	ret = fwd_reframe(ctx, p->inner_off, p->ip_len, hdr_len);
	if (ret < 0)
		return ret;
	p->inner_off = hdr_len;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (far->ohc == UPF_OHC_GTPU_V4) {
		family = 4;
		ret = fwd_push_v4(data, end, p, far);
	} else if (far->ohc == UPF_OHC_GTPU_V6) {
		family = 6;
		ret = fwd_push_v6(data, end, p, far);
		if (ret == 0)
			ret = fwd_udp6_check(ctx);
	}
	if (ret < 0)
		return ret;
	return fwd_send(ctx, p->dmac, p->smac, family == 4 ? ETH_P_IP : ETH_P_IPV6, p->egress);
}

#endif /* UPF_FWD_H */
