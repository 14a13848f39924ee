// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * minupf.bpf.c - the minimal UPF: the least work any UPF must do for the
 * frames the reference forwarder (ref.bpf.c) only moves. Every figure of
 * upfd is also given as a ratio to it, measured in the same run.
 *
 * Uplink (xdp_min_n3): a G-PDU to our N3 address is parsed down to its
 * T-PDU, its session found by F-TEID in one hash lookup, counted, stripped
 * of its outer headers and redirected to N6. Downlink (xdp_min_n6): an IPv4
 * packet's session is found by the UE's address in one hash lookup,
 * counted, put in a G-PDU with a PDU Session Container toward the session's
 * gNB and redirected to N3. Both tables are keyed as upfd's (struct
 * upf_fteid_key, dl_ue4) and hold as many sessions.
 *
 * Nothing else: no PDRs, QERs or URRs, no FIB (the MACs are set at load
 * time, as in ref.bpf.c), no TTL decrement, no IPv6 transport, no Echo.
 * What is not a G-PDU for us, and what is not IPv4 from N6, goes to the
 * kernel; a G-PDU for no session and an IPv4 packet for no UE are dropped.
 *
 * It shares no code with upfd's datapath (bpf/lib): a floor that shared
 * upfd's parser would share its costs, and its mistakes.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include "ethaddr.h"
#include <bpf/bpf_endian.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define GTPU_PORT 2152
#define GTPU_G_PDU 255
#define GTPU_V1_PT 0x30	  /* version 1, protocol type GTP (TS 29.281 §5.1) */
#define GTPU_F_E 0x04	  /* an extension header follows */
#define GTPU_F_OPT 0x07	  /* E, S or PN: the 4 optional octets are present */
#define GTPU_EXT_PSC 0x85 /* PDU Session Container (TS 29.281 §5.2.2.7) */
#define GTPU_MAX_EXT 4	  /* extension headers walked before giving up */
#define OUTER_TTL 64

/* Where a frame leaves, the index of cfg_ports. */
enum min_port_id {
	MIN_N3 = 0, /* toward the gNB: downlink */
	MIN_N6 = 1, /* toward the data network: uplink */
};

/* The counters of a direction, the index of struct min_counter's dir. */
enum min_dir {
	MIN_UL = 0,
	MIN_DL = 1,
};

/* A port: its device, its MAC, and the MAC of the neighbour behind it. */
struct min_port {
	__u32 ifindex;
	__u8 smac[ETH_ALEN];
	__u8 peer[ETH_ALEN];
};

/* Key of the uplink table: upfd's struct upf_fteid_key, field for field. */
struct min_fteid_key {
	__be32 teid;
	__u32 ep; /* index of the local GTP-U address: ours is the only one, 0 */
};

/* A session as both tables hold it. */
struct min_session {
	__u32 id;    /* index of its counter record */
	__be32 teid; /* downlink: the gNB's TEID */
	__be32 gnb;  /* downlink: the gNB's IPv4 address */
	__u8 qfi;    /* downlink: the QFI of the PDU Session Container */
	__u8 _pad[3];
};

/* What one CPU counted for one session: the UE's IP packets and their bytes. */
struct min_counter {
	struct {
		__u64 packets;
		__u64 bytes;
	} dir[2]; /* enum min_dir */
};

struct gtpu_hdr {
	__u8 flags;
	__u8 type;
	__be16 len; /* octets after these 8 */
	__be32 teid;
};

/* Present when any of E, S, PN is set (TS 29.281 §5.1). */
struct gtpu_opt {
	__be16 seq;
	__u8 npdu;
	__u8 next_ext;
};

/*
 * The PDU Session Container as we send it: one extension header of 4
 * octets (TS 29.281 §5.2.2.7) holding DL PDU SESSION INFORMATION, PDU type
 * 0, without the optional fields (TS 38.415 §5.5.2.1).
 */
struct gtpu_psc {
	__u8 len;      /* in 4-octet units: 1 */
	__u8 pdu_type; /* PDU type << 4, then QMP, SNP, MSNP, spare: 0 */
	__u8 qfi;      /* PPP(1) RQI(1) QFI(6) */
	__u8 next_ext; /* none */
};

#define ENCAP_LEN                                                                                  \
	(sizeof(struct iphdr) + sizeof(struct udphdr) + sizeof(struct gtpu_hdr) +                  \
	 sizeof(struct gtpu_opt) + sizeof(struct gtpu_psc))

/* Devices and MACs: frames for port i leave through cfg_ports[i]. */
const volatile struct min_port cfg_ports[2];

