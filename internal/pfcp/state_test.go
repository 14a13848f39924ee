package pfcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/journal"
	"github.com/sluice-upf/sluice/internal/saved"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/session"
)

// A server saved after Serve and restored into a new one on the same
// datapath has everything as it was: sessions and what they own, the
// compiler's slots, the meters, associations and the Recovery Time Stamp.
// The SMF then carries on with the new server as with the old.
func TestPrivilegedRestoreState(t *testing.T) {
	d := loadDatapath(t, 1024)
	start := func(cfg Config) (*Server, func()) {
		return startProcess(t, d, d, cfg, func() time.Time { return time.Now().UTC().Round(0) }) // as saved: no monotonic reading
	}
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0)}
	first, stopFirst := start(cfg)
	n := newN4Client(t, first)
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))

	// An Open5GS session with a dedicated flow (a PDR list on its uplink
	// F-TEID and a buffering FAR), and a free5GC one (Outer Header Removal
	// 0, which a careless encoding loses as a zero).
	o5gs := &smfSession{t: t, n: n, cp: 7}
	o5gs.establish(append(append(o5gsDefaultFlow(), o5gsCPForwarding()[0]), o5gsSessionIEs()...)...)
	o5gs.modify("activate", o5gsActivate(0x1001, servingGNB, false)...)
	flow := ie.NewSDFFilter("permit out 17 from 198.51.100.10 5000-5010 to assigned", "", "", "", 0)
	o5gs.modify("dedicated flow",
		ie.NewCreatePDR(ie.NewPDRID(6), ie.NewPrecedence(100),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0f, 0, nil, nil, o5gsChID),
				o5gsNI(), flow, ie.NewUEIPAddress(0x03, o5gsUE, o5gsUE6, 0, 0), ie.NewQFI(2)),
			ohr1(6), ie.NewFARID(5), ie.NewQERID(2)),
		ie.NewCreateFAR(ie.NewFARID(5), o5gsAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), o5gsNI())),
		ie.NewCreateQER(ie.NewQERID(2), ie.NewGateStatus(0, 0), ie.NewMBR(20_000, 20_000), ie.NewQFI(2)))
	f5gc := &smfSession{t: t, n: n, cp: 1}
	f5gc.establish(
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x01, f5gcTEID, n3.AsSlice(), nil, 0),
				f5gcNI(), ie.NewUEIPAddress(0x02, f5gcUE, "", 0, 0), f5gcAny()),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1), ie.NewURRID(1), ie.NewQERID(1)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), f5gcNI())),
		f5gcURR(1, true),
		ie.NewCreateQER(ie.NewQERID(1), ie.NewGateStatus(0, 0), ie.NewQFI(1)))
	stopFirst()

	saved := stateOf(t, first)
	cfg.Recovery = time.Unix(1_800_000_000, 0) // what a new process would say, until restored
	second, _ := start(cfg)
	// Restore runs before Serve in upfd; here the loop is idle, and the
	// check below reads the state through Do.
	var restoreErr error
	second.Do(context.Background(), func() { restoreErr = second.Restore(saved) })
	if restoreErr != nil {
		t.Fatal(restoreErr)
	}

	was, err := saveLines(first)
	if err != nil {
		t.Fatal(err)
	}
	second.Do(context.Background(), func() {
		now, err := saveLines(second)
		if err != nil {
			t.Error(err)
			return
		}
		for name, pair := range map[string][2]any{
			"store":  {first.store, second.store},
			"meters": {first.meters, second.meters},
			"saved":  {was, now}, // the compiler's images too
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("%s differs after restore:\n was %+v\n now %+v", name, pair[0], pair[1])
			}
		}
	})

	if !second.cfg.Recovery.Equal(first.cfg.Recovery) {
		t.Errorf("Recovery Time Stamp %v after restore, want %v", second.cfg.Recovery, first.cfg.Recovery)
	}

	// The SMF goes on with the restarted UPF: same Recovery Time Stamp in a
	// heartbeat, and its sessions change and end as before.
	n.upf = net.UDPAddrFromAddrPort(second.Addr())
	hb, ok := n.ask(message.NewHeartbeatRequest(n.next(), ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), nil)).(*message.HeartbeatResponse)
	if !ok {
		t.Fatal("no Heartbeat Response")
	}
	if ts, err := hb.RecoveryTimeStamp.RecoveryTimeStamp(); err != nil || !ts.Equal(time.Unix(1_700_000_000, 0)) {
		t.Errorf("Recovery Time Stamp after restore %v (%v), want the first process's", ts, err)
	}
	o5gs.modify("path switch after restore", o5gsActivate(0x1002, targetGNB, true)...)
	wantURRs(t, "open5gs deletion after restore", o5gs.release(), 1)
	wantURRs(t, "free5gc deletion after restore", f5gc.release(), 1)
}

