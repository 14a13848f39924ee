/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * urr.h - usage measurement (TS 29.244 §5.2.2) and volume quota.
 *
 * Volume counted: the PDU carried on the PDU session, i.e. the inner IP
 * packet from the first byte of its IP header to the end of its payload as
 * its header states. GTP-U, UDP and outer IP headers (uplink, or downlink
 * after encapsulation) and Ethernet framing are not counted, in both
 * directions alike, so that uplink and downlink of the same packet count the
 * same bytes (§5.2.2.2, volume measurement of the user plane traffic).
 * Uplink is traffic from the Access side, downlink all else (§8.2.40).
 *
 * A URR is measured after QoS enforcement unless it asks for MBQE (§8.2.68):
 * then it counts the packets that reach QoS enforcement, whatever comes of
 * them. Otherwise it counts the packets the datapath hands to the egress
 * device: its quota is taken before the frame is rebuilt, and given back if
 * the frame cannot leave (no room for a header, the redirect refused).
 * Counters are per CPU; the quota is shared and decremented atomically. No
 * byte passes the quota (§5.2.2.3.1: forwarding stops once it is
 * exhausted): a packet it has too little left for is dropped, and what was
 * left of it, less than that packet, is spent with it.
 */
#ifndef UPF_URR_H
#define UPF_URR_H

#include "common.h"
#include "event.h"

/* Slots of the URR table: the stride of urr_usage from one CPU to the next. */
const volatile __u32 cfg_urr_slots = 1;

/* This CPU's record of URR slot id. */
static __always_inline struct upf_usage *urr_record(__u32 id)
{
	__u32 key = bpf_get_smp_processor_id() * cfg_urr_slots + id;

	if (id >= cfg_urr_slots)
		return NULL;
	return bpf_map_lookup_elem(&urr_usage, &key);
}

static __always_inline int urr_quota(__u32 id, struct upf_pkt *p)
{
	struct upf_urr *u = bpf_map_lookup_elem(&urrs, &id);
	__s64 left;

	if (!u)
		return 0;
	left = __sync_fetch_and_add(&u->quota_left, -(__s64)p->ip_len);
	if (left <= 0)
		return -UPF_DROP_QUOTA;
	/* One packet takes the quota from above 0 to 0 or below: it tells, once. */
	if (left <= p->ip_len)
		event_send(UPF_EV_QUOTA, p, 0, id);
	if (left < p->ip_len) /* it would pass the quota */
		return -UPF_DROP_QUOTA;
	return 0;
}

/* The records of the PDR's URRs of one kind that a packet is to count in. */
struct urr_held {
	struct upf_usage *use[UPF_URRS_PER_PDR];
	__u32 quota[UPF_URRS_PER_PDR]; /* URR slot whose quota it took, or 0 */
};

/*
 * Find the records of the PDR's URRs of one kind (MBQE or not) that a
 * packet is to count in; nothing is taken yet. The number with a quota.
 */
static __always_inline int urr_find(const struct upf_pdr *r, __u32 mbqe, struct urr_held *h)
{
	int quotas = 0;

#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		__u32 id = r->urr_id[i];
		struct upf_usage *use;

		h->use[i] = NULL;
		h->quota[i] = 0;
		if (!id)
			continue;
		use = urr_record(id);
		if (!use || (use->flags & UPF_URR_MBQE) != mbqe)
			continue;
		h->use[i] = use;
		quotas += !!(use->flags & UPF_URR_QUOTA);
	}
	return quotas;
}

/* Give back what urr_take took of the quotas, for a packet that did not leave. */
static __always_inline void urr_refund(const struct urr_held *h, const struct upf_pkt *p)
{
#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		__u32 id = h->quota[i];
		struct upf_urr *u;

		if (!id)
			continue;
		u = bpf_map_lookup_elem(&urrs, &id);
		if (u)
			__sync_fetch_and_add(&u->quota_left, (__s64)p->ip_len);
	}
}

/*
 * Take the packet's share of the quotas of the URRs urr_find found: h says
 * what to give back. A quota spent refuses the packet, and what the others
 * gave is given back: h then holds none.
 */
static __always_inline int urr_take(const struct upf_pdr *r, struct upf_pkt *p, struct urr_held *h)
{
#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		int ret;

		if (!h->use[i] || !(h->use[i]->flags & UPF_URR_QUOTA))
			continue;
		ret = urr_quota(r->urr_id[i], p);
		if (ret < 0) {
			urr_refund(h, p);
			__builtin_memset(h->quota, 0, sizeof(h->quota));
			return ret;
		}
		h->quota[i] = r->urr_id[i];
	}
	return 0;
}

/* urr_find and urr_take: the records to count in, their quotas taken. */
static __always_inline int urr_admit(const struct upf_pdr *r, struct upf_pkt *p, __u32 mbqe,
				     struct urr_held *h)
{
	urr_find(r, mbqe, h);
	return urr_take(r, p, h);
}

/* Count a packet of ip_len octets, uplink or not, in each record of use (NULL: none). */
static __always_inline void urr_add(struct upf_usage *const use[UPF_URRS_PER_PDR], int uplink,
				    __u16 ip_len)
{
#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		if (!use[i])
			continue;
		if (uplink) {
			use[i]->ul_pkts++;
			use[i]->ul_bytes += ip_len;
		} else {
			use[i]->dl_pkts++;
			use[i]->dl_bytes += ip_len;
		}
	}
}

/* Count the packet in the records urr_find found. */
static __always_inline void urr_count(const struct urr_held *h, const struct upf_pkt *p)
{
	urr_add(h->use, p->uplink, p->ip_len);
}

#endif /* UPF_URR_H */
