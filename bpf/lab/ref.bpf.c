// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ref.bpf.c - the reference forwarder: the least an XDP program can do to
 * move a frame between two ports. It rewrites both MACs and redirects
 * through a devmap, as the UPF does, and nothing else. Every UPF figure is
 * reported as a ratio to it, measured in the same run.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include "ethaddr.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* A frame arriving on port i leaves on port 1 - i with these addresses. */
struct ref_port {
	__u32 ifindex;
	__u8 smac[ETH_ALEN]; /* this port's MAC */
	__u8 peer[ETH_ALEN]; /* the neighbour's MAC behind it */
};

const volatile struct ref_port cfg_ports[2];

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 4);
} ref_tx SEC(".maps");

SEC("xdp")
int xdp_ref(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	int out = ctx->ingress_ifindex == cfg_ports[0].ifindex;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	lab_eth_addrs(eth, (const void *)cfg_ports[out].peer, (const void *)cfg_ports[out].smac);
	return bpf_redirect_map(&ref_tx, cfg_ports[out].ifindex, XDP_DROP);
}
