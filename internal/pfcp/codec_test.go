package pfcp

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// Every request the server handles, built with go-pfcp, and the response
// it must give, built with go-pfcp too: the same octets, header and IEs.
// Each case runs on a fresh server (sessions number from 1, TEIDs from
// 0x100, UE addresses from 10.45.0.1) whose clock stands still, so usage
// reports are exact too.
func TestPrivilegedCodec(t *testing.T) {
	d := newDirect(t)
	const cp, up = 0xabc, 1 // the SMF's SEID for the session; ours
	var (
		us       = ie.NewNodeID("198.18.4.2", "", "")
		ours     = ie.NewRecoveryTimeStamp(upRecovery)
		features = ie.NewUPFunctionFeatures(0x10, 0x01, 0x14, 0x04) // FTUP; EMPU; UEIP, MNOP; VTIME
		upFSEID  = ie.NewFSEID(up, net.IPv4(127, 0, 0, 1).To4(), nil)
		gtpu     = net.IP(n3.AsSlice())
		accepted = ie.NewCause(1)
	)
	type msg func(seq uint32) message.Message
	setUp := func(seq uint32) message.Message {
		return message.NewAssociationSetupRequest(seq, smfNode, ie.NewRecoveryTimeStamp(smfRecovery))
	}
	establish := func(seq uint32) message.Message { return establishment(seq, cp) }
	// The final or queried usage of the URR of establishment: nothing counted.
	usage := func(group func(...*ie.IE) *ie.IE, trigger ...uint8) *ie.IE {
		return group(ie.NewURRID(1), ie.NewURSEQN(0), ie.NewUsageReportTrigger(trigger...),
			ie.NewStartTime(clock), ie.NewEndTime(clock), ie.NewVolumeMeasurement(0x3f, 0, 0, 0, 0, 0, 0))
	}

	for _, c := range []struct {
		name   string
		known  string // how we answer otherwise: the case is skipped until fixed
		before []msg  // accepted first, in order
		req    msg    // the request
		patch  func([]byte) []byte
		want   msg // the response, for the request's sequence number
	}{
		{name: "heartbeat",
			req: func(seq uint32) message.Message {
				return message.NewHeartbeatRequest(seq, ie.NewRecoveryTimeStamp(smfRecovery), nil)
			},
			want: func(seq uint32) message.Message { return message.NewHeartbeatResponse(seq, ours) }},
		// §7.6.2: a version we do not speak is answered in the one we do.
		{name: "heartbeat of PFCP version 2",
			req: func(seq uint32) message.Message {
				return message.NewHeartbeatRequest(seq, ie.NewRecoveryTimeStamp(smfRecovery), nil)
			},
			patch: func(b []byte) []byte { b[0] = 2<<5 | b[0]&0x1f; return b },
			want:  func(seq uint32) message.Message { return message.NewVersionNotSupportedResponse(seq) }},

		{name: "association setup", req: setUp,
			want: func(seq uint32) message.Message {
				return message.NewAssociationSetupResponse(seq, us, accepted, ours, features)
			}},
		{name: "association setup of a node already associated", before: []msg{setUp}, req: setUp,
			want: func(seq uint32) message.Message {
				return message.NewAssociationSetupResponse(seq, us, accepted, ours, features)
			}},
		{name: "association update", before: []msg{setUp},
			req: func(seq uint32) message.Message { return message.NewAssociationUpdateRequest(seq, smfNode) },
			want: func(seq uint32) message.Message {
				return message.NewAssociationUpdateResponse(seq, us, accepted, features)
			}},
		{name: "association update with no association",
			req: func(seq uint32) message.Message { return message.NewAssociationUpdateRequest(seq, smfNode) },
			want: func(seq uint32) message.Message {
				return message.NewAssociationUpdateResponse(seq, us, ie.NewCause(72))
			}},
		{name: "association release", before: []msg{setUp, establish},
			req:  func(seq uint32) message.Message { return message.NewAssociationReleaseRequest(seq, smfNode) },
			want: func(seq uint32) message.Message { return message.NewAssociationReleaseResponse(seq, us, accepted) }},
		{name: "association release with no association",
			req: func(seq uint32) message.Message { return message.NewAssociationReleaseRequest(seq, smfNode) },
			want: func(seq uint32) message.Message {
				return message.NewAssociationReleaseResponse(seq, us, ie.NewCause(72))
			}},

		// The F-TEID of the uplink PDR is the UPF's to choose: a Created PDR.
		{name: "session establishment", before: []msg{setUp}, req: establish,
			want: func(seq uint32) message.Message {
				return message.NewSessionEstablishmentResponse(0, 0, cp, seq, 0, us, accepted, upFSEID,
					ie.NewCreatedPDR(ie.NewPDRID(1), ie.NewFTEID(0x01, 0x100, gtpu, nil, 0)))
			}},
		{name: "session establishment choosing the UE address", before: []msg{setUp},
			req: func(seq uint32) message.Message { return choosingUE(seq, cp) },
			want: func(seq uint32) message.Message {
				return message.NewSessionEstablishmentResponse(0, 0, cp, seq, 0, us, accepted, upFSEID,
					ie.NewCreatedPDR(ie.NewPDRID(1), ie.NewFTEID(0x01, 0x100, gtpu, nil, 0), ie.NewUEIPAddress(0x02, "10.45.0.1", "", 0, 0)))
			}},
		// The header carries the SEID the receiver gave the session, 0
		// only when it is not known (§7.2.2); here the CP F-SEID gave it.
		{name: "session establishment with no association", req: establish,
			want: func(seq uint32) message.Message {
				return message.NewSessionEstablishmentResponse(0, 0, cp, seq, 0, us, ie.NewCause(72))
			}},
		{name: "session modification", before: []msg{setUp, establish},
			req: func(seq uint32) message.Message { return downlinkToGNB(seq, up) },
			want: func(seq uint32) message.Message {
				return message.NewSessionModificationResponse(0, 0, cp, seq, 0, accepted)
			}},
		{name: "session modification creating a PDR", before: []msg{setUp, establish},
			req: func(seq uint32) message.Message {
				return message.NewSessionModificationRequest(0, 0, up, seq, 0,
					ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(100),
						ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x05, 0, nil, nil, 0),
							ie.NewUEIPAddress(0x02, "10.45.0.2", "", 0, 0)),
						ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1)))
			},
			want: func(seq uint32) message.Message {
				return message.NewSessionModificationResponse(0, 0, cp, seq, 0, accepted,
					ie.NewCreatedPDR(ie.NewPDRID(3), ie.NewFTEID(0x01, 0x101, gtpu, nil, 0)))
			}},
		{name: "session modification querying a URR", before: []msg{setUp, establish},
			req: func(seq uint32) message.Message {
				return message.NewSessionModificationRequest(0, 0, up, seq, 0, ie.NewQueryURR(ie.NewURRID(1)))
			},
			want: func(seq uint32) message.Message {
				return message.NewSessionModificationResponse(0, 0, cp, seq, 0, accepted,
					usage(ie.NewUsageReportWithinSessionModificationResponse, 0x80, 0, 0)) // IMMER
			}},
		{name: "session modification of a session that is not there", before: []msg{setUp, establish},
			req: func(seq uint32) message.Message { return downlinkToGNB(seq, up+1) },
			want: func(seq uint32) message.Message {
				return message.NewSessionModificationResponse(0, 0, 0, seq, 0, ie.NewCause(65))
			}},
		{name: "session deletion", before: []msg{setUp, establish},
			req: func(seq uint32) message.Message { return message.NewSessionDeletionRequest(0, 0, up, seq, 0) },
			want: func(seq uint32) message.Message {
				return message.NewSessionDeletionResponse(0, 0, cp, seq, 0, accepted,
					usage(ie.NewUsageReportWithinSessionDeletionResponse, 0, 0x08, 0)) // TERMR
			}},
		{name: "session deletion of a session that is not there", before: []msg{setUp},
			req: func(seq uint32) message.Message { return message.NewSessionDeletionRequest(0, 0, up, seq, 0) },
			want: func(seq uint32) message.Message {
				return message.NewSessionDeletionResponse(0, 0, 0, seq, 0, ie.NewCause(65))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.known != "" {
				t.Skip("known: " + c.known)
			}
			d.reset(t)
			for _, m := range c.before {
				d.accept(t, m(d.next()))
			}
			seq := d.next()
			b := encode(t, c.req(seq))
			if c.patch != nil {
				b = c.patch(b)
			}
			got := d.send(t, b)
			if got == nil {
				t.Fatal("no answer")
			}
			decodeAnswer(t, got)
			sameMessage(t, got, encode(t, c.want(seq)))
		})
	}

	// Table 7.4.4.2-1: an Association Setup Response has its Recovery
	// Time Stamp, refusal or not.
	t.Run("association setup from a peer not allowed", func(t *testing.T) {
		d := newDirect(t, netip.MustParsePrefix("198.18.4.1/32"))
		seq := d.next()
		got := d.send(t, encode(t, setUp(seq)))
		sameMessage(t, got, encode(t, message.NewAssociationSetupResponse(seq, us, ie.NewCause(64), ours)))
	})
}

