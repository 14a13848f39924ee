/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stats.h - the one exit of every program: counts the verdict, the drop
 * reason and the interface bytes, then returns the XDP action.
 */
#ifndef UPF_STATS_H
#define UPF_STATS_H

#include "common.h"
#include "../upf_maps.h"

/* Devices of the N3, N6 and N9 roles (0 = absent), for the egress counters. */
const volatile __u32 cfg_ifindex[UPF_IF__MAX];

static __always_inline void stats_inc(void *map, __u32 key)
{
	__u64 *n = bpf_map_lookup_elem(map, &key);

	if (n)
		*n += 1;
}

static __always_inline void stats_if(__u32 iface, __u32 len, int tx)
{
	struct upf_if_stats *s = bpf_map_lookup_elem(&if_stats, &iface);

	if (!s)
		return;
	if (tx) {
		s->tx_pkts++;
		s->tx_bytes += len;
	} else {
		s->rx_pkts++;
		s->rx_bytes += len;
	}
}

static __always_inline __u32 stats_iface_of(__u32 ifindex)
{
	if (ifindex == cfg_ifindex[UPF_IF_N3])
		return UPF_IF_N3;
	if (ifindex == cfg_ifindex[UPF_IF_N6])
		return UPF_IF_N6;
	return UPF_IF_N9;
}

/*
 * ret: an XDP action, or a negative UPF_DROP_* reason; egress the device a
 * redirect sends to, iface the role it arrived on (XDP_TX goes back there).
 */
static __always_inline int stats_exit(struct xdp_md *ctx, int ret, __u32 egress, __u8 iface)
{
	__u32 len = ctx->data_end - ctx->data;

	if (ret < 0) {
		stats_inc(&drops, -ret < UPF_DROP__MAX ? -ret : UPF_DROP_NONE);
		ret = XDP_DROP;
	}
	stats_inc(&verdicts, ret);
	if (ret == XDP_REDIRECT)
		stats_if(stats_iface_of(egress), len, 1);
	else if (ret == XDP_TX)
		stats_if(iface, len, 1);
	return ret;
}

static __always_inline int upf_exit(struct xdp_md *ctx, const struct upf_pkt *p, int ret)
{
	return stats_exit(ctx, ret, p->egress, p->iface);
}

#endif /* UPF_STATS_H */
