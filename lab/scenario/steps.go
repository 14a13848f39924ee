package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
)

// The kinds of step.
const (
	KindThroughput  = "throughput"  // a fixed or flat-out load for a while
	KindNDR         = "ndr"         // the highest rate within a loss tolerance (RFC 2544 §26.1)
	KindPing        = "ping"        // round-trip time through the UPF, by size
	KindCBR         = "cbr"         // goodput at a constant rate or flood, by size
	KindSubscribers = "subscribers" // seed 003's subscriber traffic model, by subscriber count
	KindChurn       = "churn"       // sessions deleted and established again, per second
	KindRestart     = "restart"     // the UPF restarted under steady traffic
)

// Kinds lists the step kinds in the order the docs give them.
var Kinds = []string{KindThroughput, KindNDR, KindPing, KindCBR, KindSubscribers, KindChurn, KindRestart}

// Step is one measurement of a scenario. Exactly the field of its Kind is set.
type Step struct {
	Kind string
	// Name is unique in the scenario: reports and `upflab compare` match
	// steps by it. Derived from the step when the file gives none.
	Name string

	Throughput  *Throughput
	NDR         *NDR
	Ping        *Ping
	CBR         *CBR
	Subscribers *Subscribers
	Churn       *Churn
	Restart     *Restart
}

// Direction is which way traffic goes.
type Direction string

// Directions. Both runs uplink, then downlink, each on its own: the way
// the published UPF comparisons measure, so that each direction has its own
// loss and CPU.
const (
	Uplink   Direction = "uplink"   // gNB to DN: GTP-U in on N3, IP out on N6
	Downlink Direction = "downlink" // DN to gNB: IP in on N6, GTP-U out on N3
	Both     Direction = "both"
)

// Each gives the directions to run, in order.
func (d Direction) Each() []Direction {
	if d == Both {
		return []Direction{Uplink, Downlink}
	}
	return []Direction{d}
}

// Throughput sends at one rate for a while, in each direction asked for.
type Throughput struct {
	Direction Direction
	Size      Size
	Rate      Rate
	Duration  time.Duration // per direction
}

// NDR searches for the highest rate whose loss stays within LossTolerance,
// by binary search between 0 and MaxRate (RFC 2544 §26.1). With a
// tolerance of 0 it is the non-drop rate; with e.g. 0.5 %, a partial-drop
// rate (PDR).
type NDR struct {
	Direction     Direction
	Size          Size
	LossTolerance float64 // percent
	// Resolution ends the search when the highest passing and the lowest
	// failing rate are this close.
	Resolution    Rate
	MaxIterations int
	Trial         time.Duration // each trial sends this long
	// MaxRate is where the search starts; Max is the generator's flat-out
	// rate, measured by the first trial.
	MaxRate Rate
}

// Ping measures round-trip times from a UE to the DN host, like ping and
// oping: Count echo requests of each size, Interval apart.
type Ping struct {
	Sizes    []int // ICMP payload bytes
	Count    int   // per size
	Interval time.Duration
}

// CBR sends at a constant rate, or flood, for Duration per size, like ocbr,
// and measures the goodput that arrives.
type CBR struct {
	Sizes    []int
	Rate     Rate
	Duration time.Duration // per size
}

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

// Churn deletes sessions and establishes them again, PerSecond of them
// each second, for Duration; the rest keep their traffic rules.
type Churn struct {
	PerSecond int
	Duration  time.Duration
}

// newStep is a step of kind with that kind's defaults, or nil for a kind
// that does not exist.
func newStep(kind string) *Step {
	st := &Step{Kind: kind}
	switch kind {
	case KindThroughput:
		st.Throughput = &Throughput{Direction: Both, Size: Size{Bytes: 1400}, Rate: Rate{Max: true}, Duration: 5 * time.Second}
	case KindNDR:
		st.NDR = &NDR{Direction: Both, Size: Size{Bytes: 1400}, Resolution: Rate{PPS: 10_000},
			MaxIterations: 10, Trial: 2 * time.Second, MaxRate: Rate{Max: true}}
	case KindPing:
		st.Ping = &Ping{Sizes: []int{64, 1400}, Count: 100, Interval: 10 * time.Millisecond}
	case KindCBR:
		st.CBR = &CBR{Sizes: []int{64, 256, 512, 1024, 1400}, Rate: Rate{Max: true}, Duration: 2 * time.Second}
	case KindSubscribers:
		st.Subscribers = &Subscribers{Counts: []int{100, 500, 1000, 2000}, Duration: 10 * time.Second,
			Uplink: SeedUplink, Downlink: SeedDownlink}
	case KindChurn:
		st.Churn = &Churn{PerSecond: 100, Duration: 10 * time.Second}
	case KindRestart:
		st.Restart = defaultRestart()
	default:
		return nil
	}
	return st
}