// startProcess runs a server on d as one upfd process would, its meters
// reading dp and its clock now, until cleanup or stop.
func startProcess(t *testing.T, d *datapath.Datapath, dp Datapath, cfg Config, now func() time.Time) (*Server, func()) {
	t.Helper()
	store, compiler := testRules(d)
	srv, err := New(cfg, store, compiler, dp, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv.now = now
	return srv, serveUntilStopped(t, srv)
}

// serveUntilStopped runs srv until stop, or cleanup.
func serveUntilStopped(t *testing.T, srv *Server) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- srv.Serve(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// A usage report still unanswered when upfd dies is sent again by the
// next process, which takes it from the journal, and, unanswered there
// too, goes back into its URR's meter as any other would: the next report
// carries its counts, its UR-SEQN and its start.
func TestPrivilegedRestoredUsageReportGoesBackIntoTheMeterWhenUnanswered(t *testing.T) {
	d := loadDatapath(t, 1024)
	dp := &setCounters{Datapath: d}
	dp.set(datapath.Usage{})
	clock := &testClock{}
	start := time.Unix(1_700_000_100, 0).UTC()
	clock.set(start)
	// T1 of a second on a clock that moves only when the test says.
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0),
		T1: time.Second, N1: 2}
	path := filepath.Join(t.TempDir(), "state.journal")
	first, _, stopFirst := startKeptWith(t, d, dp, cfg, clock.now, path)
	n := newN4Client(t, first)
	n.associate()
	periodic := ie.NewCreateURR(ie.NewURRID(2), ie.NewMeasurementMethod(0, 1, 0),
		ie.NewReportingTriggers(trigPeriodic, 0, 0), ie.NewMeasurementPeriod(10*time.Second))
	if c := causeIn(n.ask(establishment(n.next(), 0x91, periodic))); c != session.CauseAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	before := datapath.Usage{Uplink: datapath.Traffic{Packets: 10, Bytes: 1000}, Downlink: datapath.Traffic{Packets: 5, Bytes: 500}}
	dp.set(before)
	clock.advance(10 * time.Second)
	lost := n.await(2*time.Second, isType[*message.SessionReportRequest])
	if got := periodicReport(t, lost); got.seq != 0 || got.volume != before {
		t.Fatalf("the report before the restart: %v, want UR-SEQN 0 and %+v", got, before)
	}
	img := crashImage(t, first, path) // upfd killed, the report unanswered
	stopFirst()
	second, _, _ := startKeptWith(t, d, dp, cfg, clock.now, img)
	n.upf = net.UDPAddrFromAddrPort(second.Addr())
	after := datapath.Usage{Uplink: datapath.Traffic{Packets: 15, Bytes: 1500}, Downlink: datapath.Traffic{Packets: 8, Bytes: 800}}
	dp.set(after)
	// Sent again at once, its second and last send; still unanswered.
	again := n.await(2*time.Second, isType[*message.SessionReportRequest])
	if again.Sequence() != lost.Sequence() {
		t.Fatalf("after the restart, report %d; want %d sent again", again.Sequence(), lost.Sequence())
	}
	// T1 later it is given up, and the next period's report is due.
	clock.advance(10 * time.Second)
	next := n.await(2*time.Second, isType[*message.SessionReportRequest])
	got := periodicReport(t, next)
	if want := (usageSeen{seq: 0, start: start, volume: after}); got != want {
		t.Errorf("the report after the lost one: %v\nwant %v: the lost one's counts, UR-SEQN and start", got, want)
	}
}

// usageSeen is what a test reads of a usage report.
type usageSeen struct {
	seq    uint32
	start  time.Time
	volume datapath.Usage
}

func (u usageSeen) String() string {
	return fmt.Sprintf("UR-SEQN %d from %v, uplink %+v, downlink %+v", u.seq, u.start, u.volume.Uplink, u.volume.Downlink)
}

