package runner

import (
	"net"
	"net/netip"
	"sync"
)

// counter counts what arrives on a socket, by what classify says of each
// packet and its sender ("" counts nothing), until closed.
type counter struct {
	conn   net.PacketConn
	mu     sync.Mutex
	counts map[string]int
	done   chan struct{}
	closer sync.Once
}

func newCounter(conn net.PacketConn, classify func([]byte, netip.AddrPort) string) *counter {
	c := &counter{conn: conn, counts: map[string]int{}, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 65535)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return // closed
			}
			if key := classify(buf[:n], addrPortOf(from)); key != "" {
				c.mu.Lock()
				c.counts[key]++
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// addrPortOf is a sender's address, and its port if it has one.
func addrPortOf(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.AddrPort()
	case *net.IPAddr:
		ip, _ := netip.AddrFromSlice(a.IP)
		return netip.AddrPortFrom(ip.Unmap(), 0)
	}
	return netip.AddrPort{}
}

func (c *counter) count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[key]
}

// close stops counting, once what is being read is done; the counts
// stay. Closing again does nothing.
func (c *counter) close() {
	c.closer.Do(func() {
		c.conn.Close()
		<-c.done
	})
}
