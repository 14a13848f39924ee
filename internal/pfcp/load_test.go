package pfcp

import (
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/session"
)

// An SMF that takes load and overload control (LOAD, OVRL) learns
// upfd's load in its session responses when it changes, and is asked to
// send fewer sessions past 90 % of max_sessions; one that does not take
// them gets neither.
func TestPrivilegedLoadAndOverloadControl(t *testing.T) {
	d := loadDatapath(t, 1024)
	store := session.NewStore(session.Options{TEIDFirst: 0x100, TEIDLast: 0xffff, AccessAddrs: []netip.Addr{n3},
		Pools: map[string][]netip.Prefix{"internet": {netip.MustParsePrefix("10.45.0.0/16")}}, MaxSessions: 20})
	srv, err := New(Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0)},
		store, newCompiler(d), d, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv)
	n := newN4Client(t, srv)
	r := n.ask(message.NewAssociationSetupRequest(n.next(), smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0)),
		ie.NewCPFunctionFeatures(0x03))) // LOAD, OVRL
	if c := causeIn(r); c != session.CauseAccepted {
		t.Fatalf("association: cause %d", c)
	}
	type told struct{ load, reduction int }
	establish := func(i int) told {
		t.Helper()
		m := establishment(n.next(), uint64(0x100+i))
		m.CreatePDR[0] = ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x06, fmt.Sprintf("10.45.9.%d", i+1), "", 0, 0)),
			ie.NewFARID(2))
		m.CreatePDR = m.CreatePDR[:1]
		r := n.ask(m).(*message.SessionEstablishmentResponse)
		if c := causeIn(r); c != session.CauseAccepted {
			t.Fatalf("establishment %d: cause %d", i, c)
		}
		got := told{-1, -1}
		if r.LoadControlInformation != nil {
			got.load = metricIn(t, r.LoadControlInformation)
		}
		if r.OverloadControlInformation != nil {
			got.reduction = metricIn(t, r.OverloadControlInformation)
		}
		return got
	}
	if got := establish(0); got != (told{5, -1}) {
		t.Errorf("first session: told %+v, want load 5 %% and no overload news", got)
	}
	for i := 1; i < 18; i++ { // 90 %: every session a change of load
		if got := establish(i); got.load != 5*(i+1) || got.reduction != -1 {
			t.Fatalf("session %d: told %+v, want load %d and no overload news", i+1, got, 5*(i+1))
		}
	}
	if got := establish(18); got != (told{95, 50}) {
		t.Errorf("19 of 20: told %+v, want load 95 and a reduction of 50", got)
	}
	if got := establish(19); got != (told{100, 100}) {
		t.Errorf("20 of 20: told %+v, want load 100 and a reduction of 100", got)
	}

	// An SMF that does not take them is told nothing.
	other := newN4Client(t, srv)
	other.associate()
	if r := other.ask(message.NewSessionDeletionRequest(0, 0, 1, other.next(), 0)).(*message.SessionDeletionResponse); r.LoadControlInformation != nil || r.OverloadControlInformation != nil {
		t.Errorf("an SMF without LOAD and OVRL was told the load")
	}
}

// metricIn reads the Metric of a Load or Overload Control Information.
func metricIn(t *testing.T, i *ie.IE) int {
	t.Helper()
	kids, err := i.ValueAsGrouped()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if k.Type == ie.Metric {
			m, _ := k.Metric()
			return int(m)
		}
	}
	t.Fatalf("IE %d without a Metric", i.Type)
	return 0
}
