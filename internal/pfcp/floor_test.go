package pfcp

import (
	"net"
	"net/netip"
	"slices"
	"testing"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// startCodecFloor runs the N4 benchmark's reference, as the reference
// forwarder is the datapath's: a server that decodes each request with
// go-pfcp and answers it with go-pfcp, and does nothing else. Its
// goroutines are laid out as the Server's: a reader that decodes, a loop
// that answers, a writer. It keeps no session, so what upfd costs beyond
// it, with the same client in the same run, is the session engine's. It
// answers an establishment as upfd answers the typical one (Node ID,
// Cause, UP F-SEID, a Created PDR with its F-TEID) and a deletion with a
// Cause.
func startCodecFloor(b *testing.B) netip.AddrPort {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	conn.SetReadBuffer(8 << 20)
	type request struct {
		from netip.AddrPort
		m    message.Message
	}
	in, out := make(chan request, 256), make(chan outgoing, 1024)
	go func() {
		defer close(in)
		buf := make([]byte, 65535)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return // closed
			}
			if m, err := message.Parse(slices.Clone(buf[:n])); err == nil {
				in <- request{from, m}
			}
		}
	}()
	go func() {
		defer close(out)
		var seid uint64
		for r := range in {
			if resp := floorAnswer(r.m, &seid); resp != nil {
				w := make([]byte, resp.MarshalLen())
				if resp.MarshalTo(w) == nil {
					out <- outgoing{to: r.from, b: w}
				}
			}
		}
	}()
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for o := range out {
			conn.WriteToUDPAddrPort(o.b, o.to)
		}
	}()
	b.Cleanup(func() { conn.Close(); <-wrote })
	return conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// floorAnswer is the codec floor's answer to m; seid numbers sessions.
func floorAnswer(m message.Message, seid *uint64) message.Message {
	node, accepted := ie.NewNodeID("198.18.4.2", "", ""), ie.NewCause(1)
	switch m := m.(type) {
	case *message.SessionEstablishmentRequest:
		if m.CPFSEID == nil {
			return nil
		}
		cp, err := m.CPFSEID.FSEID()
		if err != nil {
			return nil
		}
		*seid++
		return message.NewSessionEstablishmentResponse(0, 0, cp.SEID, m.Sequence(), 0, node, accepted,
			ie.NewFSEID(*seid, n3.AsSlice(), nil),
			ie.NewCreatedPDR(ie.NewPDRID(1), ie.NewFTEID(0x01, uint32(*seid), n3.AsSlice(), nil, 0)))
	case *message.SessionDeletionRequest:
		return message.NewSessionDeletionResponse(0, 0, m.SEID(), m.Sequence(), 0, accepted)
	}
	return nil
}
