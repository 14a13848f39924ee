/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lean.h - the fast path: a packet in its commonest form, for a session in
 * its commonest form, read in place and forwarded with no packet record
 * and no general step.
 *
 * Uplink (lean_n3), the frame: Ethernet without a VLAN tag; outer IPv4
 * without options or fragments, UDP to port 2152 of a local IPv4 GTP-U
 * address; GTP-U with one extension header, a PDU Session Container of 4
 * octets; an inner IPv4 packet without options or fragments carrying TCP
 * or UDP. Downlink (lean_n6): the same inner packet behind Ethernet.
 * The session: the PDR that matches is the lookup entry's one, its filter
 * inline, or any of a list (scanned as the general pipeline scans it); its
 * FAR forwards (no tunnel uplink, an IPv4 one downlink); URRs without MBQE
 * (a volume quota is taken by the general pipeline's own step), QERs whose
 * gates are open; the next hop in the cache.
 *
 * Anything else, the fast path declines before it has changed anything
 * (no frame byte, no counter, no rate state), and the general pipeline
 * takes the frame from the start. Where it does not decline, it does what
 * the general pipeline would, in the same order where order is seen (rate
 * state, then the frame, then the counters): FuzzDatapath runs every frame
 * through a datapath with it and one without and compares the verdicts,
 * the frames and every counter.
 */
#ifndef UPF_LEAN_H
#define UPF_LEAN_H

#include <linux/ip.h>
#include <linux/udp.h>
#include <linux/tcp.h>
#include "common.h"
#include "gtpu.h"
#include "csum.h"
#include "fwd.h"
#include "pdr.h"
#include "qer.h"
#include "urr.h"
#include "stats.h"

#define LEAN_DECLINE (-1000) /* not a frame or a session the fast path takes */

/* 0: every frame takes the general pipeline (datapath.Options.NoFastPath). */
const volatile __u8 cfg_fast_path = 1;

/* An IP packet with its ports. */
struct lean_ip {
	struct iphdr ip;
	__be16 sport, dport;
};

/*
 * The headers are read in place from LEAN_SHIFT octets before the frame,
 * which are never read: from there each header and field is at its natural
 * alignment, so the compiler reads it in one load, where it reads a packed
 * struct a byte at a time (x86 loads a packet's fields wherever they are).
 */
#define LEAN_SHIFT 2

/* An Ethernet header: struct ethhdr is packed, and so read a byte at a time. */
struct lean_eth {
	__u8 dst[ETH_ALEN], src[ETH_ALEN];
	__be16 proto;
};

/* The headers lean_n3 takes. */
struct lean_gpdu {
	__u8 shift[LEAN_SHIFT];
	struct lean_eth eth;
	struct iphdr outer;
	struct udphdr udp;
	struct gtpu_hdr gtpu;
	struct gtpu_opt opt;
	struct gtpu_pdu_session psc; /* its UL form: same length and QFI octet */
	struct lean_ip inner;
};

/* The headers lean_n6 takes. */
struct lean_frame {
	__u8 shift[LEAN_SHIFT];
	struct lean_eth eth;
	struct lean_ip inner;
};

/* Where the inner packet starts in the frame. */
#define LEAN_GPDU_INNER (offsetof(struct lean_gpdu, inner) - LEAN_SHIFT)
_Static_assert(LEAN_GPDU_INNER == ETH_HLEN + 20 + 8 + 8 + 4 + 4, "lean_gpdu has no padding");
_Static_assert(offsetof(struct lean_frame, inner) - LEAN_SHIFT == ETH_HLEN,
	       "lean_frame has no padding");

#define GTPU_FLAGS_E (GTPU_F_VERSION1 | GTPU_F_PT | GTPU_F_E)

/* The inner packet is of the form taken, and ends within end. */
static __always_inline int lean_ip_ok(const struct lean_ip *in, void *end)
{
	__u16 len = bpf_ntohs(in->ip.tot_len);

	return *(__u8 *)&in->ip == 0x45 && !(in->ip.frag_off & bpf_htons(0x3fff)) &&
	       (in->ip.protocol == IPPROTO_UDP || in->ip.protocol == IPPROTO_TCP) &&
	       len >= sizeof(*in) && (void *)in + len <= end;
}

/* The G-PDU is of the form lean_n3 takes, its lengths consistent. */
static __always_inline int lean_gpdu_ok(const struct lean_gpdu *g, void *end)
{
	void *outer_end = (void *)&g->outer + bpf_ntohs(g->outer.tot_len);
	void *udp_end = (void *)&g->udp + bpf_ntohs(g->udp.len);
	void *gtpu_end = (void *)&g->opt + bpf_ntohs(g->gtpu.len);

	return g->eth.proto == bpf_htons(ETH_P_IP) && *(__u8 *)&g->outer == 0x45 &&
	       !(g->outer.frag_off & bpf_htons(0x3fff)) && g->outer.protocol == IPPROTO_UDP &&
	       g->udp.dest == bpf_htons(GTPU_PORT) && g->gtpu.flags == GTPU_FLAGS_E &&
	       g->gtpu.type == GTPU_G_PDU && g->opt.next_ext == GTPU_EXT_PDU_SESSION &&
	       g->psc.len == 1 && g->psc.next == 0 && outer_end <= end &&
	       bpf_ntohs(g->udp.len) >= sizeof(struct udphdr) && udp_end <= outer_end &&
	       gtpu_end <= udp_end && lean_ip_ok(&g->inner, gtpu_end);
}

/* The FAR a packet is forwarded by, as the fast path reads it. */
struct lean_far {
	__u8 action; /* UPF_FAR_* */
	__u8 ohc;    /* UPF_OHC_* */
	__u8 tos;    /* outer ToS, with UPF_FAR_F_TOS in flags */
	__u8 flags;
	__be32 teid, peer, local; /* an IPv4 tunnel's */
};

/*
 * The inline PDR matches the inner packet, coming from src_mask with qfi,
 * as its own fields tell; 0 also for a filter in an SDF slot, which
 * lean_select_pdr reads.
 */
static __always_inline int lean_pdr_match(const struct upf_pdr *r, const struct lean_ip *in,
					  __u8 src_mask, __u8 qfi)
{
	__u16 sport = bpf_ntohs(in->sport), dport = bpf_ntohs(in->dport);

	if (!(r->src_iface & src_mask) || (r->qfi && r->qfi != qfi) ||
	    (r->proto && r->proto != in->ip.protocol) || sport < r->sport_lo ||
	    sport > r->sport_hi || dport < r->dport_lo || dport > r->dport_hi)
		return 0;
	if (r->src4_len)
		return (in->ip.saddr & prefix_mask(r->src4_len, 0)) == r->src4;
	return !r->sdf_id;
}

/*
 * The first PDR of the session that matches the inner packet, when
 * lean_pdr_match said no to the inline one: found by the general
 * pipeline's own selection, p the flow key it reads and nothing more. The
 * inline PDR is asked again only if its filter is in an SDF slot, which
 * lean_pdr_match does not read.
 */
static __always_inline const struct upf_pdr *lean_select_pdr(const struct upf_rules *rules,
							     const struct lean_ip *in,
							     __u8 src_mask, __u8 qfi,
							     struct upf_pkt *p)
{
	*p = (struct upf_pkt){
	    .src_mask = src_mask,
	    .qfi = qfi,
	    .family = 4,
	    .proto = in->ip.protocol,
	    .tos = in->ip.tos,
	    .sport = bpf_ntohs(in->sport),
	    .dport = bpf_ntohs(in->dport),
	    .src = {.a = {in->ip.saddr}},
	    .dst = {.a = {in->ip.daddr}},
	};

	if (rules->pdr.sdf_id && !rules->pdr.src4_len)
		return pdr_select(rules, p);
	return pdr_list_select(rules, p);
}

/*
 * The PDR the general pipeline would select for the packet, and its FAR in
 * far, when the PDR removes the outer header the packet came in (ohr;
 * UPF_OHR_NONE: none); or NULL, and the general pipeline decides. Past the
 * inline PDR's own fields, the selection uses p.
 */
static __always_inline const struct upf_pdr *lean_pdr(const struct upf_rules *rules,
						      const struct lean_ip *in, __u8 src_mask,
						      __u8 qfi, __u8 ohr, struct lean_far *far,
						      struct upf_pkt *p)
{
	const struct upf_pdr *r = &rules->pdr;
	const struct upf_far *f;
	__u32 id;

	if (!lean_pdr_match(r, in, src_mask, qfi))
		r = lean_select_pdr(rules, in, src_mask, qfi, p);
	if (!r || (ohr ? !(r->ohr & ohr) : r->ohr != UPF_OHR_NONE))
		return NULL;
	if (rules->far_inline && r == &rules->pdr) {
		*far = (struct lean_far){
		    .action = rules->far.action,
		    .ohc = rules->far.ohc,
		    .tos = rules->far.tos,
		    .flags = rules->far.flags,
		    .teid = rules->far.teid,
		    .peer = rules->far.peer,
		    .local = cfg_gtpu_eps[rules->local_ep & (UPF_MAX_GTPU_EPS - 1)].addr.a[0],
		};
		return r;
	}
	id = r->far_id;
	f = bpf_map_lookup_elem(&fars, &id);
	if (!f)
		return NULL;
	*far = (struct lean_far){
	    .action = f->action,
	    .ohc = f->ohc,
	    .tos = f->tos,
	    .flags = f->flags,
	    .teid = f->teid,
	    .peer = f->peer.a[0],
	    .local = f->local.a[0],
	};
	return r;
}

/*
 * The PDR's URR records to count in, as the general pipeline finds them,
 * and how many have a volume quota; or -1 if one measures before QoS
 * (MBQE) or has no record: the general steps.
 */
static __always_inline int lean_urrs(const struct upf_pdr *r, struct urr_held *h)
{
	int quotas = urr_find(r, 0, h);

#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		if (r->urr_id[i] && !h->use[i])
			return -1;
	}
	return quotas;
}