// complete says whether the step has the settings of its kind.
func (st *Step) complete() bool {
	set := map[string]bool{
		KindThroughput: st.Throughput != nil, KindNDR: st.NDR != nil, KindPing: st.Ping != nil,
		KindCBR: st.CBR != nil, KindSubscribers: st.Subscribers != nil, KindChurn: st.Churn != nil,
		KindRestart: st.Restart != nil,
	}
	return set[st.Kind]
}

// Setup says in a few words what the step does, for reports.
func (st *Step) Setup() string {
	switch st.Kind {
	case KindThroughput:
		t := st.Throughput
		return fmt.Sprintf("%s, %s, %s, %s each", t.Direction, bytesText(t.Size.String()), t.Rate, t.Duration)
	case KindNDR:
		n := st.NDR
		return fmt.Sprintf("%s, %s, loss <= %s%%, %s trials, at most %d, resolution %s", n.Direction,
			bytesText(n.Size.String()), formatFloat(n.LossTolerance), n.Trial, n.MaxIterations, n.Resolution)
	case KindPing:
		p := st.Ping
		return fmt.Sprintf("%s, %d each, %s apart", bytesText(sizesText(p.Sizes)), p.Count, p.Interval)
	case KindCBR:
		c := st.CBR
		return fmt.Sprintf("%s, %s, %s each", bytesText(sizesText(c.Sizes)), c.Rate, c.Duration)
	case KindSubscribers:
		s := st.Subscribers
		return fmt.Sprintf("%s subscribers, %s each", sizesText(s.Counts), s.Duration)
	case KindChurn:
		return fmt.Sprintf("%d/s for %s", st.Churn.PerSecond, st.Churn.Duration)
	case KindRestart:
		return st.Restart.setup()
	}
	return ""
}

// derivedName names a step the file does not name.
func (st *Step) derivedName() string {
	switch st.Kind {
	case KindThroughput:
		t := st.Throughput
		return fmt.Sprintf("throughput %s %s %s", t.Direction, bytesText(t.Size.String()), t.Rate)
	case KindNDR:
		n := st.NDR
		if n.LossTolerance > 0 {
			return fmt.Sprintf("pdr %s%% %s %s", formatFloat(n.LossTolerance), n.Direction, bytesText(n.Size.String()))
		}
		return fmt.Sprintf("ndr %s %s", n.Direction, bytesText(n.Size.String()))
	case KindPing:
		return "ping " + bytesText(sizesText(st.Ping.Sizes))
	case KindCBR:
		return fmt.Sprintf("cbr %s %s", bytesText(sizesText(st.CBR.Sizes)), st.CBR.Rate)
	case KindSubscribers:
		return "subscribers " + sizesText(st.Subscribers.Counts)
	case KindChurn:
		return fmt.Sprintf("churn %d/s", st.Churn.PerSecond)
	case KindRestart:
		return st.Restart.derivedName()
	}
	return st.Kind
}

// fillNames gives every unnamed step its derived name.
func (s *Scenario) fillNames() {
	for i := range s.Steps {
		if s.Steps[i].Name == "" {
			s.Steps[i].Name = s.Steps[i].derivedName()
		}
	}
}

// Header is what a report says about the step.
func (st *Step) Header() report.Header {
	return report.Header{Name: st.Name, Kind: st.Kind, Setup: st.Setup()}
}

// ComparedToReference says whether the step runs also through the
// reference forwarder (see Scenario.Reference).
func (st *Step) ComparedToReference() bool {
	return st.Kind == KindThroughput || st.Kind == KindNDR || st.Kind == KindSubscribers
}

// Estimate is the step's sending time at most.
func (st *Step) Estimate() time.Duration {
	switch st.Kind {
	case KindThroughput:
		return times(len(st.Throughput.Direction.Each()), st.Throughput.Duration)
	case KindNDR:
		n := st.NDR
		return times(len(n.Direction.Each())*n.MaxIterations, n.Trial)
	case KindPing:
		return times(len(st.Ping.Sizes)*st.Ping.Count, st.Ping.Interval)
	case KindCBR:
		return times(len(st.CBR.Sizes), st.CBR.Duration)
	case KindSubscribers:
		return times(len(st.Subscribers.Counts), st.Subscribers.Duration)
	case KindChurn:
		return st.Churn.Duration
	case KindRestart:
		return st.Restart.Duration // both directions at once
	}
	return 0
}

func times(n int, d time.Duration) time.Duration { return time.Duration(n) * d }

// sizesText writes a list of numbers as its span: "64-1400", or "64".
func sizesText(list []int) string {
	if len(list) == 0 {
		return ""
	}
	lo, hi := list[0], list[0]
	for _, n := range list {
		lo, hi = min(lo, n), max(hi, n)
	}
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

// bytesText adds the unit to a size, unless it is the IMIX.
func bytesText(size string) string {
	if strings.EqualFold(size, "imix") {
		return "imix"
	}
	return size + " B"
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
