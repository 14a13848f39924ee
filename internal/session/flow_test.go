package session

import (
	"net/netip"
	"reflect"
	"testing"
)

func TestParseFlow(t *testing.T) {
	for _, c := range []struct {
		in   string
		want *Flow
		err  string
	}{
		{in: "permit out 17 from 198.18.6.0/24 1000-2000 to assigned",
			want: &Flow{Proto: 17, Src: netip.MustParsePrefix("198.18.6.0/24"), SrcPorts: []PortRange{{1000, 2000}}, DstAssigned: true}},
		{in: "permit out ip from any to assigned", want: &Flow{DstAssigned: true}},
		{in: "permit out 6 from 198.18.7.10 80,443 to assigned 40000",
			want: &Flow{Proto: 6, Src: netip.MustParsePrefix("198.18.7.10/32"), SrcPorts: []PortRange{{80, 80}, {443, 443}}, DstAssigned: true, DstPorts: []PortRange{{40000, 40000}}}},
		{in: "permit out 58 from 2001:2:0:7::/64 to assigned", want: &Flow{Proto: 58, Src: netip.MustParsePrefix("2001:2:0:7::/64"), DstAssigned: true}},
		{in: "permit out ip from 198.18.6.1/24 to 10.45.0.2", want: &Flow{Src: netip.MustParsePrefix("198.18.6.0/24"), Dst: netip.MustParsePrefix("10.45.0.2/32")}},
		{in: "deny out ip from any to assigned", err: `flow description "deny out ip from any to assigned": want "permit out <proto> from <src> [ports] to <dst> [ports]"`},
		{in: "permit in ip from any to assigned", err: `flow description "permit in ip from any to assigned": want "permit out <proto> from <src> [ports] to <dst> [ports]"`},
		{in: "permit out tcp from any to assigned", want: &Flow{Proto: 6, DstAssigned: true}},
		{in: "permit out udp from 10.0.0.0/8 to assigned 80-88", // pfcpsim's
			want: &Flow{Proto: 17, Src: netip.MustParsePrefix("10.0.0.0/8"), DstAssigned: true, DstPorts: []PortRange{{80, 88}}}},
		{in: "permit out ip from 0.0.0.0/0 to assigned 81-81", // ports of TCP, UDP and SCTP
			want: &Flow{Src: netip.MustParsePrefix("0.0.0.0/0"), DstAssigned: true, DstPorts: []PortRange{{81, 81}}}},
		{in: "permit out ICMPv6 from any to assigned", want: &Flow{Proto: 58, DstAssigned: true}},
		{in: "permit out ipv6-icmp from any to assigned", want: &Flow{Proto: 58, DstAssigned: true}},
		{in: "permit out sctp from any 36412 to assigned", want: &Flow{Proto: 132, SrcPorts: []PortRange{{36412, 36412}}, DstAssigned: true}},
		{in: "permit out tcpx from any to assigned", err: `flow description "permit out tcpx from any to assigned": protocol "tcpx": want a number from 0 to 255 or a name: ip (any), icmp, igmp, tcp, udp, gre, esp, ah, icmpv6, sctp`},
		{in: "permit out 17 from !10.0.0.0/8 to assigned", err: `flow description "permit out 17 from !10.0.0.0/8 to assigned": source: negated address "!10.0.0.0/8" is not supported`},
		{in: "permit out 17 from any 2000-1000 to assigned", err: `flow description "permit out 17 from any 2000-1000 to assigned": source: port range "2000-1000": want low-high with low <= high`},
		{in: "permit out 1 from any 5 to assigned", err: `flow description "permit out 1 from any 5 to assigned": ports need ip, TCP, UDP or SCTP`},
		{in: "permit out icmp from any 5 to assigned", err: `flow description "permit out icmp from any 5 to assigned": ports need ip, TCP, UDP or SCTP`},
		{in: "permit out 17 from any to assigned frag", err: `flow description "permit out 17 from any to assigned frag": options "frag" are not supported`},
		{in: "permit out 17 from bogus to assigned", err: `flow description "permit out 17 from bogus to assigned": source: address "bogus" is not an address, a prefix, "any" or "assigned"`},
	} {
		got, err := ParseFlow(c.in)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v\nwant %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %+v, %v\nwant %+v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseFlow(f *testing.F) {
	f.Add("permit out 17 from 198.18.6.0/24 1000-2000 to assigned")
	f.Fuzz(func(t *testing.T, s string) { ParseFlow(s) })
}
