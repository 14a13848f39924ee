package topo

import (
	"encoding/binary"
	"net/netip"
)

// The UE numbering, one rule for the SMF emulator (lab/smf) and the
// reference forwarder's traffic (lab/runner), and so for the generator and
// the sink, which send to and check the sessions they are given: slot k,
// the session whose TEIDs are their bases + k, has the IPv4 pool's address
// k+1 (a pool's first and last are no UE's) and the IPv6 pool's /64
// number k. Slots are contiguous, so a generator cycles over sessions by
// adding 1.

// UEAddr is the IPv4 address of slot k in pool: the pool's k+1th.
func UEAddr(pool netip.Prefix, k int) netip.Addr {
	b := pool.Masked().Addr().As4()
	binary.BigEndian.PutUint32(b[:], binary.BigEndian.Uint32(b[:])+1+uint32(k))
	return netip.AddrFrom4(b)
}

// UEPrefixV6 is the IPv6 /64 of slot k in pool: the pool's kth.
func UEPrefixV6(pool netip.Prefix, k int) netip.Prefix {
	b := pool.Masked().Addr().As16()
	binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(b[:8])+uint64(k))
	return netip.PrefixFrom(netip.AddrFrom16(b), 64)
}

// UESlots is how many slots pool numbers: an IPv4 pool's addresses but
// its first and its last, an IPv6 pool's /64s (2^32 at the most). 0 for
// a pool too narrow for one.
func UESlots(pool netip.Prefix) int {
	if pool.Addr().Is4() {
		return max(1<<(32-pool.Bits())-2, 0)
	}
	if pool.Bits() > 64 {
		return 0
	}
	return 1 << min(64-pool.Bits(), 32)
}
