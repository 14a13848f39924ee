/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * common.h - the packet context every stage reads and writes, and the few
 * macros they share.
 */
#ifndef UPF_COMMON_H
#define UPF_COMMON_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "../upf_types.h"
#include "../upf_maps.h"

/*
 * A function off the path of a forwarded packet (events, Echo, the FIB
 * when its cache misses, traffic for the host, IPv6 tunnels, SDF slots):
 * a call, not inlined, so that the code a forwarded packet runs stays
 * compact. The instruction cache is shared with the kernel's path and,
 * in the lab, with the generator and the sink.
 */
#define __cold static __noinline

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

#define GTPU_PORT 2152

/* Local GTP-U addresses; the index is part of the uplink key (the F-TEID). */
const volatile struct upf_gtpu_ep cfg_gtpu_eps[UPF_MAX_GTPU_EPS];

/* MAC address of each role's device, for frames we originate. */
const volatile __u8 cfg_mac[UPF_IF__MAX + 1][ETH_ALEN];

/* Offsets are masked with this before use so the verifier can bound them. */
#define UPF_OFF_MASK 0x3ff

/*
 * Everything known about the packet in flight. Offsets are from the start
 * of the frame; pointers are re-derived after every head adjustment.
 */
struct upf_pkt {
	__u32 ifindex; /* ingress device */
	__u8 iface;    /* UPF_IF_* it arrived on */
	__u8 src_mask; /* UPF_SRC_* bits this interface may carry */

	/* outer headers (N3/N9) */
	__u8 outer_family; /* 4 or 6 */
	__u8 ep;	   /* local GTP-U endpoint index */
	__u16 l3_off;	   /* first IP header */
	__u16 inner_off;   /* IP packet carried (after GTP-U, or = l3_off) */
	__u32 teid;	   /* network order */
	__u8 qfi;	   /* from the PDU Session Container, 0 = none */

	/* the IP packet carried: flow key for SDF matching */
	__u8 family;
	__u8 proto;
	__u8 tos;
	__u8 ttl;
	__u16 ip_len; /* total length from its header: the volume counted */
	__u16 sport, dport;
	__u32 flow_label;
	struct upf_addr src, dst;

	/* decisions along the way */
	__u32 session;
	__u8 uplink;   /* the PDR's source is Access */
	__u8 mark_qfi; /* QFI and RQI for the downlink PDU Session Container */
	__u8 mark_rqi;
	__u32 egress; /* next hop device */
	__u8 dmac[ETH_ALEN], smac[ETH_ALEN];
};

/*
 * The upf_local_flags of addr when it is one of this host's, else NULL.
 * IPv4 is looked up in its IPv4-mapped form.
 */
static __always_inline __u8 *local_addr(__u8 family, const struct upf_addr *addr)
{
	struct upf_addr key = *addr;

	if (family == 4)
		key = (struct upf_addr){.a = {0, 0, bpf_htonl(0xffff), addr->a[0]}};
	return bpf_map_lookup_elem(&local_addrs, &key);
}

#endif /* UPF_COMMON_H */
