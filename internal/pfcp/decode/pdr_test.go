package decode

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/wmnsk/go-pfcp/ie"

	"github.com/sluice-upf/sluice/internal/session"
)

// A UE IP Address (§8.2.62) gives the UE's IPv6 prefix: the default /64
// unless IPv6D shortens it by the IPv6 Prefix Delegation Bits, or IP6PL
// gives its length in the IPv6 Prefix Length. Fields that contradict each
// other or the address, or run past the IE, are refused naming it.
func TestUEIPAddressIPv6Prefix(t *testing.T) {
	const v6, v4, sd, ipv6d, chv6, ip6pl = 0x01, 0x02, 0x04, 0x08, 0x20, 0x40
	ue := netip.MustParseAddr("2001:db8:1:2::7")
	// octets is the IE's value: flags, the IPv6 address if V6, then tail.
	octets := func(flags byte, tail ...byte) []byte {
		b := []byte{flags}
		if flags&v6 != 0 {
			b = append(b, ue.AsSlice()...)
		}
		return append(b, tail...)
	}
	prefix := netip.MustParsePrefix
	for _, c := range []struct {
		name   string
		value  []byte
		want   session.UEIP
		cause  uint8 // of a refusal; 0: decoded
		reason string
	}{
		{name: "IPv6 address without IPv6D is its default /64", value: octets(v6),
			want: session.UEIP{V6: prefix("2001:db8:1:2::/64")}},
		{name: "destination IPv6 address is its /64 too", value: octets(v6 | sd),
			want: session.UEIP{V6: prefix("2001:db8:1:2::/64"), Dest: true}},
		{name: "IPv4 and IPv6 together", value: append([]byte{v4 | v6, 10, 45, 0, 2}, ue.AsSlice()...),
			want: session.UEIP{V4: netip.MustParseAddr("10.45.0.2"), V6: prefix("2001:db8:1:2::/64")}},
		{name: "IPv6D with 4 delegation bits is a /60", value: octets(v6|ipv6d, 4),
			want: session.UEIP{V6: prefix("2001:db8:1::/60")}},
		{name: "IPv6D with no delegation bits is the default /64", value: octets(v6|ipv6d, 0),
			want: session.UEIP{V6: prefix("2001:db8:1:2::/64")}},
		{name: "IP6PL gives the length itself", value: octets(v6|ip6pl, 72),
			want: session.UEIP{V6: prefix("2001:db8:1:2::/72")}},
		{name: "IP6PL 128 is a single address", value: octets(v6|ip6pl, 128),
			want: session.UEIP{V6: prefix("2001:db8:1:2::7/128")}},
		{name: "CHOOSE IPv6: the UPF's /64", value: octets(chv6),
			want: session.UEIP{ChooseV6: true}},
		{name: "CHOOSE IPv6 leaving the length to the UPF (§5.14)", value: octets(chv6|ipv6d, 0),
			want: session.UEIP{ChooseV6: true}},

		{name: "IPv6D and IP6PL together", value: octets(v6|ipv6d|ip6pl, 4, 60),
			cause: session.CauseMandatoryIEIncorrect, reason: "IP6PL applies only without IPv6D"},
		{name: "64 delegation bits leave no prefix", value: octets(v6|ipv6d, 64),
			cause: session.CauseMandatoryIEIncorrect, reason: "no /64 to shorten"},
		{name: "IPv6 prefix length longer than an address", value: octets(v6|ip6pl, 129),
			cause: session.CauseMandatoryIEIncorrect, reason: "longer than an address"},
		{name: "IPv6D without its delegation bits", value: octets(v6 | ipv6d),
			cause: session.CauseMandatoryIEIncorrect, reason: "UE IP address"},
		{name: "IPv6 address cut short", value: []byte{v6, 0x20, 0x01, 0x0d, 0xb8},
			cause: session.CauseMandatoryIEIncorrect, reason: "UE IP address"},
		{name: "CHOOSE a /60: the UPF chooses /64 prefixes only", value: octets(chv6|ipv6d, 4),
			cause: session.CauseRuleFailure, reason: "/64 prefixes only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ueIP(ie.New(ie.UEIPAddress, c.value))
			var e *session.Error
			if err != nil {
				e = err.(*session.Error)
			}
			switch {
			case c.cause == 0 && e != nil:
				t.Fatalf("refused: %v", e)
			case c.cause == 0 && *got != c.want:
				t.Errorf("decoded %+v, want %+v", *got, c.want)
			case c.cause == 0:
			case e == nil:
				t.Fatalf("decoded %+v, want cause %d", *got, c.cause)
			case e.Cause != c.cause || e.IE != ie.UEIPAddress || !strings.Contains(e.Msg, c.reason):
				t.Errorf("cause %d, offending IE %d, %q; want %d, %d and %q", e.Cause, e.IE, e.Msg, c.cause, ie.UEIPAddress, c.reason)
			}
		})
	}
}
