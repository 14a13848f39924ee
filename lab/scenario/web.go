package scenario

import (
	"fmt"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// KindWeb is seed 003's subscriber model with real connections: HTTP over
// TCP and UDP at the model's rates, from UEs whose own stacks send.
const KindWeb = "web"

// Web runs the subscriber model for each count in turn, with real UEs
// (lab/gnb): each subscriber keeps fetching from the lab's web server in
// the DN over HTTP/TCP, its TCP flows' rates up and down, and sends and
// receives its UDP flows at their rates and packet lengths. Beside each
// count it measures the ceiling: the same without tunnel or UPF.
type Web struct {
	Counts   []int
	Duration time.Duration // per count
	Uplink   []Flow        // per subscriber; TCP flows by their rate only
	Downlink []Flow
	Ceiling  bool
}

func defaultWeb() Settings {
	return &Web{Counts: []int{100, 500, 1000, 2000}, Duration: 10 * time.Second,
		Uplink: SeedUplink, Downlink: SeedDownlink, Ceiling: true}
}

func (w *Web) fields(d *decoder) []field {
	return []field{
		{"counts", values(d, &w.Counts, "100, 500, 1000, 2000", parseCount(countRange{1, MaxSubscribers}))},
		{"duration", value(d, &w.Duration, "a duration such as 10s", parseDuration)},
		{"uplink", func(n *yaml.Node, path string) error { return d.flows(n, path, &w.Uplink) }},
		{"downlink", func(n *yaml.Node, path string) error { return d.flows(n, path, &w.Downlink) }},
		{"ceiling", value(d, &w.Ceiling, "true or false", yamlfile.ParseBool)},
	}
}

// MaxSubscribers bounds a web step's counts: each subscriber is a TCP
// connection and a UDP socket each way in the lab's own process.
const MaxSubscribers = 10_000

func (w *Web) validate(v *validator, path string, s *Scenario) {
	v.distinct(yamlfile.KeyPath(path, "counts"), w.Counts)
	v.realUEs(path, "counts", w.Counts, s)
	v.flows(yamlfile.KeyPath(path, "uplink"), w.Uplink)
	v.flows(yamlfile.KeyPath(path, "downlink"), w.Downlink)
}

func (w *Web) setup() string {
	return fmt.Sprintf("%s subscribers, real HTTP/TCP and UDP, %s each", sizesText(w.Counts), w.Duration)
}

func (w *Web) derivedName() string { return "web " + sizesText(w.Counts) }

func (w *Web) estimate() time.Duration {
	d := times(len(w.Counts), w.Duration)
	if w.Ceiling {
		d *= 2
	}
	return d
}

// needs: a session per subscriber at the largest count.
func (w *Web) needs() Needs { return Needs{Sessions: slices.Max(w.Counts)} }

// Rates are a direction's flows summed up: the HTTP bits per second of
// its TCP flows, and its UDP flows as they are.
func Rates(flows []Flow) (httpBPS float64, udp []Flow) {
	for _, f := range flows {
		if f.Protocol == "tcp" {
			httpBPS += f.Rate.BPS
		} else {
			udp = append(udp, f)
		}
	}
	return httpBPS, udp
}
