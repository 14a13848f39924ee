// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * gnb.bpf.c - the gNB's user plane, for UEs whose own kernel stacks send
 * and receive (lab/gnb).
 *
 * The UEs are addresses on ue0 in a namespace of their own; its peer gnbue
 * is in the gNB's namespace, beside n3, which faces the UPF.
 *
 * Uplink (xdp_gnb_ul on gnbue, or tc_gnb_ul at its TC ingress): an IP
 * packet from a UE the tables know, by its IPv4 address or its IPv6 /64, is
 * put in a G-PDU with a UL PDU Session Container (TS 38.415 §5.5.2.2)
 * toward the session's uplink F-TEID and sent out of n3. XDP redirects the
 * frame into n3, which a veth takes only when the UPF's end has an XDP
 * program of its own; TC sends it out of n3 as a packet, which any UPF
 * takes.
 *
 * Downlink (xdp_gnb_dl on n3): a G-PDU whose TEID is a session's loses its
 * outer headers, with whatever extension headers it carries (TS 29.281
 * §5.2), and goes to the UEs through gnbue.
 *
 * What the gNB does not carry goes to the kernel untouched: ARP and ND,
 * GTP-U Echo and End Markers, G-PDUs of TEIDs it does not know (the lab's
 * probes use their own), packets from addresses that are no UE's.
 *
 * xdp_gnb_ue passes everything. On ue0 it gives the UEs' end of the veth
 * NAPI, without which frames redirected into gnbue are dropped.
 *
 * The packets a UE sends must be whole, one per frame, with their
 * checksums made: a redirected frame leaves as its bytes are, without the
 * offloads the kernel would otherwise finish later (docs/lab.md, "Real UEs").
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include "ethaddr.h"
#include <bpf/bpf_endian.h>
#include "labpkt.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define OUTER_TTL 64
#define TC_ACT_UNSPEC (-1) /* not ours: the next program, or the stack */
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7

/* A port a frame leaves by: the device, its MAC, and the MAC of its peer. */
struct gnb_port {
	__u32 ifindex;
	__u8 smac[ETH_ALEN];
	__u8 peer[ETH_ALEN];
};

/* A UE's uplink tunnel, found by its address. */
struct gnb_ul {
	__u32 id;    /* the UE's index: its counters */
	__be32 teid; /* the UPF's uplink F-TEID */
	__be32 upf;  /* ... and its IPv4 address */
	__be32 gnb;  /* our end of the session's tunnel: the outer source */
	__u8 qfi;    /* of the default QoS flow, in the PDU Session Container */
	__u8 pad[3];
};

/* A UE's downlink tunnel, found by our TEID. */
struct gnb_dl {
	__u32 id;
};

/* What a UE sent and received: IP packets and their bytes, tunnel not counted. */
struct gnb_ue_counters {
	__u64 ul_packets;
	__u64 ul_bytes;
	__u64 dl_packets;
	__u64 dl_bytes;
};

/* Frames not carried through a tunnel, by where they went. Go names them in this order. */
enum gnb_other {
	GNB_UL_PASSED = 0, /* from no UE of ours (ARP, ND): to the gNB's kernel */
	GNB_UL_DROPPED,	   /* a UE's packet whose length lies, or that could not be grown */
	GNB_DL_PASSED,	   /* not a G-PDU of ours (ARP, Echo, other TEIDs): to the kernel */
	GNB_DL_DROPPED,	   /* a G-PDU of ours whose length lies or that holds no IP */
	GNB_OTHER__MAX,
};

struct gnb_others {
	__u64 frames[GNB_OTHER__MAX];
};

/*
 * The PDU Session Container as we send it: one extension header of 4
 * octets (TS 29.281 §5.2.2.7) holding UL PDU SESSION INFORMATION, PDU type
 * 1, none of the optional fields (TS 38.415 §5.5.2.2).
 */
