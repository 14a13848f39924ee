package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// Every datagram the test sends carries 100 bytes: a tag that says which
// flow it belongs to and its number in the flow. The inner IP packet is
// 128 bytes.
const payloadLen = 100

func payload(tag, n uint32) []byte {
	p := make([]byte, payloadLen)
	binary.BigEndian.PutUint32(p, tag)
	binary.BigEndian.PutUint32(p[4:], n)
	return p
}

// packet is an inner IPv4 packet with proto's 8-byte header (UDP's form:
// ports, length, checksum 0) and the payload.
func packet(proto uint8, src, dst netip.Addr, sport, dport uint16, pl []byte) []byte {
	p := make([]byte, 28+len(pl))
	p[0], p[8], p[9] = 0x45, 64, proto
	binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
	copy(p[12:], src.AsSlice())
	copy(p[16:], dst.AsSlice())
	binary.BigEndian.PutUint16(p[10:], ^csum(p[:20]))
	binary.BigEndian.PutUint16(p[20:], sport)
	binary.BigEndian.PutUint16(p[22:], dport)
	binary.BigEndian.PutUint16(p[24:], uint16(len(p)-20))
	copy(p[28:], pl)
	return p
}

func csum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// gpdu wraps inner in a G-PDU for teid with a PDU Session Container
// (uplink, QFI 9), as a gNB sends it.
func gpdu(teid uint32, inner []byte) []byte {
	g := []byte{0x34, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x85, 1, 0x10, 9, 0}
	binary.BigEndian.PutUint16(g[2:], uint16(len(g)-8+len(inner)))
	binary.BigEndian.PutUint32(g[4:], teid)
	return append(g, inner...)
}

var n3 = &net.UDPAddr{IP: net.IPv4(198, 18, 3, 2), Port: 2152}

// pace keeps the test's bursts within the veth rings and well under
// pfcpsim's QERs (30 Mbit/s downlink): at most 10 frames a millisecond.
func pace(i int) {
	if i%10 == 9 {
		time.Sleep(time.Millisecond)
	}
}

// send calls one n times, paced.
func send(t *testing.T, n int, one func(i int) error) {
	t.Helper()
	for i := range n {
		if err := one(i); err != nil {
			t.Fatal(err)
		}
		pace(i)
	}
}

// rx reads what a socket gets while the test sends.
type rx struct {
	sent chan struct{}
	out  chan [][]byte
}

// listen reads datagrams from c until the test has sent (rx.wait) and then
// want have come and 200 ms passed without another (so an extra one is
// seen), or 1 s passed without any; never longer than 15 s.
func listen(c *net.UDPConn, want int) *rx {
	r := &rx{sent: make(chan struct{}), out: make(chan [][]byte, 1)}
	const straggle, idle = 200 * time.Millisecond, time.Second
	go func() {
		var got [][]byte
		var sentAt, last time.Time
		buf := make([]byte, 4096)
		for hard := time.Now().Add(15 * time.Second); time.Now().Before(hard); {
			c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			n, _, err := c.ReadFromUDP(buf)
			now := time.Now()
			if err == nil {
				got = append(got, bytes.Clone(buf[:n]))
				last = now
				continue
			}
			if sentAt.IsZero() {
				select {
				case <-r.sent:
					sentAt = now
				default:
				}
				continue
			}
			quiet := now.Sub(sentAt)
			if last.After(sentAt) {
				quiet = now.Sub(last)
			}
			if len(got) >= want && quiet >= straggle || quiet >= idle {
				break
			}
		}
		r.out <- got
	}()
	return r
}

// wait says the test has sent everything and returns what came.
func (r *rx) wait() [][]byte {
	close(r.sent)
	return <-r.out
}

// gtp is a datagram the gNB got: a G-PDU's TEID, QFI and inner packet,
// or another GTP-U message's type.
type gtp struct {
	typ   uint8
	teid  uint32
	qfi   int // -1: no PDU Session Container
	inner []byte
}

func parseGTP(b []byte) (gtp, error) {
	g := gtp{qfi: -1}
	if len(b) < 8 || b[0]>>5 != 1 {
		return g, fmt.Errorf("not GTPv1-U: % x", b[:min(len(b), 16)])
	}
	g.typ, g.teid = b[1], binary.BigEndian.Uint32(b[4:])
	i := 8
	if b[0]&0x07 != 0 {
		if len(b) < 12 {
			return g, fmt.Errorf("short GTP-U header")
		}
		next := b[11]
		i = 12
		for next != 0 {
			if len(b) < i+1 || b[i] == 0 || len(b) < i+4*int(b[i]) {
				return g, fmt.Errorf("bad extension header")
			}
			l := 4 * int(b[i])
			if next == 0x85 && l >= 4 {
				g.qfi = int(b[i+2] & 0x3f)
			}
			next = b[i+l-1]
			i += l
		}
	}
	g.inner = b[i:]
	return g, nil
}

// flowOf reads an inner IPv4 packet's addresses, ports and the test's
// tag and number.
type flowOf struct {
	src, dst     netip.Addr
	sport, dport uint16
	tag, n       uint32
}

func readInner(p []byte) (flowOf, error) {
	if len(p) < 28+8 || p[0] != 0x45 || p[9] != 17 {
		return flowOf{}, fmt.Errorf("not the test's IPv4/UDP packet: % x", p[:min(len(p), 28)])
	}
	return flowOf{
		src: netip.AddrFrom4([4]byte(p[12:16])), dst: netip.AddrFrom4([4]byte(p[16:20])),
		sport: binary.BigEndian.Uint16(p[20:]), dport: binary.BigEndian.Uint16(p[22:]),
		tag: binary.BigEndian.Uint32(p[28:]), n: binary.BigEndian.Uint32(p[32:]),
	}, nil
}

// numbered checks that the flows' tags are tag and their numbers 0..n-1,
// each once, and says whether they came in order.
func numbered(t *testing.T, what string, fl []flowOf, tag uint32, n int) (inOrder bool) {
	t.Helper()
	if len(fl) != n {
		t.Errorf("%s: %d of %d arrived", what, len(fl), n)
	}
	seen := make(map[uint32]bool, n)
	inOrder = true
	for i, f := range fl {
		if f.tag != tag || f.n >= uint32(n) || seen[f.n] {
			t.Errorf("%s: datagram %d is tag %#x number %d: want tag %#x, numbers 0..%d once each", what, i, f.tag, f.n, tag, n-1)
			return false
		}
		seen[f.n] = true
		if f.n != uint32(i) {
			inOrder = false
		}
	}
	return inOrder
}

// fromDN reads the datagrams a DN socket got (UDP payloads) as flows.
func fromDN(t *testing.T, got [][]byte) []flowOf {
	t.Helper()
	var fl []flowOf
	for _, b := range got {
		if len(b) != payloadLen {
			t.Errorf("the DN got a %d-byte datagram, want %d", len(b), payloadLen)
			continue
		}
		fl = append(fl, flowOf{tag: binary.BigEndian.Uint32(b), n: binary.BigEndian.Uint32(b[4:])})
	}
	return fl
}
