/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lean.h - the uplink's fast path: a G-PDU in its commonest form, for a
 * session in its commonest form, read in place and forwarded with no
 * packet record and no general step.
 *
 * The frame: Ethernet without a VLAN tag; outer IPv4 without options or
 * fragments, UDP to port 2152 of a local IPv4 GTP-U address; GTP-U with
 * one extension header, a PDU Session Container of 4 octets; an inner IPv4
 * packet without options or fragments carrying TCP or UDP. The session:
 * its lookup entry holds one PDR with its FAR (forward, no tunnel), whose
 * filter is inline; URRs without a quota or MBQE, QERs whose gates are
 * open; the next hop in the cache. All the SMFs' sessions are of that form,
 * and most of their uplink.
 *
 * Anything else, lean_n3 declines before it has changed anything (no
 * frame byte, no counter, no rate state), and the general pipeline takes
 * the frame from the start. Where it does not decline, it does what the
 * general pipeline would, in the same order where order is seen (rate
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
#include "qer.h"
#include "urr.h"
#include "stats.h"

#define LEAN_DECLINE (-1000) /* not a frame or a session lean_n3 takes */

/* 0: every frame takes the general pipeline (datapath.Options.NoFastPath). */
const volatile __u8 cfg_fast_path = 1;

/* The headers lean_n3 takes, in place. */
struct lean_gpdu {
	struct ethhdr eth;
	struct iphdr outer;
	struct udphdr udp;
	struct gtpu_hdr gtpu;
	struct gtpu_opt opt;
	struct gtpu_pdu_session psc; /* its UL form: same length and QFI octet */
	struct iphdr inner;
	__be16 sport, dport;
} __attribute__((packed));

#define LEAN_OFF(field) offsetof(struct lean_gpdu, field)
#define GTPU_FLAGS_E (GTPU_F_VERSION1 | GTPU_F_PT | GTPU_F_E)

/* Index of the local IPv4 GTP-U address addr, or -1. */
static __always_inline int lean_ep(__be32 addr)
{
#pragma unroll
	for (int i = 0; i < UPF_MAX_GTPU_EPS; i++) {
		if (cfg_gtpu_eps[i].family == 4 && cfg_gtpu_eps[i].addr.a[0] == addr)
			return i;
	}
	return -1;
}

/* The frame is of the form lean_n3 takes, its lengths consistent. */
static __always_inline int lean_frame_ok(const struct lean_gpdu *g, void *data, void *end)
{
	void *outer_end = data + LEAN_OFF(outer) + bpf_ntohs(g->outer.tot_len);
	void *udp_end = data + LEAN_OFF(udp) + bpf_ntohs(g->udp.len);
	void *gtpu_end = data + LEAN_OFF(opt) + bpf_ntohs(g->gtpu.len);
	void *inner_end = data + LEAN_OFF(inner) + bpf_ntohs(g->inner.tot_len);

	return g->eth.h_proto == bpf_htons(ETH_P_IP) && *(__u8 *)&g->outer == 0x45 &&
	       !(g->outer.frag_off & bpf_htons(0x3fff)) && g->outer.protocol == IPPROTO_UDP &&
	       g->udp.dest == bpf_htons(GTPU_PORT) && g->gtpu.flags == GTPU_FLAGS_E &&
	       g->gtpu.type == GTPU_G_PDU && g->opt.next_ext == GTPU_EXT_PDU_SESSION &&
	       g->psc.len == 1 && g->psc.next == 0 && *(__u8 *)&g->inner == 0x45 &&
	       !(g->inner.frag_off & bpf_htons(0x3fff)) &&
	       (g->inner.protocol == IPPROTO_UDP || g->inner.protocol == IPPROTO_TCP) &&
	       outer_end <= end && bpf_ntohs(g->udp.len) >= sizeof(struct udphdr) &&
	       udp_end <= outer_end && gtpu_end <= udp_end &&
	       bpf_ntohs(g->inner.tot_len) >= sizeof(struct iphdr) + 4 && inner_end <= gtpu_end;
}

/* The entry's one PDR matches the frame, and the session is of lean form. */
static __always_inline int lean_session_ok(const struct upf_rules *rules, const struct lean_gpdu *g)
{
	const struct upf_pdr *r = &rules->pdr;
	__u16 sport = bpf_ntohs(g->sport), dport = bpf_ntohs(g->dport);

	if (rules->n_pdrs != 1 || !rules->far_inline || !(rules->far.action & UPF_FAR_FORW) ||
	    rules->far.ohc != UPF_OHC_NONE)
		return 0;
	if (!(r->src_iface & UPF_SRC_ACCESS) || !(r->ohr & UPF_OHR_GTPU_V4) ||
	    (r->qfi && r->qfi != (g->psc.qfi & 0x3f)) ||
	    (r->proto && r->proto != g->inner.protocol) || sport < r->sport_lo ||
	    sport > r->sport_hi || dport < r->dport_lo || dport > r->dport_hi)
		return 0;
	if (r->src4_len)
		return (g->inner.saddr & prefix_mask(r->src4_len, 0)) == r->src4;
	return !r->sdf_id;
}

/* The PDR's URR records to count in, or 0 if one needs the general steps. */
static __always_inline int lean_urrs(const struct upf_pdr *r, struct upf_usage *use[])
{
#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		use[i] = NULL;
		if (!r->urr_id[i])
			continue;
		use[i] = urr_record(r->urr_id[i]);
		if (!use[i] || use[i]->flags)
			return 0;
	}
	return 1;
}