struct gtpu_psc {
	__u8 len;      /* in 4-octet units: 1 */
	__u8 pdu_type; /* PDU type << 4; QMP, DL and UL delay, SNP: 0 */
	__u8 qfi;      /* N3/N9 delay (1), new IE (1), QFI (6) */
	__u8 next_ext; /* none */
};

#define ENCAP_LEN                                                                                  \
	(sizeof(struct iphdr) + sizeof(struct udphdr) + sizeof(struct gtpu_hdr) +                  \
	 sizeof(struct gtpu_opt) + sizeof(struct gtpu_psc))

const volatile struct gnb_port cfg_n3; /* uplink out: the gNB's n3, toward the UPF's */
const volatile struct gnb_port cfg_ue; /* downlink out: gnbue, toward ue0 */

/* Sized by the loader; not preallocated, so an entry takes memory only while it exists. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __be32); /* the UE's IPv4 address */
	__type(value, struct gnb_ul);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} gnb_ul4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u64); /* the UE's IPv6 /64, as on the wire */
	__type(value, struct gnb_ul);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} gnb_ul6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __be32); /* our downlink TEID */
	__type(value, struct gnb_dl);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} gnb_dl SEC(".maps");

LAB_ARRAY(BPF_MAP_TYPE_PERCPU_ARRAY, struct gnb_ue_counters) gnb_ues SEC(".maps");
LAB_ARRAY(BPF_MAP_TYPE_PERCPU_ARRAY, struct gnb_others) gnb_others SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 2);
} gnb_tx SEC(".maps");

static __always_inline void gnb_other(enum gnb_other what)
{
	__u32 zero = 0;
	struct gnb_others *o = bpf_map_lookup_elem(&gnb_others, &zero);

	if (o)
		o->frames[what % GNB_OTHER__MAX]++;
}

static __always_inline void gnb_count(__u32 id, int uplink, __u32 bytes)
{
	struct gnb_ue_counters *c = bpf_map_lookup_elem(&gnb_ues, &id);

	if (!c)
		return;
	if (uplink) {
		c->ul_packets++;
		c->ul_bytes += bytes;
	} else {
		c->dl_packets++;
		c->dl_bytes += bytes;
	}
}

/*
 * The session of the UE that sent the IP packet at l3, of EtherType proto,
 * with avail octets from l3 to the end of the frame (an skb's may lie
 * beyond end, the end of its linear part). Returns 1 with *s and *len (the
 * packet's length as its header says, which fits), 0 if no UE of ours sent
 * it, -1 if a UE's length lies.
 */
static __always_inline int gnb_ul_find(void *l3, void *end, __u32 avail, __be16 proto,
				       struct gnb_ul **s, __u32 *len)
{
	struct iphdr *ip = l3;
	struct ipv6hdr *ip6 = l3;

	if (proto == bpf_htons(ETH_P_IP)) {
		if ((void *)(ip + 1) > end || ip->version != 4)
			return 0;
		*s = bpf_map_lookup_elem(&gnb_ul4, &ip->saddr);
		*len = bpf_ntohs(ip->tot_len);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if ((void *)(ip6 + 1) > end || ip6->version != 6)
			return 0;
		*s = bpf_map_lookup_elem(&gnb_ul6, &ip6->saddr); /* its first 8 octets */
		*len = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	} else {
		return 0;
	}
	if (!*s)
		return 0;
	if (*len < sizeof(*ip) || *len > avail)
		return -1;
	return 1;
}

/* The Ethernet header of a frame that leaves by port. */
static __always_inline void gnb_eth(struct ethhdr *eth, const volatile struct gnb_port *port,
				    __be16 proto)
{
	/* zero until the loader sets them: hide where port points, or clang copies zeros */
	barrier_var(port);
	lab_eth_addrs(eth, (const void *)port->peer, (const void *)port->smac);
	eth->h_proto = proto;
}

