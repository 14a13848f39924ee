package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/runner"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

func init() {
	register("cbr", "goodput at a constant rate or flood, by payload size, as ocbr prints it", runCBR)
}

// cbrRun is what `upflab cbr` was asked to do: a scenario's cbr step.
type cbrRun struct {
	name string
	t    runner.Traffic
	path tgen.Path
	c    scenario.CBR
}

// maxCBRSizes bounds the sizes of one run, each sent for the duration.
const maxCBRSizes = 64

func runCBR(args []string) error {
	r, err := parseCBR(args)
	if err != nil {
		return err
	}
	return inLab(r.name, func(ctx context.Context, lab topo.Lab) error { return r.run(ctx, os.Stdout, lab) })
}

func parseCBR(args []string) (cbrRun, error) {
	fs := flags("cbr", "[flags]")
	var tf trafficFlags
	tf.register(fs)
	r := cbrRun{c: scenario.CBR{Sizes: []int{64, 256, 512, 1024, 1400}, Rate: scenario.Rate{Max: true}, Duration: 2 * time.Second}}
	fs.Func("sizes", "UDP payload bytes, a comma-separated list (default 64,256,512,1024,1400)", sizesFlag(&r.c.Sizes))
	fs.Func("rate", "packets or bits per second: 100kpps, 500Mbps (frames as sent); flood (default): as fast as the generator goes", rateFlag(&r.c.Rate))
	fs.Func("duration", "send each size for `DURATION` (default 2s)", durationFlag(&r.c.Duration))
	fs.Func("through", throughHelp, throughFlag(&r.path))
	if err := parseAll(fs, args); err != nil {
		return r, err
	}
	r.name = tf.name
	if err := checkSizes(r.c.Sizes); err != nil {
		return r, err
	}
	var err error
	r.t, err = tf.traffic(fs, nil) // the step sends one size at a time
	return r, err
}

// checkSizes refuses sizes the generator cannot send, and sizes twice.
func checkSizes(sizes []int) error {
	if len(sizes) > maxCBRSizes {
		return fmt.Errorf("%w: --sizes: %d sizes; %d at the most", errUsage, len(sizes), maxCBRSizes)
	}
	for i, s := range sizes {
		if err := checkPayload(s); err != nil {
			return fmt.Errorf("%w: --sizes: %v", errUsage, err)
		}
		if slices.Contains(sizes[:i], s) {
			return fmt.Errorf("%w: --sizes: %d twice; give each size once", errUsage, s)
		}
	}
	return nil
}

// run measures every size, a line each as it comes.
func (r cbrRun) run(ctx context.Context, w io.Writer, lab topo.Lab) error {
	if r.path == tgen.Wire {
		ref, err := runner.AttachReference(lab)
		if err != nil {
			return err
		}
		defer ref.Close()
	}
	genNS, genDev, sinkNS, sinkDev := r.t.Ends(lab)
	fmt.Fprintf(w, "upflab cbr: %s from %s/%s through %s to %s/%s: %s, %s, %v a size\n\n",
		r.t.Direction, genNS, genDev, pathText(r.path), sinkNS, sinkDev, sessionsText(r.t), cbrRateText(r.c.Rate), r.c.Duration)
	points, err := runner.CBR(ctx, lab, r.t, r.path, r.c, func(p report.CBR) { fmt.Fprintln(w, cbrLine(p)) })
	if err != nil {
		return err
	}
	for _, p := range points {
		if p.Received > 0 {
			return nil
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("nothing arrived: does the UPF have these sessions (--sessions-file, or --sessions, --ue, --teid-ul, --teid-dl as it has them)? --through reference measures the path without it")
}

// cbrLine is ocbr's line for a flow, for a size: what arrived, and the
// goodput (payload bits).
func cbrLine(p report.CBR) string {
	ms := int64(p.Seconds * 1000)
	return fmt.Sprintf("Size %4d: %9d SDUs (%12d bytes) in %9d ms => %9.4f p/s, %9.4f Mb/s; %d sent, %s%% loss",
		p.Size, p.Received, p.Received*uint64(p.Size), ms, p.PPS, p.Mbps, p.Sent, lossPercent(p.Sent-min(p.Received, p.Sent), p.Sent))
}

func cbrRateText(r scenario.Rate) string {
	if r.Max {
		return "flood"
	}
	return r.String()
}
