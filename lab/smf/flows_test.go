package smf

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/lab/topo"
)

// rule is what a test reads of a Create/Update PDR or FAR.
type rule struct {
	fteid      *ie.FTEIDFields
	qers, urrs int
	tunnel     *ie.OuterHeaderCreationFields
	sndem      bool
}

// rulesIn reads the PDRs (by PDR ID) and FARs (by FAR ID + 1000) of a
// message's IEs after a round trip through the codec.
func rulesIn(t *testing.T, ies []*ie.IE) map[uint32]*rule {
	t.Helper()
	m := roundTrip(t, message.NewSessionModificationRequest(0, 0, 1, 1, 0, ies...)).(*message.SessionModificationRequest)
	out := map[uint32]*rule{}
	for _, g := range append(append(append(m.CreatePDR, m.UpdatePDR...), m.CreateFAR...), m.UpdateFAR...) {
		kids, err := g.ValueAsGrouped()
		if err != nil {
			t.Fatalf("IE %d does not decode: %v", g.Type, err)
		}
		r, id := &rule{}, uint32(0)
		walk(kids, func(k *ie.IE) {
			switch k.Type {
			case ie.PDRID:
				v, _ := k.PDRID()
				id = uint32(v)
			case ie.FARID:
				if g.Type == ie.CreateFAR || g.Type == ie.UpdateFAR {
					v, _ := k.FARID()
					id = 1000 + v
				}
			case ie.FTEID:
				r.fteid, _ = k.FTEID()
			case ie.QERID:
				r.qers++
			case ie.URRID:
				r.urrs++
			case ie.OuterHeaderCreation:
				r.tunnel, _ = k.OuterHeaderCreation()
			case ie.PFCPSMReqFlags:
				r.sndem = k.HasSNDEM()
			}
		})
		out[id] = r
	}
	return out
}

// walk visits every IE below the grouped ones.
func walk(ies []*ie.IE, visit func(*ie.IE)) {
	for _, k := range ies {
		visit(k)
		if k.IsGrouped() {
			kids, _ := k.ValueAsGrouped()
			walk(kids, visit)
		}
	}
}

// roundTrip encodes m, decodes it and checks the second encoding is the
// first.
func roundTrip(t *testing.T, m message.Message) message.Message {
	t.Helper()
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		t.Fatalf("encode %s: %v", m.MessageTypeName(), err)
	}
	back, err := message.Parse(b)
	if err != nil {
		t.Fatalf("decode %s: %v", m.MessageTypeName(), err)
	}
	again := make([]byte, back.MarshalLen())
	if back.MarshalTo(again); !bytes.Equal(again, b) {
		t.Fatalf("%s does not encode the same after decoding", m.MessageTypeName())
	}
	return back
}

