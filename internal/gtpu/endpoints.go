package gtpu

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
)

// Endpoints are the UPF's GTP-U sockets, one bound to port 2152 of each
// local address. Sending from several goroutines is safe.
type Endpoints struct {
	addrs Addrs
	socks map[netip.Addr]*socket
	in    chan Received
}

// Received is a path management message from a peer.
type Received struct {
	From  netip.Addr // the peer
	Local netip.Addr // our address it came to
	// ErrorIndication: the peer has no tunnel TEID at Peer (TEID Data I
	// and GTP-U Peer Address); otherwise an Echo Response.
	ErrorIndication bool
	TEID            uint32
	Peer            netip.Addr
	Seq             uint16 // an Echo Response's: the request's it answers
}

// ErrNoSource is the answer to a message toward a peer that no local
// address of the side can reach (another IP family).
var ErrNoSource = errors.New("gtpu: no local address for the path")

// Open binds port 2152 on every address of addrs and starts reading Echo
// Responses and Error Indications.
func Open(addrs Addrs) (*Endpoints, error) {
	locals := slices.Compact(slices.SortedFunc(slices.Values(slices.Concat(addrs.Access, addrs.Core)), netip.Addr.Compare))
	if len(locals) == 0 {
		return nil, errors.New("gtpu: no local address to bind")
	}
	e := &Endpoints{addrs: addrs, socks: map[netip.Addr]*socket{}, in: make(chan Received, 256)}
	for _, local := range locals {
		s, err := bind(local)
		if err != nil {
			e.closeSockets()
			return nil, err
		}
		e.socks[local] = s
	}
	var readers sync.WaitGroup
	for _, s := range e.socks {
		readers.Go(func() { s.read(e.in) })
	}
	go func() { readers.Wait(); close(e.in) }()
	return e, nil
}

// EndMarker tells a peer that no more G-PDUs come for teid on the path
// from side (TS 29.281 §7.3.2, TS 23.501 §5.8.2.9), after the last one.
func (e *Endpoints) EndMarker(from Side, to netip.Addr, teid uint32) error {
	s, err := e.toward(from, to)
	if err != nil {
		return err
	}
	return s.send(to, endMarker(teid))
}

// Echo sends an Echo Request (TS 29.281 §7.2.1) on the path from side.
// Only the Echo Response to the latest request to a peer comes out of
// Received: an unsolicited one, which anyone can send, must not make a
// failed path look well.
func (e *Endpoints) Echo(from Side, to netip.Addr) error {
	s, err := e.toward(from, to)
	if err != nil {
		return err
	}
	seq := s.nextSeq()
	s.mu.Lock()
	s.echoes[to] = seq
	s.mu.Unlock()
	return s.send(to, echoRequest(seq))
}

// ErrorIndication tells a peer that we have no tunnel for the TEID of a
// G-PDU it sent to our address on side (TS 29.281 §7.3.1). It leaves
// from, and names, that address.
func (e *Endpoints) ErrorIndication(from Side, to netip.Addr, teid uint32) error {
	s, err := e.toward(from, to)
	if err != nil {
		return err
	}
	return s.send(to, errorIndication(s.nextSeq(), teid, s.local))
}

// SupportedExtensionHeaders tells a peer which extension headers we
// comprehend after it sent one whose comprehension is required and that
// we do not (TS 29.281 §7.3.2).
func (e *Endpoints) SupportedExtensionHeaders(from Side, to netip.Addr) error {
	s, err := e.toward(from, to)
	if err != nil {
		return err
	}
	return s.send(to, supportedExtHeaders(s.nextSeq()))
}

// Received are the Echo Responses and Error Indications that came, until
// Close.
func (e *Endpoints) Received() <-chan Received { return e.in }

// Close releases the sockets and ends Received.
func (e *Endpoints) Close() error { return e.closeSockets() }

func (e *Endpoints) closeSockets() error {
	var errs []error
	for _, s := range e.socks {
		errs = append(errs, s.conn.Close())
	}
	return errors.Join(errs...)
}

// toward is the socket of the path to peer from side.
func (e *Endpoints) toward(side Side, peer netip.Addr) (*socket, error) {
	local, ok := e.addrs.Source(side, peer)
	if !ok {
		return nil, fmt.Errorf("%w: toward %v from the %v side", ErrNoSource, peer, side)
	}
	return e.socks[local], nil
}

// socket is one local address's.
type socket struct {
	conn  *net.UDPConn
	local netip.Addr
	mu    sync.Mutex
	seq   uint16 // of our messages that carry one: Echo Request, Error Indication
	// echoes are the sequence numbers of the Echo Requests unanswered, by peer.
	echoes map[netip.Addr]uint16
}

// answers says whether an Echo Response from peer answers our latest
// Echo Request to it, which it then ends.
func (s *socket) answers(peer netip.Addr, seq uint16) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	want, ok := s.echoes[peer]
	if ok && want == seq {
		delete(s.echoes, peer)
		return true
	}
	return false
}

func bind(local netip.Addr) (*socket, error) {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(local, Port)))
	if err != nil {
		return nil, fmt.Errorf("gtpu: bind %s: %w", netip.AddrPortFrom(local, Port), err)
	}
	return &socket{conn: conn, local: local, echoes: map[netip.Addr]uint16{}}, nil
}

func (s *socket) nextSeq() uint16 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return s.seq
}

func (s *socket) send(to netip.Addr, b []byte) error {
	_, err := s.conn.WriteToUDPAddrPort(b, netip.AddrPortFrom(to, Port))
	return err
}

// read passes what comes to in until the socket is closed; a reader that
// is behind loses messages, which come again (Echo is asked again, an
// Error Indication comes with the next G-PDU).
func (s *socket) read(in chan<- Received) {
	buf := make([]byte, 2048)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
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
		r.From, r.Local = from.Addr().Unmap(), s.local
		if !r.ErrorIndication && !s.answers(r.From, r.Seq) {
			continue
		}
		select {
		case in <- r:
		default:
		}
	}
}
