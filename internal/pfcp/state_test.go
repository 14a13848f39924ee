package pfcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// A server saved after Serve and restored into a new one on the same
// datapath has everything as it was: sessions and what they own, the
// compiler's slots, the meters, associations and the Recovery Time Stamp.
// The SMF then carries on with the new server as with the old.
func TestPrivilegedRestoreState(t *testing.T) {
	d := loadDatapath(t, 1024)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	start := func(cfg Config) (*Server, func()) {
		store, compiler := testRules(d)
		srv, err := New(cfg, store, compiler, d, log)
		if err != nil {
			t.Fatal(err)
		}
		srv.now = func() time.Time { return time.Now().UTC().Round(0) } // as saved: no monotonic reading
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- srv.Serve(ctx) }()
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				cancel()
				<-done
			}
		}
		t.Cleanup(stop)
		return srv, stop
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

	var saved bytes.Buffer
	if err := first.Save(json.NewEncoder(&saved)); err != nil {
		t.Fatal(err)
	}
	cfg.Recovery = time.Unix(1_800_000_000, 0) // what a new process would say, until restored
	second, _ := start(cfg)
	// Restore runs before Serve in upfd; here the loop is idle, and the
	// check below reads the state through Do.
	var restoreErr error
	second.Do(context.Background(), func() { restoreErr = second.Restore(json.NewDecoder(&saved)) })
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

// saveLines is what srv saves, one line per record, sorted: sessions come
// in map order.
func saveLines(srv *Server) ([]string, error) {
	var b bytes.Buffer
	if err := srv.Save(json.NewEncoder(&b)); err != nil {
		return nil, err
	}
	lines := strings.Split(b.String(), "\n")
	slices.Sort(lines)
	return lines, nil
}
