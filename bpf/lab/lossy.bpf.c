// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lossy.bpf.c - a forwarder for tests that loses, duplicates and swaps
 * chosen frames, so that a test can check the sink finds exactly those.
 *
 * It is a tc program on one port's ingress, redirecting to the other
 * port's egress: XDP cannot duplicate a frame, tc can (bpf_clone_redirect).
 * Neither can hold a frame back to swap it with the next, so a swap is
 * made by exchanging two frames' sequence numbers in flight: the sink sees
 * exactly what it would had the frames themselves been swapped.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "stamp.h"
#include "labpkt.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TC_ACT_SHOT 2 /* linux/pkt_cls.h, not vendored */

const volatile __u32 cfg_out; /* ifindex frames leave by */

enum lossy_what {
	LOSSY_DROP = 1,
	LOSSY_DUP,   /* send it twice */
	LOSSY_RESEQ, /* send it with sequence number seq */
};

struct lossy_key {
	__u32 flow;
	__u32 pad;
	__u64 seq;
};

struct lossy_act {
	__u32 what;
	__u32 pad;
	__u64 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct lossy_key);
	__type(value, struct lossy_act);
	__uint(max_entries, 1024);
} acts SEC(".maps");

SEC("tc")
int tc_lossy(struct __sk_buff *skb)
{
	struct stamped s = {};
	struct lossy_key key = {};
	struct lossy_act *act;

	bpf_skb_pull_data(skb, skb->len);
	if (!stamp_find((void *)(long)skb->data, (void *)(long)skb->data_end, &s))
		return bpf_redirect(cfg_out, 0);
	key.flow = bpf_ntohl(s.stamp->flow);
	key.seq = bpf_be64_to_cpu(s.stamp->seq);
	act = bpf_map_lookup_elem(&acts, &key);
	if (!act)
		return bpf_redirect(cfg_out, 0);
	switch (act->what) {
	case LOSSY_DROP:
		return TC_ACT_SHOT;
	case LOSSY_DUP:
		bpf_clone_redirect(skb, cfg_out, 0);
		break;
	case LOSSY_RESEQ:
		s.stamp->seq = bpf_cpu_to_be64(act->seq);
		break;
	}
	return bpf_redirect(cfg_out, 0);
}
