// Package gtpu sends and receives the GTP-U messages (TS 29.281) that the
// control side of the UPF handles: End Marker on a path switch, and Echo
// Request and Response to watch the paths to gNBs and peer UPFs. G-PDUs
// and answering Echo Requests are the datapath's; it passes Echo
// Responses up to this socket.
package gtpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// Port is GTP-U's UDP port (TS 29.281 §4.4.2.3).
const Port = 2152

// Message types (TS 29.281 §6.1).
const (
	typeEchoRequest  = 1
	typeEchoResponse = 2
	typeEndMarker    = 254
)

// Endpoint is the UPF's GTP-U socket on one local address.
type Endpoint struct {
	conn    *net.UDPConn
	seq     uint16
	answers chan netip.Addr
}

// Listen binds local:2152 and starts reading Echo Responses.
func Listen(local netip.Addr) (*Endpoint, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, Port)))
	if err != nil {
		return nil, fmt.Errorf("gtpu: bind %s:%d: %w", local, Port, err)
	}
	e := &Endpoint{conn: conn, answers: make(chan netip.Addr, 256)}
	go e.read()
	return e, nil
}

// EndMarker tells a peer that no more G-PDUs come for teid on this path
// (TS 29.281 §7.3.2, TS 23.501 §5.8.2.9): a header with no payload.
func (e *Endpoint) EndMarker(to netip.Addr, teid uint32) error {
	b := []byte{0x30, typeEndMarker, 0, 0, 0, 0, 0, 0} // version 1, PT 1, length 0
	binary.BigEndian.PutUint32(b[4:], teid)
	return e.send(to, b)
}

// Echo sends an Echo Request (TS 29.281 §7.2.1): TEID 0, with a sequence
// number, nothing else.
func (e *Endpoint) Echo(to netip.Addr) error {
	e.seq++
	b := []byte{0x32, typeEchoRequest, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0} // S set: 4 bytes of optional fields
	binary.BigEndian.PutUint16(b[8:], e.seq)
	return e.send(to, b)
}

// Answers are the addresses Echo Responses come from, until Close.
func (e *Endpoint) Answers() <-chan netip.Addr { return e.answers }

// Close releases the socket and ends Answers.
func (e *Endpoint) Close() error { return e.conn.Close() }

func (e *Endpoint) send(to netip.Addr, b []byte) error {
	_, err := e.conn.WriteToUDPAddrPort(b, netip.AddrPortFrom(to, Port))
	return err
}

func (e *Endpoint) read() {
	defer close(e.answers)
	buf := make([]byte, 2048)
	for {
		n, from, err := e.conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil || n < 8 || buf[0]>>5 != 1 || buf[1] != typeEchoResponse {
			continue
		}
		select {
		case e.answers <- from.Addr().Unmap():
		default: // the server is behind; the next round asks again
		}
	}
}