/* Our N3 address: the local end of every F-TEID, the downlink's outer source. */
const volatile __be32 cfg_n3_addr;

/* Counter records per CPU: the tables' size in sessions. */
const volatile __u32 cfg_sessions;

/*
 * The session tables. Not preallocated, as upfd's: an entry takes memory
 * only while it exists. The loader sizes them.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct min_fteid_key);
	__type(value, struct min_session);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} min_ul SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __be32); /* the UE's IPv4 address */
	__type(value, struct min_session);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} min_dl SEC(".maps");

/*
 * Counters by CPU, then session: CPU c's record of session i is entry
 * c * cfg_sessions + i. A per-CPU array would reach each record through a
 * pointer of its own, a second memory access; this way a packet touches one
 * line, and no line is written by two CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct min_counter);
	__uint(max_entries, 1);
} min_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 2);
} min_tx SEC(".maps");

/* Checksum of an option-less IPv4 header (RFC 1071). */
static __always_inline __u16 ipv4_csum(const struct iphdr *ip)
{
	const __u16 *w = (const __u16 *)ip;
	__u32 sum = 0;

	for (int i = 0; i < (int)(sizeof(*ip) / 2); i++)
		sum += w[i];
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The IPv4 header after the Ethernet header at data, or NULL. */
static __always_inline struct iphdr *eth_ipv4(void *data, void *end)
{
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return NULL;
	if (ip->version != 4 || ip->ihl < 5)
		return NULL;
	return ip;
}

/* The GTP-U header of a UDP datagram to our N3 address at port 2152, or NULL. */
static __always_inline struct gtpu_hdr *ipv4_gtpu(struct iphdr *ip, void *end)
{
	struct udphdr *udp = (void *)ip + ip->ihl * 4;
	struct gtpu_hdr *gh = (void *)(udp + 1);

	if ((void *)(gh + 1) > end)
		return NULL;
	if (ip->protocol != IPPROTO_UDP || ip->daddr != cfg_n3_addr ||
	    udp->dest != bpf_htons(GTPU_PORT))
		return NULL;
	return gh;
}

/*
 * The T-PDU of the G-PDU whose header is gh, or NULL; *len gets its length
 * as the header says. The optional octets are there when any of E, S or PN
 * is set (TS 29.281 §5.1). Each extension header is its length in 4-octet
 * units, its content and the type of the next (§5.2.1); the PDU Session
 * Container (§5.2.2.7, TS 38.415 §5.5.2) is one of them, and nothing in it
 * is needed to forward the packet.
 */
static __always_inline __u8 *gtpu_tpdu(struct gtpu_hdr *gh, void *end, __u16 *len)
{
	struct gtpu_opt *opt = (void *)(gh + 1);
	__u8 *pos = (void *)(gh + 1), *last, next = 0;
	__u16 glen = bpf_ntohs(gh->len);
	__u32 hdr;

	if ((gh->flags & 0xf0) != GTPU_V1_PT || gh->type != GTPU_G_PDU)
		return NULL;
	if (gh->flags & GTPU_F_OPT) {
		if ((void *)(opt + 1) > end)
			return NULL;
		if (gh->flags & GTPU_F_E)
			next = opt->next_ext;
		pos = (void *)(opt + 1);
	}
	for (int i = 0; i < GTPU_MAX_EXT && next; i++) {
		if ((void *)(pos + 1) > end || !pos[0])
			return NULL;
		last = pos + pos[0] * 4 - 1;
		if ((void *)(last + 1) > end)
			return NULL;
		next = *last;
		pos = last + 1;
	}
	/* the length counts the optional octets and extensions too */
	hdr = pos - (__u8 *)(gh + 1);
	if (next || glen < hdr || (void *)(gh + 1) + glen > end)
		return NULL;
	*len = glen - hdr;
	return pos;
}

/* The EtherType of the IP packet at pdu, or 0 if it is none. */
static __always_inline __be16 ip_ethertype(const __u8 *pdu, void *end)
{
	if ((void *)(pdu + 1) > end)
		return 0;
	switch (*pdu >> 4) {
	case 4:
		return bpf_htons(ETH_P_IP);
	case 6:
		return bpf_htons(ETH_P_IPV6);
	}
	return 0;
}

/* Count a packet of bytes octets of session id on this CPU's record. */
static __always_inline void min_count(__u32 id, enum min_dir dir, __u32 bytes)
{
	__u32 key = bpf_get_smp_processor_id() * cfg_sessions + id;
	struct min_counter *c = bpf_map_lookup_elem(&min_counters, &key);

	if (!c)
		return;
	c->dir[dir & 1].packets++;
	c->dir[dir & 1].bytes += bytes;
}

/* Give the frame the Ethernet header of port out and send it there. */
static __always_inline int min_tx_frame(struct xdp_md *ctx, enum min_port_id out, __be16 proto)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	const volatile struct min_port *port = &cfg_ports[out];
	struct ethhdr *eth = data;

	/*
	 * out is known at compile time and the ports are zero until the loader
	 * sets them: hide where port points, or clang copies zeros.
	 */
	barrier_var(port);
	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	lab_eth_addrs(eth, (const void *)port->peer, (const void *)port->smac);
	eth->h_proto = proto;
	return bpf_redirect_map(&min_tx, port->ifindex, XDP_DROP);
}

