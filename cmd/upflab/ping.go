package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/lab/probe"
	"github.com/sluice-upf/sluice/lab/topo"
)

func init() {
	register("ping", "round-trip time through the UPF, from the gNB to a DN host", runPing)
}

// runPing pings from the lab's gNB through a session the UPF already has
// (set up by `upflab smf` or a scenario): --ue and the session's TEIDs say
// which.
func runPing(args []string) error {
	fs := flags("ping", "--ue ADDRESS --teid-ul TEID --teid-dl TEID [flags]")
	name := fs.String("name", topo.DefaultName, "the lab's name")
	o := probe.PingOptions{Sizes: []int{56}}
	fs.TextVar(&o.UE, "ue", o.UE, "the session's UE address (required)")
	fs.Func("teid-ul", "the UPF's uplink TEID of the session, e.g. 0x100 (required)", teidFlag(&o.TEIDUplink))
	fs.Func("teid-dl", "the gNB's downlink TEID of the session, as in its FAR (required)", teidFlag(&o.TEIDDownlink))
	fs.TextVar(&o.GNB, "gnb", topo.GNBN3, "the gNB address the session's downlink goes to")
	fs.TextVar(&o.UPF, "upf", topo.UPFN3, "the UPF's N3 address")
	fs.TextVar(&o.Target, "target", topo.DNHost, "the DN host to ping")
	qfi := fs.Uint("qfi", 9, "the QFI of the uplink G-PDUs")
	fs.IntVar(&o.Count, "count", 10, "echo requests for each size")
	fs.DurationVar(&o.Interval, "interval", time.Second, "between requests; 0 sends them back to back")
	fs.Func("sizes", fmt.Sprintf("ICMP payload bytes, a comma-separated list of 0 to %d (default 56)", probe.MaxPayload), sizesFlag(&o.Sizes))
	fs.DurationVar(&o.Timeout, "timeout", time.Second, "how long to wait for replies after the last request")
	quiet := fs.Bool("quiet", false, "only the statistics, no line for each reply")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if !o.UE.IsValid() || o.TEIDUplink == 0 || o.TEIDDownlink == 0 {
		return fmt.Errorf("%w: --ue, --teid-ul and --teid-dl are required: the session to ping through", errUsage)
	}
	if *qfi < 1 || *qfi > 63 {
		return fmt.Errorf("%w: --qfi %d: want 1 to 63", errUsage, *qfi)
	}
	o.QFI = uint8(*qfi)

	lab, err := topo.Open(*name)
	if err != nil {
		return err
	}
	o.Namespace = lab.GNB
	// The gNB and the DN are the kernel here: without an XDP program on
	// their ends of the veths (or GRO, which topo up turns on but a user
	// may have turned off), they would drop what the UPF's XDP sends.
	for _, end := range [][2]string{{lab.GNB, topo.DevN3}, {lab.DN, topo.DevN6}} {
		c, err := lab.AttachPass(end[0], end[1])
		if err != nil {
			return err
		}
		defer c.Close()
	}
	if !*quiet {
		o.OnReply = func(r probe.Reply) {
			fmt.Printf("%d bytes from %s: seq=%d time=%.3f ms\n", r.Size, o.Target, r.Seq, float64(r.RTT)/float64(time.Millisecond))
		}
	}
	return pingAndSummarize(os.Stdout, o)
}

// pingAndSummarize runs the probe until done or interrupted and prints
// the statistics either way; no reply at all is an error that says what
// to look at.
func pingAndSummarize(w io.Writer, o probe.PingOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fmt.Fprintf(w, "Pinging %s from %s through the UPF at %s (TEID %#x up, %#x down), payload %s bytes:\n\n",
		o.Target, o.UE, o.UPF, o.TEIDUplink, o.TEIDDownlink, joinInts(o.Sizes))
	res, err := probe.Ping(ctx, o)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := res.Write(w, o.Target.String()); err != nil {
		return err
	}
	if res.Total.Received == 0 && res.Total.Sent > 0 {
		return fmt.Errorf("no reply: does the UPF have a session for UE %s with uplink TEID %#x, and downlink to %s in TEID %#x?",
			o.UE, o.TEIDUplink, o.GNB, o.TEIDDownlink)
	}
	return nil
}

// teidFlag parses a TEID, in decimal or 0x hex, into t.
func teidFlag(t *uint32) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseUint(s, 0, 32)
		if err != nil {
			return fmt.Errorf("want a 32-bit number such as 0x100")
		}
		*t = uint32(v)
		return nil
	}
}

// sizesFlag parses a comma-separated list of payload sizes into s.
func sizesFlag(s *[]int) func(string) error {
	return func(list string) error {
		*s = nil
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return fmt.Errorf("%q: want sizes in bytes such as 56,512,1400", f)
			}
			*s = append(*s, n)
		}
		return nil
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
