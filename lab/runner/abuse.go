package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/sluice-upf/sluice/lab/pkt"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// abuseKind checks a UPF under GTP-U that no session asked for, from the
// gNB's side: Echo Requests (TS 29.281 §7.2.1) and G-PDUs to TEIDs no
// session has, which a UPF answers with Error Indications (§7.3.1). Steady
// traffic both ways through the run's sessions is measured alone, then
// beside the floods: its loss and p99 latency may grow by the step's
// limits at most, and the Error Indications come at a bounded rate.
type abuseKind struct{}

// GTP-U message types (TS 29.281 §6.1).
const (
	gtpuEchoRequest  = 1
	gtpuEchoResponse = 2
	gtpuErrorInd     = 26
)

// abusePayload is the real traffic's: small, so that the floods, not the
// bytes, are what the UPF copes with.
const abusePayload = 64

func (abuseKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	a := st.Settings.(*scenario.Abuse)
	alone, err := r.steadyFor(ctx, a, nil)
	if err != nil {
		return fmt.Errorf("alone: %w", err)
	}
	var f *floods
	beside, err := r.steadyFor(ctx, a, func() (err error) { f, err = startFloods(ctx, r, a); return err })
	if f != nil {
		err = errors.Join(err, f.stop())
	}
	if err != nil {
		return fmt.Errorf("beside the floods: %w", err)
	}
	r.run.AddChecks(st.Header(), abuseChecks(a, alone, beside, f)...)
	return nil
}

// steadyFor sends the step's real traffic for its duration, with what
// start starts once it flows.
func (r *runner) steadyFor(ctx context.Context, a *scenario.Abuse, start func() error) ([]steadyResult, error) {
	traffic, err := r.startSteady(ctx, a.Rate.PPS, abusePayload, a.Duration+2*time.Second)
	if err != nil {
		return nil, err
	}
	if err := traffic.flowing(ctx, 0); err != nil {
		traffic.close()
		return nil, err
	}
	if start != nil {
		if err := start(); err != nil {
			traffic.close()
			return nil, err
		}
	}
	sleep(ctx, a.Duration)
	return traffic.stop()
}

// abuseChecks compare the real traffic beside the floods with it alone.
func abuseChecks(a *scenario.Abuse, alone, beside []steadyResult, f *floods) []report.Check {
	var out []report.Check
	for i, x := range beside {
		base := alone[i]
		out = append(out,
			report.AtMost("loss beside the floods, "+string(x.dir), x.lossPct-base.lossPct, a.Loss, "points").
				With(fmt.Sprintf("%s; alone %s", x.note(), base.note())),
			report.AtMost("p99 latency beside the floods, "+string(x.dir), float64(x.p99-base.p99)/1e3, float64(a.Latency)/1e3, "µs more").
				With(fmt.Sprintf("%s, alone %s", x.p99.Round(100*time.Nanosecond), base.p99.Round(100*time.Nanosecond))))
	}
	cpus := runtime.NumCPU()
	perCPU := float64(f.errorInds()) / f.took.Seconds() / float64(cpus)
	out = append(out, report.AtMost("Error Indications a second per CPU", perCPU, a.ErrorIndications.PPS, "").
		With(fmt.Sprintf("%d for %d G-PDUs to unknown TEIDs in %s on %d CPUs; %d Echo Responses to %d Echo Requests",
			f.errorInds(), f.unknownSent, f.took.Round(time.Millisecond), cpus, f.echoes.count("response"), f.echoSent)))
	// Floods that did not happen leave every line vacuous.
	asked := func(r scenario.Rate) float64 { return r.PPS * f.took.Seconds() * floodShare }
	if float64(f.unknownSent) < asked(a.UnknownRate) || float64(f.echoSent) < asked(a.EchoRate) {
		why := fmt.Sprintf("the host sent only %d G-PDUs to unknown TEIDs and %d Echo Requests in %s, less than a tenth of the floods asked for",
			f.unknownSent, f.echoSent, f.took.Round(time.Millisecond))
		for i := range out {
			if out[i].Verdict == report.Pass {
				out[i] = out[i].HostLimited(why + "; " + out[i].Note)
			}
		}
	}
	return out
}

// floodShare is the least share of their rates the floods must reach for
// the check to say anything: on the 2-vCPU VM the unknown-TEID flood
// reached 55-70 % of its 100 kpps, the echo flood all of its 20.
const floodShare = 0.1