// periodicReport reads the one usage report of a Session Report Request.
func periodicReport(t *testing.T, m message.Message) usageSeen {
	t.Helper()
	r := m.(*message.SessionReportRequest)
	if len(r.UsageReport) != 1 {
		t.Fatalf("%d usage reports, want one", len(r.UsageReport))
	}
	var u usageSeen
	kids, err := r.UsageReport[0].UsageReport()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		switch k.Type {
		case ie.URSEQN:
			u.seq, _ = k.URSEQN()
		case ie.StartTime:
			u.start, _ = k.StartTime()
			u.start = u.start.UTC()
		case ie.VolumeMeasurement:
			v, _ := k.VolumeMeasurement()
			u.volume = datapath.Usage{Uplink: datapath.Traffic{Packets: v.UplinkNumberOfPackets, Bytes: v.UplinkVolume},
				Downlink: datapath.Traffic{Packets: v.DownlinkNumberOfPackets, Bytes: v.DownlinkVolume}}
		}
	}
	return u
}

// setCounters is the datapath with every URR counting what the test sets.
type setCounters struct {
	*datapath.Datapath
	usage atomic.Pointer[datapath.Usage]
}

func (d *setCounters) set(u datapath.Usage) { d.usage.Store(&u) }

func (d *setCounters) Usage(uint32) (datapath.Usage, error) { return *d.usage.Load(), nil }

// testClock is a clock that moves when the test says, in UTC without a
// monotonic reading, as times are saved.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) set(t time.Time)         { c.ns.Store(t.UnixNano()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }

// saveLines is what srv saves, one line per entity, sorted: sessions come
// in map order.
func saveLines(srv *Server) ([]string, error) {
	var lines []string
	srv.entities("test", func(c change) bool {
		b, err := json.Marshal(c) // text, to compare and show
		if err != nil {
			panic(err)
		}
		lines = append(lines, string(b))
		return true
	})
	slices.Sort(lines)
	return lines, nil
}

// stateOf is what a journal of srv reads back: its entities, as a
// snapshot writes them.
func stateOf(t *testing.T, srv *Server) *State {
	t.Helper()
	var cs []change
	srv.entities("test", func(c change) bool {
		cs = append(cs, c)
		return true
	})
	st := &State{entities: map[entityKey]saved.Raw{}}
	if err := st.add(record(nil, cs, nil)); err != nil {
		t.Fatal(err)
	}
	return st
}

// A record, written by hand, is the encoding of its changes: it reads
// back as them, names that need escaping in JSON too.
func TestRecordReadsBack(t *testing.T) {
	server := savedServer{Recovery: time.Unix(1_700_000_000, 0).UTC(), Seq: 7}
	assoc := savedAssociation{NodeID: "smf.example.org"}
	in := []change{set(kindServer, "", server), set(kindAssoc, `smf "one"\n`, assoc), gone(kindSession, "1f"), {Kind: kindClosed}}
	want := []readChange{{kindServer, "", saved.Append(nil, server)}, {kindAssoc, `smf "one"\n`, saved.Append(nil, assoc)},
		{Kind: kindSession, Key: "1f"}, {Kind: kindClosed}}
	var got []readChange
	for b := record(nil, in, nil); len(b) > 0; {
		var c readChange
		var err error
		if b, err = saved.Next(b, &c); err != nil {
			t.Fatalf("%v:\n%x", err, record(nil, in, nil))
		}
		got = append(got, c)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back %+v\nwant %+v", got, want)
	}
}

// A journal an older upfd wrote, of JSON records, is one of version 6,
// refused as such, not misread; one of other saved types is refused by
// its layout.
func TestOtherJournalsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		want    string
	}{
		{"JSON", []byte(`[{"k":"header","v":{"Version":6,"Datapath":"test"}},{"k":"server","v":{"Seq":7}}]`), "version 6"},
		{"other types", record(nil, []change{set(kindHeader, "", &stateHeader{stateVersion, "test", "0123abcd"})}, nil), "saved types"},
	} {
		path := filepath.Join(t.TempDir(), "state.journal")
		j, _, err := journal.Open(path, func([]byte) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		err = j.Append(tc.payload)
		j.Close()
		if err != nil {
			t.Fatal(err)
		}
		j, st, err := OpenState(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		j.Close()
		if err := st.For("test"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: For says %v, want it to name the %s", tc.name, err, tc.want)
		}
	}
}
