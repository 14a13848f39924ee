package topo

import (
	"net/netip"
	"testing"
)

// TestUENumbering: slot k has the IPv4 pool's address k+1 and the IPv6
// pool's /64 number k, across octet boundaries and up to the last slot.
func TestUENumbering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slot   int
		v4, v6 string
	}{
		{"the first slot skips the pool's first address", 0, "10.32.0.1", "2001:db8:30::/64"},
		{"the last of the first /24", 254, "10.32.0.255", "2001:db8:30:fe::/64"},
		{"into the next /24", 255, "10.32.1.0", "2001:db8:30:ff::/64"},
		{"past a /16, which 10.45.0.0/16 was", 65535, "10.33.0.0", "2001:db8:30:ffff::/64"},
		{"the 100,000th session", 99999, "10.33.134.160", "2001:db8:31:869f::/64"},
		{"the millionth session", 999999, "10.47.66.64", "2001:db8:3f:423f::/64"},
		{"the last slot leaves the broadcast address", 1<<20 - 3, "10.47.255.254", "2001:db8:3f:fffd::/64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UEAddr(UEPool, tc.slot); got.String() != tc.v4 {
				t.Errorf("slot %d: %v, want %s", tc.slot, got, tc.v4)
			}
			if got := UEPrefixV6(UEPoolV6, tc.slot); got.String() != tc.v6 {
				t.Errorf("slot %d: %v, want %s", tc.slot, got, tc.v6)
			}
		})
	}
}

// TestUESlots: how many sessions a pool numbers.
func TestUESlots(t *testing.T) {
	for _, tc := range []struct {
		name string
		pool string
		want int
	}{
		{"the lab's IPv4 pool holds a million", UEPool.String(), 1<<20 - 2},
		{"the lab's IPv6 pool holds a million", UEPoolV6.String(), 1 << 20},
		{"a /16, the pool before", "10.45.0.0/16", 65534},
		{"a /30", "10.45.0.0/30", 2},
		{"a /31 holds none", "10.45.0.0/31", 0},
		{"a /64 holds one", "2001:db8::/64", 1},
		{"a /80 holds none", "2001:db8::/80", 0},
		{"an IPv6 /0 counts 2^32", "::/0", 1 << 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UESlots(netip.MustParsePrefix(tc.pool)); got != tc.want {
				t.Errorf("%s: %d slots, want %d", tc.pool, got, tc.want)
			}
		})
	}
}