// sameMessage reports how an encoded message differs from the one wanted:
// header fields, then IE by IE.
func sameMessage(t *testing.T, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	gh, gies := splitMessage(t, got)
	wh, wies := splitMessage(t, want)
	for _, f := range []struct {
		what      string
		got, want any
	}{
		{"flags", gh.Flags, wh.Flags}, {"type", gh.Type, wh.Type}, {"length", gh.Length, wh.Length},
		{"SEID", gh.SEID, wh.SEID}, {"sequence number", gh.SequenceNumber, wh.SequenceNumber},
	} {
		if f.got != f.want {
			t.Errorf("header %s %#x, want %#x", f.what, f.got, f.want)
		}
	}
	for i := range max(len(gies), len(wies)) {
		g, w := describeIE(gies, i), describeIE(wies, i)
		if g != w {
			t.Errorf("IE %d: %s, want %s", i, g, w)
		}
	}
}

func splitMessage(t *testing.T, b []byte) (*message.Header, []*ie.IE) {
	t.Helper()
	h, err := message.ParseHeader(b)
	if err != nil {
		t.Fatalf("header: %v", err)
	}
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		t.Fatalf("IEs: %v", err)
	}
	return h, ies
}

func describeIE(ies []*ie.IE, i int) string {
	if i >= len(ies) {
		return "none"
	}
	return fmt.Sprintf("type %d [% x]", ies[i].Type, ies[i].Payload)
}

