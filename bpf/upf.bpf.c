// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * upf.bpf.c - the entry programs of the XDP datapath.
 *
 * xdp_n3 and xdp_n9 take GTP-U from gNBs and peer UPFs, xdp_n6 takes IP
 * from the data network. Each parses, finds the session and runs the one
 * pipeline of upf_session; every packet leaves through upf_exit. On N3 and
 * N6 the commonest packets take the fast path of lib/lean.h instead, which
 * does the same in one pass and declines everything else.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "upf_types.h"
#include "upf_maps.h"
#include "lib/common.h"
#include "lib/parse.h"
#include "lib/gtpu.h"
#include "lib/pdr.h"
#include "lib/far.h"
#include "lib/qer.h"
#include "lib/urr.h"
#include "lib/fwd.h"
#include "lib/host.h"
#include "lib/stats.h"
#include "lib/lean.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Ethernet in: 0 with the cursor at an IP header, XDP_PASS for ARP, or a
 * drop reason.
 */
static __always_inline int upf_l2_in(struct cursor *c, struct upf_pkt *p)
{
	__u16 proto;
	int ret = parse_eth(c, &proto);

	if (ret < 0)
		return ret;
	if (proto == ETH_P_ARP)
		return XDP_PASS;
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return -UPF_DROP_UNSUPPORTED;
	p->l3_off = cursor_off(c);
	return 0;
}

/* The pipeline both directions share, once the session's PDRs are known. */
static __always_inline int upf_session(struct xdp_md *ctx, struct upf_pkt *p,
				       const struct upf_rules *rules)
{
	const struct upf_pdr *pdr;
	struct urr_held before, after; /* URRs measured before and after QoS */
	struct upf_far far;
	int ret;

	p->session = rules->session;
	pdr = pdr_select(rules, p);
	if (!pdr)
		return -UPF_DROP_NO_PDR;
	p->uplink = !!(pdr->src_iface & UPF_SRC_ACCESS);
	if (!pdr_ohr_ok(pdr, p))
		return -UPF_DROP_OHR_MISMATCH;

	ret = far_apply(ctx, p, rules, pdr, &far);
	if (ret < 0)
		return ret;
	ret = urr_admit(pdr, p, UPF_URR_MBQE, &before);
	if (ret < 0)
		return ret;
	urr_count(&before, p);
	ret = qer_apply(pdr, p);
	if (ret < 0)
		return ret;
	ret = fwd_lookup(ctx, p, &far);
	if (ret < 0)
		return ret;
	ret = urr_admit(pdr, p, 0, &after);
	if (ret < 0)
		return ret;
	ret = fwd_emit(ctx, p, &far);
	if (ret == XDP_REDIRECT)
		urr_count(&after, p);
	else
		urr_refund(&after, p);
	return ret;
}

static __always_inline int upf_gtpu_in(struct xdp_md *ctx, struct upf_pkt *p,
				       const struct upf_rules *found)
{
	struct ip_info outer, inner;
	struct upf_fteid_key key;
	const struct upf_rules *rules;
	struct udphdr *udp;
	struct cursor c;
	__u16 l4_off;
	__u8 type;
	int ret, ep;

	cursor_init(&c, ctx);
	ret = upf_l2_in(&c, p);
	if (ret)
		return ret;
	ret = parse_ip(&c, &outer);
	if (ret < 0)
		return ret;
	ep = gtpu_ep_index(outer.family, &outer.dst);
	udp = c.pos;
	if (outer.proto != IPPROTO_UDP || ep < 0 || (void *)(udp + 1) > c.end ||
	    udp->dest != bpf_htons(GTPU_PORT))
		return host_or_drop(&outer, &c, -UPF_DROP_NOT_LOCAL);
	if (bpf_ntohs(udp->len) < sizeof(*udp) || cursor_narrow(&c, udp, bpf_ntohs(udp->len)))
		return -UPF_DROP_MALFORMED_IP;
	p->outer_family = outer.family;
	p->ep = ep;
	l4_off = cursor_off(&c);
	c.pos = udp + 1;

	ret = gtpu_parse(&c, p, &type);
	if (ret == -UPF_DROP_GTPU_EXT_UNKNOWN) /* tell the sender what we comprehend (§7.3.2) */
		event_send_limited(UPF_EV_EXT_HEADER, p, p->ifindex, outer.family, &outer.src);
	if (ret < 0)
		return ret;
	switch (type) {
	case GTPU_G_PDU:
		break;
	case GTPU_ECHO_REQ:
		if (!rate_ok(UPF_RATE_ECHO))
			return -UPF_DROP_ECHO_LIMITED;
		return gtpu_echo_reply(ctx, p, l4_off);
	case GTPU_ECHO_RESP:
	case GTPU_ERROR_IND:
	case GTPU_END_MARKER:
	case GTPU_SUPP_EXT_NOTIF:
		return XDP_PASS; /* path management: the daemon's socket on port 2152 */
	default:
		return -UPF_DROP_GTPU_TYPE;
	}

	ret = parse_flow(&c, p, &inner);
	if (ret < 0)
		return ret;
	key = (struct upf_fteid_key){.teid = p->teid, .ep = ep};
	rules = found ?: bpf_map_lookup_elem(&ul_teids, &key);
	if (!rules) {
		event_send_limited(UPF_EV_UNKNOWN_TEID, p, p->ifindex, outer.family, &outer.src);
		return -UPF_DROP_NO_SESSION;
	}
	return upf_session(ctx, p, rules);
}

