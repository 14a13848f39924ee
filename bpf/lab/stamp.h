/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * stamp.h - the contract between the lab's generator, its sink and Go.
 *
 * Every frame the generator sends carries a stamp as the first bytes of its
 * innermost UDP payload. The sink finds it again on the far side of the UPF
 * and checks the frame against the session table both were given. Map
 * values shared with Go live here; bpf2go generates their mirror. Fields on
 * the wire are in network byte order, those in maps in host order.
 */
#ifndef LAB_STAMP_H
#define LAB_STAMP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define STAMP_MAGIC 0x534c4331 /* "SLC1" */

struct stamp {
	__be32 magic;
	__be32 flow;	/* global flow id: flow-in-session * sessions + session */
	__be64 seq;	/* per flow, from 0, never repeated by the generator */
	__be64 sent_ns; /* bpf_ktime_get_ns() as the frame was built */
};

/* UDP ports: the UE side is LAB_UE_PORT + flow-in-session. */
#define LAB_UE_PORT 10000
#define LAB_DN_PORT 9 /* discard (RFC 863) */
#define LAB_GTPU_PORT 2152

/* One session of the table the generator cycles over and the sink checks against. */
struct lab_session {
	__u8 ue[16];   /* UE address: IPv4 in the first 4 bytes, or IPv6 */
	__u32 ul_teid; /* the UPF's F-TEID: uplink G-PDUs carry it */
	__u32 dl_teid; /* the gNB's F-TEID: downlink G-PDUs must carry it */
	__u8 qfi;
	__u8 pad[3];
};

/*
 * Where a flow belongs, set by Go for each flow id so that neither program
 * divides by the number of sessions for every frame.
 */
struct lab_flow {
	__u32 session; /* flow % sessions */
	__u16 ue_port; /* LAB_UE_PORT + flow / sessions */
	__u16 pad;
};

/* The generator's per-flow state. */
struct tgen_flow {
	struct lab_flow at;
	__u64 seq; /* the next sequence number: how many were sent */
};

/* The generator's per-CPU state: one worker runs on each CPU. */
struct tgen_worker {
	__u64 sent;	/* frames the program returned XDP_TX for */
	__u64 bytes;	/* their inner IP bytes */
	__u64 limit;	/* stop sending (XDP_DROP) once sent reaches it */
	__u64 interval; /* ns between frames, 0 = flat out */
	__u64 next_ns;	/* pacing: no frame before this time */
	__u64 now_ns;	/* flat out: the clock at the start of the batch */
	__u32 flow;	/* the next flow to send */
	__u32 first;	/* this worker's flows: [first, end), contiguous so that */
	__u32 end;	/* two workers do not share the flows' cache lines */
	__u32 pad;
};

/*
 * Why the sink refused a stamped frame. Keep SINK_BAD__MAX last; Go names
 * them in the same order.
 */
enum sink_bad {
	SINK_BAD_LENGTH = 0, /* a length field disagrees with the frame */
	SINK_BAD_CSUM,	     /* IPv4 header checksum wrong */
	SINK_BAD_ENCAP,	     /* G-PDU where a plain packet was expected, or the reverse */
	SINK_BAD_TEID,	     /* not the flow's session's TEID */
	SINK_BAD_PSC,	     /* no PDU Session Container, or the wrong PDU type */
	SINK_BAD_QFI,	     /* not the flow's session's QFI */
	SINK_BAD_INNER,	     /* inner addresses, ports or protocol not the flow's */
	SINK_BAD_FLOW,	     /* flow id beyond the table */
	SINK_BAD__MAX,
};

/* Per-CPU totals of the sink. */
struct sink_totals {
	__u64 pkts;   /* valid stamped frames, duplicates included */
	__u64 bytes;  /* their inner IP bytes */
	__u64 passed; /* frames without a stamp, passed to the stack */
	__u64 bad[SINK_BAD__MAX];
	__u64 lat_count; /* frames whose latency was taken */
	__u64 lat_sum;	 /* ns */
	__u64 lat_max;
	__u64 last_sent; /* the stamp's time of the last frame taken */
};

/*
 * Per-flow sequence tracking. next is the highest sequence seen + 1; bit
 * (q % SINK_WINDOW) of window says whether q was seen, for q in
 * [next - SINK_WINDOW, next). Older sequences cannot be told apart from
 * duplicates: they count as late (and as reordered, assuming no duplicate).
 */
#define SINK_WINDOW 256

struct sink_flow {
	struct lab_flow at;
	__u64 pkts; /* duplicates included */
	__u64 bytes;
	__u64 unique;
	__u64 next;
	__u64 dups;
	__u64 reordered;
	__u64 late;
	__u64 window[SINK_WINDOW / 64];
};

/*
 * Latency histogram, log-linear: values below 16 ns have a bucket each;
 * above, every power of two is cut into 16 buckets, so a bucket is at most
 * 1/16 of its value wide (p50/p99 to within ~6%, ~3% taken at the middle).
 * The last bucket holds everything from 2^36 ns (~69 s) up.
 */
#define SINK_HIST_SUB 4 /* log2 of the buckets per power of two */
#define SINK_HIST_BUCKETS (((36 - SINK_HIST_SUB) << SINK_HIST_SUB) + (1 << SINK_HIST_SUB))

struct sink_hist {
	__u64 bucket[SINK_HIST_BUCKETS];
};

/*
 * The maps' shape: an array indexed by session or flow, sized by Go from the
 * spec, or one value per CPU.
 */
#define LAB_ARRAY(map_type, value_type)                                                            \
	struct {                                                                                   \
		__uint(type, map_type);                                                            \
		__type(key, __u32);                                                                \
		__type(value, value_type);                                                         \
		__uint(max_entries, 1);                                                            \
	}

#endif /* LAB_STAMP_H */
