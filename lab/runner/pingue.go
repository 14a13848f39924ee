package runner

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/sluice-upf/sluice/lab/gnb"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/topo"
)

// pingFromUE runs the system's ping from the first UE through the gNB's
// tunnel, a run per size, and keeps ping's own summary.
func (r *runner) pingFromUE(ctx context.Context, st scenario.Step, p *scenario.Ping) error {
	g, err := r.attachGNB(1)
	if err != nil {
		return err
	}
	defer g.Close()
	var pings []report.Ping
	defer func() { r.run.AddPing(st.Header(), pings...) }()
	for _, size := range p.Sizes {
		x, err := systemPing(ctx, g, size, p)
		if err != nil {
			return err
		}
		r.progress("  %d B: %d sent, %d received, rtt avg %.3f ms", size, x.Transmitted, x.Received, x.AvgMs)
		pings = append(pings, x)
	}
	return nil
}

// systemPing runs ping -q in the UE namespace and reads its summary.
func systemPing(ctx context.Context, g *gnb.GNB, size int, p *scenario.Ping) (report.Ping, error) {
	target := topo.DNHost.String()
	args := []string{"-q", "-n", "-c", strconv.Itoa(p.Count), "-s", strconv.Itoa(size),
		"-i", strconv.FormatFloat(p.Interval.Seconds(), 'f', -1, 64), "-W", "2", "-I", g.UEs()[0].Addr.String(), target}
	ctx, cancel := withTimeout(ctx, time.Duration(p.Count)*(p.Interval+time.Millisecond))
	defer cancel()
	// ping exits with 1 when answers are missing: its summary says how many.
	out, err := g.Command(ctx, "ping", args...).Output()
	x, perr := parsePingSummary(target, size, string(out))
	if perr != nil {
		return x, fmt.Errorf("ping %v: %v, %w: %s", args, err, perr, out)
	}
	return x, nil
}

var (
	pingCounts = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received,.* time (\d+)ms`)
	pingRTT    = regexp.MustCompile(`rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms`)
)

// parsePingSummary reads iputils ping's last two lines.
func parsePingSummary(target string, size int, out string) (report.Ping, error) {
	x := report.Ping{Target: target, Size: size}
	c := pingCounts.FindStringSubmatch(out)
	if c == nil {
		return x, fmt.Errorf("no summary")
	}
	x.Transmitted, _ = strconv.Atoi(c[1])
	x.Received, _ = strconv.Atoi(c[2])
	x.TimeMs, _ = strconv.ParseFloat(c[3], 64)
	if x.Transmitted > 0 {
		x.LossPct = 100 * float64(x.Transmitted-x.Received) / float64(x.Transmitted)
	}
	if t := pingRTT.FindStringSubmatch(out); t != nil {
		for i, dst := range []*float64{&x.MinMs, &x.AvgMs, &x.MaxMs, &x.MdevMs} {
			*dst, _ = strconv.ParseFloat(t[i+1], 64)
		}
	}
	return x, nil
}
