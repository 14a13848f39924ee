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
	typeEchoRequest     = 1
	typeEchoResponse    = 2
	typeErrorIndication = 26
	typeEndMarker       = 254
)

// Information elements (TS 29.281 §8).
const (
	ieTEIDDataI   = 16  // TV, 4 octets
	iePeerAddress = 133 // TLV, an IPv4 or IPv6 address
)

// Endpoint is the UPF's GTP-U socket on one local address.
type Endpoint struct {
	conn  *net.UDPConn
	local netip.Addr
	seq   uint16
	in    chan Received
}

// Received is a path management message from a peer.
type Received struct {
	From netip.Addr
	// ErrorIndication: the peer has no tunnel TEID at Peer (TEID Data I
	// and GTP-U Peer Address); otherwise an Echo Response.
	ErrorIndication bool
	TEID            uint32
	Peer            netip.Addr
}

// Listen binds local:2152 and starts reading Echo Responses.
func Listen(local netip.Addr) (*Endpoint, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, Port)))
	if err != nil {
		return nil, fmt.Errorf("gtpu: bind %s:%d: %w", local, Port, err)
	}
	e := &Endpoint{conn: conn, local: local, in: make(chan Received, 256)}
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

// ErrorIndication tells a peer that we have no tunnel for the TEID it
// sent a G-PDU on (TS 29.281 §7.3.1): TEID Data I and our address.
func (e *Endpoint) ErrorIndication(to netip.Addr, teid uint32) error {
	e.seq++
	addr := e.local.AsSlice()
	b := []byte{0x32, typeErrorIndication, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ieTEIDDataI, 0, 0, 0, 0, iePeerAddress, 0, byte(len(addr))}
	binary.BigEndian.PutUint16(b[8:], e.seq)
	binary.BigEndian.PutUint32(b[13:], teid)
	b = append(b, addr...)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)-8))
	return e.send(to, b)
}

// Received are the Echo Responses and Error Indications that came, until
// Close.
func (e *Endpoint) Received() <-chan Received { return e.in }

// Close releases the socket and ends Answers.
func (e *Endpoint) Close() error { return e.conn.Close() }

func (e *Endpoint) send(to netip.Addr, b []byte) error {
	_, err := e.conn.WriteToUDPAddrPort(b, netip.AddrPortFrom(to, Port))
	return err
}

func (e *Endpoint) read() {
	defer close(e.in)
	buf := make([]byte, 2048)
	for {
		n, from, err := e.conn.ReadFromUDPAddrPort(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		r, ok := parse(buf[:n])
		if !ok {
			continue
		}
		r.From = from.Addr().Unmap()
		select {
		case e.in <- r:
		default: // the server is behind: an echo is asked again, an error indication comes again
		}
	}
}

// parse reads an Echo Response or an Error Indication; ok is false for
// anything else or anything malformed.
func parse(b []byte) (r Received, ok bool) {
	if len(b) < 8 || b[0]>>5 != 1 || int(binary.BigEndian.Uint16(b[2:]))+8 > len(b) {
		return r, false
	}
	b = b[:8+binary.BigEndian.Uint16(b[2:])]
	switch b[1] {
	case typeEchoResponse:
		return r, true
	case typeErrorIndication:
	default:
		return r, false
	}
	if b[0]&0x07 == 0 || len(b) < 12 { // the optional fields are there (S is set)
		return r, false
	}
	ies := b[12:]
	if b[0]&0x04 != 0 { // extension headers: skip them
		for next := b[11]; next != 0; {
			if len(ies) < 4 || ies[0] == 0 || len(ies) < 4*int(ies[0]) {
				return r, false
			}
			l := 4 * int(ies[0])
			next, ies = ies[l-1], ies[l:]
		}
	}
	var haveTEID, havePeer bool
	for len(ies) > 0 {
		switch ies[0] {
		case ieTEIDDataI:
			if len(ies) < 5 {
				return r, false
			}
			r.TEID, haveTEID, ies = binary.BigEndian.Uint32(ies[1:]), true, ies[5:]
		case iePeerAddress:
			if len(ies) < 3 || len(ies) < 3+int(binary.BigEndian.Uint16(ies[1:])) {
				return r, false
			}
			l := int(binary.BigEndian.Uint16(ies[1:]))
			r.Peer, havePeer = netip.AddrFromSlice(ies[3 : 3+l])
			r.Peer, ies = r.Peer.Unmap(), ies[3+l:]
		default:
			ies = nil // private extension or unknown: nothing we need follows
		}
	}
	r.ErrorIndication = true
	return r, haveTEID && havePeer
}
