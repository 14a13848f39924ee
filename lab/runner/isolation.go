package runner

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/lab/pkt"
	"github.com/sluice-upf/sluice/lab/report"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/tgen"
	"github.com/sluice-upf/sluice/lab/topo"
)

// isolationKind checks that a UE reaches neither the UPF itself nor other
// UEs through it. Session 0 of the run speaks, session 1 is the other UE.
// The probes are G-PDUs a socket in the gNB's namespace writes, and what
// they reach is counted where it would arrive: raw sockets in the UPF's
// namespace see every packet its own stack takes, whatever the UPF is.
type isolationKind struct{}

// isolationPort is where the DN host counts the UE's datagrams.
const isolationPort = 5999

func (isolationKind) run(ctx context.Context, r *runner, st scenario.Step) error {
	x := st.Settings.(*scenario.Isolation)
	if len(r.sessions) < 2 {
		return fmt.Errorf("the isolation check needs 2 sessions, the run has %d", len(r.sessions))
	}
	ue, other := r.sessions[0], r.sessions[1]
	g, err := newGNBSender(r.lab, ue)
	if err != nil {
		return err
	}
	defer g.close()
	var checks []report.Check
	for _, probe := range []func(context.Context, *runner, *scenario.Isolation, *gnbSender, tgen.Session) ([]report.Check, error){
		toUPF, spoofed, toOtherUE,
	} {
		c, err := probe(ctx, r, x, g, other)
		checks = append(checks, c...)
		if err != nil {
			r.run.AddChecks(st.Header(), checks...)
			return err
		}
	}
	c, err := r.misdelivered(ctx)
	r.run.AddChecks(st.Header(), append(checks, c...)...)
	return err
}

// toUPF sends, from the UE, ICMP echo requests to the UPF's N3, N4 and N6
// addresses and UDP and TCP to each of their ports: none may reach the
// UPF's own stack (TS 23.501 §5.8.2.4: a UPF forwards a UE's packets, it
// does not take them).
func toUPF(ctx context.Context, r *runner, x *scenario.Isolation, g *gnbSender, _ tgen.Session) ([]report.Check, error) {
	w, err := newStackWatch(r.lab)
	if err != nil {
		return nil, err
	}
	defer w.close()
	targets := []netip.Addr{topo.UPFN3, topo.UPFN4, topo.UPFN6}
	sent := map[string]int{}
	for _, to := range targets {
		for i := range x.Count {
			g.send(pkt.ICMPEcho(g.ue.UE, to, 0x5e7f, uint16(i), 56))
			sent["ICMP"]++
			for _, port := range x.UDPPorts {
				g.send(pkt.UDPPacket(netip.AddrPortFrom(g.ue.UE, 40000), netip.AddrPortFrom(to, uint16(port)), []byte("isolation")))
				sent["UDP"]++
			}
			for _, port := range x.TCPPorts {
				g.send(pkt.TCPSYN(netip.AddrPortFrom(g.ue.UE, uint16(40000+i)), netip.AddrPortFrom(to, uint16(port))))
				sent["TCP"]++
			}
		}
	}
	if err := g.err; err != nil {
		return nil, err
	}
	sleep(ctx, scenario.IsolationWait)
	var out []report.Check
	for _, proto := range []string{"ICMP", "UDP", "TCP"} {
		ports := ""
		switch proto {
		case "UDP":
			ports = " ports " + portList(x.UDPPorts)
		case "TCP":
			ports = " ports " + portList(x.TCPPorts)
		}
		out = append(out, report.AtMost("UE to the UPF's own addresses, "+proto, float64(w.count(proto)), 0, "packets").
			With(fmt.Sprintf("%d sent to N3, N4 and N6%s", sent[proto], ports)))
	}
	return out, nil
}

// spoofed sends datagrams to the DN host with the other UE's address as
// their source, through the UE's tunnel, whose uplink PDR names the UE's
// address: none may arrive. As many with the UE's own address must: they
// show that the path works.
func spoofed(ctx context.Context, r *runner, x *scenario.Isolation, g *gnbSender, other tgen.Session) ([]report.Check, error) {
	dn := netip.AddrPortFrom(topo.DNHost, isolationPort)
	l, err := listenUDP(r.lab, r.lab.DN, dn, func(b []byte, from netip.AddrPort) string { return from.Addr().String() })
	if err != nil {
		return nil, err
	}
	defer l.close()
	for range x.Count {
		g.send(pkt.UDPPacket(netip.AddrPortFrom(other.UE, 40001), dn, []byte("spoofed")))
		g.send(pkt.UDPPacket(netip.AddrPortFrom(g.ue.UE, 40001), dn, []byte("control")))
	}
	if err := g.err; err != nil {
		return nil, err
	}
	sleep(ctx, scenario.IsolationWait)
	own := l.count(g.ue.UE.String())
	c := report.AtMost("UE with another UE's address", float64(l.count(other.UE.String())), 0, "datagrams").
		With(fmt.Sprintf("of %d sent; %d of %d with its own address arrived", x.Count, own, x.Count))
	if own < x.Count {
		c = c.Failed(fmt.Sprintf("only %d of %d datagrams with the UE's own address arrived: the path does not work", own, x.Count))
	}
	return []report.Check{c}, nil
}

