/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * event.h - records for user space through the ring buffer: buffered frames,
 * control-plane notifications, unknown TEIDs, exhausted quotas.
 */
#ifndef UPF_EVENT_H
#define UPF_EVENT_H

#include "common.h"
#include "../upf_maps.h"

/*
 * Minimum spacing of path events per CPU and type; Error Indications must be
 * rate limited (TS 29.281 §7.3.1). 0 disables these events.
 */
const volatile __u64 cfg_event_interval_ns = 1000000;

static __always_inline void event_fill(struct upf_event *ev, __u16 type, const struct upf_pkt *p,
				       __u16 pdr_id, __u32 id)
{
	*ev = (struct upf_event){
	    .type = type,
	    .pdr_id = pdr_id,
	    .qfi = p->qfi,
	    .iface = p->iface,
	    .session = p->session,
	    .id = id,
	    .teid = p->teid,
	    .ifindex = p->ifindex,
	};
}

/* A header-only event; returns 0 or -UPF_DROP_EVENT_LOST. */
__cold int event_send(__u16 type, const struct upf_pkt *p, __u16 pdr_id, __u32 id)
{
	struct upf_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev)
		return -UPF_DROP_EVENT_LOST;
	event_fill(ev, type, p, pdr_id, id);
	bpf_ringbuf_submit(ev, 0);
	return 0;
}

/* The whole frame after the header, so user space can hold and re-inject it. */
__cold int event_send_frame(struct xdp_md *ctx, __u16 type, const struct upf_pkt *p, __u16 pdr_id,
			    __u32 id)
{
	__u32 zero = 0, len = ctx->data_end - ctx->data;
	struct upf_event_buf *buf = bpf_map_lookup_elem(&event_scratch, &zero);

	if (!buf || len > UPF_EVENT_FRAME_MAX || len == 0)
		return -UPF_DROP_EVENT_LOST;
	/* the same value, in a form the verifier can bound to [1, FRAME_MAX] */
	len = ((len - 1) & (UPF_EVENT_FRAME_MAX - 1)) + 1;
	event_fill(&buf->ev, type, p, pdr_id, id);
	buf->ev.len = len;
	if (bpf_xdp_load_bytes(ctx, 0, buf->frame, len))
		return -UPF_DROP_EVENT_LOST;
	if (bpf_ringbuf_output(&events, buf, sizeof(buf->ev) + len, 0))
		return -UPF_DROP_EVENT_LOST;
	return 0;
}

/*
 * Whether one more of key may go now: a burst of UPF_RATE_BURST, then one
 * per interval, per CPU (TS 29.281 §7.3.1 asks it of Error Indications;
 * Echo replies and the other path events get it too, so that no sender
 * can make the UPF send as fast as it sends). The state is one time, when
 * the bucket would be empty (the generic cell rate algorithm).
 */
static __always_inline int rate_ok(__u32 key)
{
	__u64 now, tat, *due = bpf_map_lookup_elem(&rate_due, &key);

	if (!due)
		return 0;
	now = bpf_ktime_get_ns();
	tat = *due > now ? *due : now;
	if (tat - now > (UPF_RATE_BURST - 1) * cfg_event_interval_ns)
		return 0;
	*due = tat + cfg_event_interval_ns;
	return 1;
}

/*
 * Events about the path rather than a session (unknown TEID, unresolved
 * neighbour, an extension header not understood) go out at the rate
 * rate_ok allows each type.
 */
__cold void event_send_limited(__u16 type, const struct upf_pkt *p, __u32 ifindex, __u8 family,
			       const struct upf_addr *peer)
{
	struct upf_event *ev;

	if (!rate_ok(type))
		return;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	event_fill(ev, type, p, 0, 0);
	ev->ifindex = ifindex;
	ev->peer_family = family;
	ev->peer = *peer;
	bpf_ringbuf_submit(ev, 0);
}

#endif /* UPF_EVENT_H */
