package scenario

import (
	"fmt"
	"strings"
	"time"
)

// KindIsolation checks that UEs reach neither the UPF itself nor each
// other through it.
const KindIsolation = "isolation"

// Isolation sends, from a UE's tunnel, Count packets of each kind: ICMP
// echo requests to the UPF's own N3, N4 and N6 addresses, and UDP and TCP
// to each of their UDPPorts and TCPPorts (its PFCP, GTP-U, REST and
// metrics ports); none may reach the UPF's own stack. A UE sending with
// another's address must be dropped (its rules name its address), and one
// UE's packets to another must not come out of the other's tunnel.
type Isolation struct {
	UDPPorts []int
	TCPPorts []int
	Count    int
}

func defaultIsolation() Settings {
	return &Isolation{UDPPorts: []int{2152, 8805}, TCPPorts: []int{8080, 9090}, Count: 10}
}

func (i *Isolation) fields(d *decoder) []field {
	ports := parseCount(countRange{1, 65535})
	return []field{
		{"udp_ports", values(d, &i.UDPPorts, "2152, 8805", ports)},
		{"tcp_ports", values(d, &i.TCPPorts, "8080, 9090", ports)},
		{"count", value(d, &i.Count, "a number such as 10", parseCount(countRange{1, 1000}))},
	}
}

func (i *Isolation) validate(v *validator, path string, s *Scenario) { v.withPFCP(path, s) }

func (i *Isolation) setup() string {
	return fmt.Sprintf("%d of each: ICMP to the UPF's N3, N4 and N6, UDP to %s, TCP to %s; spoofed source; UE to UE",
		i.Count, portsText(i.UDPPorts), portsText(i.TCPPorts))
}

// portsText writes ports as a list: "2152, 8805".
func portsText(ports []int) string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ports)), ", "), "[]")
}

func (i *Isolation) derivedName() string { return "isolation" }

// IsolationWait is how long the isolation check waits for stragglers
// after each kind of probe.
const IsolationWait = 300 * time.Millisecond

func (i *Isolation) estimate() time.Duration { return 4 * IsolationWait }

// needs: two sessions, one to speak as the other.
func (*Isolation) needs() Needs { return Needs{Sessions: 2} }