// floods are the Echo Requests and the G-PDUs to unknown TEIDs, and the
// socket where the gNB counts the Error Indications.
type floods struct {
	gen         *tgen.Generator
	genDone     chan error
	unknownSent uint64
	echo        *net.UDPConn
	echoes      *counter // the Echo Responses
	echoSent    int
	echoDone    chan struct{}
	inds        *counter           // the Error Indications, at the gNB's GTP-U port
	cancel      context.CancelFunc // of the floods, once they run
	began       time.Time
	took        time.Duration
}

// unknownTEID is the first TEID of the flood's sessions, which upfd
// never hands out (its range ends at 0xffffff) and the SMF never gives.
const unknownTEID = 0x7f000000

func startFloods(ctx context.Context, r *runner, a *scenario.Abuse) (f *floods, err error) {
	f = &floods{genDone: make(chan error, 1), echoDone: make(chan struct{})}
	defer func() {
		if err != nil {
			err = errors.Join(err, f.stop())
		}
	}()
	classify := func(b []byte, _ netip.AddrPort) string {
		if len(b) >= 8 && b[0]>>5 == 1 && b[1] == gtpuErrorInd {
			return "indication"
		}
		return ""
	}
	if f.inds, err = listenUDP(r.lab, r.lab.GNB, netip.AddrPortFrom(topo.GNBN3, pkt.GTPUPort), classify); err != nil {
		return f, err
	}
	sessions := make([]tgen.Session, 1000)
	for k := range sessions {
		sessions[k] = tgen.Session{UE: topo.UEAddr(topo.UEPool, 500_000+k), UplinkTEID: unknownTEID + uint32(k), QFI: 9}
	}
	l := newLoad(scenario.Uplink, scenario.Size{Bytes: abusePayload}, a.UnknownRate, a.Duration, sessions, 1, tgen.UPF)
	if f.gen, err = tgen.New(l.spec()); err != nil {
		return f, err
	}
	floodCtx, cancel := context.WithTimeout(ctx, a.Duration)
	f.cancel, f.began = cancel, time.Now()
	cpu := newMeasurer(r.lab, 0).cpus[0]
	go func() {
		res, err := f.gen.Run(floodCtx, tgen.RunOptions{Namespace: r.lab.GNB, Device: topo.DevN3, CPUs: []int{cpu}, Rate: uint64(l.pps)})
		f.unknownSent = res.Total()
		f.genDone <- err
	}()
	if err := f.startEcho(floodCtx, r.lab, a.EchoRate.PPS); err != nil {
		return f, err
	}
	return f, nil
}

// startEcho sends Echo Requests at pps from a socket of the gNB's, a
// millisecond's worth at a time, until ctx ends, and counts the answers.
func (f *floods) startEcho(ctx context.Context, lab topo.Lab, pps float64) error {
	err := lab.Do(lab.GNB, func() (err error) {
		f.echo, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.GNBN3, 0)))
		return err
	})
	if err != nil {
		return fmt.Errorf("the gNB's Echo socket: %w", err)
	}
	f.echoes = newCounter(f.echo, func(b []byte, _ netip.AddrPort) string {
		if len(b) >= 8 && b[1] == gtpuEchoResponse {
			return "response"
		}
		return ""
	})
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.UPFN3, pkt.GTPUPort))
	go func() {
		defer close(f.echoDone)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for start := time.Now(); ctx.Err() == nil; <-tick.C {
			due := int(time.Since(start).Seconds() * pps)
			for ; f.echoSent < due && ctx.Err() == nil; f.echoSent++ {
				if _, err := f.echo.WriteToUDP(echoRequest(uint16(f.echoSent)), to); err != nil {
					return
				}
			}
		}
	}()
	return nil
}

// echoRequest is a GTP-U Echo Request with sequence number seq: TEID 0,
// the S flag and its optional fields (TS 29.281 §5.1, §7.2.1).
func echoRequest(seq uint16) []byte {
	b := []byte{0x32, gtpuEchoRequest, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[8:], seq)
	return b
}

func (f *floods) errorInds() int { return f.inds.count("indication") }

// stop ends the floods, waits a little for the last answers, and says
// how the generator's run ended.
func (f *floods) stop() error {
	var err error
	if f.cancel != nil {
		f.cancel()
		err = <-f.genDone
		if f.echoes != nil {
			<-f.echoDone
		}
		f.took, f.cancel = time.Since(f.began), nil
		time.Sleep(drain)
	}
	for _, c := range []*counter{f.echoes, f.inds} {
		if c != nil {
			c.close()
		}
	}
	if f.gen != nil {
		f.gen.Close()
		f.gen = nil
	}
	return err
}
