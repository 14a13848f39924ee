/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * host.h - what of the traffic that is no session's goes to the host's
 * kernel, and what is dropped.
 *
 * Neighbour discovery and MLD always go up. From N3 and N9, whatever is
 * addressed to the host does: PFCP and management may share those
 * networks. From N6 the data network reaches only the N6 device's own
 * addresses, and none of upfd's sockets there: a host of the data network
 * must not speak PFCP to the UPF, nor forge GTP-U path messages (Error
 * Indication, End Marker) to it.
 */
#ifndef UPF_HOST_H
#define UPF_HOST_H

#include <linux/in.h>
#include <linux/icmpv6.h>
#include "common.h"
#include "parse.h"

/* Neighbour discovery (RFC 4861 §4) and multicast listener (RFC 2710, 3810) types. */
#define MLD_QUERY 130
#define MLD_DONE 132
#define ND_ROUTER_SOLICIT 133
#define ND_REDIRECT 137
#define MLD2_REPORT 143

/* upfd's listening sockets besides GTP-U (PFCP, REST API, metrics). */
const volatile struct upf_listener cfg_listeners[UPF_MAX_LISTENERS];

/* Neighbour discovery or MLD, which the kernel answers on every link. */
static __always_inline int host_nd(const struct ip_info *ip, const struct cursor *c)
{
	struct icmp6hdr *icmp = c->pos;

	if (ip->family != 6 || ip->proto != IPPROTO_ICMPV6 || (void *)(icmp + 1) > c->end)
		return 0;
	return (icmp->icmp6_type >= ND_ROUTER_SOLICIT && icmp->icmp6_type <= ND_REDIRECT) ||
	       (icmp->icmp6_type >= MLD_QUERY && icmp->icmp6_type <= MLD_DONE) ||
	       icmp->icmp6_type == MLD2_REPORT;
}

/* From N3 or N9: the host gets what is addressed to it, the rest is dropped for reason. */
__cold int host_or_drop(const struct ip_info *ip, const struct cursor *c, int reason)
{
	if (host_nd(ip, c))
		return XDP_PASS;
	return local_addr(ip->family, &ip->dst) ? XDP_PASS : reason;
}

/*
 * May the data network reach this transport on the N6 device's address?
 * ICMP, and TCP, UDP or SCTP to a port none of upfd's; a non-first IPv4
 * fragment (proto 0) rides on its first fragment's verdict. IPv6
 * extension headers are not walked, so a packet with one is refused: its
 * ports are out of sight.
 */
static __always_inline int host_n6_transport_ok(const struct upf_pkt *p)
{
	switch (p->proto) {
	case 0:
		return p->family == 4;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return 1;
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_SCTP:
		break;
	default:
		return 0;
	}
	if (p->proto == IPPROTO_UDP && p->dport == GTPU_PORT)
		return 0;
#pragma unroll
	for (int i = 0; i < UPF_MAX_LISTENERS; i++) {
		if (cfg_listeners[i].proto == p->proto && cfg_listeners[i].port == p->dport)
			return 0;
	}
	return 1;
}

/* From N6, to no UE: see the top of this file. */
__cold int host_from_n6(const struct upf_pkt *p, const struct ip_info *ip, const struct cursor *c)
{
	__u8 *flags;

	if (host_nd(ip, c))
		return XDP_PASS;
	flags = local_addr(ip->family, &ip->dst);
	if (!flags)
		return -UPF_DROP_NO_SESSION;
	if (!(*flags & UPF_LOCAL_ON_N6) || !host_n6_transport_ok(p))
		return -UPF_DROP_DN_TO_HOST;
	return XDP_PASS;
}

#endif /* UPF_HOST_H */
