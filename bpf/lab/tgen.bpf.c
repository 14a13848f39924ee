// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * tgen.bpf.c - the lab's traffic generator.
 *
 * xdp_tgen runs under BPF_PROG_RUN in live-frame mode, one long call per
 * worker, each worker on its own CPU: every frame is built from a template
 * and sent with XDP_TX out of the device given as ingress. Uplink frames
 * are G-PDUs with a PDU Session Container, downlink frames plain UDP toward
 * a UE address.
 *
 * Live-frame pages are recycled, not re-initialised: whatever the far side
 * wrote into a page is still there when it comes round. So every header
 * byte is restored from the template for each frame, then the session's
 * and the flow's fields are written in and the checksums made. The payload
 * after the stamp is zeros in the template and nobody writes there; the
 * IPv6 UDP checksums count on that.
 *
 * A worker cycles over its own flows, so that each flow's sequence numbers
 * come from one CPU and stay in order. A frame is sent when the program
 * returns XDP_TX for it; frames past the worker's limit, or early at a set
 * rate, are dropped and not counted.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "stamp.h"
#include "labpkt.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TGEN_TMPL_WORDS 16 /* header bytes restored: up to 128 */
#define TGEN_SIZES 4
#define TGEN_MIX 16
#define TGEN_SLACK 64 /* frames a late worker may catch up on in a burst */
#define TGEN_BATCH 64 /* frames BPF_PROG_RUN builds before it sends them (batch_size) */

/* The template: session 0, flow 0, at the largest size, laid out by Go (lab/pkt). */
const volatile __u64 cfg_tmpl[TGEN_TMPL_WORDS]; /* its bytes up to the stamp */
const volatile __u32 cfg_tmpl_words;
const volatile __u8 cfg_outer;		   /* outer IP version of a G-PDU (uplink), 0 = plain */
const volatile __u8 cfg_inner;		   /* inner IP version */
const volatile __u16 cfg_inner_off;	   /* where the inner IP header starts */
const volatile __u16 cfg_stamp_off;	   /* where the stamp starts */
const volatile __u16 cfg_size[TGEN_SIZES]; /* inner IP packet length of each size class */
const volatile __u8 cfg_mix[TGEN_MIX];	   /* size class of a worker's frame n % cfg_mix_len */
const volatile __u32 cfg_mix_len;

LAB_ARRAY(BPF_MAP_TYPE_PERCPU_ARRAY, struct tgen_worker) workers SEC(".maps");
LAB_ARRAY(BPF_MAP_TYPE_ARRAY, struct lab_session) sessions SEC(".maps");
LAB_ARRAY(BPF_MAP_TYPE_ARRAY, struct tgen_flow) flows SEC(".maps");

/*
 * The time to stamp, or 0 if a frame is not due yet. At a set rate a
 * worker that fell behind may catch up TGEN_SLACK frames at once, no more.
 * Flat out, the clock is read once a batch: it costs as much as building a
 * frame, and a batch leaves together when it is complete anyway.
 */
static __always_inline __u64 tgen_clock(struct tgen_worker *w)
{
	__u64 now, slack, floor;

	if (!w->interval) {
		if (!(w->sent % TGEN_BATCH))
			w->now_ns = bpf_ktime_get_ns();
		return w->now_ns;
	}
	now = bpf_ktime_get_ns();
	slack = TGEN_SLACK * w->interval;
	floor = now > slack ? now - slack : 0;

	if (!w->next_ns) /* the first frame */
		w->next_ns = now;
	if (now < w->next_ns)
		return 0;
	w->next_ns = (w->next_ns > floor ? w->next_ns : floor) + w->interval;
	return now;
}

/* Inner IP packet length of a worker's next frame: one size, or its turn in the mix. */
static __always_inline __u16 tgen_size(const struct tgen_worker *w)
{
	if (cfg_mix_len <= 1)
		return cfg_size[0];
	return cfg_size[cfg_mix[(w->sent % cfg_mix_len) & (TGEN_MIX - 1)] & (TGEN_SIZES - 1)];
}

static __always_inline void tgen_restore(__u64 *w)
{
#pragma unroll
	for (int i = 0; i < TGEN_TMPL_WORDS; i++) {
		if (i >= cfg_tmpl_words)
			break;
		w[i] = cfg_tmpl[i];
	}
}