/* Outer IPv4, UDP and GTP-U with a PDU Session Container in front of len octets of IP. */
static __always_inline void gtpu_push(struct iphdr *ip, const struct min_session *s, __u16 len)
{
	struct udphdr *udp = (void *)(ip + 1);
	struct gtpu_hdr *gh = (void *)(udp + 1);
	struct gtpu_opt *opt = (void *)(gh + 1);
	struct gtpu_psc *psc = (void *)(opt + 1);

	*ip = (struct iphdr){
	    .version = 4,
	    .ihl = 5,
	    .tot_len = bpf_htons(ENCAP_LEN + len),
	    .frag_off = bpf_htons(0x4000), /* DF */
	    .ttl = OUTER_TTL,
	    .protocol = IPPROTO_UDP,
	    .saddr = cfg_n3_addr,
	    .daddr = s->gnb,
	};
	ip->check = ipv4_csum(ip);
	*udp = (struct udphdr){
	    .source = bpf_htons(GTPU_PORT),
	    .dest = bpf_htons(GTPU_PORT),
	    .len = bpf_htons(ENCAP_LEN - sizeof(*ip) + len),
	    .check = 0, /* none, as IPv4 allows */
	};
	*gh = (struct gtpu_hdr){
	    .flags = GTPU_V1_PT | GTPU_F_E,
	    .type = GTPU_G_PDU,
	    .len = bpf_htons(sizeof(*opt) + sizeof(*psc) + len),
	    .teid = s->teid,
	};
	*opt = (struct gtpu_opt){.next_ext = GTPU_EXT_PSC};
	*psc = (struct gtpu_psc){.len = 1, .qfi = s->qfi & 0x3f};
}

/* Uplink: decapsulate a G-PDU of a known F-TEID and send its T-PDU to N6. */
SEC("xdp")
int xdp_min_n3(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct min_fteid_key key = {};
	struct min_session *s;
	struct gtpu_hdr *gh;
	struct iphdr *ip;
	__be16 proto;
	__u8 *pdu;
	__u16 len;

	ip = eth_ipv4(data, end);
	if (!ip)
		return XDP_PASS;
	gh = ipv4_gtpu(ip, end);
	if (!gh)
		return XDP_PASS;
	pdu = gtpu_tpdu(gh, end, &len);
	if (!pdu)
		return XDP_PASS;
	proto = ip_ethertype(pdu, end);
	if (!proto)
		return XDP_DROP;
	key.teid = gh->teid;
	s = bpf_map_lookup_elem(&min_ul, &key);
	if (!s)
		return XDP_DROP;
	min_count(s->id, MIN_UL, len);
	if (bpf_xdp_adjust_head(ctx, (int)(pdu - (__u8 *)data) - ETH_HLEN))
		return XDP_DROP;
	return min_tx_frame(ctx, MIN_N6, proto);
}

/* Downlink: encapsulate an IPv4 packet to a known UE and send it to N3. */
SEC("xdp")
int xdp_min_n6(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct min_session *s;
	struct iphdr *ip;
	__u16 len;

	ip = eth_ipv4(data, end);
	if (!ip)
		return XDP_PASS;
	s = bpf_map_lookup_elem(&min_dl, &ip->daddr);
	if (!s)
		return XDP_DROP;
	len = bpf_ntohs(ip->tot_len);
	if (len < sizeof(*ip) || (void *)ip + len > end)
		return XDP_DROP;
	min_count(s->id, MIN_DL, len);
	/* Ethernet padding after the packet stays after it, outside every length. */
	if (bpf_xdp_adjust_head(ctx, -(int)ENCAP_LEN))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	ip = data + ETH_HLEN;
	if ((void *)ip + ENCAP_LEN > end)
		return XDP_DROP;
	gtpu_push(ip, s, len);
	return min_tx_frame(ctx, MIN_N3, bpf_htons(ETH_P_IP));
}
