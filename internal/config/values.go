package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// The parsers below turn one value of the file into its Go form. Their
// errors are the part after "file:line: key: " and end with what to write.

func parseListen(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	if s == "" {
		return netip.AddrPort{}, fmt.Errorf("empty; write an address and port such as 198.18.4.2:%d", DefaultPFCPPort)
	}
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPort{}, fmt.Errorf("%s has no port; write it as %s", yamlfile.Quote(s), netip.AddrPortFrom(addr, DefaultPFCPPort))
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s is not an address and port; write it as 198.18.4.2:%d", yamlfile.Quote(s), DefaultPFCPPort)
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s does not start with an IP address; write the address upfd listens on, e.g. 198.18.4.2:%d",
			yamlfile.Quote(s), DefaultPFCPPort)
	}
	return netip.AddrPort{}, fmt.Errorf("%s has port %s; want 1 to 65535, normally %d", yamlfile.Quote(s), yamlfile.Quote(port), DefaultPFCPPort)
}

// parseServerListen returns the parser of a TCP server's address, for a
// server whose usual port is port. "" is the zero AddrPort: no server.
func parseServerListen(port int) func(string) (netip.AddrPort, error) {
	example := fmt.Sprintf("127.0.0.1:%d", port)
	return func(s string) (netip.AddrPort, error) {
		if s == "" {
			return netip.AddrPort{}, nil
		}
		ap, err := netip.ParseAddrPort(s)
		switch {
		case err == nil && ap.Port() == 0:
			return netip.AddrPort{}, fmt.Errorf("%s has port 0; use a fixed port, normally %d", yamlfile.Quote(s), port)
		case err == nil:
			return ap, nil
		}
		if addr, err := netip.ParseAddr(s); err == nil {
			return netip.AddrPort{}, fmt.Errorf("%s has no port; write it as %s", yamlfile.Quote(s), netip.AddrPortFrom(addr, uint16(port)))
		}
		host, portText, err := net.SplitHostPort(s)
		switch {
		case err != nil:
			return netip.AddrPort{}, fmt.Errorf("%s is not an address and port; write it as %s, or \"\" for no server", yamlfile.Quote(s), example)
		case host == "":
			return netip.AddrPort{}, fmt.Errorf("%s has no address; write 0.0.0.0:%s for every IPv4 address, [::]:%s for every address, or %s for this host alone",
				yamlfile.Quote(s), portText, portText, example)
		}
		if _, err := netip.ParseAddr(host); err != nil {
			return netip.AddrPort{}, fmt.Errorf("%s does not start with an IP address (upfd resolves no names); write e.g. %s", yamlfile.Quote(s), example)
		}
		return netip.AddrPort{}, fmt.Errorf("%s has port %s; want 1 to 65535, normally %d", yamlfile.Quote(s), yamlfile.Quote(portText), port)
	}
}

// parsePeer reads an SMF's address, as a full-length prefix, or a network
// of SMFs; Validate checks that a network is canonical.
func parsePeer(s string) (netip.Prefix, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.Prefix{}, fmt.Errorf("%s has a port; write the address alone, %s", yamlfile.Quote(s), ap.Addr())
	}
	return netip.Prefix{}, fmt.Errorf("%s is neither an IP address nor a network; write the SMF's N4 address, e.g. 198.18.4.1, or its network, e.g. 198.18.4.0/24",
		yamlfile.Quote(s))
}

// parseGTPUAddress reads an interface address; "" means none, which
// Validate judges by role.
func parseGTPUAddress(s string) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr, nil
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return netip.Addr{}, fmt.Errorf("%s is a prefix; write the address alone, %s", yamlfile.Quote(s), p.Addr())
	}
	return netip.Addr{}, fmt.Errorf("%s is not an IPv4 or IPv6 address; write the interface's GTP-U address, e.g. 198.18.3.2", yamlfile.Quote(s))
}

// parsePool reads a UE pool; Validate checks that it is canonical.
func parsePool(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p, nil
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return netip.Prefix{}, fmt.Errorf("%s has no length; write it as a prefix, e.g. 10.45.0.0/16", yamlfile.Quote(s))
	}
	return netip.Prefix{}, fmt.Errorf("%s is not an IP prefix; write it as address/length, e.g. 10.45.0.0/16", yamlfile.Quote(s))
}

// parseTEIDRange reads "FIRST-LAST"; Validate checks 0 < FIRST <= LAST.
func parseTEIDRange(s string) (TEIDRange, error) {
	firstText, lastText, ok := strings.Cut(s, "-")
	if !ok {
		return TEIDRange{}, fmt.Errorf("%s is not a range; write it as FIRST-LAST, e.g. 0x100-0xffffff", yamlfile.Quote(s))
	}
	first, err := parseTEID(strings.TrimSpace(firstText))
	if err != nil {
		return TEIDRange{}, err
	}
	last, err := parseTEID(strings.TrimSpace(lastText))
	if err != nil {
		return TEIDRange{}, err
	}
	return TEIDRange{First: first, Last: last}, nil
}

