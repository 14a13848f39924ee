/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * ethaddr.h - MAC addresses into an Ethernet header a word at a time:
 * clang copies into struct ethhdr, which is packed, a byte at a time, and
 * x86 loads and stores words at any address. upfd does the same
 * (bpf/lib/fwd.h), so that the references and upfd pay alike.
 */
#ifndef LAB_ETHADDR_H
#define LAB_ETHADDR_H

#include <linux/types.h>

typedef __u32 __attribute__((may_alias)) lab_u32;
typedef __u16 __attribute__((may_alias)) lab_u16;

static __always_inline void lab_eth_addrs(void *eth, const void *dmac, const void *smac)
{
	*(lab_u32 *)eth = *(const lab_u32 *)dmac;
	*(lab_u16 *)(eth + 4) = *(const lab_u16 *)(dmac + 4);
	*(lab_u16 *)(eth + 6) = *(const lab_u16 *)smac;
	*(lab_u32 *)(eth + 8) = *(const lab_u32 *)(smac + 2);
}

#endif /* LAB_ETHADDR_H */
