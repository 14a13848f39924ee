package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindIperf is iperf3 from real UEs through the UPF, beside the same UEs
// joined to the DN straight.
const KindIperf = "iperf"

// Iperf runs iperf3, TCP and UDP, from UEs whose own kernel stacks send
// (lab/gnb), each UE its own client and server in the DN: for each count
// of UEs at once, each protocol and direction, for Duration. Beside each
// it measures the ceiling: the same UEs and servers joined without tunnel
// or UPF. With MBR, the UEs' sessions are policed at each rate in turn.
type Iperf struct {
	UEs       []int     // UEs sending at once, a measurement each
	Streams   int       // parallel streams per UE (iperf3 -P)
	Protocols []string  // "tcp", "udp"
	Direction Direction // Both: uplink, then downlink
	Duration  time.Duration
	UDPRate   Rate   // what each UE offers over UDP (iperf3 -b, shared by its streams)
	MBR       []Rate // the sessions' QER MBR, both ways, a measurement each; none: no policing
	Ceiling   bool   // measure the same UEs joined straight to the DN too
}

func defaultIperf() Settings {
	return &Iperf{UEs: []int{1}, Streams: 1, Protocols: []string{"tcp", "udp"}, Direction: Both,
		Duration: 5 * time.Second, UDPRate: Rate{BPS: 1e9}, Ceiling: true}
}

func (p *Iperf) fields(d *decoder) []field {
	return []field{
		{"ues", values(d, &p.UEs, "1, 8", parseCount(countRange{1, MaxUEs}))},
		{"streams", value(d, &p.Streams, "a number such as 4", parseCount(countRange{1, 128}))},
		{"protocols", values(d, &p.Protocols, "tcp, udp", oneOf("a protocol", "tcp", "udp"))},
		{"direction", value(d, &p.Direction, "uplink, downlink or both", parseDirection)},
		{"duration", value(d, &p.Duration, "a duration such as 5s", parseDuration)},
		{"udp_rate", value(d, &p.UDPRate, "a bit rate such as 1Gbps", parseBitRate)},
		{"mbr", values(d, &p.MBR, "10Mbps, 100Mbps, 1Gbps", parseMBR)},
		{"ceiling", value(d, &p.Ceiling, "true or false", yamlfile.ParseBool)},
	}
}

// MaxUEs bounds the UEs of one measurement: each runs an iperf3 client,
// and the DN an iperf3 server for it.
const MaxUEs = 256

// parseMBR reads an MBR: a bit rate that PFCP's kbit/s hold.
func parseMBR(s string) (Rate, error) {
	r, err := parseBitRate(s)
	if err == nil && r.BPS < 1000 {
		return Rate{}, fmt.Errorf("%s is below 1kbps, the least an MBR carries; want e.g. 10Mbps", yamlfile.Quote(s))
	}
	return r, err
}

func (p *Iperf) validate(v *validator, path string, s *Scenario) {
	v.distinct(yamlfile.KeyPath(path, "ues"), p.UEs)
	v.distinctWords(yamlfile.KeyPath(path, "protocols"), p.Protocols)
	v.realUEs(path, "ues", p.UEs, s)
}

// realUEs checks what real UEs need of the run: a UPF that decapsulates,
// and a session for each UE; key lists the step's counts of UEs.
func (v *validator) realUEs(path, key string, counts []int, s *Scenario) {
	if s.UPF.Kind == UPFReference {
		kind := v.where("upf.kind", "upf")
		v.add(v.where(yamlfile.KeyPath(path, "mode"), yamlfile.KeyPath(path, "kind")), "real UEs need a UPF with their sessions, which the reference forwarder is not; measure upfd or a command UPF, so change %s%s",
			kind, v.onLine(kind))
	}
	who := "UEs"
	if key == "counts" {
		who = "subscribers"
	}
	for i, n := range counts {
		if n > s.Sessions.Count {
			v.add(yamlfile.ItemPath(yamlfile.KeyPath(path, key), i), "%d %s are more than the %d sessions%s; each has a session, so raise sessions.count",
				n, who, s.Sessions.Count, v.onLine("sessions.count"))
		}
	}
}

// distinctWords refuses a word listed twice.
func (v *validator) distinctWords(path string, list []string) {
	for i, w := range list {
		if j := slices.Index(list, w); j < i {
			v.add(yamlfile.ItemPath(path, i), "%s is listed already as %s; list each once", w, yamlfile.ItemPath(path, j))
		}
	}
}

func (p *Iperf) setup() string {
	what := fmt.Sprintf("%s UEs × %d, %s, %s, %s each", sizesText(p.UEs), p.Streams, strings.Join(p.Protocols, "+"),
		p.Direction, p.Duration)
	if len(p.MBR) > 0 {
		what += ", MBR " + ratesText(p.MBR)
	}
	return what
}

func (p *Iperf) derivedName() string {
	name := "iperf " + sizesText(p.UEs) + " UEs"
	if len(p.MBR) > 0 {
		name += " MBR " + ratesText(p.MBR)
	}
	return name
}

// estimate: every measurement, and as many again for the ceiling.
func (p *Iperf) estimate() time.Duration {
	n := len(p.UEs) * len(p.Protocols) * len(p.Direction.Each()) * max(len(p.MBR), 1)
	if p.Ceiling {
		n += len(p.UEs) * len(p.Protocols) * len(p.Direction.Each())
	}
	return times(n, p.Duration)
}

// needs: a session per UE; the ceiling is the step's own, not the
// reference forwarder.
func (p *Iperf) needs() Needs { return Needs{Sessions: slices.Max(p.UEs)} }

func ratesText(list []Rate) string {
	words := make([]string, len(list))
	for i, r := range list {
		words[i] = r.String()
	}
	return strings.Join(words, ", ")
}
