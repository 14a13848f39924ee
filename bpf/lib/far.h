/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * far.h - forwarding action (TS 29.244 §5.2.3, Apply Action §8.2.26).
 * FORW goes on to forwarding; BUFF hands the frame to user space, which
 * holds it and re-injects it once the FAR forwards; NOCP tells user space;
 * DROP, or no action, drops. DUPL is not done here yet: the frame is
 * forwarded as if DUPL were absent.
 */
#ifndef UPF_FAR_H
#define UPF_FAR_H

#include "common.h"
#include "event.h"

/* The inline FAR of a lookup entry, whole, in out. */
static __always_inline const struct upf_far *far_expand(const struct upf_rules *rules,
							struct upf_far *out)
{
	const struct upf_far_inline *f = &rules->far;

	*out = (struct upf_far){
	    .action = f->action,
	    .ohc = f->ohc,
	    .tos = f->tos,
	    .flags = f->flags,
	    .teid = f->teid,
	    .peer = {.a = {f->peer}},
	    .local = {.a = {cfg_gtpu_eps[rules->local_ep & (UPF_MAX_GTPU_EPS - 1)].addr.a[0]}},
	};
	return out;
}

/*
 * Apply the PDR's FAR: the one the lookup entry carries for its inline
 * PDR, or the FAR slot. 0 with *out the FAR to forward by, or a verdict.
 */
static __always_inline int far_apply(struct xdp_md *ctx, struct upf_pkt *p,
				     const struct upf_rules *rules, const struct upf_pdr *r,
				     struct upf_far *out)
{
	__u32 id = r->far_id;
	const struct upf_far *far;
	int ret;

	if (rules->far_inline && r == &rules->pdr)
		far = far_expand(rules, out);
	else
		far = bpf_map_lookup_elem(&fars, &id);
	if (!far)
		return -UPF_DROP_FAR_MISSING;
	if (far->action & UPF_FAR_FORW) {
		if (far != out)
			*out = *far;
		return 0;
	}
	if (far->action & UPF_FAR_BUFF) {
		ret = event_send_frame(ctx, UPF_EV_BUFFER, p, r->pdr_id, id);
		return ret < 0 ? ret : -UPF_DROP_BUFFERED;
	}
	if (far->action & UPF_FAR_NOCP)
		event_send(UPF_EV_NOTIFY, p, r->pdr_id, id);
	return -UPF_DROP_FAR_DROP;
}

#endif /* UPF_FAR_H */
