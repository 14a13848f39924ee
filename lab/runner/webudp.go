package runner

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-upf/sluice/lab/gnb"
	"github.com/sluice-upf/sluice/lab/scenario"
	"github.com/sluice-upf/sluice/lab/topo"
)

// udpFlow counts one direction of the subscribers' UDP: datagrams the
// senders' sockets took, and those and their payload bytes that arrived.
type udpFlow struct {
	sent, received, receivedBytes atomic.Uint64
}

// udpLoad is the subscribers' UDP flows both ways: a socket per UE for
// its uplink, one in the DN for every UE's downlink, and a receiving
// socket at each end that counts.
type udpLoad struct {
	up, down     udpFlow
	upFlows      []scenario.Flow
	downFlows    []scenario.Flow
	ues          []netip.Addr
	upConns      []net.Conn   // UE i's, to the DN host
	upSink       *net.UDPConn // in the DN
	downSrc      *net.UDPConn // in the DN
	downSink     *net.UDPConn // in the UE namespace, for every UE
	receiversEnd sync.WaitGroup
}

// sockBuffer is the receiving sockets' buffer: large enough that the
// lab's own receivers, not the path, are seldom where datagrams are lost.
const sockBuffer = 16 << 20

func newUDPLoad(lab topo.Lab, g *gnb.GNB, n int, upFlows, downFlows []scenario.Flow) (*udpLoad, error) {
	u := &udpLoad{upFlows: upFlows, downFlows: downFlows}
	for _, ue := range g.UEs()[:n] {
		u.ues = append(u.ues, ue.Addr)
	}
	err := lab.Do(lab.DN, func() (err error) {
		if u.upSink, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.DNHost, udpUpPort))); err != nil {
			return err
		}
		u.downSrc, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(topo.DNHost, 0)))
		return err
	})
	if err == nil {
		err = g.Do(func() (err error) {
			u.downSink, err = net.ListenUDP("udp4", &net.UDPAddr{Port: udpDnPort})
			return err
		})
	}
	for i := 0; err == nil && len(upFlows) > 0 && i < n; i++ {
		var c net.Conn
		c, err = g.Dial(context.Background(), i, "udp", netip.AddrPortFrom(topo.DNHost, udpUpPort).String())
		u.upConns = append(u.upConns, c)
	}
	if err != nil {
		u.close()
		return nil, err
	}
	for _, rx := range []struct {
		c *net.UDPConn
		f *udpFlow
	}{{u.upSink, &u.up}, {u.downSink, &u.down}} {
		rx.c.SetReadBuffer(sockBuffer)
		u.receiversEnd.Go(func() { receive(rx.c, rx.f) })
	}
	return u, nil
}

// receive counts what arrives until the socket is closed.
func receive(c *net.UDPConn, f *udpFlow) {
	buf := make([]byte, 2048)
	for {
		n, err := c.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		f.received.Add(1)
		f.receivedBytes.Add(uint64(n))
	}
}

// send sends every flow of every subscriber at its rate until ctx ends, a
// sender per flow and direction, each cycling over the subscribers.
func (u *udpLoad) send(ctx context.Context) {
	var wg sync.WaitGroup
	n := len(u.ues)
	for _, f := range u.upFlows {
		payload := make([]byte, udpPayloadOf(f))
		wg.Go(func() {
			pace(ctx, f.PPS*float64(n), &u.up, func(k uint64) error {
				_, err := u.upConns[k%uint64(n)].Write(payload)
				return err
			})
		})
	}
	for _, f := range u.downFlows {
		payload := make([]byte, udpPayloadOf(f))
		wg.Go(func() {
			pace(ctx, f.PPS*float64(n), &u.down, func(k uint64) error {
				to := netip.AddrPortFrom(u.ues[k%uint64(n)], udpDnPort)
				_, err := u.downSrc.WriteToUDPAddrPort(payload, to)
				return err
			})
		})
	}
	wg.Wait()
}

// udpPayloadOf is the UDP payload of a flow's packets, whose length
// counts from the IP header.
func udpPayloadOf(f scenario.Flow) int { return max(f.PacketBytes()-20-8, 1) }

// pace calls send for datagram k as its time comes, pps a second, until
// ctx ends; behind, it sends at once. What send took counts in f.sent.
func pace(ctx context.Context, pps float64, f *udpFlow, send func(k uint64) error) {
	start := time.Now()
	var k uint64
	for ctx.Err() == nil {
		due := uint64(time.Since(start).Seconds() * pps)
		for ; k < due && ctx.Err() == nil; k++ {
			if send(k) == nil {
				f.sent.Add(1)
			}
		}
		time.Sleep(time.Millisecond)
	}
}

// close closes every socket; the receivers end with them.
func (u *udpLoad) close() {
	for _, c := range u.upConns {
		if c != nil {
			c.Close()
		}
	}
	for _, c := range []*net.UDPConn{u.upSink, u.downSrc, u.downSink} {
		if c != nil {
			c.Close()
		}
	}
	u.receiversEnd.Wait()
}
