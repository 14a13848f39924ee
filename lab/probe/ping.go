// Package probe measures a UPF from the outside, as a gNB and a data
// network see it.
package probe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/gtpu"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/lab/pkt"
	"github.com/sluice-upf/sluice/lab/topo"
)

// PingOptions say where and how to ping through a UPF: from a gNB's
// GTP-U socket, in a session's tunnels, to a host of the data network,
// which answers from its own kernel.
type PingOptions struct {
	Namespace string     // where the gNB's socket is made: the lab's gNB namespace; "" is here
	GNB       netip.Addr // the gNB's N3 address, where the session's downlink goes; topo.GNBN3 if unset
	UPF       netip.Addr // the UPF's N3 address; topo.UPFN3 if unset
	Target    netip.Addr // the DN host; topo.DNHost if unset
	UE        netip.Addr // the session's UE address (required)

	TEIDUplink   uint32 // the UPF's F-TEID of the session's uplink PDR (required)
	TEIDDownlink uint32 // the gNB's TEID, as in the session's downlink FAR (required)
	QFI          uint8  // of the uplink PDU Session Container; 9 if unset

	Count    int           // echo requests for each size; 10 if unset
	Interval time.Duration // between requests; 0 sends them back to back
	Sizes    []int         // ICMP payload bytes, a run of Count requests each; 56 if unset
	Timeout  time.Duration // how long to wait for replies after the last request; 1 s if unset

	OnReply func(Reply) // called for every reply as it comes, if set
}

// Reply is one answered request.
type Reply struct {
	Size int // ICMP payload bytes
	Seq  uint16
	RTT  time.Duration
}

// MaxPayload is the largest ICMP payload that crosses the lab's 1500-byte
// links in one piece: the UPF does not reassemble fragmented G-PDUs.
const MaxPayload = 1500 - pkt.IPv4Len - pkt.UDPLen - pkt.GTPULen - pkt.IPv4Len - pkt.ICMPLen

// Ping sends Count echo requests of each size, Interval apart, and
// collects the replies. Its time is bounded: sizes × (Count × Interval +
// Timeout). When ctx ends it stops early and returns what it has measured
// with ctx's error.
func Ping(ctx context.Context, o PingOptions) (PingResult, error) {
	o, err := o.withDefaults()
	if err != nil {
		return PingResult{}, err
	}
	conn, err := listen(o.Namespace, o.GNB)
	if err != nil {
		return PingResult{}, err
	}
	p := &pinger{o: o, conn: conn, replies: make(chan arrival, replyBacklog), done: make(chan struct{}), id: uint16(rand.Uint32())}
	var wg sync.WaitGroup
	wg.Go(p.receive)
	defer func() { close(p.done); conn.Close(); wg.Wait() }()

	var res PingResult
	for i, size := range o.Sizes {
		var run PingStats
		run, err = p.run(ctx, p.id+uint16(i), size)
		res.Sizes = append(res.Sizes, run)
		if err != nil {
			break
		}
	}
	res.Total = total(res.Sizes)
	return res, err
}

func (o PingOptions) withDefaults() (PingOptions, error) {
	set := func(a *netip.Addr, d netip.Addr) {
		if !a.IsValid() {
			*a = d
		}
	}
	set(&o.GNB, topo.GNBN3)
	set(&o.UPF, topo.UPFN3)
	set(&o.Target, topo.DNHost)
	if o.QFI == 0 {
		o.QFI = 9
	}
	if o.Count == 0 {
		o.Count = 10
	}
	if len(o.Sizes) == 0 {
		o.Sizes = []int{56}
	}
	if o.Timeout == 0 {
		o.Timeout = time.Second
	}
	switch {
	case !o.UE.Is4() || !o.GNB.Is4() || !o.UPF.Is4() || !o.Target.Is4():
		return o, errors.New("probe: ping: the UE, gNB, UPF and target addresses must be IPv4 (the UE's is required)")
	case o.TEIDUplink == 0 || o.TEIDDownlink == 0:
		return o, errors.New("probe: ping: the uplink and downlink TEIDs are required (TEID 0 is no session's)")
	case o.QFI > 63:
		return o, fmt.Errorf("probe: ping: QFI %d: want 1 to 63", o.QFI)
	case o.Count < 1 || o.Count > 65535:
		return o, fmt.Errorf("probe: ping: count %d: want 1 to 65535 (the ICMP sequence number is 16 bits)", o.Count)
	case o.Interval < 0 || o.Timeout < 0:
		return o, errors.New("probe: ping: the interval and the timeout cannot be negative")
	}
	for _, s := range o.Sizes {
		if s < 0 || s > MaxPayload {
			return o, fmt.Errorf("probe: ping: payload %d: want 0 to %d bytes, so that the G-PDU is not fragmented", s, MaxPayload)
		}
	}
	return o, nil
}

