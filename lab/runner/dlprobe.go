package runner

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/lab/pkt"
	"github.com/sluice-upf/sluice/lab/topo"
)

// dlProbe sends numbered datagrams from the DN host to one UE at a time
// and sees what reaches the gNB's namespace on N3: each G-PDU that carries
// one, to which of the gNB's addresses, in the order the kernel took them
// (one socket for both addresses), and each End Marker. The checks of
// rules taking effect (rule latency, handover, buffering) read it. The
// datagrams are not the generator's, so the sinks let them pass.
type dlProbe struct {
	dn    *net.UDPConn // in the DN's namespace
	gnb   *net.UDPConn // in the gNB's, on port 2152 of every address
	done  chan struct{}
	news  chan struct{} // a token when something new is seen
	mu    sync.Mutex
	seen  []arrival
	burst uint32 // the current burst's number, in every datagram it sends
}

// arrival is a G-PDU with a probe datagram, or an End Marker, as the gNB
// got it.
type arrival struct {
	at        time.Time
	to        netip.Addr // which of the gNB's addresses
	teid      uint32
	burst     uint32
	seq       uint64
	endMarker bool
}

// probePort is where the datagrams go on the UE; probeMagic marks them.
const (
	probePort  = 5997
	probeMagic = "sluice-dlprobe"
	probeLen   = 4 + 8 + len(probeMagic) // burst, sequence, magic
)

func newDLProbe(lab topo.Lab) (*dlProbe, error) {
	p := &dlProbe{done: make(chan struct{}), news: make(chan struct{}, 1)}
	err := lab.Do(lab.DN, func() (err error) {
		p.dn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.DNHost, 0)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the DN host's probe socket: %w", err)
	}
	err = lab.Do(lab.GNB, func() (err error) {
		p.gnb, err = net.ListenUDP("udp4", &net.UDPAddr{Port: pkt.GTPUPort})
		return err
	})
	if err != nil {
		p.dn.Close()
		return nil, fmt.Errorf("the gNB's GTP-U socket: %w", err)
	}
	if err := withPktInfo(p.gnb); err != nil {
		p.gnb.Close()
		p.dn.Close()
		return nil, err
	}
	p.gnb.SetReadBuffer(4 << 20)
	go p.read()
	return p, nil
}

// withPktInfo asks the kernel to say to which address each datagram came.
func withPktInfo(c *net.UDPConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		sockErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
	}); err != nil {
		return err
	}
	if sockErr != nil {
		return fmt.Errorf("IP_PKTINFO on the gNB's socket: %w", sockErr)
	}
	return nil
}

func (p *dlProbe) read() {
	defer close(p.done)
	buf, oob := make([]byte, 65535), make([]byte, 256)
	for {
		n, oobn, _, _, err := p.gnb.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			return // closed
		}
		a, ok := probeArrival(buf[:n], oob[:oobn])
		if !ok {
			continue
		}
		a.at = time.Now()
		p.mu.Lock()
		p.seen = append(p.seen, a)
		p.mu.Unlock()
		select {
		case p.news <- struct{}{}:
		default:
		}
	}
}

// probeArrival reads a datagram to the gNB: a G-PDU with a probe datagram
// inside, or an End Marker.
func probeArrival(b, oob []byte) (arrival, bool) {
	var a arrival
	if msgs, err := unix.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_PKTINFO && len(m.Data) >= unix.SizeofInet4Pktinfo {
				a.to = netip.AddrFrom4([4]byte(m.Data[8:12])) // struct in_pktinfo's ipi_addr: the header's destination
			}
		}
	}
	if teid, ok := pkt.EndMarkerTEID(b); ok {
		a.teid, a.endMarker = teid, true
		return a, true
	}
	teid, inner, ok := pkt.GPDUPayload(b)
	if !ok || len(inner) < pkt.IPv4Len || inner[9] != unix.IPPROTO_UDP {
		return a, false
	}
	udp := inner[int(inner[0]&0x0f)*4:]
	if len(udp) < 8+probeLen || binary.BigEndian.Uint16(udp[2:]) != probePort || string(udp[8+12:8+probeLen]) != probeMagic {
		return a, false
	}
	a.teid, a.burst, a.seq = teid, binary.BigEndian.Uint32(udp[8:]), binary.BigEndian.Uint64(udp[12:])
	return a, true
}

