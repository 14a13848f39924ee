package scenario

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindSubscribers is seed 003's subscriber traffic model, by subscriber
// count.
const KindSubscribers = "subscribers"

// Subscribers runs the subscriber traffic model for each count in turn:
// every subscriber sends its uplink flows and receives its downlink flows
// at once, for Duration.
type Subscribers struct {
	Counts   []int
	Duration time.Duration // per count
	Uplink   []Flow        // per subscriber
	Downlink []Flow        // per subscriber
}

// Flow is one flow of a subscriber: a protocol at a bit rate and a packet
// rate, whose ratio sets its packet length.
type Flow struct {
	Protocol string // "tcp" (HTTP-like) or "udp"
	Rate     Rate   // bits per second of inner IP packets
	PPS      float64
}

// PacketBytes is the length of the flow's inner IP packets.
func (f Flow) PacketBytes() int {
	return int(math.Round(f.Rate.BPS / f.PPS / 8))
}

// headerBytes are the inner IP and transport headers of a flow's protocol,
// which its packet length must hold with the generator's stamp.
var headerBytes = map[string]int{"udp": 20 + 8, "tcp": 20 + 20}

// SeedUplink and SeedDownlink are the traffic of one subscriber in the
// free5GC cloud study (seed 003, §III.D): HTTP (here TCP with port 80) and
// UDP, TX 2089 kbit/s at 422 pps and RX 3948 kbit/s at 696 pps. Their
// packets average 405 and 770 bytes up, 539 and 908 down: 600-700 bytes
// overall, as the study says of its mix.
var (
	SeedUplink = []Flow{
		{Protocol: "tcp", Rate: Rate{BPS: 1_522_200}, PPS: 247},
		{Protocol: "udp", Rate: Rate{BPS: 567_200}, PPS: 175},
	}
	SeedDownlink = []Flow{
		{Protocol: "tcp", Rate: Rate{BPS: 2_331_600}, PPS: 321},
		{Protocol: "udp", Rate: Rate{BPS: 1_617_200}, PPS: 375},
	}
)

func defaultSubscribers() Settings {
	return &Subscribers{Counts: []int{100, 500, 1000, 2000}, Duration: 10 * time.Second,
		Uplink: SeedUplink, Downlink: SeedDownlink}
}

func (s *Subscribers) fields(d *decoder) []field {
	return []field{
		{"counts", values(d, &s.Counts, "100, 500, 1000, 2000", parseCount(countRange{1, MaxSessions}))},
		{"duration", value(d, &s.Duration, "a duration such as 10s", parseDuration)},
		{"uplink", func(n *yaml.Node, path string) error { return d.flows(n, path, &s.Uplink) }},
		{"downlink", func(n *yaml.Node, path string) error { return d.flows(n, path, &s.Downlink) }},
	}
}

func (d *decoder) flows(n *yaml.Node, path string, dst *[]Flow) error {
	list := []Flow{}
	err := d.each(n, path, "a list of flows such as [{protocol: udp, rate: 567.2kbps, pps: 175}]",
		func(item *yaml.Node, sub string) error {
			f := Flow{Protocol: "udp"}
			err := d.mapping(item, sub, "a flow", []field{
				{"protocol", value(d, &f.Protocol, "tcp or udp", oneOf("a protocol", "tcp", "udp"))},
				{"rate", value(d, &f.Rate, "a bit rate such as 567.2kbps", parseBitRate)},
				{"pps", value(d, &f.PPS, "packets per second such as 175", parsePPS)},
			}, nil)
			list = append(list, f)
			return err
		})
	if err == nil && len(list) == 0 {
		return d.fail(n.Line, path, "no flows; give at least one, or leave %s out for seed 003's", path[strings.LastIndex(path, ".")+1:])
	}
	*dst = list
	return err
}

func (s *Subscribers) validate(v *validator, path string, sc *Scenario) {
	counts := yamlfile.KeyPath(path, "counts")
	v.distinct(counts, s.Counts)
	sessions := sc.Sessions.Count
	for i, n := range s.Counts {
		if n > sessions {
			v.add(yamlfile.ItemPath(counts, i), "%d subscribers are more than the %d sessions%s; each subscriber has one session, so raise sessions.count",
				n, sessions, v.onLine("sessions.count"))
		}
	}
	v.flows(yamlfile.KeyPath(path, "uplink"), s.Uplink)
	v.flows(yamlfile.KeyPath(path, "downlink"), s.Downlink)
}

// flows checks that each flow has both rates and that their ratio, the
// packet length, fits the generator's stamp and the MTU.
func (v *validator) flows(path string, list []Flow) {
	for i, f := range list {
		at := yamlfile.ItemPath(path, i)
		switch {
		case f.Rate.BPS <= 0:
			v.add(at, "the flow has no rate; add rate: with its bit rate, e.g. 567.2kbps")
		case f.PPS <= 0:
			v.add(at, "the flow has no pps; add pps: with its packets per second, e.g. 175")
		default:
			v.flowPacket(at, f)
		}
	}
}

func (v *validator) flowPacket(path string, f Flow) {
	least, most := headerBytes[f.Protocol]+MinPayload, headerBytes["udp"]+MaxPayload
	if n := f.PacketBytes(); n < least || n > most {
		v.add(path, "%s at %s pps makes %d-byte packets; want %d to %d bytes: change rate or pps",
			f.Rate, formatFloat(f.PPS), n, least, most)
	}
}

func (s *Subscribers) setup() string {
	return fmt.Sprintf("%s subscribers, %s each", sizesText(s.Counts), s.Duration)
}

func (s *Subscribers) derivedName() string { return "subscribers " + sizesText(s.Counts) }

func (s *Subscribers) estimate() time.Duration { return times(len(s.Counts), s.Duration) }

// needs: a session per subscriber at the largest count.
func (s *Subscribers) needs() Needs {
	return Needs{Sessions: slices.Max(s.Counts), Reference: true}
}
