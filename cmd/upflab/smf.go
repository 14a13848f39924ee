package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/lab/smf"
	"github.com/sluice-upf/sluice/lab/topo"
)

func init() {
	register("smf", "associate with a UPF and establish, modify and delete sessions over PFCP", runSMF)
}

// smfRun is what `upflab smf` was asked to do.
type smfRun struct {
	cfg      smf.Config
	sessions int
	pathSw   bool
	churn    smf.Churn
	hold     time.Duration
	delete   bool
	jsonOut  string
	timeout  time.Duration
}

func runSMF(args []string) error {
	r, err := parseSMF(args)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	// gen and sink wait for the file: never let them take an earlier run's.
	if r.jsonOut != "" {
		if err := os.Remove(r.jsonOut); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--json: %w", err)
		}
	}

	c, err := smf.Dial(r.cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Associate(ctx); err != nil {
		return err
	}
	up := c.UPF()
	fmt.Printf("associated with %v (node %s, FTUP %v) as %v; profile %s, window %d\n",
		r.cfg.UPF, up.NodeID, up.FTUP, r.cfg.NodeID, r.cfg.Profile, r.cfg.Window)
	err = r.drive(ctx, c)
	if r.delete {
		// Even when interrupted: leave the UPF as it was found, within N1 T1s a request.
		err = errors.Join(err, show(c.Delete(context.Background())))
	}
	k := c.Counters()
	fmt.Printf("answered the UPF: %d session reports, %d heartbeats, %d node reports; %d stray answers, %d undecodable\n",
		k.Reports, k.Heartbeats, k.NodeReports, k.Stray, k.Undecodable)
	if r.cfg.Heartbeat > 0 {
		fmt.Printf("our heartbeats: %d answered, %d lost, %d UPF restarts seen\n", k.HeartbeatsAnswered, k.HeartbeatsLost, k.UPFRestarts)
	}
	return err
}

// drive establishes, switches, churns, writes and holds, as asked,
// stopping at the first failure.
func (r smfRun) drive(ctx context.Context, c *smf.Client) error {
	phases, err := c.Establish(ctx, r.sessions)
	for _, p := range phases {
		fmt.Println(" ", p)
	}
	if err != nil {
		return err
	}
	if r.pathSw {
		for _, to := range []netip.Addr{topo.GNB2N3, r.cfg.GNB} {
			if err := show(c.SwitchPath(ctx, to)); err != nil {
				return err
			}
		}
	}
	if r.churn.PerSecond > 0 {
		res, err := c.Churn(ctx, r.churn)
		for _, p := range res.Phases() {
			fmt.Println(" ", p)
		}
		if res.Late > 0 {
			fmt.Printf("  churn: %d of %d intervals sent late (window full or machine busy)\n", res.Late, res.Intervals)
		}
		if err != nil {
			return err
		}
	}
	if r.jsonOut != "" {
		if err := writeSessions(r.jsonOut, c.Sessions()); err != nil {
			return err
		}
		fmt.Printf("%d sessions in %s, for upflab gen and sink --sessions-file\n", len(c.Sessions()), r.jsonOut)
	}
	if r.hold > 0 {
		fmt.Printf("holding %d sessions for %v\n", len(c.Sessions()), r.hold)
		select {
		case <-time.After(r.hold):
		case <-ctx.Done():
		}
	}
	return nil
}

func show(p smf.Phase, err error) error {
	fmt.Println(" ", p)
	return err
}

func parseSMF(args []string) (smfRun, error) {
	fs := flags("smf", "[flags]")
	lab := fs.String("lab", topo.DefaultName, "the lab: the client runs in its namespace `NAME`-smf")
	upf := fs.String("upf", netip.AddrPortFrom(topo.UPFN4, smf.PFCPPort).String(), "the UPF's PFCP `ADDR:PORT`")
	local := fs.String("local", netip.AddrPortFrom(topo.SMFN4, smf.PFCPPort).String(), "our PFCP `ADDR:PORT` (and Node ID)")
	sessions := fs.Int("sessions", 1000, "sessions to establish")
	profile := fs.String("profile", string(smf.Plain), "how sessions are built: "+profileNames())
	window := fs.Int("window", 64, "requests in flight at the most")
	t1 := fs.Duration("t1", 3*time.Second, "retransmission timer T1")
	n1 := fs.Int("n1", 3, "sends of a request before it is given up (N1)")
	heartbeat := fs.Duration("heartbeat", 0, "send the UPF a Heartbeat Request this often (0: never)")
	give := fs.Bool("give-teids", false, "give the uplink F-TEIDs instead of asking the UPF to choose")
	pathSw := fs.Bool("switch", false, "switch every session's downlink to the second gNB ("+topo.GNB2N3.String()+") and back")
	churn := fs.Int("churn", 0, "then establish, switch and delete `PER_SECOND` sessions of each per second")
	duration := fs.Duration("duration", 10*time.Second, "how long the churn lasts")
	hold := fs.Duration("hold", 0, "then stay associated this long, answering the UPF (while traffic runs)")
	del := fs.Bool("delete", false, "delete every session at the end")
	jsonOut := fs.String("json", "", "write the sessions (SEIDs, UE addresses, TEIDs, QFI) to `FILE` as JSON once they are established; an earlier FILE goes at the start")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on the whole run (deletion at the end aside)")
	if err := parseAll(fs, args); err != nil {
		return smfRun{}, err
	}
	r := smfRun{sessions: *sessions, pathSw: *pathSw, hold: *hold, delete: *del, jsonOut: *jsonOut, timeout: *timeout,
		churn: smf.Churn{PerSecond: *churn, Duration: *duration}}
	r.cfg = smf.Config{Namespace: topo.NamesOf(*lab).SMF, Profile: smf.Profile(*profile), Window: *window,
		T1: *t1, N1: *n1, Heartbeat: *heartbeat, GiveUplinkTEIDs: *give}
	var err error
	if r.cfg.UPF, err = netip.ParseAddrPort(*upf); err != nil {
		return r, fmt.Errorf("%w: --upf: %v", errUsage, err)
	}
	if r.cfg.Local, err = netip.ParseAddrPort(*local); err != nil {
		return r, fmt.Errorf("%w: --local: %v", errUsage, err)
	}
	r.cfg.NodeID, r.cfg.GNB = r.cfg.Local.Addr(), topo.GNBN3
	return r, r.check()
}

// check refuses values that cannot run.
func (r smfRun) check() error {
	switch {
	case !slices.Contains(smf.Profiles, r.cfg.Profile):
		return fmt.Errorf("%w: --profile %q: want %s", errUsage, r.cfg.Profile, profileNames())
	case r.sessions < 0 || r.cfg.Window < 1 || r.cfg.N1 < 1 || r.cfg.T1 <= 0:
		return fmt.Errorf("%w: --sessions must be at least 0, --window and --n1 at least 1, --t1 above 0", errUsage)
	case r.churn.PerSecond < 0 || r.churn.PerSecond > 0 && r.churn.Duration <= 0:
		return fmt.Errorf("%w: --churn takes a rate of 0 or more, with a --duration above 0", errUsage)
	case r.timeout <= 0:
		return fmt.Errorf("%w: --timeout must be above 0", errUsage)
	}
	return nil
}

func profileNames() string {
	names := make([]string, len(smf.Profiles))
	for i, p := range smf.Profiles {
		names[i] = string(p)
	}
	return strings.Join(names, "|")
}

// writeSessions writes the sessions to path whole or not at all: gen and
// sink read it as soon as it is there.
func writeSessions(path string, s []smf.Session) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
