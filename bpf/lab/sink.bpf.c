// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * sink.bpf.c - the lab's sink: checks what the generator's frames look like
 * after the UPF, counts them per flow and keeps a latency histogram.
 *
 * Stamped frames are judged against the session table the generator was
 * given and dropped; anything without a stamp (ARP, ICMP, PFCP, GTP-U echo,
 * ping probes) passes untouched.
 *
 * Concurrency: totals and the histogram are per-CPU; flows live in one
 * array and take no lock (bpf_spin_lock saves and restores interrupts and
 * cost as much as the rest of the sink). So frames of one flow must not
 * reach the sink on two CPUs at once. They do not on a device with one rx
 * queue, whose NAPI runs the sink serially (Go attaches it in native mode,
 * never generic); nor on a veth with a queue per CPU fed by the generator's
 * workers, as a veth queues a frame on the sending CPU's queue and each
 * worker owns its flows and stays on its CPU.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "stamp.h"
#include "labpkt.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* What a valid frame looks like, set by Go from the direction and the path. */
const volatile __u8 cfg_encap;	  /* a G-PDU, else a plain IP packet */
const volatile __u8 cfg_pdu_type; /* PSC_UL or PSC_DL in its PDU Session Container */
const volatile __u8 cfg_dl_teid;  /* carrying the session's downlink TEID, else the uplink one */
const volatile __u8 cfg_ue_dst;	  /* the UE address is the inner destination, else the source */
const volatile __u8 cfg_inner;	  /* inner IP version */

LAB_ARRAY(BPF_MAP_TYPE_ARRAY, struct lab_session) sessions SEC(".maps");
LAB_ARRAY(BPF_MAP_TYPE_ARRAY, struct sink_flow) flows SEC(".maps");
LAB_ARRAY(BPF_MAP_TYPE_PERCPU_ARRAY, struct sink_totals) totals SEC(".maps");
LAB_ARRAY(BPF_MAP_TYPE_PERCPU_ARRAY, struct sink_hist) latency SEC(".maps");

/* Length of the IP packet at ip as its header says, 0 if it runs past end. */
static __always_inline __u32 ip_len(void *ip, void *end)
{
	struct iphdr *ip4 = ip;
	struct ipv6hdr *ip6 = ip;
	__u32 len;

	if ((void *)(ip4 + 1) > end)
		return 0;
	if (ip4->version == 4) {
		len = bpf_ntohs(ip4->tot_len);
	} else {
		if ((void *)(ip6 + 1) > end)
			return 0;
		len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	}
	return ip + len <= end ? len : 0;
}

/*
 * Do the lengths agree? Each header's length must be what the next one
 * starts and fills: IP, UDP, GTP-U, inner IP, inner UDP. Padding after the
 * outer IP packet is allowed, as Ethernet pads short frames.
 */
static __always_inline int sink_lengths(const struct stamped *s, void *end)
{
	__u32 outer = ip_len(s->l3, end), inner = ip_len(s->inner, end);
	void *stop = s->l3 + outer;

	if (!outer || !inner || s->inner + inner != stop)
		return 0;
	if (bpf_ntohs(s->udp->len) != stop - (void *)s->udp)
		return 0;
	if (s->gtpu) {
		struct udphdr *udp = (void *)s->gtpu - sizeof(*udp);

		if ((void *)udp < s->l3 || (void *)(udp + 1) > end)
			return 0;
		if (bpf_ntohs(udp->len) != stop - (void *)udp ||
		    bpf_ntohs(s->gtpu->len) != stop - (void *)(s->gtpu + 1))
			return 0;
	}
	return 1;
}

static __always_inline int csum_ok(void *ip, void *end)
{
	struct iphdr *ip4 = ip;

	if ((void *)(ip4 + 1) > end || ip4->version != 4)
		return 1;
	return csum_ipv4(ip4) == 0;
}

static __always_inline int ue_matches(const struct stamped *s, void *end,
				      const struct lab_session *sess, __u16 port)
{
	struct udphdr *udp = s->udp;
	__be16 ue_port = cfg_ue_dst ? udp->dest : udp->source;
	__be16 dn_port = cfg_ue_dst ? udp->source : udp->dest;

	if (ue_port != bpf_htons(port) || dn_port != bpf_htons(LAB_DN_PORT))
		return 0;
	if (cfg_inner == 4) {
		struct iphdr *ip4 = s->inner;

		if ((void *)(ip4 + 1) > end || ip4->version != 4)
			return 0;
		return (cfg_ue_dst ? ip4->daddr : ip4->saddr) == *(__be32 *)sess->ue;
	}
	struct ipv6hdr *ip6 = s->inner;
	const __u64 *ue = (const __u64 *)sess->ue, *a;

	if ((void *)(ip6 + 1) > end || ip6->version != 6)
		return 0;
	a = cfg_ue_dst ? (const __u64 *)&ip6->daddr : (const __u64 *)&ip6->saddr;
	return a[0] == ue[0] && a[1] == ue[1];
}