// send is one burst of datagrams to ue, every interval, numbered from 0,
// until stop, limit or count: what it sent, for stop to return.
type send struct {
	burst  uint32
	poked  chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	sent   uint64
	err    error
}

// start sends a new burst to ue, at most count datagrams for at most
// limit. Only one burst runs at a time.
func (p *dlProbe) start(ue netip.Addr, interval, limit time.Duration, count uint64) *send {
	p.mu.Lock()
	p.burst++
	s := &send{burst: p.burst, done: make(chan struct{}), poked: make(chan struct{}, 1)}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	s.cancel = cancel
	to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(ue, probePort))
	go func() {
		defer close(s.done)
		b := make([]byte, probeLen)
		binary.BigEndian.PutUint32(b, s.burst)
		copy(b[12:], probeMagic)
		start := time.Now()
		for s.sent < count && ctx.Err() == nil {
			binary.BigEndian.PutUint64(b[4:], s.sent)
			if _, err := p.dn.WriteToUDP(b, to); err != nil {
				s.err = err
				return
			}
			s.sent++
			// Paced from the start: a late wake-up sends the next at once,
			// so the rate holds on a busy host. A poke sends one at once.
			if wait := time.Until(start.Add(time.Duration(s.sent) * interval)); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-s.poked:
				case <-ctx.Done():
				}
				t.Stop()
			}
		}
	}()
	return s
}

// poke sends the next datagram now, not at its time: right after a
// Response, so that a rule already in place shows at once, whatever the
// host's timers do to the interval.
func (s *send) poke() {
	select {
	case s.poked <- struct{}{}:
	default:
	}
}

// finish waits until the burst has sent its count (or reached its limit)
// and says how many datagrams it sent.
func (s *send) finish() (uint64, error) {
	<-s.done
	return s.stop()
}

// stop ends the burst and says how many datagrams it sent.
func (s *send) stop() (uint64, error) {
	s.cancel()
	<-s.done
	return s.sent, s.err
}

// first waits up to timeout for the first datagram of burst to reach to
// in tunnel teid at or after since, and says when it came.
func (p *dlProbe) first(ctx context.Context, burst, teid uint32, to netip.Addr, since time.Time, timeout time.Duration) (time.Time, error) {
	expired := time.NewTimer(timeout)
	defer expired.Stop()
	for checked := 0; ; {
		p.mu.Lock()
		for ; checked < len(p.seen); checked++ {
			a := p.seen[checked]
			if !a.endMarker && a.burst == burst && a.teid == teid && a.to == to && !a.at.Before(since) {
				p.mu.Unlock()
				return a.at, nil
			}
		}
		p.mu.Unlock()
		select {
		case <-p.news:
		case <-expired.C:
			return time.Time{}, fmt.Errorf("nothing reached %s in tunnel %#x within %s", to, teid, timeout)
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// arrivals are what came of the bursts given in tunnel teid, and the
// tunnel's End Markers, in the order the gNB got them.
func (p *dlProbe) arrivals(teid uint32, bursts ...uint32) []arrival {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []arrival
	for _, a := range p.seen {
		if a.teid == teid && (a.endMarker || slices.Contains(bursts, a.burst)) {
			out = append(out, a)
		}
	}
	return out
}

// forget drops what the probe has seen so far.
func (p *dlProbe) forget() {
	p.mu.Lock()
	p.seen = p.seen[:0]
	p.mu.Unlock()
}

func (p *dlProbe) close() {
	p.gnb.Close()
	p.dn.Close()
	<-p.done
}

// probeEach runs one up to n times, with a probe whose sightings each run
// starts afresh, beside steady traffic at pps through the run's sessions
// (for limit at most); it stops at the first refusal, one's cause, or
// error, and gives what the traffic lost.
func (r *runner) probeEach(ctx context.Context, pps float64, limit time.Duration, n int,
	one func(*dlProbe) (string, error)) (lost []steadyResult, refused string, err error) {
	probe, err := newDLProbe(r.lab)
	if err != nil {
		return nil, "", err
	}
	defer probe.close()
	lost, trafficErr := r.besideTraffic(ctx, pps, limit, func() {
		for i := 0; i < n && refused == "" && err == nil && ctx.Err() == nil; i++ {
			refused, err = one(probe)
			probe.forget()
		}
	})
	return lost, refused, errors.Join(err, trafficErr)
}