/* The PDR's QERs, all present with the direction's gate (UPF_GATE_*) open, or 0. */
static __always_inline int lean_qers(const struct upf_pdr *r, struct upf_qer *q[], __u8 closed)
{
#pragma unroll
	for (int i = 0; i < UPF_QERS_PER_PDR; i++) {
		__u32 id = r->qer_id[i];

		q[i] = NULL;
		if (!id)
			continue;
		q[i] = bpf_map_lookup_elem(&qers, &id);
		if (!q[i] || (q[i]->gate & closed))
			return 0;
	}
	return 1;
}

/*
 * The cached next hop toward the IPv4 address dst for a packet of len
 * octets at now (nh_now), or NULL.
 */
static __always_inline const struct upf_nexthop *lean_nexthop(__be32 dst, __u32 ifindex, __u32 len,
							      __u64 now)
{
	struct upf_addr a = {.a = {dst}};
	const struct upf_nexthop *nh = nh_slot(4, &a);

	if (!nh || !nh_hit(nh, 4, &a, ifindex, len, now))
		return NULL;
	return nh;
}

/* The QERs' MBRs of the direction; the first change a packet makes. */
static __always_inline int lean_police(struct upf_qer *q[], int uplink, __u16 ip_len)
{
	__u64 now = 0; /* the MBRs' clock, read by the first */

#pragma unroll
	for (int i = 0; i < UPF_QERS_PER_PDR; i++) {
		int ret = q[i] ? qer_police_dir(q[i], uplink, ip_len, &now) : 0;

		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The packet's changes before its frame's: the QERs' MBRs, then, when the
 * PDR's URRs have quotas, their share taken by the general pipeline's step,
 * which reads p (the packet, as lean_quota_pkt fills it in).
 */
static __always_inline int lean_admit(struct upf_qer *q[], int uplink, __u16 ip_len,
				      const struct upf_pdr *r, int quotas, struct upf_pkt *p,
				      struct urr_held *h)
{
	int ret = lean_police(q, uplink, ip_len);

	if (ret == 0 && quotas)
		ret = urr_take(r, p, h);
	return ret;
}

/* The packet as the quota step reads it: its length, and what a quota's event names. */
static __always_inline struct upf_pkt lean_quota_pkt(struct xdp_md *ctx, __u8 iface, __u32 session,
						     __be32 teid, __u8 qfi, __u16 ip_len)
{
	return (struct upf_pkt){
	    .ifindex = ctx->ingress_ifindex,
	    .iface = iface,
	    .teid = teid,
	    .qfi = qfi,
	    .ip_len = ip_len,
	    .session = session,
	};
}

/* Counted in its URRs if it left (ret), else what it took of their quotas given back. */
static __always_inline void lean_account(int ret, struct urr_held *h, int uplink, __u16 ip_len,
					 int quotas, const struct upf_pkt *p)
{
	if (ret == XDP_REDIRECT)
		urr_add(h->use, uplink, ip_len);
	else if (quotas)
		urr_refund(h, p);
}

/*
 * The inner packet's TTL decremented, then the frame's head moved so that
 * it follows hdr_len octets: the changes before its new headers are written.
 */
static __always_inline int lean_reframe(struct xdp_md *ctx, struct lean_ip *inner, __u32 inner_off,
					__u16 ip_len, __u32 hdr_len)
{
	csum_ipv4_dec_ttl((struct iphdr *)inner);
	return fwd_reframe(ctx, inner_off, ip_len, hdr_len);
}

/*
 * A G-PDU from N3 forwarded to N6, or dropped by its MBR; or LEAN_DECLINE,
 * with *found the session's lookup entry if it got that far: the general
 * pipeline, which would look the same key up, takes it from there.
 */
static __always_inline int lean_n3(struct xdp_md *ctx, const struct upf_rules **found)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct lean_gpdu *g = data - LEAN_SHIFT;
	struct upf_qer *q[UPF_QERS_PER_PDR];
	const struct upf_nexthop *nh;
	const struct upf_rules *rules;
	const struct upf_pdr *r;
	struct upf_fteid_key key;
	struct lean_far far;
	struct urr_held h;
	struct upf_pkt p; /* the packet as general steps read it: a list's scan, the quotas */
	__u32 egress;
	__u16 ip_len;
	__u64 now;
	int ret, ep, quotas;

	if (!cfg_fast_path || !cfg_nexthop_ttl_jiffies || (void *)(g + 1) > end ||
	    !lean_gpdu_ok(g, end) || g->inner.ip.ttl <= 1)
		return LEAN_DECLINE;
	ep = gtpu_ep_index(4, &(struct upf_addr){.a = {g->outer.daddr}});
	if (ep < 0)
		return LEAN_DECLINE;
	key = (struct upf_fteid_key){.teid = g->gtpu.teid, .ep = ep};
	rules = bpf_map_lookup_elem(&ul_teids, &key);
	*found = rules;
	if (!rules)
		return LEAN_DECLINE;
	r = lean_pdr(rules, &g->inner, UPF_SRC_ACCESS, g->psc.qfi & 0x3f, UPF_OHR_GTPU_V4, &far,
		     &p);
	if (!r || !(far.action & UPF_FAR_FORW) || far.ohc != UPF_OHC_NONE ||
	    (quotas = lean_urrs(r, &h)) < 0 || !lean_qers(r, q, UPF_GATE_UL_CLOSED))
		return LEAN_DECLINE;
	ip_len = bpf_ntohs(g->inner.ip.tot_len);
	now = nh_now();
	nh = lean_nexthop(g->inner.ip.daddr, ctx->ingress_ifindex, ip_len, now);
	if (!nh)
		return LEAN_DECLINE;

	egress = nh->out_ifindex;
	if (quotas)
		p = lean_quota_pkt(ctx, UPF_IF_N3, rules->session, g->gtpu.teid, g->psc.qfi & 0x3f,
				   ip_len);
	ret = lean_admit(q, 1, ip_len, r, quotas, &p, &h);
	if (ret == 0)
		ret = lean_reframe(ctx, &g->inner, LEAN_GPDU_INNER, ip_len, ETH_HLEN);
	if (ret == 0)
		ret = fwd_send(ctx, nh->dmac, nh->smac, ETH_P_IP, nh->out_ifindex);
	lean_account(ret, &h, 1, ip_len, quotas, &p);
	return stats_exit(ctx, ret, egress, UPF_IF_N3);
}

/* An IPv4 packet from N6 forwarded to its UE's gNB, or dropped by its MBR; or as lean_n3. */
static __always_inline int lean_n6(struct xdp_md *ctx, const struct upf_rules **found)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct lean_frame *f = data - LEAN_SHIFT;
	struct upf_qer *q[UPF_QERS_PER_PDR];
	const struct upf_nexthop *nh;
	const struct upf_rules *rules;
	const struct upf_pdr *r;
	struct gtpu_out t = {};
	struct lean_far far;
	struct urr_held h;
	struct upf_pkt p; /* as in lean_n3 */
	__u32 egress, hdr_len;
	__be32 ue;
	__u16 ip_len;
	__u64 now;
	int ret, quotas;

	if (!cfg_fast_path || !cfg_nexthop_ttl_jiffies || (void *)(f + 1) > end ||
	    f->eth.proto != bpf_htons(ETH_P_IP) || !lean_ip_ok(&f->inner, end) ||
	    f->inner.ip.ttl <= 1)
		return LEAN_DECLINE;
	ue = f->inner.ip.daddr;
	rules = bpf_map_lookup_elem(&dl_ue4, &ue);
	*found = rules;
	if (!rules)
		return LEAN_DECLINE;
	r = lean_pdr(rules, &f->inner, UPF_SRC_CORE | UPF_SRC_SGI_LAN, 0, UPF_OHR_NONE, &far, &p);
	if (!r || !(far.action & UPF_FAR_FORW) || far.ohc != UPF_OHC_GTPU_V4 ||
	    (quotas = lean_urrs(r, &h)) < 0 || !lean_qers(r, q, UPF_GATE_DL_CLOSED))
		return LEAN_DECLINE;
#pragma unroll
	for (int i = 0; i < UPF_QERS_PER_PDR; i++) {
		if (q[i] && q[i]->qfi && !t.qfi) { /* the first QER with a QFI marks */
			t.qfi = q[i]->qfi;
			t.rqi = q[i]->rqi;
		}
	}
	t.local = far.local;
	t.peer = far.peer;
	t.teid = far.teid;
	t.tos = (far.flags & UPF_FAR_F_TOS) ? far.tos : 0;
	ip_len = bpf_ntohs(f->inner.ip.tot_len);
	hdr_len = sizeof(struct iphdr) + sizeof(struct udphdr) + gtpu_len_for(t.qfi);
	now = nh_now();
	nh = lean_nexthop(t.peer, ctx->ingress_ifindex, hdr_len + ip_len, now);
	if (!nh)
		return LEAN_DECLINE;

	egress = nh->out_ifindex;
	if (quotas) /* no tunnel and no QFI on arrival, as the general pipeline's record */
		p = lean_quota_pkt(ctx, UPF_IF_N6, rules->session, 0, 0, ip_len);
	ret = lean_admit(q, 0, ip_len, r, quotas, &p, &h);
	if (ret == 0)
		ret = lean_reframe(ctx, &f->inner, ETH_HLEN, ip_len, ETH_HLEN + hdr_len);
	if (ret == 0)
		ret =
		    gtpu_push_v4((void *)(long)ctx->data, (void *)(long)ctx->data_end, &t, ip_len);
	if (ret == 0)
		ret = fwd_send(ctx, nh->dmac, nh->smac, ETH_P_IP, nh->out_ifindex);
	lean_account(ret, &h, 0, ip_len, quotas, &p);
	return stats_exit(ctx, ret, egress, UPF_IF_N6);
}

#endif /* UPF_LEAN_H */
