// Package gtpu sends the GTP-U messages (TS 29.281) that the control side
// of the UPF originates: End Marker on a path switch. G-PDUs and Echo
// are the datapath's.
package gtpu

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
)

// Port is GTP-U's UDP port (TS 29.281 §4.4.2.3).
const Port = 2152

// Message types (TS 29.281 §6.1).
const (
	typeEndMarker = 254
)

// Sender sends from the UPF's GTP-U address.
type Sender struct{ conn *net.UDPConn }

// NewSender binds local:2152. The datapath answers what arrives for
// sessions; the socket only sends.
func NewSender(local netip.Addr) (*Sender, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, Port)))
	if err != nil {
		return nil, fmt.Errorf("gtpu: bind %s:%d: %w", local, Port, err)
	}
	return &Sender{conn: conn}, nil
}

// EndMarker tells a peer that no more G-PDUs come for teid on this path
// (TS 29.281 §7.3.2, TS 23.501 §5.8.2.9): a header with no payload.
func (s *Sender) EndMarker(to netip.Addr, teid uint32) error {
	_, err := s.conn.WriteToUDPAddrPort(header(typeEndMarker, teid), netip.AddrPortFrom(to, Port))
	return err
}

// Close releases the socket.
func (s *Sender) Close() error { return s.conn.Close() }

// header is a GTP-U v1 header with no optional fields and no payload:
// version 1, PT 1 (flags 0x30), type, length 0, TEID.
func header(typ uint8, teid uint32) []byte {
	b := []byte{0x30, typ, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[4:], teid)
	return b
}