// toOtherUE sends datagrams from the UE to the other UE's address: the
// UPF sends them to the DN (which routes the UE pool back to the UPF, but
// does not forward), and none may come out of a tunnel toward the gNB.
func toOtherUE(ctx context.Context, r *runner, x *scenario.Isolation, g *gnbSender, other tgen.Session) ([]report.Check, error) {
	gnb := netip.AddrPortFrom(topo.GNBN3, pkt.GTPUPort)
	from := g.ue.UE
	l, err := listenUDP(r.lab, r.lab.GNB, gnb, func(b []byte, _ netip.AddrPort) string {
		if _, inner, ok := pkt.GPDUPayload(b); ok && len(inner) >= pkt.IPv4Len && netip.AddrFrom4([4]byte(inner[12:16])) == from {
			return "from the UE"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	defer l.close()
	for range x.Count {
		g.send(pkt.UDPPacket(netip.AddrPortFrom(from, 40002), netip.AddrPortFrom(other.UE, isolationPort), []byte("to another UE")))
	}
	if err := g.err; err != nil {
		return nil, err
	}
	sleep(ctx, scenario.IsolationWait)
	return []report.Check{report.AtMost("UE to another UE's tunnel", float64(l.count("from the UE")), 0, "datagrams").
		With(fmt.Sprintf("of %d sent", x.Count))}, nil
}

// misdeliveredPPS and misdeliveredTime make the downlink load across
// every session: 10,000 frames.
const (
	misdeliveredPPS  = 20_000
	misdeliveredTime = 500 * time.Millisecond
)

// misdelivered sends downlink to every session of the run: the sink counts
// each frame that comes in another session's tunnel (a TEID, QFI or inner
// header not the flow's).
func (r *runner) misdelivered(ctx context.Context) ([]report.Check, error) {
	m := newMeasurer(r.lab, 0)
	f, err := m.prepare(newLoad(scenario.Downlink, scenario.Size{Bytes: 64}, scenario.Rate{PPS: misdeliveredPPS}, misdeliveredTime,
		r.sessions, r.s.Sessions.Flows, tgen.UPF))
	if err != nil {
		return nil, err
	}
	defer f.close()
	n := uint64(misdeliveredPPS * misdeliveredTime.Seconds())
	if err := sendBurst(ctx, f, m.cpus[0], n, misdeliveredPPS); err != nil {
		return nil, err
	}
	st, err := f.sink.Stats(nil)
	if err != nil {
		return nil, err
	}
	wrong := st.Invalid[tgen.BadTEID] + st.Invalid[tgen.BadQFI] + st.Invalid[tgen.BadInner]
	c := report.AtMost("downlink in another UE's tunnel", float64(wrong), 0, "frames").
		With(fmt.Sprintf("%d sent to %d UEs, %d arrived in their own", n, len(r.sessions), st.Packets))
	if st.Packets == 0 {
		c = c.Failed("no downlink frame arrived at all")
	}
	return []report.Check{c}, nil
}

// gnbSender writes G-PDUs in one session's uplink tunnel from the gNB's
// namespace, as the gNB would; the first error stays.
type gnbSender struct {
	conn *net.UDPConn
	ue   tgen.Session
	to   *net.UDPAddr
	err  error
}

func newGNBSender(lab topo.Lab, ue tgen.Session) (*gnbSender, error) {
	g := &gnbSender{ue: ue, to: net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.UPFN3, pkt.GTPUPort))}
	err := lab.Do(lab.GNB, func() (err error) {
		g.conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.GNBN3, 0)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the gNB's socket: %w", err)
	}
	return g, nil
}

func (g *gnbSender) send(inner []byte) {
	if g.err == nil {
		_, g.err = g.conn.WriteToUDP(pkt.UplinkGPDU(g.ue.UplinkTEID, g.ue.QFI, inner), g.to)
	}
}

func (g *gnbSender) close() { g.conn.Close() }

// stackWatch counts the packets from the UE pool that the UPF's own stack
// takes, by protocol: a raw socket gets a copy of every packet of its
// protocol delivered to the host.
type stackWatch struct{ counters []*counter }

func newStackWatch(lab topo.Lab) (*stackWatch, error) {
	w := &stackWatch{}
	for _, proto := range []string{"ICMP", "UDP", "TCP"} {
		var conn net.PacketConn
		err := lab.Do(lab.UPF, func() (err error) {
			conn, err = net.ListenPacket("ip4:"+map[string]string{"ICMP": "icmp", "UDP": "udp", "TCP": "tcp"}[proto], "0.0.0.0")
			return err
		})
		if err != nil {
			w.close()
			return nil, fmt.Errorf("a raw %s socket in the UPF's namespace: %w", proto, err)
		}
		w.counters = append(w.counters, newCounter(conn, func(_ []byte, from netip.AddrPort) string {
			if topo.UEPool.Contains(from.Addr()) {
				return proto
			}
			return ""
		}))
	}
	return w, nil
}

func (w *stackWatch) count(proto string) int {
	n := 0
	for _, c := range w.counters {
		n += c.count(proto)
	}
	return n
}

func (w *stackWatch) close() {
	for _, c := range w.counters {
		c.close()
	}
}

// listenUDP counts the datagrams that reach addr in namespace ns, by what
// classify says of each ("" counts nothing).
func listenUDP(lab topo.Lab, ns string, addr netip.AddrPort, classify func([]byte, netip.AddrPort) string) (*counter, error) {
	var conn net.PacketConn
	err := lab.Do(ns, func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(addr))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen on %s in %s: %w", addr, ns, err)
	}
	return newCounter(conn, classify), nil
}

// sleep waits for d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// portList writes ports as a list: "2152, 8805".
func portList(ports []int) string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ports)), ", "), "[]")
}