/*
 * Ethernet, outer IPv4, UDP and GTP-U with the UL PDU Session Container at
 * data, in front of the UE's len octets of IP (TS 29.281 §5.1, §5.2.2.7).
 */
static __always_inline void gnb_push(void *data, const struct gnb_ul *s, __u32 len)
{
	struct iphdr *ip = data + sizeof(struct ethhdr);
	struct udphdr *udp = (void *)(ip + 1);
	struct gtpu_hdr *gh = (void *)(udp + 1);
	struct gtpu_opt *opt = (void *)(gh + 1);
	struct gtpu_psc *psc = (void *)(opt + 1);

	gnb_eth(data, &cfg_n3, bpf_htons(ETH_P_IP));
	*ip = (struct iphdr){
	    .version = 4,
	    .ihl = 5,
	    .tot_len = bpf_htons(ENCAP_LEN + len),
	    .frag_off = bpf_htons(0x4000), /* DF */
	    .ttl = OUTER_TTL,
	    .protocol = IPPROTO_UDP,
	    .saddr = s->gnb,
	    .daddr = s->upf,
	};
	ip->check = csum_ipv4(ip);
	*udp = (struct udphdr){
	    .source = bpf_htons(LAB_GTPU_PORT),
	    .dest = bpf_htons(LAB_GTPU_PORT),
	    .len = bpf_htons(ENCAP_LEN - sizeof(*ip) + len),
	    .check = 0, /* none, as IPv4 allows */
	};
	*gh = (struct gtpu_hdr){
	    .flags = 0x30 | GTPU_F_E, /* version 1, protocol type GTP */
	    .type = GTPU_G_PDU,
	    .len = bpf_htons(sizeof(*opt) + sizeof(*psc) + len),
	    .teid = s->teid,
	};
	*opt = (struct gtpu_opt){.next_ext = GTPU_EXT_PSC};
	*psc = (struct gtpu_psc){.len = 1, .pdu_type = PSC_UL << 4, .qfi = s->qfi & 0x3f};
}

/* Uplink, from the UEs' frames as XDP gets them on gnbue: into a tunnel, out of n3. */
SEC("xdp")
int xdp_gnb_ul(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct gnb_ul *s;
	__u32 len;
	int found;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	found = gnb_ul_find(eth + 1, end, end - (void *)(eth + 1), eth->h_proto, &s, &len);
	if (found <= 0) {
		gnb_other(found ? GNB_UL_DROPPED : GNB_UL_PASSED);
		return found ? XDP_DROP : XDP_PASS;
	}
	/* anything after the packet goes, then room for the tunnel in front */
	if (data + ETH_HLEN + len < end &&
	    bpf_xdp_adjust_tail(ctx, (int)(ETH_HLEN + len) - (int)(end - data)))
		goto drop;
	if (bpf_xdp_adjust_head(ctx, -(int)ENCAP_LEN))
		goto drop;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN + ENCAP_LEN > end)
		goto drop;
	gnb_push(data, s, len);
	gnb_count(s->id, 1, len);
	return bpf_redirect_map(&gnb_tx, cfg_n3.ifindex, XDP_DROP);
drop:
	gnb_other(GNB_UL_DROPPED);
	return XDP_DROP;
}

/* Uplink at gnbue's TC ingress: the same tunnel, sent out of n3 as a packet. */
SEC("tc")
int tc_gnb_ul(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct gnb_ul *s;
	__u32 len;
	int found;

	if ((void *)(eth + 1) > end)
		return TC_ACT_UNSPEC;
	found = gnb_ul_find(eth + 1, end, skb->len - ETH_HLEN, eth->h_proto, &s, &len);
	if (found <= 0) {
		gnb_other(found ? GNB_UL_DROPPED : GNB_UL_PASSED);
		return found ? TC_ACT_SHOT : TC_ACT_UNSPEC;
	}
	if (skb->len > ETH_HLEN + len && bpf_skb_change_tail(skb, ETH_HLEN + len, 0))
		goto drop;
	/* the new bytes join the MAC header, which the redirect pushes back */
	if (bpf_skb_change_head(skb, ENCAP_LEN, 0))
		goto drop;
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	if (data + ETH_HLEN + ENCAP_LEN > end)
		goto drop;
	gnb_push(data, s, len);
	gnb_count(s->id, 1, len);
	return bpf_redirect(cfg_n3.ifindex, 0);
drop:
	gnb_other(GNB_UL_DROPPED);
	return TC_ACT_SHOT;
}

