// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tgen.bpf.c - the lab's traffic generator and sink.
 *
 * xdp_tgen runs under BPF_PROG_RUN in live-frame mode: each frame is the
 * template, sent with XDP_TX out of the device given as ingress. Live-frame
 * pages are recycled, not re-initialised, so whatever the far side wrote
 * into a page is still there when it comes round: every header byte is
 * restored from the template for each frame. One 32-bit field (a TEID, an
 * address) can be varied per frame to cycle over sessions.
 *
 * xdp_sink sits on the receiving device and counts what arrives.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TMPL_WORDS 16 /* headers restored: up to 128 bytes */

const volatile __u64 cfg_tmpl[TMPL_WORDS]; /* the frame's first bytes */
const volatile __u32 cfg_tmpl_words;	   /* how many of them to restore */
const volatile __u32 cfg_vary_off;	   /* 32-bit big-endian field, 0 = none */
const volatile __u32 cfg_vary_count;	   /* values: template's, +1, ... +count-1 */
const volatile __u32 cfg_csum_off;	   /* IPv4 header checksum over it, 0 = none */

struct counters {
	__u64 pkts;
	__u64 bytes;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct counters);
	__uint(max_entries, 1);
} counts SEC(".maps");

static __always_inline struct counters *count(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct counters *c = bpf_map_lookup_elem(&counts, &zero);

	if (c) {
		c->pkts++;
		c->bytes += ctx->data_end - ctx->data;
	}
	return c;
}

/* One's complement update of a 16-bit checksum for a changed 32-bit word (RFC 1624). */
static __always_inline __u16 csum_update32(__u16 check, __u32 old, __u32 new)
{
	__u32 sum = (__u16)~check;

	sum += (__u16) ~(old >> 16) + (__u16) ~(old & 0xffff);
	sum += (new >> 16) + (new & 0xffff);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("xdp")
int xdp_tgen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct counters *c = count(ctx);
	__u64 *w = data;
	__u32 off = cfg_vary_off & 0x7f, coff = cfg_csum_off & 0x7f;

#pragma unroll
	for (int i = 0; i < TMPL_WORDS; i++) {
		if (i >= cfg_tmpl_words || (void *)(w + i + 1) > end)
			break;
		w[i] = cfg_tmpl[i];
	}
	if (off && c && cfg_vary_count > 1 && data + off + 4 <= end) {
		__u32 *field = data + off;
		__u32 base = bpf_ntohl(*field);
		__u32 v = base + (__u32)(c->pkts % cfg_vary_count);

		*field = bpf_htonl(v);
		if (coff && data + coff + 2 <= end) {
			__u16 *check = data + coff;

			*check = bpf_htons(csum_update32(bpf_ntohs(*check), base, v));
		}
	}
	return XDP_TX;
}

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	count(ctx);
	return XDP_DROP;
}
