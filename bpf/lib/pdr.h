/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pdr.h - packet detection (TS 29.244 §5.2.1): the session's PDRs in
 * precedence order, first match wins. A PDR matches on source interface,
 * QFI and one SDF filter; a PDR with several SDF filters arrives here as
 * consecutive entries with the same actions. The cheap, selective tests
 * (interface, QFI, protocol, ports) come first and are inline.
 */
#ifndef UPF_PDR_H
#define UPF_PDR_H

#include "common.h"
#include "../upf_maps.h"

/* Word i (network order) of the mask of a prefix of len bits. */
static __always_inline __u32 prefix_mask(__u8 len, int i)
{
	int bits = (int)len - 32 * i;

	if (bits >= 32)
		return 0xffffffff;
	if (bits <= 0)
		return 0;
	return bpf_htonl(0xffffffff << (32 - bits));
}

static __always_inline int addr_match(const struct upf_addr *a, const struct upf_addr *val,
				      __u8 len)
{
	return (((a->a[0] & prefix_mask(len, 0)) ^ val->a[0]) |
		((a->a[1] & prefix_mask(len, 1)) ^ val->a[1]) |
		((a->a[2] & prefix_mask(len, 2)) ^ val->a[2]) |
		((a->a[3] & prefix_mask(len, 3)) ^ val->a[3])) == 0;
}

__cold int sdf_match(const struct upf_sdf *f, const struct upf_pkt *p)
{
	if ((f->flags & UPF_SDF_V4) && p->family != 4)
		return 0;
	if ((f->flags & UPF_SDF_V6) && p->family != 6)
		return 0;
	if ((f->flags & UPF_SDF_TOS) && ((p->tos & f->tos_mask) != f->tos))
		return 0;
	if ((f->flags & UPF_SDF_FLOW_LABEL) && f->flow_label != p->flow_label)
		return 0;
	return addr_match(&p->src, &f->src, f->src_len) && addr_match(&p->dst, &f->dst, f->dst_len);
}

static __always_inline int pdr_match(const struct upf_pdr *r, const struct upf_pkt *p)
{
	const struct upf_sdf *f;
	__u32 id;

	if (!(r->src_iface & p->src_mask))
		return 0;
	if (r->qfi && r->qfi != p->qfi)
		return 0;
	if (r->proto && r->proto != p->proto)
		return 0;
	if (p->sport < r->sport_lo || p->sport > r->sport_hi || p->dport < r->dport_lo ||
	    p->dport > r->dport_hi)
		return 0;
	/* The UE's address as the uplink PDR's source: no SDF slot to read. */
	if (r->src4_len)
		return p->family == 4 && (p->src.a[0] & prefix_mask(r->src4_len, 0)) == r->src4;
	id = r->sdf_id;
	if (!id)
		return 1;
	f = bpf_map_lookup_elem(&sdfs, &id);
	return f && sdf_match(f, p);
}

/*
 * Index of the first PDR that matches in the list of n PDRs from slot first
 * of pdr_pairs, from index from on, or -1. A global function: the
 * verifier walks the 32-entry scan once, not once per path into it.
 */
__noinline int pdr_list_find(const struct upf_pkt *p, __u32 first, __u32 n, __u32 from)
{
	if (!p)
		return -1;
	for (__u32 i = 0; i < UPF_MAX_PDRS / 2 && 2 * i < n; i++) {
		__u32 id = first + i;
		const struct upf_pdr_pair *pair = bpf_map_lookup_elem(&pdr_pairs, &id);

		if (!pair)
			return -1;
		if (2 * i >= from && pdr_match(&pair->pdr[0], p))
			return 2 * i;
		if (2 * i + 1 < n && pdr_match(&pair->pdr[1], p))
			return 2 * i + 1;
	}
	return -1;
}

/*
 * The first PDR of the entry's list after its inline one that matches, or
 * NULL. An entry an earlier build wrote has no inline PDR (no source
 * interface): its list is scanned whole.
 */
static __always_inline const struct upf_pdr *pdr_list_select(const struct upf_rules *r,
							     const struct upf_pkt *p)
{
	const struct upf_pdr_pair *pair;
	__u32 id;
	int i;

	if (r->n_pdrs <= 1)
		return NULL;
	i = pdr_list_find(p, r->list_id, r->n_pdrs, r->pdr.src_iface ? 1 : 0);
	if (i < 0)
		return NULL;
	id = r->list_id + i / 2;
	pair = bpf_map_lookup_elem(&pdr_pairs, &id);
	return pair ? &pair->pdr[i & 1] : NULL;
}

/* The first PDR of the session that matches, or NULL. */
static __always_inline const struct upf_pdr *pdr_select(const struct upf_rules *r,
							const struct upf_pkt *p)
{
	if (pdr_match(&r->pdr, p))
		return &r->pdr;
	return pdr_list_select(r, p);
}

/*
 * Outer header removal: a G-PDU's PDR must remove the tunnel it arrived in
 * (the datapath forwards the inner packet, re-encapsulated or not), and a
 * packet from N6 has no outer header to remove.
 */
static __always_inline int pdr_ohr_ok(const struct upf_pdr *r, const struct upf_pkt *p)
{
	switch (p->outer_family) {
	case 4:
		return !!(r->ohr & UPF_OHR_GTPU_V4);
	case 6:
		return !!(r->ohr & UPF_OHR_GTPU_V6);
	}
	return r->ohr == UPF_OHR_NONE;
}

#endif /* UPF_PDR_H */
