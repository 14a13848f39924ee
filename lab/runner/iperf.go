package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluice-upf/sluice/lab/cpu"
	"github.com/sluice-upf/sluice/lab/gnb"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

// iperfKind runs iperf3 from real UEs through the UPF, and the same
// through the direct link for the ceiling; under each MBR in turn, if
// the step has some.
type iperfKind struct{}

func (iperfKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	p := st.Settings.(*scenario.Iperf)
	most := slices.Max(p.UEs)
	g, err := r.attachGNB(most)
	if err != nil {
		return err
	}
	defer g.Close()
	stop, err := iperfServers(r.lab, most)
	if err != nil {
		return err
	}
	defer stop()
	var ceilings map[string]*report.Iperf
	if p.Ceiling {
		if ceilings, err = r.iperfCeilings(ctx, g, p); err != nil {
			return err
		}
	}
	mbrs := p.MBR
	if len(mbrs) == 0 {
		mbrs = []scenario.Rate{{}}
	}
	var out []report.Iperf
	defer func() { r.run.AddIperf(st.Header(), out...) }()
	for _, mbr := range mbrs {
		if err := r.setMBR(ctx, most, mbr); err != nil {
			return err
		}
		err := r.iperfEach(ctx, g, p, "UPF", func(x report.Iperf) {
			x.MBRMbps = mbr.BPS / 1e6
			x.Ceiling = ceilings[iperfLoadKey(x)]
			out = append(out, x)
		})
		if err != nil {
			return err
		}
	}
	if len(p.MBR) > 0 {
		return r.setMBR(ctx, most, scenario.Rate{})
	}
	return nil
}

// iperfCeilings measures every load of the step through the direct link.
func (r *runner) iperfCeilings(ctx context.Context, g *gnb.GNB, p *scenario.Iperf) (map[string]*report.Iperf, error) {
	if err := usePath(g, true); err != nil {
		return nil, err
	}
	out := map[string]*report.Iperf{}
	err := r.iperfEach(ctx, g, p, "ceiling", func(x report.Iperf) { out[iperfLoadKey(x)] = &x })
	return out, errors.Join(err, usePath(g, false))
}

func iperfLoadKey(x report.Iperf) string {
	return fmt.Sprintf("%d %s %s", x.UEs, x.Protocol, x.Direction)
}

// setMBR gives the first n sessions the MBR rate each way (none: zero).
func (r *runner) setMBR(ctx context.Context, n int, rate scenario.Rate) error {
	var b *smf.Bitrate
	if rate.BPS > 0 {
		kbps := uint64(rate.BPS / 1000)
		b = &smf.Bitrate{UplinkKbps: kbps, DownlinkKbps: kbps}
	}
	if _, err := r.smf.SetMBR(ctx, n, b); err != nil {
		return fmt.Errorf("MBR %v: %w", rate, err)
	}
	return nil
}

// iperfEach runs each count of UEs, protocol and direction once, through
// path (for the progress lines), and hands each result to add.
func (r *runner) iperfEach(ctx context.Context, g *gnb.GNB, p *scenario.Iperf, path string, add func(report.Iperf)) error {
	for _, n := range p.UEs {
		for _, proto := range p.Protocols {
			for _, dir := range p.Direction.Each() {
				x, err := r.iperfOnce(ctx, g, p, n, proto, dir)
				if err != nil {
					return err
				}
				r.progress("  %s, %d UEs, %s %s: %.1f Mbit/s, %d retransmits, %.2f%% lost", path, n, proto, dir, x.Mbps, x.Retransmits, x.LossPct)
				add(x)
			}
		}
	}
	return nil
}

// iperfOnce runs iperf3 from n UEs at once, each to its own server.
func (r *runner) iperfOnce(ctx context.Context, g *gnb.GNB, p *scenario.Iperf, n int, proto string, dir scenario.Direction) (report.Iperf, error) {
	x := report.Iperf{Protocol: proto, Direction: string(dir), UEs: n, Streams: p.Streams, PerUEMbps: make([]float64, n)}
	sample, err := cpu.Start(r.upf.pid())
	if err != nil {
		return x, err
	}
	start := time.Now()
	sums := make([]iperfSum, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		args := iperfArgs(p, g.UEs()[i], i, proto, dir)
		wg.Go(func() { sums[i], errs[i] = runIperf(ctx, g, p.Duration, args) })
	}
	wg.Wait()
	x.Seconds = time.Since(start).Seconds()
	if usage, err := sample.Stop(); err == nil {
		x.CPU = report.CPUOf(usage)
	}
	if err := errors.Join(errs...); err != nil {
		return x, err
	}
	var sent, lost uint64
	for i, s := range sums {
		x.PerUEMbps[i] = s.Received.BitsPerSecond / 1e6
		x.Mbps += x.PerUEMbps[i]
		x.Retransmits += s.Sent.Retransmits
		sent, lost = sent+s.Sent.Packets, lost+s.Received.LostPackets
	}
	if proto == "udp" && sent > 0 {
		x.LossPct = 100 * float64(lost) / float64(sent)
	}
	return x, nil
}

// udpPayload fills the UEs' 1400-byte MTU: iperf3's own default, 32 KiB,
// would go in fragments.
const udpPayload = gnb.MTU - 20 - 8

func iperfArgs(p *scenario.Iperf, ue gnb.UE, i int, proto string, dir scenario.Direction) []string {
	args := []string{"-c", topo.DNHost.String(), "-B", ue.Addr.String(), "-p", strconv.Itoa(iperfPort + i),
		"-t", strconv.FormatFloat(p.Duration.Seconds(), 'f', -1, 64), "-P", strconv.Itoa(p.Streams), "-J"}
	if dir == scenario.Downlink {
		args = append(args, "-R")
	}
	if proto == "udp" {
		perStream := p.UDPRate.BPS / float64(p.Streams)
		args = append(args, "-u", "-b", strconv.FormatFloat(perStream, 'f', 0, 64), "-l", strconv.Itoa(udpPayload))
	}
	return args
}

// iperfSum is what iperf3 -J says of a test at its end, as far as needed:
// the sender's figures and the receiver's.
type iperfSum struct {
	Sent     iperfFigures `json:"sum_sent"`
	Received iperfFigures `json:"sum_received"`
}

type iperfFigures struct {
	Bytes         uint64  `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint64  `json:"retransmits"`  // TCP, the sender's
	Packets       uint64  `json:"packets"`      // UDP
	LostPackets   uint64  `json:"lost_packets"` // UDP, the receiver's
}

// runIperf runs one iperf3 client in the UE namespace.
func runIperf(ctx context.Context, g *gnb.GNB, d time.Duration, args []string) (iperfSum, error) {
	ctx, cancel := withTimeout(ctx, d)
	defer cancel()
	out, err := g.Command(ctx, "iperf3", args...).Output()
	var res struct {
		End   iperfSum `json:"end"`
		Error string   `json:"error"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil && err == nil {
		err = jerr
	}
	if res.Error != "" {
		err = errors.New(res.Error)
	}
	if err != nil {
		return iperfSum{}, fmt.Errorf("iperf3 %s: %w", strings.Join(args, " "), err)
	}
	return res.End, nil
}