// parseTEID reads hex ("0x100") or decimal ("256"), nothing else: Go's base
// 0 would read "0100" as octal.
func parseTEID(s string) (uint32, error) {
	digits, base := s, 10
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		digits, base = s[2:], 16
	}
	n, err := strconv.ParseUint(digits, base, 32)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%s is above 0xffffffff, the largest TEID; lower it", yamlfile.Quote(s))
	case err != nil:
		return 0, fmt.Errorf("%s is not a number; write TEIDs in hex (0x100) or decimal (256)", yamlfile.Quote(s))
	}
	return uint32(n), nil
}

// The ranges of the whole-number keys; max 0 is no upper end.
var (
	sessionsRange   = yamlfile.Range{Min: 1, Max: MaxSessionsLimit}      // max_sessions
	pdrsRange       = yamlfile.Range{Min: 1, Max: MaxPDRsLimit}          // max_pdrs_per_session
	sendsRange      = yamlfile.Range{Min: 1}                             // pfcp.n1, pfcp.heartbeat_retries, gtpu.echo_retries
	perSessionRange = yamlfile.Range{Min: 1, Max: BufferPerSessionLimit} // buffer.packets_per_session
	totalRange      = yamlfile.Range{Min: 1}                             // buffer.total_packets, also >= packets_per_session
)

// mtuWant says what an MTU may be, which Validate checks with the address.
var mtuWant = fmt.Sprintf("%d to %d, or 0 to keep the device's", MinMTU, MaxMTU)

func parseMTU(s string) (int, error) { return yamlfile.ParseWhole(s, mtuWant) }

// parseSMF reads an SMF's N4 address for pfcp.associate, taking the PFCP
// port when none is given. upfd resolves no names.
func parseSMF(s string) (netip.AddrPort, error) {
	if addr, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(addr, DefaultPFCPPort), nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	if s == "" {
		return netip.AddrPort{}, fmt.Errorf("empty; write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:%d", DefaultPFCPPort)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	if _, err := netip.ParseAddr(host); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%s is not an IP address (upfd resolves no names); write the SMF's N4 address, e.g. 198.18.4.1 or 198.18.4.1:%d",
			yamlfile.Quote(s), DefaultPFCPPort)
	}
	return netip.AddrPort{}, fmt.Errorf("%s has port %s; want 1 to 65535, normally %d", yamlfile.Quote(s), yamlfile.Quote(port), DefaultPFCPPort)
}

// fqdnProblem says why name is not a host name after RFC 1123, or "" if it
// is one.
func fqdnProblem(name string) string {
	if len(name) > 253 {
		return "it is longer than 253 characters; shorten it"
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if why := labelProblem(label); why != "" {
			return why
		}
	}
	// RFC 1123 2.1: a name must not look like a dotted-decimal address, so
	// "198.18.4.256" is a mistyped address, not a host.
	if yamlfile.IsDigits(labels[len(labels)-1]) {
		return "it ends in a number like an IPv4 address; fix the address or use a host name"
	}
	return ""
}

func labelProblem(label string) string {
	switch {
	case label == "":
		return "it has an empty label; remove the extra dot"
	case len(label) > 63:
		return fmt.Sprintf("label %s is longer than 63 characters; shorten it", yamlfile.Quote(label))
	case label[0] == '-' || label[len(label)-1] == '-':
		return fmt.Sprintf("label %s starts or ends with '-'; move or remove the hyphen", yamlfile.Quote(label))
	}
	for _, r := range label {
		if !isLDH(r) {
			return fmt.Sprintf("label %s has %q; use only letters, digits and '-'", yamlfile.Quote(label), r)
		}
	}
	return ""
}

// isLDH reports whether r is a letter, digit or hyphen in ASCII.
func isLDH(r rune) bool {
	return r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// ifnameProblem says why name cannot be a Linux device name (the kernel's
// dev_valid_name), or "" if it can.
func ifnameProblem(name string) string {
	switch {
	case len(name) > 15:
		return "is longer than 15 characters, the Linux limit; use the name ip link shows"
	case name == "." || name == "..":
		return "is not a device name; use the name ip link shows"
	}
	for _, r := range name {
		if r == '/' || r == ':' || unicode.IsSpace(r) {
			return fmt.Sprintf("cannot be a device name: it has %q; use the name ip link shows", r)
		}
	}
	return ""
}
