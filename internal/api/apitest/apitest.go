// Package apitest stands in for upfd's N4 server and datapath behind the
// API: fixed associations, sessions and counters, so that clients of the
// API (upfctl) are tested against the real handler without privileges.
// The privileged tests of internal/api run the real server.
package apitest

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
	"github.com/sluice-upf/sluice/internal/session"
)

// Started is the fake upfd's Recovery Time Stamp; the associations were
// set up a minute later.
var Started = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// N4 is a fake *pfcp.Server.
type N4 struct {
	mu       sync.Mutex
	assocs   []pfcp.Association
	sessions []*session.Session // SEIDs ascending
	usage    map[uint64]map[uint32]datapath.Usage
	draining bool
	// Stopped makes it answer as a server whose Serve has returned.
	Stopped bool
}

// New is a fake with two SMFs, one of them lost, and three sessions: two
// of the first SMF (one with traffic counted), one of the second.
func New() *N4 {
	f := &N4{usage: map[uint64]map[uint32]datapath.Usage{}}
	f.assocs = []pfcp.Association{
		{NodeID: "198.18.4.1", Addr: netip.MustParseAddrPort("198.18.4.1:8805"), Recovery: Started.Add(-time.Hour),
			Since: Started.Add(time.Minute), Sessions: 2},
		{NodeID: "smf2.example", Addr: netip.MustParseAddrPort("198.18.4.5:8805"), Recovery: Started.Add(-2 * time.Hour),
			Since: Started.Add(time.Minute), LostSince: Started.Add(10 * time.Minute), Sessions: 1},
	}
	f.sessions = []*session.Session{
		Open5GS(0x1, 0xabc, "198.18.4.1", "10.45.0.2", 0x100, 0x200),
		Open5GS(0x2, 0xabd, "198.18.4.1", "10.45.0.3", 0x101, 0),
		Open5GS(0x1f, 0x7000000000000001, "smf2.example", "10.45.0.4", 0x102, 0x300),
	}
	f.usage[0x1] = map[uint32]datapath.Usage{1: {Uplink: datapath.Traffic{Packets: 10, Bytes: 920}, Downlink: datapath.Traffic{Packets: 5, Bytes: 7000}}}
	f.usage[0x2] = map[uint32]datapath.Usage{1: {}}
	f.usage[0x1f] = map[uint32]datapath.Usage{1: {}}
	return f
}

// Open5GS is a session as an Open5GS SMF sets it up: uplink on a local
// F-TEID at 198.18.3.2, downlink to the UE into the gNB's tunnel gnbTEID
// (0: not known yet, so buffered), one QER with an MBR and QFI 9, one
// volume URR.
func Open5GS(seid, cpSEID uint64, peer, ue string, teid, gnbTEID uint32) *session.Session {
	ohr := uint8(0)
	x := &session.Session{SEID: seid, CPSEID: cpSEID, CPAddr: netip.MustParseAddr("198.18.4.1"), Peer: peer}
	n3 := netip.MustParseAddr("198.18.3.2")
	x.PDRs.Put(session.PDR{ID: 1, Precedence: 255, OHR: &ohr, FARID: 1, QERIDs: []uint32{1}, URRIDs: []uint32{1},
		PDI: session.PDI{Source: session.Access, FTEID: &session.FTEID{TEID: teid, V4: n3}, NetworkInstance: "internet",
			UEIP: &session.UEIP{V4: netip.MustParseAddr(ue)}}})
	x.PDRs.Put(session.PDR{ID: 2, Precedence: 255, FARID: 2, QERIDs: []uint32{1}, URRIDs: []uint32{1},
		PDI: session.PDI{Source: session.Core, NetworkInstance: "internet", UEIP: &session.UEIP{V4: netip.MustParseAddr(ue), Dest: true},
			SDFs: []session.SDF{{Flow: &session.Flow{Proto: 17, Src: netip.MustParsePrefix("198.18.7.0/24"), DstAssigned: true,
				DstPorts: []session.PortRange{{Lo: 5000, Hi: 5010}}}}}}})
	x.FARs.Put(session.FAR{ID: 1, Action: session.ActForw, Forw: &session.Forwarding{Dest: session.Core, NetworkInstance: "internet"}})
	down := session.FAR{ID: 2, Action: session.ActBuff | session.ActNocp}
	if gnbTEID != 0 {
		down = session.FAR{ID: 2, Action: session.ActForw, Forw: &session.Forwarding{Dest: session.Access,
			OHC: &session.OHC{TEID: gnbTEID, Peer: netip.MustParseAddr("198.18.3.1")}}}
	}
	x.FARs.Put(down)
	x.QERs.Put(session.QER{ID: 1, MBRUL: 100_000_000, MBRDL: 200_000_000, QFI: 9})
	x.URRs.Put(session.URR{ID: 1, Method: session.MeasVolume, Triggers: session.RepPeriodic | session.RepVolThreshold, Period: 60,
		VolThreshold: &session.Volume{Total: ptr(uint64(1 << 30))}})
	return x
}

func ptr[T any](v T) *T { return &v }

// Ready is nil unless Stopped.
func (f *N4) Ready(ctx context.Context) error {
	if f.Stopped {
		return pfcp.ErrStopped
	}
	return nil
}

// Associations are the fake's.
func (f *N4) Associations(ctx context.Context) ([]pfcp.Association, error) {
	return f.assocs, f.Ready(ctx)
}

// Sessions pages the fake's sessions as the server pages a filtered list.
func (f *N4) Sessions(ctx context.Context, filter pfcp.SessionFilter, after uint64, limit int) (pfcp.SessionPage, error) {
	return pfcp.PageOf(slices.Values(f.sessions), filter, after, limit), f.Ready(ctx)
}

// Session is one of the fake's sessions with its counters.
func (f *N4) Session(ctx context.Context, seid uint64) (pfcp.SessionView, error) {
	if err := f.Ready(ctx); err != nil {
		return pfcp.SessionView{}, err
	}
	for _, x := range f.sessions {
		if x.SEID == seid {
			return pfcp.SessionView{Session: x, Usage: f.usage[seid]}, nil
		}
	}
	return pfcp.SessionView{}, fmt.Errorf("session %#x: %w", seid, pfcp.ErrNoSession)
}

// Draining is as last set.
func (f *N4) Draining() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.draining
}

// SetDraining sets it.
func (f *N4) SetDraining(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.draining = on
}

// NodeID is the fake's.
func (f *N4) NodeID() string { return "198.18.4.2" }

// Recovery is Started.
func (f *N4) Recovery() time.Time { return Started }

// Datapath is a fake datapath's counters.
type Datapath struct{}

// Stats are fixed: uplink and downlink forwarded, a few drops.
func (Datapath) Stats() (datapath.Stats, error) {
	return datapath.Stats{
		Verdicts: [5]uint64{datapath.Dropped: 7, datapath.Passed: 12, datapath.Transmitted: 1, datapath.Redirected: 15},
		Drops:    map[datapath.DropReason]uint64{datapath.DropNoSession: 4, datapath.DropMBR: 3},
		Interfaces: map[datapath.Role]datapath.InterfaceStats{
			datapath.N3: {Rx: datapath.Traffic{Packets: 24, Bytes: 2400}, Tx: datapath.Traffic{Packets: 6, Bytes: 8000}},
			datapath.N6: {Rx: datapath.Traffic{Packets: 10, Bytes: 7200}, Tx: datapath.Traffic{Packets: 10, Bytes: 920}},
			datapath.N9: {},
		},
	}, nil
}
