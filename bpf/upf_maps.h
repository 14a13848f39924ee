/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * upf_maps.h - every map of the datapath, nothing else.
 *
 * max_entries here are placeholders for the verifier; the loader sizes the
 * session tables from the configured maximum number of sessions.
 */
#ifndef UPF_MAPS_H
#define UPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "upf_types.h"

/*
 * Uplink: local F-TEID -> the session's PDRs for that tunnel. The lookup
 * tables are not preallocated: an entry takes memory (128 bytes, one slab
 * object) only while it exists, so their room to spare costs no more than
 * the buckets. Only user space adds and removes entries.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct upf_fteid_key);
	__type(value, struct upf_rules);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} ul_teids SEC(".maps");

/* Downlink: UE IPv4 address (exact) -> the session's PDRs. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct upf_rules);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} dl_ue4 SEC(".maps");

/* Downlink: UE IPv6 prefix (longest match) -> the session's PDRs. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__type(key, struct upf_ue6_key);
	__type(value, struct upf_rules);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} dl_ue6 SEC(".maps");

/*
 * The slot tables below are mapped into user space, which writes them with
 * no system call (an establishment writes several slots).
 *
 * PDR lists of lookups with more than one PDR, two PDRs a slot: a list is
 * a run of consecutive slots (user space hands out runs of 1, 2, 4, 8 or
 * 16, so a list of two takes one slot, not UPF_MAX_PDRS / 2).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_pdr_pair);
	__uint(max_entries, 256);
	__uint(map_flags, BPF_F_MMAPABLE);
} pdr_pairs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_sdf);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} sdfs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_far);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} fars SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_qer);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} qers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_urr);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} urrs SEC(".maps");

/*
 * URR records by CPU, then slot: CPU c's record of URR slot i is entry
 * c * cfg_urr_slots + i. Not a per-CPU array, whose entries are reached
 * through a pointer each: one memory access a packet, not two. User space
 * maps it to read the counters and write the flags.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_usage);
	__uint(max_entries, 1024);
	__uint(map_flags, BPF_F_MMAPABLE);
} urr_usage SEC(".maps");

/*
 * Addresses of this host (IPv4 as ::ffff:a.b.c.d) with their upf_local_flags:
 * traffic to them is the kernel's (from N6 only where the flags say), and a
 * UE may not reach them. Filled and kept by user space.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct upf_addr);
	__type(value, __u8);
	__uint(max_entries, 256);
} local_addrs SEC(".maps");

/* Next-hop cache: direct-mapped by destination hash, per CPU. */
#define UPF_NH_SLOTS 256

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_nexthop);
	__uint(max_entries, UPF_NH_SLOTS);
} nexthops SEC(".maps");

/* Egress devices (N3, N6, N9) for bpf_redirect_map: bulked transmit. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 8);
} tx_ports SEC(".maps");

/* Packets by XDP verdict, and dropped packets by reason. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 8);
} verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, enum upf_drop);
	__type(value, __u64);
	__uint(max_entries, UPF_DROP_SLOTS);
} drops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, enum upf_iface);
	__type(value, struct upf_if_stats);
	__uint(max_entries, UPF_IF__MAX);
} if_stats SEC(".maps");

/* Events to user space: buffered frames, notifications, unknown TEIDs. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

/* Per-CPU scratch: an event header plus the frame, built before output. */
struct upf_event_buf {
	struct upf_event ev;
	__u8 frame[UPF_EVENT_FRAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct upf_event_buf);
	__uint(max_entries, 1);
} event_scratch SEC(".maps");

/* Per CPU, for each rate-limited thing (an event type, or UPF_RATE_ECHO): see rate_ok. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, enum upf_event_type);
	__type(value, __u64);
	__uint(max_entries, UPF_RATE_SLOTS);
} rate_due SEC(".maps");

#endif /* UPF_MAPS_H */