// TestFlows pins down what each profile sends: the uplink F-TEID chosen
// (with its CHOOSE ID) or given, the QERs and URRs on the flow's PDRs,
// the downlink tunnel from the establishment or only from the activation,
// and the path switch with End Markers.
func TestFlows(t *testing.T) {
	for _, tc := range []struct {
		profile      Profile
		give         bool
		chooseID     uint8 // 0: the F-TEID is given
		uplinkFAR    uint32
		downlinkFAR  uint32
		qers, urrs   int // on the uplink PDR
		sharesTunnel uint16
	}{
		{profile: Plain, chooseID: plainChooseID, downlinkFAR: plainDownlinkFAR, qers: 1, urrs: 1},
		{profile: Plain, give: true, downlinkFAR: plainDownlinkFAR, qers: 1, urrs: 1},
		{profile: Open5GS, chooseID: o5gsChooseID, downlinkFAR: o5gsDownlinkFAR, qers: 1, sharesTunnel: o5gsToCPPDR},
		{profile: Open5GS, give: true, downlinkFAR: o5gsDownlinkFAR, qers: 1, sharesTunnel: o5gsToCPPDR},
		{profile: Free5GC, downlinkFAR: f5gcDownlinkFAR, qers: 2, urrs: 2},
	} {
		name := string(tc.profile)
		if tc.give {
			name += " given TEIDs"
		}
		t.Run(name, func(t *testing.T) {
			cfg := Config{Profile: tc.profile, GiveUplinkTEIDs: tc.give}
			cfg.setDefaults()
			f, err := newFlow(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			s := &Session{CPSEID: 5, UE: topo.UEAddr(cfg.UEPool, 4), GNB: cfg.GNB, DownlinkTEID: 5, slot: 4}
			f.prepare(s)

			est := rulesIn(t, f.establishment(s))
			up := est[uint32(f.uplinkPDR())]
			switch {
			case up == nil || up.fteid == nil:
				t.Fatalf("no uplink PDR %d with an F-TEID", f.uplinkPDR())
			case tc.chooseID == 0 && (up.fteid.HasCh() || up.fteid.TEID != cfg.UplinkTEIDBase+4 || !up.fteid.IPv4Address.Equal(topo.UPFN3.AsSlice())):
				t.Errorf("given F-TEID %+v, want TEID %#x at %v", up.fteid, cfg.UplinkTEIDBase+4, topo.UPFN3)
			case tc.chooseID != 0 && (!up.fteid.HasCh() || !up.fteid.HasChID() || up.fteid.ChooseID != tc.chooseID):
				t.Errorf("F-TEID %+v, want CHOOSE with ID %d", up.fteid, tc.chooseID)
			}
			if up.qers != tc.qers || up.urrs != tc.urrs {
				t.Errorf("uplink PDR names %d QERs and %d URRs, want %d and %d", up.qers, up.urrs, tc.qers, tc.urrs)
			}
			if tc.sharesTunnel != 0 && !reflect.DeepEqual(est[uint32(tc.sharesTunnel)].fteid, up.fteid) {
				t.Errorf("PDR %d's F-TEID %+v is not the uplink's %+v", tc.sharesTunnel, est[uint32(tc.sharesTunnel)].fteid, up.fteid)
			}

			downlink := func(ies []*ie.IE) *rule { return rulesIn(t, ies)[1000+tc.downlinkFAR] }
			dl := downlink(f.establishment(s))
			if f.activates() {
				if dl.tunnel != nil {
					t.Errorf("the establishment's downlink FAR has a tunnel %+v before the gNB answered", dl.tunnel)
				}
				dl = downlink(f.activation(s))
			}
			wantTunnel(t, "downlink", dl, s.DownlinkTEID, topo.GNBN3, false)
			wantTunnel(t, "path switch", downlink(f.pathSwitch(s, topo.GNB2N3)), s.DownlinkTEID, topo.GNB2N3, true)
		})
	}
}

func wantTunnel(t *testing.T, step string, r *rule, teid uint32, gnb netip.Addr, sndem bool) {
	t.Helper()
	if r == nil || r.tunnel == nil || r.tunnel.TEID != teid || !r.tunnel.IPv4Address.Equal(gnb.AsSlice()) || r.sndem != sndem {
		t.Errorf("%s: downlink FAR %+v, want a tunnel TEID %#x at %v, SNDEM %v", step, r, teid, gnb, sndem)
	}
}

// TestDialRefuses: a configuration the client cannot work with fails
// before any socket is opened.
func TestDialRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"an unknown profile", Config{Profile: "oai"}},
		{"a window beyond its bound", Config{Window: maxWindow + 1}},
		{"an IPv6 pool for IPv4 addresses", Config{UEPool: netip.MustParsePrefix("2001:db8::/64")}},
		{"an IPv4 pool with no room", Config{UEPool: netip.MustParsePrefix("10.45.0.0/31")}},
		{"an IPv6 pool smaller than a /64", Config{UEPoolV6: netip.MustParsePrefix("2001:db8::/80")}},
	} {
		if c, err := Dial(tc.cfg); err == nil {
			c.Close()
			t.Errorf("%s: dialled", tc.name)
		}
	}
}
