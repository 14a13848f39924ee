package session

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseFlow reads a Flow Description, an IPFilterRule (RFC 6733 §4.3.1):
//
//	permit out 17 from 198.18.6.0/24 1000-2000 to assigned
//	permit out udp from any to assigned 80-88
//
// Only "permit out" rules are meaningful in a PDR (TS 29.244 §5.2.1A.2A):
// they describe downlink traffic, from the remote to the UE. The protocol
// is a number or a name ("ip" is any protocol); "ip" with ports means the
// ports of TCP, UDP and SCTP. Options after the addresses (frag,
// ipoptions, tcpflags, ...) and negation are refused.
func ParseFlow(s string) (*Flow, error) {
	w := strings.Fields(s)
	if len(w) < 7 || w[0] != "permit" || w[1] != "out" {
		return nil, fmt.Errorf("flow description %q: want \"permit out <proto> from <src> [ports] to <dst> [ports]\"", s)
	}
	f := &Flow{}
	proto, err := parseProto(w[2])
	if err != nil {
		return nil, fmt.Errorf("flow description %q: %w", s, err)
	}
	f.Proto = proto
	rest := w[3:]
	if rest[0] != "from" {
		return nil, fmt.Errorf("flow description %q: want \"from\" after the protocol", s)
	}
	var n int
	if f.Src, f.SrcAssigned, f.SrcPorts, n, err = parseEnd(rest[1:]); err != nil {
		return nil, fmt.Errorf("flow description %q: source: %w", s, err)
	}
	rest = rest[1+n:]
	if len(rest) == 0 || rest[0] != "to" {
		return nil, fmt.Errorf("flow description %q: want \"to\" after the source", s)
	}
	if f.Dst, f.DstAssigned, f.DstPorts, n, err = parseEnd(rest[1:]); err != nil {
		return nil, fmt.Errorf("flow description %q: destination: %w", s, err)
	}
	if extra := rest[1+n:]; len(extra) > 0 {
		return nil, fmt.Errorf("flow description %q: options %q are not supported", s, strings.Join(extra, " "))
	}
	if (len(f.SrcPorts) > 0 || len(f.DstPorts) > 0) && f.Proto != 0 && f.Proto != 6 && f.Proto != 17 && f.Proto != 132 {
		return nil, fmt.Errorf("flow description %q: ports need ip, TCP, UDP or SCTP", s)
	}
	return f, nil
}

// protocols are the names a Flow Description may give its protocol by:
// IANA's keywords (as in /etc/protocols), and "ip" for any protocol.
var protocols = map[string]uint8{
	"ip": 0, "icmp": 1, "igmp": 2, "tcp": 6, "udp": 17, "gre": 47, "esp": 50, "ah": 51,
	"icmpv6": 58, "ipv6-icmp": 58, "sctp": 132,
}

func parseProto(w string) (uint8, error) {
	if n, ok := protocols[strings.ToLower(w)]; ok {
		return n, nil
	}
	n, err := strconv.ParseUint(w, 10, 8)
	if err != nil {
		return 0, fmt.Errorf("protocol %q: want a number from 0 to 255 or a name: ip (any), icmp, igmp, tcp, udp, gre, esp, ah, icmpv6, sctp", w)
	}
	return uint8(n), nil
}

// parseEnd reads an address ("any", "assigned", an address or prefix) and
// optional ports, returning how many words it used.
func parseEnd(w []string) (netip.Prefix, bool, []PortRange, int, error) {
	if len(w) == 0 {
		return netip.Prefix{}, false, nil, 0, fmt.Errorf("missing address")
	}
	var p netip.Prefix
	assigned := false
	switch a := w[0]; {
	case a == "any":
	case a == "assigned":
		assigned = true
	case strings.HasPrefix(a, "!"):
		return p, false, nil, 0, fmt.Errorf("negated address %q is not supported", a)
	default:
		var err error
		if p, err = parsePrefix(a); err != nil {
			return p, false, nil, 0, err
		}
	}
	if len(w) < 2 || w[1] == "" || w[1][0] < '0' || w[1][0] > '9' {
		return p, assigned, nil, 1, nil // "to", or an option: not ports
	}
	ports, err := parsePorts(w[1])
	if err != nil {
		return p, false, nil, 0, err
	}
	return p, assigned, ports, 2, nil
}

func parsePrefix(a string) (netip.Prefix, error) {
	if strings.Contains(a, "/") {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			return p, fmt.Errorf("address %q: %w", a, err)
		}
		return p.Masked(), nil
	}
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("address %q is not an address, a prefix, \"any\" or \"assigned\"", a)
	}
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}

// parsePorts reads "80", "1000-2000" or a comma-separated list of them.
func parsePorts(w string) ([]PortRange, error) {
	var out []PortRange
	for _, part := range strings.Split(w, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("port %q: want a number from 0 to 65535", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 16); err != nil || b < a {
				return nil, fmt.Errorf("port range %q: want low-high with low <= high", part)
			}
		}
		out = append(out, PortRange{uint16(a), uint16(b)})
	}
	return out, nil
}
