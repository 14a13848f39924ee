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
 * A URR is measured after QoS enforcement unless it asks for MBQE (§8.2.68).
 * Counters are per CPU; the quota is shared and decremented atomically, and
 * the packet that reaches it is the last one forwarded.
 */
#ifndef UPF_URR_H
#define UPF_URR_H

#include "common.h"
#include "event.h"

static __always_inline int urr_quota(__u32 id, struct upf_urr *u, struct upf_pkt *p)
{
	__s64 left;

	if (!(u->flags & UPF_URR_QUOTA))
		return 0;
	left = __sync_fetch_and_add(&u->quota_left, -(__s64)p->ip_len);
	if (left <= 0)
		return -UPF_DROP_QUOTA;
	if (left <= p->ip_len) /* this packet spends the last of it: tell once */
		event_send(UPF_EV_QUOTA, p, 0, id);
	return 0;
}

static __always_inline void urr_count(__u32 id, const struct upf_pkt *p)
{
	struct upf_usage *use = bpf_map_lookup_elem(&urr_usage, &id);

	if (!use)
		return;
	if (p->uplink) {
		use->ul_pkts++;
		use->ul_bytes += p->ip_len;
	} else {
		use->dl_pkts++;
		use->dl_bytes += p->ip_len;
	}
}

/* Check the quota and count for the PDR's URRs of one kind (MBQE or not). */
static __always_inline int urr_account(const struct upf_pdr *r, struct upf_pkt *p, __u32 mbqe)
{
#pragma unroll
	for (int i = 0; i < UPF_URRS_PER_PDR; i++) {
		__u32 id = r->urr_id[i];
		struct upf_urr *u;
		int ret;

		if (!id)
			continue;
		u = bpf_map_lookup_elem(&urrs, &id);
		if (!u || (u->flags & UPF_URR_MBQE) != mbqe)
			continue;
		ret = urr_quota(id, u, p);
		if (ret < 0)
			return ret;
		urr_count(id, p);
	}
	return 0;
}

#endif /* UPF_URR_H */
