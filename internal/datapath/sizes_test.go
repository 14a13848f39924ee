package datapath

import (
	"net/netip"
	"testing"
)

// A datapath sized for n sessions holds n sessions of each SMF's profile
// (internal/pfcp/profiles_test.go) at once, with their default flows.
func TestSizesFitProfiles(t *testing.T) {
	type need struct {
		uplink, downlink4, downlink6     uint32
		listSlots, sdfs, fars, qers, urr uint32 // a list slot holds two PDRs
	}
	profiles := []struct {
		name string
		need need
	}{
		// Uplink PDR on a chosen F-TEID naming the UE's IPv4 and IPv6
		// addresses: a list of two (one slot), the IPv4 source inline and
		// the IPv6 one in an SDF slot; a second F-TEID for its CP-to-UP
		// PDR; one QER (the session AMBR), one URR.
		{"Open5GS, IPv4v6", need{uplink: 2, downlink4: 1, downlink6: 1, listSlots: 1, sdfs: 1, fars: 2, qers: 1, urr: 1}},
		// Two QERs and two URRs on each PDR; the uplink PDR names the
		// UE's IPv4 address, inline.
		{"free5GC", need{uplink: 1, downlink4: 1, fars: 2, qers: 2, urr: 2}},
		// A QER for each direction, one URR; the UE's address inline, as
		// free5GC's.
		{"OAI", need{uplink: 1, downlink4: 1, fars: 2, qers: 2, urr: 1}},
	}
	for _, n := range []uint32{1024, 100_000, 1_000_000, 16_000_000} {
		s := SizesFor(int(n))
		for _, p := range profiles {
			for _, c := range []struct {
				what       string
				need, have uint32
			}{
				{"uplink entries", p.need.uplink, s.Uplink},
				{"IPv4 downlink entries", p.need.downlink4, s.Downlink4},
				{"IPv6 downlink entries", p.need.downlink6, s.Downlink6},
				{"PDR list slots", p.need.listSlots, s.ListSlots - 1},
				{"SDF slots", p.need.sdfs, s.SDFs - 1},
				{"FAR slots", p.need.fars, s.FARs - 1},
				{"QER slots", p.need.qers, s.QERs - 1},
				{"URR slots", p.need.urr, s.URRs - 1},
			} {
				if uint64(c.need)*uint64(n) > uint64(c.have) {
					t.Errorf("%d %s sessions need %d %s, the datapath has %d", n, p.name, c.need*n, c.what, c.have)
				}
			}
		}
		if (s.ListSlots-1)%ListRun != 0 {
			t.Errorf("%d sessions: %d list slots are not slot 0 and whole runs of %d", n, s.ListSlots, ListRun)
		}
	}
}

// A lookup entry carries its PDR's FAR when it fits: no tunnel, or an
// IPv4 one from a local GTP-U address; the FAR slot is read otherwise.
func TestInlineFAR(t *testing.T) {
	local := []netip.Addr{addrN3, addrN3v6, addrN9}
	for _, c := range []struct {
		name string
		far  FAR
		ep   uint8 // the outer source's endpoint, when inline
		want bool
	}{
		{"no tunnel", FAR{Action: Forw}, 0, true},
		{"drop", FAR{Action: Drop}, 0, true},
		{"IPv4 tunnel from N3", FAR{Action: Forw, TEID: 7, Peer: addrGNB, Local: addrN3, TOS: 0xb8, HasTOS: true}, 0, true},
		{"IPv4 tunnel from N9", FAR{Action: Forw, TEID: 7, Peer: addrPeer, Local: addrN9}, 2, true},
		{"IPv6 tunnel", FAR{Action: Forw, TEID: 7, Peer: addrGNBv6, Local: addrN3v6}, 0, false},
		{"IPv4 tunnel from an address that is no endpoint", FAR{Action: Forw, TEID: 7, Peer: addrGNB, Local: addrN6}, 0, false},
	} {
		f, err := c.far.encode()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var v bpfUpfRules
		v.inlineFAR(f, local)
		if got := v.FarInline == 1; got != c.want {
			t.Errorf("%s: inline %v, want %v", c.name, got, c.want)
			continue
		}
		want := bpfUpfFarInline{Action: f.Action, Ohc: f.Ohc, Tos: f.Tos, Flags: f.Flags, Teid: f.Teid, Peer: f.Peer.A[0]}
		if c.want && (v.Far != want || v.LocalEp != c.ep) {
			t.Errorf("%s: inline %+v from endpoint %d, want %+v from %d", c.name, v.Far, v.LocalEp, want, c.ep)
		}
	}
}