/*
 * The G-PDU in the frame at data whose TEID is one of ours: returns its
 * T-PDU and sets *d and *tpdu_end (where the T-PDU ends, as the GTP-U length
 * says); NULL if the frame is no such G-PDU.
 */
static __always_inline void *gnb_dl_find(void *data, void *end, struct gnb_dl **d, void **tpdu_end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct stamped st = {};
	struct udphdr *udp;
	void *pdu;

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return NULL;
	if (ip->version != 4 || ip->ihl < 5 || ip->protocol != IPPROTO_UDP)
		return NULL;
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(LAB_GTPU_PORT))
		return NULL;
	pdu = walk_gtpu((void *)(udp + 1), end, &st);
	if (!pdu)
		return NULL;
	*d = bpf_map_lookup_elem(&gnb_dl, &st.gtpu->teid);
	if (!*d)
		return NULL;
	/* the length counts the optional octets and the extension headers too */
	*tpdu_end = (void *)(st.gtpu + 1) + bpf_ntohs(st.gtpu->len);
	return pdu;
}

/* The EtherType of the IP packet at pdu, ending at pdu_end; 0 if there is none. */
static __always_inline __be16 gnb_inner_proto(__u8 *pdu, void *pdu_end, void *end)
{
	if ((void *)(pdu + 1) > end || pdu_end > end)
		return 0;
	if ((*pdu >> 4) == 4 && (void *)pdu + sizeof(struct iphdr) <= pdu_end)
		return bpf_htons(ETH_P_IP);
	if ((*pdu >> 4) == 6 && (void *)pdu + sizeof(struct ipv6hdr) <= pdu_end)
		return bpf_htons(ETH_P_IPV6);
	return 0;
}

/* Downlink, from the UPF on n3: out of the tunnel, to the UEs. */
SEC("xdp")
int xdp_gnb_dl(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	void *pdu, *pdu_end;
	struct gnb_dl *d;
	__u32 head, len, tail;
	__be16 proto;

	pdu = gnb_dl_find(data, end, &d, &pdu_end);
	if (!pdu) {
		gnb_other(GNB_DL_PASSED);
		return XDP_PASS;
	}
	proto = gnb_inner_proto(pdu, pdu_end, end);
	if (!proto) {
		gnb_other(GNB_DL_DROPPED);
		return XDP_DROP;
	}
	/* offsets, not pointers, across the resizing: make clang keep them so */
	head = pdu - data - ETH_HLEN;
	len = pdu_end - pdu;
	tail = end - pdu_end;
	barrier_var(head);
	barrier_var(len);
	barrier_var(tail);
	if (tail && bpf_xdp_adjust_tail(ctx, -(int)tail))
		goto drop;
	if (bpf_xdp_adjust_head(ctx, (int)head))
		goto drop;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + ETH_HLEN > end)
		goto drop;
	gnb_eth(data, &cfg_ue, proto);
	gnb_count(d->id, 0, len);
	return bpf_redirect_map(&gnb_tx, cfg_ue.ifindex, XDP_DROP);
drop:
	gnb_other(GNB_DL_DROPPED);
	return XDP_DROP;
}

/* On ue0: passes everything, for NAPI (above). */
SEC("xdp")
int xdp_gnb_ue(struct xdp_md *ctx)
{
	return XDP_PASS;
}