static __always_inline int upf_n6_in(struct xdp_md *ctx, struct upf_pkt *p,
				     const struct upf_rules *found)
{
	const struct upf_rules *rules = NULL;
	struct ip_info ip;
	struct cursor c;
	int ret;

	cursor_init(&c, ctx);
	ret = upf_l2_in(&c, p);
	if (ret)
		return ret;
	ret = parse_flow(&c, p, &ip);
	if (ret < 0)
		return ret;
	if (ip.family == 4) {
		rules = found ?: bpf_map_lookup_elem(&dl_ue4, &ip.dst.a[0]);
	} else {
		struct upf_ue6_key key = {.prefixlen = 128};

		__builtin_memcpy(key.addr, ip.dst.a, 16);
		rules = bpf_map_lookup_elem(&dl_ue6, &key);
	}
	if (!rules)
		return host_from_n6(p, &ip, &c);
	return upf_session(ctx, p, rules);
}

/*
 * Every frame the fast path declines: parsed into a packet record, and the
 * pipeline. found is the session's lookup entry if the fast path found it.
 */
static __always_inline int upf_general(struct xdp_md *ctx, __u8 iface, __u8 src_mask,
				       const struct upf_rules *found)
{
	struct upf_pkt p = {
	    .ifindex = ctx->ingress_ifindex,
	    .iface = iface,
	    .src_mask = src_mask,
	};
	int ret;

	ret = iface == UPF_IF_N6 ? upf_n6_in(ctx, &p, found) : upf_gtpu_in(ctx, &p, found);
	return upf_exit(ctx, &p, ret);
}

static __always_inline int upf_entry(struct xdp_md *ctx, __u8 iface, __u8 src_mask)
{
	const struct upf_rules *found = NULL;
	int ret;

	stats_if(iface, ctx->data_end - ctx->data, 0);
	if (iface != UPF_IF_N9) {
		ret = iface == UPF_IF_N3 ? lean_n3(ctx, &found) : lean_n6(ctx, &found);
		if (ret != LEAN_DECLINE)
			return ret;
	}
	return upf_general(ctx, iface, src_mask, found);
}

SEC("xdp")
int xdp_n3(struct xdp_md *ctx)
{
	return upf_entry(ctx, UPF_IF_N3, UPF_SRC_ACCESS);
}

/* N9 carries uplink from an intermediate UPF and downlink from a PSA. */
SEC("xdp")
int xdp_n9(struct xdp_md *ctx)
{
	return upf_entry(ctx, UPF_IF_N9, UPF_SRC_ACCESS | UPF_SRC_CORE);
}

SEC("xdp")
int xdp_n6(struct xdp_md *ctx)
{
	return upf_entry(ctx, UPF_IF_N6, UPF_SRC_CORE | UPF_SRC_SGI_LAN);
}
