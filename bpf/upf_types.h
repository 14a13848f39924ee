/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * upf_types.h - the contract between the XDP datapath and Go.
 *
 * Every map key and value, every enum shared with user space lives here and
 * only here. bpf2go generates the Go mirror (-type ...); the layouts are
 * explicit and padded by hand so that both sides agree without guessing.
 * Addresses and TEIDs are kept in network byte order, ports and lengths in
 * host order.
 */
#ifndef UPF_TYPES_H
#define UPF_TYPES_H

#include <linux/types.h>

#define UPF_MAX_PDRS 32	   /* PDRs per session and direction */
#define UPF_MAX_GTPU_EPS 4 /* local GTP-U addresses (N3, N9, v4 and v6) */
#define UPF_MAX_GTPU_EXT 8 /* extension headers walked before giving up */
#define UPF_QERS_PER_PDR 2 /* e.g. session AMBR plus flow MBR */
#define UPF_URRS_PER_PDR 2
#define UPF_EVENT_FRAME_MAX 2048 /* bytes of a frame copied into an event */
#define UPF_MAX_LISTENERS 4	 /* upfd's sockets besides GTP-U: PFCP, API, metrics */

/*
 * Negative drop reasons. Every stage returns either an XDP action (>= 0) or
 * one of these; the exit funnel counts both. Keep UPF_DROP__MAX last.
 */
enum upf_drop {
	UPF_DROP_NONE = 0,
	UPF_DROP_TRUNCATED,	   /* a header runs past the end of the frame */
	UPF_DROP_MALFORMED_IP,	   /* bad version, IHL or a length that lies */
	UPF_DROP_MALFORMED_GTPU,   /* bad version/PT, a length that lies */
	UPF_DROP_GTPU_EXT,	   /* extension header of length 0 or chain too long */
	UPF_DROP_GTPU_TYPE,	   /* a GTP-U message type we do not handle */
	UPF_DROP_UNSUPPORTED,	   /* EtherType or inner protocol we do not carry */
	UPF_DROP_NOT_LOCAL,	   /* not for a session and not for this host */
	UPF_DROP_NO_SESSION,	   /* unknown TEID or UE address */
	UPF_DROP_NO_PDR,	   /* session found, no PDR matched */
	UPF_DROP_OHR_MISMATCH,	   /* outer header is not what the PDR removes */
	UPF_DROP_FAR_DROP,	   /* FAR says DROP (or has no action) */
	UPF_DROP_FAR_MISSING,	   /* PDR names a FAR that is not installed */
	UPF_DROP_GATE_CLOSED,	   /* QER gate closed for this direction */
	UPF_DROP_MBR,		   /* QER maximum bit rate exceeded */
	UPF_DROP_QUOTA,		   /* URR volume quota exhausted */
	UPF_DROP_TTL_EXPIRED,	   /* TTL or hop limit would reach zero */
	UPF_DROP_MTU,		   /* too large for the egress MTU */
	UPF_DROP_NO_ROUTE,	   /* FIB has no usable route */
	UPF_DROP_NO_NEIGH,	   /* next hop not resolved yet: user space is told */
	UPF_DROP_UE_TO_LOCAL,	   /* a UE addressed the UPF itself */
	UPF_DROP_REDIRECT,	   /* egress device is not a UPF interface */
	UPF_DROP_BUFFERED,	   /* frame handed to user space for buffering */
	UPF_DROP_EVENT_LOST,	   /* buffer or notify event did not fit the ring */
	UPF_DROP_ADJUST,	   /* headroom/tailroom adjustment failed */
	UPF_DROP_DN_TO_HOST,	   /* from N6 to the host where N6 may not reach */
	UPF_DROP_GTPU_EXT_UNKNOWN, /* an extension header we must comprehend and do not */
	UPF_DROP_ECHO_LIMITED,	   /* an Echo Request beyond the rate we answer */
	UPF_DROP__MAX,
};