/* SINK_BAD_* for the first thing wrong with a stamped frame of flow f, or -1 if it is valid. */
static __always_inline int sink_check(const struct stamped *s, void *end, const struct sink_flow *f)
{
	struct lab_session *sess;
	__u32 teid;

	if (!sink_lengths(s, end))
		return SINK_BAD_LENGTH;
	if (!csum_ok(s->l3, end) || !csum_ok(s->inner, end))
		return SINK_BAD_CSUM;
	if (!f)
		return SINK_BAD_FLOW;
	sess = bpf_map_lookup_elem(&sessions, &f->at.session);
	if (!sess)
		return SINK_BAD_FLOW;
	if (!s->gtpu != !cfg_encap)
		return SINK_BAD_ENCAP;
	if (cfg_encap) {
		teid = cfg_dl_teid ? sess->dl_teid : sess->ul_teid;
		if (s->teid != teid)
			return SINK_BAD_TEID;
		/* QFI 0: a session without a QoS flow, whose G-PDUs may have no container */
		if (sess->qfi && s->psc != 1 + cfg_pdu_type)
			return SINK_BAD_PSC;
		if (sess->qfi && s->qfi != sess->qfi)
			return SINK_BAD_QFI;
	}
	if (!ue_matches(s, end, sess, f->at.ue_port))
		return SINK_BAD_INNER;
	return -1;
}

static __always_inline void window_set(struct sink_flow *f, __u64 q)
{
	f->window[(q / 64) % (SINK_WINDOW / 64)] |= 1ULL << (q % 64);
}

/*
 * Sequence q of a flow arrived: a new highest (maybe past a gap, which
 * may be filled later), a duplicate of one seen in the window, or one
 * that arrives below the highest, not seen before: reordered.
 */
static __always_inline void window_see(struct sink_flow *f, __u64 q)
{
	if (q >= f->next) {
		__u64 gap = q - f->next;

		if (gap >= SINK_WINDOW) {
#pragma unroll
			for (int i = 0; i < SINK_WINDOW / 64; i++)
				f->window[i] = 0;
		} else {
			/* the positions the skipped sequences take over */
			for (int i = 0; i < SINK_WINDOW; i++) {
				__u64 p = f->next + i;

				if (i >= gap)
					break;
				f->window[(p / 64) % (SINK_WINDOW / 64)] &= ~(1ULL << (p % 64));
			}
		}
		window_set(f, q);
		f->next = q + 1;
		f->unique++;
		return;
	}
	if (f->next - q > SINK_WINDOW) {
		f->late++;
		f->reordered++;
		f->unique++;
		return;
	}
	if (f->window[(q / 64) % (SINK_WINDOW / 64)] & (1ULL << (q % 64))) {
		f->dups++;
		return;
	}
	window_set(f, q);
	f->reordered++;
	f->unique++;
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;

#pragma unroll
	for (int s = 32; s > 0; s /= 2) {
		if (v >> s) {
			v >>= s;
			r += s;
		}
	}
	return r;
}

/* Log-linear bucket of a latency: see struct sink_hist. */
static __always_inline __u32 hist_bucket(__u64 ns)
{
	__u32 e;

	if (ns < (1 << SINK_HIST_SUB))
		return ns;
	e = log2_u64(ns);
	if (e >= 36)
		return SINK_HIST_BUCKETS - 1;
	return ((e - SINK_HIST_SUB + 1) << SINK_HIST_SUB) +
	       ((ns >> (e - SINK_HIST_SUB)) & ((1 << SINK_HIST_SUB) - 1));
}

/*
 * One-way latency of a frame whose stamp differs from the last one's: every
 * frame at a set rate, the first of each batch flat out, when the generator
 * stamps a whole batch with one time. Reading the clock costs as much as
 * the rest of the sink; the frames after the first of a batch would tell
 * only in which order the sink took them.
 */
static __always_inline void sink_latency(struct sink_totals *t, __u64 sent)
{
	__u32 zero = 0, bucket;
	struct sink_hist *h;
	__u64 now, lat;

	if (sent == t->last_sent)
		return;
	t->last_sent = sent;
	now = bpf_ktime_get_ns();
	lat = now > sent ? now - sent : 0;
	h = bpf_map_lookup_elem(&latency, &zero);
	bucket = hist_bucket(lat);
	if (h && bucket < SINK_HIST_BUCKETS)
		h->bucket[bucket]++;
	t->lat_count++;
	t->lat_sum += lat;
	if (lat > t->lat_max)
		t->lat_max = lat;
}

static __always_inline void sink_account(const struct stamped *s, struct sink_flow *f,
					 struct sink_totals *t, __u32 bytes)
{
	window_see(f, bpf_be64_to_cpu(s->stamp->seq));
	f->pkts++;
	f->bytes += bytes;
	t->pkts++;
	t->bytes += bytes;
	sink_latency(t, bpf_be64_to_cpu(s->stamp->sent_ns));
}

SEC("xdp")
int xdp_sink(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	__u32 zero = 0, flow;
	struct sink_totals *t = bpf_map_lookup_elem(&totals, &zero);
	struct stamped s = {};
	struct sink_flow *f;
	int bad;

	if (!t)
		return XDP_PASS;
	if (!stamp_find(data, end, &s)) {
		t->passed++;
		return XDP_PASS;
	}
	flow = bpf_ntohl(s.stamp->flow);
	f = bpf_map_lookup_elem(&flows, &flow);
	bad = sink_check(&s, end, f);
	if (bad >= 0 && bad < SINK_BAD__MAX)
		t->bad[bad]++;
	else if (f)
		sink_account(&s, f, t, ip_len(s.inner, end));
	return XDP_DROP;
}
