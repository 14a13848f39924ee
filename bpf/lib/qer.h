/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * qer.h - QoS enforcement (TS 29.244 §5.4): gate status and maximum bit
 * rate per direction, and the QFI/RQI marked on downlink packets.
 *
 * The MBR is a generic cell rate algorithm (GCRA, ITU-T I.371): each QER
 * keeps a theoretical arrival time (TAT) per direction, shared by all CPUs.
 * A packet of L bytes costs L*8/MBR seconds; it conforms if the TAT is no
 * further ahead of now than the burst tolerance, and then pushes the TAT by
 * its cost. The TAT advances by compare-and-swap so that two CPUs never
 * spend the same allowance.
 *
 * Time is the coarse clock (one tick, 1-4 ms): the TAT bookkeeping stays
 * exact, so the long-run rate is the MBR; only the instant of admission is
 * coarse, which widens the burst by at most a tick. A fine clock read costs
 * more than the rest of the QER on a virtual machine.
 */
#ifndef UPF_QER_H
#define UPF_QER_H

#include "common.h"
#include "../upf_maps.h"

/*
 * Burst tolerance of the MBR: how far the TAT may run ahead of now. It
 * covers TCP's shortest retransmission timeout (200 ms in Linux), whose
 * wait a shallower bucket forfeits (datapath.DefaultMBRBurst says more).
 */
const volatile __u64 cfg_mbr_burst_ns = 200000000;

#define NSEC_PER_MSEC 1000000ULL
#define GCRA_SHIFT 6 /* time in 1/64 ns: exact enough at 100 Gbit/s, wraps after 9 years */
#define GCRA_TRIES 4

/* mbr in kbit/s: a byte costs 8 / (mbr * 1000) s = 8e6 / mbr ns. */
static __always_inline int qer_police(__u64 *tat, __u32 mbr, __u32 bytes, __u64 now)
{
	__u64 cost = ((__u64)bytes * 8 * NSEC_PER_MSEC << GCRA_SHIFT) / mbr;
	__u64 tol = cfg_mbr_burst_ns << GCRA_SHIFT;

	now <<= GCRA_SHIFT;
	for (int i = 0; i < GCRA_TRIES; i++) {
		__u64 old = READ_ONCE(*tat);
		__u64 base = old > now ? old : now;

		if (base - now > tol)
			return -UPF_DROP_MBR;
		if (__sync_val_compare_and_swap(tat, old, base + cost) == old)
			return 0;
	}
	return -UPF_DROP_MBR; /* lost every race: the flow is over its rate anyway */
}

/* Police bytes against q's MBR of one direction, if it has one; *now is read once. */
static __always_inline int qer_police_dir(struct upf_qer *q, int uplink, __u32 bytes, __u64 *now)
{
	__u32 mbr = uplink ? q->mbr_ul : q->mbr_dl;

	if (!mbr)
		return 0;
	if (!*now)
		*now = bpf_ktime_get_coarse_ns();
	return qer_police(uplink ? &q->tat_ul : &q->tat_dl, mbr, bytes, *now);
}

static __always_inline int qer_apply_one(__u32 id, struct upf_pkt *p, __u64 *now)
{
	struct upf_qer *q;

	if (!id)
		return 0;
	q = bpf_map_lookup_elem(&qers, &id);
	if (!q)
		return -UPF_DROP_GATE_CLOSED; /* a QER we cannot see is a closed gate */
	if (q->gate & (p->uplink ? UPF_GATE_UL_CLOSED : UPF_GATE_DL_CLOSED))
		return -UPF_DROP_GATE_CLOSED;
	if (q->qfi && !p->mark_qfi) {
		p->mark_qfi = q->qfi;
		p->mark_rqi = q->rqi;
	}
	return qer_police_dir(q, p->uplink, p->ip_len, now);
}

/* All QERs of the PDR must admit the packet (e.g. flow MBR and session AMBR). */
static __always_inline int qer_apply(const struct upf_pdr *r, struct upf_pkt *p)
{
	__u64 now = 0;
	int ret;

#pragma unroll
	for (int i = 0; i < UPF_QERS_PER_PDR; i++) {
		ret = qer_apply_one(r->qer_id[i], p, &now);
		if (ret < 0)
			return ret;
	}
	return 0;
}

#endif /* UPF_QER_H */