/*
 * The drops map's entries: room for reasons to come, so that a new reason
 * leaves the pinned map's size, and a restart across versions, as it was.
 */
#define UPF_DROP_SLOTS 32
_Static_assert(UPF_DROP__MAX <= UPF_DROP_SLOTS, "more drop reasons than UPF_DROP_SLOTS");

/* Interface roles; also the index of the per-interface counters. */
enum upf_iface {
	UPF_IF_N3 = 0,
	UPF_IF_N6 = 1,
	UPF_IF_N9 = 2,
	UPF_IF__MAX,
};

/* TS 29.244 §8.2.2 Source Interface values, as a bit each (1 << value). */
enum upf_src_iface {
	UPF_SRC_ACCESS = 1 << 0,
	UPF_SRC_CORE = 1 << 1,
	UPF_SRC_SGI_LAN = 1 << 2,
	UPF_SRC_CP = 1 << 3,
};

/* Outer header removal, TS 29.244 §8.2.64, as the outer families accepted. */
enum upf_ohr {
	UPF_OHR_NONE = 0,
	UPF_OHR_GTPU_V4 = 1 << 0, /* description 0 */
	UPF_OHR_GTPU_V6 = 1 << 1, /* description 1 */
				  /* description 6 (GTP-U/UDP/IP) is both bits */
};

/* FAR Apply Action bits we act on, TS 29.244 §8.2.26. */
enum upf_far_action {
	UPF_FAR_DROP = 1 << 0,
	UPF_FAR_FORW = 1 << 1,
	UPF_FAR_BUFF = 1 << 2,
	UPF_FAR_NOCP = 1 << 3,
	UPF_FAR_DUPL = 1 << 4,
};

/* Outer header creation, TS 29.244 §8.2.56: the encapsulations we build. */
enum upf_ohc {
	UPF_OHC_NONE = 0,
	UPF_OHC_GTPU_V4 = 1,
	UPF_OHC_GTPU_V6 = 2,
};

enum upf_far_flags {
	UPF_FAR_F_TOS = 1 << 0, /* transport level marking present */
};

enum upf_qer_gate {
	UPF_GATE_UL_CLOSED = 1 << 0,
	UPF_GATE_DL_CLOSED = 1 << 1,
};

enum upf_urr_flags {
	UPF_URR_MBQE = 1 << 0,	/* measure before QoS enforcement (§8.2.68) */
	UPF_URR_QUOTA = 1 << 1, /* volume quota enforced */
};

enum upf_sdf_flags {
	UPF_SDF_TOS = 1 << 0,
	UPF_SDF_FLOW_LABEL = 1 << 1,
	UPF_SDF_V4 = 1 << 2, /* addresses are IPv4: packet must be IPv4 */
	UPF_SDF_V6 = 1 << 3, /* addresses are IPv6: packet must be IPv6 */
};

enum upf_event_type {
	UPF_EV_UNKNOWN_TEID = 1, /* G-PDU for no session: send Error Indication */
	UPF_EV_BUFFER = 2,	 /* FAR BUFF: the frame follows the header */
	UPF_EV_NOTIFY = 3,	 /* FAR NOCP without BUFF: first packet seen */
	UPF_EV_QUOTA = 4,	 /* URR volume quota exhausted */
	UPF_EV_NO_NEIGH = 5,	 /* resolve the next hop in peer on ifindex */
	UPF_EV_EXT_HEADER = 6,	 /* send peer a Supported Extension Headers Notification */
	UPF_EV__MAX,
};

/*
 * Keys of the per-CPU rate limits: the rate-limited events, and Echo
 * replies. The map has room for more, so a version adding one can still
 * take over the maps an older one pinned.
 */
#define UPF_RATE_ECHO UPF_EV__MAX
#define UPF_RATE__MAX (UPF_EV__MAX + 1)
#define UPF_RATE_SLOTS 16
#define UPF_RATE_BURST 8
_Static_assert(UPF_RATE__MAX <= UPF_RATE_SLOTS, "more rate limits than UPF_RATE_SLOTS");