// listen opens the gNB's GTP-U socket in ns.
func listen(ns string, gnb netip.Addr) (conn *net.UDPConn, err error) {
	addr := netip.AddrPortFrom(gnb, gtpu.Port)
	err = netns.Do(ns, func() error {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(addr))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("probe: ping: open the gNB socket %s in namespace %q: %w (is the lab up, and no generator on that address?)", addr, ns, err)
	}
	// Room for the replies of a flood (no interval) while the sending loop
	// is busy; beyond the namespace's rmem_max if we may (root).
	if raw, err := conn.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvBuf) })
	}
	return conn, nil
}

// rcvBuf holds a few thousand of the largest replies.
const rcvBuf = 8 << 20

// pinger is one Ping: the sending loop runs in the caller, the receiving
// one in a goroutine that hands over the replies it recognises.
type pinger struct {
	o       PingOptions
	conn    *net.UDPConn
	id      uint16
	replies chan arrival
	done    chan struct{}
}

// arrival is a reply and when it came.
type arrival struct {
	echo
	at time.Time
}

// receive reads the gNB socket until it is closed. Anything but an Echo
// Reply from the target in the downlink tunnel (an Echo Request from the
// UPF, say) is passed over.
func (p *pinger) receive() {
	buf := make([]byte, 65535)
	for {
		n, err := p.conn.Read(buf)
		if err != nil {
			return // closed
		}
		at := time.Now()
		e, ok := parseReply(buf[:n], p.o.TEIDDownlink, p.o.Target, p.o.UE)
		if !ok {
			continue
		}
		select {
		case p.replies <- arrival{e, at}:
		case <-p.done:
			return
		}
	}
}

// run sends Count requests of one size with ICMP identifier id and waits
// for their replies: until all have come, Timeout after the last request,
// or ctx ends.
func (p *pinger) run(ctx context.Context, id uint16, size int) (PingStats, error) {
	r := &sizeRun{p: p, id: id, size: size, pending: make([]time.Time, p.o.Count)}
	upf := net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.o.UPF, gtpu.Port))
	start := time.Now()
	for seq := range p.o.Count {
		if err := r.collect(ctx, start.Add(time.Duration(seq)*p.o.Interval)); err != nil {
			return r.stats(start), err
		}
		req := pkt.UplinkGPDU(p.o.TEIDUplink, p.o.QFI, pkt.ICMPEcho(p.o.UE, p.o.Target, id, uint16(seq), size))
		r.pending[seq] = time.Now()
		if _, err := p.conn.WriteToUDP(req, upf); err != nil {
			r.pending[seq] = time.Time{}
			return r.stats(start), fmt.Errorf("probe: ping: send to the UPF at %s: %w", upf, err)
		}
		r.sent++
	}
	err := r.collect(ctx, time.Now().Add(p.o.Timeout))
	return r.stats(start), err
}

// sizeRun is what one run has sent and received.
type sizeRun struct {
	p       *pinger
	id      uint16
	size    int
	sent    int
	pending []time.Time // when each request went, zero once answered
	rtts    []time.Duration
}

// replyBacklog is how many replies may wait for the sending loop: with no
// interval it only looks between requests, when it is already late.
const replyBacklog = 256

// collect takes replies until the deadline, or until every request sent
// is answered. Past the deadline it still takes those that are waiting.
func (r *sizeRun) collect(ctx context.Context, deadline time.Time) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for time.Now().Before(deadline) && !r.answered() {
		select {
		case a := <-r.p.replies:
			r.take(a)
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for range replyBacklog {
		select {
		case a := <-r.p.replies:
			r.take(a)
		default:
			return nil
		}
	}
	return nil
}

// answered says whether every request is sent and answered.
func (r *sizeRun) answered() bool { return r.sent == len(r.pending) && len(r.rtts) == r.sent }

// take counts a reply to one of this run's requests, once.
func (r *sizeRun) take(a arrival) {
	if a.id != r.id || int(a.seq) >= len(r.pending) || r.pending[a.seq].IsZero() {
		return
	}
	rtt := a.at.Sub(r.pending[a.seq])
	r.pending[a.seq] = time.Time{}
	r.rtts = append(r.rtts, rtt)
	if r.p.o.OnReply != nil {
		r.p.o.OnReply(Reply{r.size, a.seq, rtt})
	}
}

func (r *sizeRun) stats(start time.Time) PingStats {
	return stats(r.size, r.sent, time.Since(start), r.rtts)
}