/* The PDR's QERs, all present with their uplink gates open, or 0. */
static __always_inline int lean_qers(const struct upf_pdr *r, struct upf_qer *q[])
{
#pragma unroll
	for (int i = 0; i < UPF_QERS_PER_PDR; i++) {
		__u32 id = r->qer_id[i];

		q[i] = NULL;
		if (!id)
			continue;
		q[i] = bpf_map_lookup_elem(&qers, &id);
		if (!q[i] || (q[i]->gate & UPF_GATE_UL_CLOSED))
			return 0;
	}
	return 1;
}

/* The cached next hop of the inner destination, or NULL. */
static __always_inline const struct upf_nexthop *lean_nexthop(const struct lean_gpdu *g,
							      __u32 ifindex, __u64 now)
{
	struct upf_addr dst = {.a = {g->inner.daddr}};
	const struct upf_nexthop *nh = nh_slot(4, &dst);

	if (!nh || !nh_hit(nh, 4, &dst, ifindex, bpf_ntohs(g->inner.tot_len), now))
		return NULL;
	return nh;
}

/* From the first change on: the verdict, or a drop reason. */
static __always_inline int lean_forward(struct xdp_md *ctx, struct lean_gpdu *g,
					struct upf_qer *q[], const struct upf_nexthop *nh,
					__u16 ip_len, __u64 now)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 frame = end - data, ip_end = LEAN_OFF(inner) + ip_len;
	struct ethhdr *eth;
	int ret;

#pragma unroll
	for (int i = 0; i < UPF_QERS_PER_PDR; i++) {
		if (!q[i] || !q[i]->mbr_ul)
			continue;
		ret = qer_police(&q[i]->tat_ul, q[i]->mbr_ul, ip_len, now);
		if (ret < 0)
			return ret;
	}
	csum_ipv4_dec_ttl((void *)g + LEAN_OFF(inner));
	if (frame > ip_end && bpf_xdp_adjust_tail(ctx, -(int)(frame - ip_end)))
		return -UPF_DROP_ADJUST;
	if (bpf_xdp_adjust_head(ctx, (int)LEAN_OFF(inner) - ETH_HLEN))
		return -UPF_DROP_ADJUST;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	eth = data;
	if ((void *)(eth + 1) > end)
		return -UPF_DROP_TRUNCATED;
	__builtin_memcpy(eth->h_dest, nh->dmac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, nh->smac, ETH_ALEN);
	eth->h_proto = bpf_htons(ETH_P_IP);
	ret = bpf_redirect_map(&tx_ports, nh->out_ifindex, 0);
	return ret == XDP_REDIRECT ? ret : -UPF_DROP_REDIRECT;
}

/* A G-PDU from N3 forwarded, or dropped by its MBR; or LEAN_DECLINE. */
static __always_inline int lean_n3(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct lean_gpdu *g = data;
	struct upf_usage *use[UPF_URRS_PER_PDR];
	struct upf_qer *q[UPF_QERS_PER_PDR];
	const struct upf_nexthop *nh;
	const struct upf_rules *rules;
	struct upf_fteid_key key;
	__u32 egress;
	__u16 ip_len;
	__u64 now;
	int ret, ep;

	if (!cfg_fast_path || !cfg_nexthop_ttl_ns || (void *)(g + 1) > end ||
	    !lean_frame_ok(g, data, end) || g->inner.ttl <= 1)
		return LEAN_DECLINE;
	ep = lean_ep(g->outer.daddr);
	if (ep < 0)
		return LEAN_DECLINE;
	key = (struct upf_fteid_key){.teid = g->gtpu.teid, .ep = ep};
	rules = bpf_map_lookup_elem(&ul_teids, &key);
	if (!rules || !lean_session_ok(rules, g) || !lean_urrs(&rules->pdr, use) ||
	    !lean_qers(&rules->pdr, q))
		return LEAN_DECLINE;
	now = bpf_ktime_get_coarse_ns();
	nh = lean_nexthop(g, ctx->ingress_ifindex, now);
	if (!nh)
		return LEAN_DECLINE;

	ip_len = bpf_ntohs(g->inner.tot_len);
	egress = nh->out_ifindex;
	ret = lean_forward(ctx, g, q, nh, ip_len, now);
	if (ret == XDP_REDIRECT) {
#pragma unroll
		for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
			if (use[i]) {
				use[i]->ul_pkts++;
				use[i]->ul_bytes += ip_len;
			}
		}
	}
	return stats_exit(ctx, ret, egress, UPF_IF_N3);
}

#endif /* UPF_LEAN_H */