/* An IPv4 or IPv6 address; IPv4 in a[0], the rest zero. */
struct upf_addr {
	__u32 a[4];
};

/* Key of the uplink table: local F-TEID. */
struct upf_fteid_key {
	__u32 teid; /* network order */
	__u32 ep;   /* index of the local GTP-U address it arrived on */
};

/* Key of the IPv6 downlink table (LPM trie). */
struct upf_ue6_key {
	__u32 prefixlen;
	__u32 addr[4];
};

/*
 * One packet detection rule as the datapath sees it. Protocol and ports of
 * its SDF filter are inline, so a scan rejects most PDRs without another
 * read; addresses, ToS and flow label, if any, are in the SDF slot.
 */
struct upf_pdr {
	__u32 far_id;
	__u32 qer_id[UPF_QERS_PER_PDR]; /* 0 = none */
	__u32 urr_id[UPF_URRS_PER_PDR]; /* 0 = none */
	union {
		__u32 sdf_id; /* 0 = no address, ToS or flow label filter */
		__u32 src4;   /* with src4_len: an IPv4 source prefix, network order */
	};
	__u16 sport_lo, sport_hi; /* host order, inclusive; {0, 65535} = any */
	__u16 dport_lo, dport_hi;
	__u16 pdr_id;	/* the PFCP rule ID, for events */
	__u8 src_iface; /* one UPF_SRC_* bit */
	__u8 qfi;	/* uplink: 0 = any QFI */
	__u8 ohr;	/* UPF_OHR_* */
	__u8 proto;	/* 0 = any */
	__u8 src4_len;	/* > 0: the filter is this source prefix alone, inline */
	__u8 _pad;
};

/* Two PDRs of a list: a scan reads a slot for every two. */
struct upf_pdr_pair {
	struct upf_pdr pdr[2];
};

/*
 * The FAR of a lookup entry's one PDR, carried in the entry when it fits,
 * so that the common case reads no FAR slot: no tunnel, or an IPv4 one
 * from one of the local GTP-U addresses (cfg_gtpu_eps[local_ep]).
 */
struct upf_far_inline {
	__u8 action; /* UPF_FAR_* */
	__u8 ohc;    /* UPF_OHC_NONE or UPF_OHC_GTPU_V4 */
	__u8 tos;
	__u8 flags;
	__u32 teid; /* network order */
	__u32 peer; /* IPv4, network order */
};

/*
 * Value of the lookup tables (uplink by F-TEID, downlink by UE address).
 * The first PDR is inline, with its FAR when that fits: a packet it
 * matches costs one hash lookup. With more than one, all of them are also
 * in pdr_pairs from slot list_id on, two a slot, in precedence order;
 * first match wins, and the scan starts at the second.
 * 64 bytes: with the kernel's element header, the key and its free-list
 * link, a slab object of 128.
 */
struct upf_rules {
	__u32 session; /* datapath session index, named in events */
	__u32 list_id; /* first pdr_pairs slot when n_pdrs > 1 */
	__u8 n_pdrs;
	__u8 far_inline; /* far holds pdr's FAR */
	__u8 local_ep;	 /* the inline FAR's outer source, for a tunnel */
	__u8 _pad;
	struct upf_far_inline far;
	struct upf_pdr pdr;
};

/*
 * The rest of an SDF filter: address prefixes as value and length (v4 in
 * word 0), ToS under a mask, flow label.
 */
struct upf_sdf {
	__u8 flags; /* UPF_SDF_* */
	__u8 tos;
	__u8 tos_mask;
	__u8 src_len; /* prefix lengths in bits */
	__u8 dst_len;
	__u8 _pad[3];
	__u32 flow_label; /* host order, 20 bits */
	struct upf_addr src, dst;
};

