/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * csum.h - Internet checksums (RFC 1071): folding, incremental updates
 * (RFC 1624) and whole-packet sums for the UDP checksum over IPv6.
 */
#ifndef UPF_CSUM_H
#define UPF_CSUM_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include "common.h"

static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/*
 * Checksum of an option-less IPv4 header we just wrote, summed from its
 * fields rather than read back as 16-bit words: version and ToS were
 * stored a byte each, and a word spanning two stores waits for both to
 * reach the cache (no store forwarding: 10 ns a packet on the downlink).
 * Read field by field, the compiler takes the values it just stored.
 */
static __always_inline __u16 csum_ipv4(const struct iphdr *ip)
{
	__u64 sum = bpf_htons((ip->version << 12) | (ip->ihl << 8) | ip->tos) + ip->tot_len +
		    ip->id + ip->frag_off + bpf_htons((ip->ttl << 8) | ip->protocol) + ip->saddr +
		    ip->daddr;

	return csum_fold(sum);
}

/* TTL - 1 with the checksum patched incrementally (RFC 1624, as ip_decrease_ttl). */
static __always_inline void csum_ipv4_dec_ttl(struct iphdr *ip)
{
	__u32 check = ip->check;

	check += bpf_htons(0x0100);
	ip->check = (__u16)(check + (check >= 0xffff));
	ip->ttl--;
}

/* IPv6 pseudo-header sum for UDP (RFC 8200 §8.1). */
static __always_inline __u64 csum_ipv6_pseudo(const struct ipv6hdr *ip6, __u32 len)
{
	const __u32 *s = (const __u32 *)&ip6->saddr;
	__u64 sum = 0;

#pragma unroll
	for (int i = 0; i < 8; i++)
		sum += s[i];
	return sum + bpf_htonl(len) + bpf_htonl(IPPROTO_UDP);
}

/*
 * UDP checksum of the IPv6 packet at l3_off, over its datagram to the end of the frame:
 * 256-byte blocks by bpf_csum_diff, then 4-byte words, then the last bytes.
 * A global function, so the verifier checks its loops once rather than on
 * every path that reaches them. Returns the value to store, or 0 if the
 * frame is shorter than the headers or longer than 9 KiB.
 */
__noinline __u16 csum_udp6(struct xdp_md *ctx, __u32 l3_off)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + (l3_off & UPF_OFF_MASK);
	void *pos = ip6 + 1;
	__u64 sum;
	int i;

	if (pos > end || end - pos > 9216)
		return 0;
	sum = csum_ipv6_pseudo(ip6, end - pos);
	for (i = 0; i < 36; i++) {
		if (pos + 256 > end)
			break;
		sum += (__u32)bpf_csum_diff(0, 0, pos, 256, 0);
		pos += 256;
	}
	for (i = 0; i < 64; i++) {
		if (pos + 4 > end)
			break;
		sum += *(__u32 *)pos;
		pos += 4;
	}
	if (pos + 2 <= end) {
		sum += *(__u16 *)pos;
		pos += 2;
	}
	if (pos + 1 <= end)
		sum += *(__u8 *)pos; /* padded with a zero byte (RFC 1071) */
	return csum_fold(sum) ?: 0xffff;
}

#endif /* UPF_CSUM_H */