// choosingUE is an uplink-only session whose F-TEID and UE address the
// UPF chooses.
func choosingUE(seq uint32, cpSEID uint64) *message.SessionEstablishmentRequest {
	return message.NewSessionEstablishmentRequest(0, 0, 0, seq, 0, smfNode, ie.NewFSEID(cpSEID, net.IPv4(198, 18, 4, 1), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x05, 0, nil, nil, 0),
				ie.NewNetworkInstance("internet"), ie.NewUEIPAddress(0x10, "", "", 0, 0)),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore))))
}

// The prefix is what the datapath sends downlink by: a UE IPv6 address
// given without IPv6D puts its /64 there, not the one address.
func TestPrivilegedUEIPv6PrefixIsTheDownlinkKey(t *testing.T) {
	d := newDirect(t)
	d.associate(t)
	up := d.establish(t, 0xabc)
	d.accept(t, message.NewSessionModificationRequest(0, 0, up, d.next(), 0,
		ie.NewCreatePDR(ie.NewPDRID(3), ie.NewPrecedence(10),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewUEIPAddress(0x05, "", "2001:db8:1:2::7", 0, 0)),
			ie.NewFARID(2))))
	want := netip.MustParsePrefix("2001:db8:1:2::/64")
	if _, ok := d.rec.lookups[want]; !ok {
		t.Errorf("downlink entries %v, want one for %v", d.rec.lookups, want)
	}
	d.deleteAll(t)
}