struct upf_far {
	__u8 action; /* UPF_FAR_* */
	__u8 ohc;    /* UPF_OHC_* */
	__u8 tos;    /* outer DSCP/ToS octet when UPF_FAR_F_TOS */
	__u8 flags;  /* UPF_FAR_F_* */
	__u32 teid;  /* network order */
	struct upf_addr peer;
	struct upf_addr local; /* outer source address */
};

/*
 * QoS enforcement rule. The MBR is a GCRA whose theoretical arrival times
 * are shared by all CPUs and advanced with compare-and-swap. 32 bytes, so
 * that a QER never straddles two cache lines.
 */
struct upf_qer {
	__u8 gate; /* UPF_GATE_* */
	__u8 qfi;  /* written into the downlink PDU Session Container */
	__u8 rqi;
	__u8 _pad;
	__u32 mbr_ul; /* kbit/s as PFCP gives it (TS 29.244 §8.2.8), 0 = unlimited */
	__u32 mbr_dl;
	__u32 _pad2;
	__u64 tat_ul; /* GCRA state, in 1/64 ns; user space writes 0 */
	__u64 tat_dl;
};

/* Usage reporting rule: the shared quota, read when UPF_URR_QUOTA. */
struct upf_urr {
	__s64 quota_left; /* bytes; decremented atomically */
};

/*
 * One CPU's record of one URR: its flags, copied into every CPU's record by
 * user space, and what the CPU counted. A packet reads and counts in one
 * line of its own CPU's; user space sums the CPUs.
 */
struct upf_usage {
	__u32 flags; /* UPF_URR_* */
	__u32 _pad;
	__u64 ul_pkts, ul_bytes;
	__u64 dl_pkts, dl_bytes;
};

/* Per-CPU traffic of one interface role. */
struct upf_if_stats {
	__u64 rx_pkts, rx_bytes;
	__u64 tx_pkts, tx_bytes;
};

/* Ring buffer record; for UPF_EV_BUFFER the frame's bytes follow. */
struct upf_event {
	__u16 type; /* UPF_EV_* */
	__u16 len;  /* bytes of frame that follow */
	__u16 pdr_id;
	__u8 qfi;
	__u8 iface; /* UPF_IF_* it arrived on */
	__u32 session;
	__u32 id;	  /* FAR id (BUFFER, NOTIFY) or URR id (QUOTA) */
	__u32 teid;	  /* network order (UNKNOWN_TEID) */
	__u32 ifindex;	  /* ingress device (egress device for NO_NEIGH) */
	__u8 peer_family; /* 4 or 6 when peer is set */
	__u8 _pad[3];
	struct upf_addr peer; /* outer source (UNKNOWN_TEID), next hop (NO_NEIGH) */
};

/*
 * A cached FIB answer for a destination, per CPU. ok_len is the largest IP
 * length the FIB has accepted for it: a larger packet asks the FIB again,
 * so the MTU is enforced exactly as without the cache.
 */
struct upf_nexthop {
	struct upf_addr dst;
	__u32 in_ifindex; /* the FIB's answer depends on where we came from */
	__u32 out_ifindex;
	__u64 expires; /* deadline in jiffies (nh_now) */
	__u16 ok_len;
	__u8 family;
	__u8 _pad;
	__u8 dmac[6];
	__u8 smac[6];
	__u8 _pad2[2];
};

/* Values of local_addrs: where an address of the host may be reached from. */
enum upf_local_flags {
	UPF_LOCAL_ON_N6 = 1 << 0, /* held by the N6 device: N6 may reach it */
};

/* A listening socket of upfd's, set at load time; proto 0 = unused. */
struct upf_listener {
	__u8 proto; /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 _pad;
	__u16 port;
};

/* A local GTP-U endpoint address, set at load time. */
struct upf_gtpu_ep {
	__u8 family; /* 0 = unused, 4 or 6 */
	__u8 _pad[3];
	struct upf_addr addr;
};

#endif /* UPF_TYPES_H */