/* Inner IP and UDP headers: the UE's address and port, lengths, checksums. */
static __always_inline void tgen_inner(void *data, const struct lab_session *s, __u16 port,
				       __u16 size)
{
	void *ip = data + cfg_inner_off;
	__u16 hlen = IP_HLEN(cfg_inner);
	struct udphdr *udp = ip + hlen;
	struct stamp *st = (void *)(udp + 1);
	int uplink = cfg_outer != 0;

	udp->len = bpf_htons(size - hlen);
	if (uplink)
		udp->source = bpf_htons(port);
	else
		udp->dest = bpf_htons(port);
	if (cfg_inner == 4) {
		struct iphdr *ip4 = ip;

		ip4->tot_len = bpf_htons(size);
		__builtin_memcpy(uplink ? &ip4->saddr : &ip4->daddr, s->ue, 4);
		ip4->check = 0;
		ip4->check = csum_ipv4(ip4);
		return; /* UDP checksum 0: none, as IPv4 allows (RFC 768) */
	}
	struct ipv6hdr *ip6 = ip;

	ip6->payload_len = udp->len;
	__builtin_memcpy(uplink ? &ip6->saddr : &ip6->daddr, s->ue, 16);
	udp->check = 0;
	udp->check =
	    csum_udp6(ip6, size - hlen, csum_words(udp, 2) + csum_words(st, sizeof(*st) / 4));
}

/* Outer IP, UDP and GTP-U headers of an uplink G-PDU (TS 29.281 §5.1). */
static __always_inline void tgen_outer(void *data, void *end, const struct lab_session *s)
{
	void *l3 = data + sizeof(struct ethhdr);
	__u16 hlen = IP_HLEN(cfg_outer);
	struct udphdr *udp = l3 + hlen;
	struct gtpu_hdr *g = (void *)(udp + 1);
	__u8 *qfi = data + cfg_inner_off - 2; /* octet 2 of the PDU Session Container */
	__u16 len = end - l3;

	udp->len = bpf_htons(len - hlen);
	g->len = bpf_htons(len - hlen - sizeof(*udp) - sizeof(*g));
	g->teid = bpf_htonl(s->ul_teid);
	*qfi = s->qfi & 0x3f; /* TS 38.415 §5.5.2.2: UL, no N3/N9 delay, no new IE */
	if (cfg_outer == 4) {
		struct iphdr *ip4 = l3;

		ip4->tot_len = bpf_htons(len);
		ip4->check = 0;
		ip4->check = csum_ipv4(ip4);
		return;
	}
	struct ipv6hdr *ip6 = l3;
	/* from the outer UDP header to the end of the stamp; zeros after it */
	__u32 words = (cfg_stamp_off + sizeof(struct stamp) - sizeof(struct ethhdr) - hlen) / 4;

	ip6->payload_len = udp->len;
	udp->check = 0;
	udp->check = csum_udp6(ip6, len - hlen, csum_words(udp, words));
}

/* Make the frame: size class, template, stamp, then the headers that cover the stamp. */
static __always_inline int tgen_build(struct xdp_md *ctx, const struct lab_session *s, __u32 flow,
				      const struct tgen_flow *f, __u64 now, __u16 size)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	int delta = (int)(cfg_inner_off + size) - (int)(end - data);
	struct stamp *st;

	/* the page holds the largest frame: cut it to this one's size */
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + cfg_stamp_off + sizeof(*st) > end)
		return -1;
	tgen_restore(data);
	st = data + cfg_stamp_off;
	st->magic = bpf_htonl(STAMP_MAGIC);
	st->flow = bpf_htonl(flow);
	st->seq = bpf_cpu_to_be64(f->seq);
	st->sent_ns = bpf_cpu_to_be64(now);
	tgen_inner(data, s, f->at.ue_port, size);
	if (cfg_outer)
		tgen_outer(data, end, s);
	return 0;
}

SEC("xdp")
int xdp_tgen(struct xdp_md *ctx)
{
	__u32 zero = 0, flow;
	struct tgen_worker *w = bpf_map_lookup_elem(&workers, &zero);
	struct lab_session *s;
	struct tgen_flow *f;
	__u64 now;
	__u16 size;

	if (!w || w->sent >= w->limit)
		return XDP_DROP;
	now = tgen_clock(w);
	if (!now)
		return XDP_DROP;
	flow = w->flow;
	f = bpf_map_lookup_elem(&flows, &flow);
	if (!f)
		return XDP_ABORTED;
	s = bpf_map_lookup_elem(&sessions, &f->at.session);
	if (!s)
		return XDP_ABORTED;
	size = tgen_size(w);
	if (tgen_build(ctx, s, flow, f, now, size))
		return XDP_ABORTED;
	f->seq++;
	w->sent++;
	w->bytes += size;
	w->flow = flow + 1 < w->end ? flow + 1 : w->first;
	return XDP_TX;
}
