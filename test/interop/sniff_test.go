package interop

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/netns"
)

// n4 is a capture of N4 on the SMF's device: every PFCP message between
// pfcpsim and upfd, as sent, so the test can say exactly what each side
// said (pfcpsim's own errors name no cause). It only watches.
type n4 struct {
	fd int

	mu    sync.Mutex
	msgs  []pfcpMsg
	keep  bool // keep each message's bytes
	drops uint32
	done  chan struct{}
}

// pfcpMsg is one PFCP message as captured: its header and the top-level
// IEs a test looks at.
type pfcpMsg struct {
	at        time.Time
	fromUPF   bool
	typ       uint8
	seq       uint32
	seid      uint64 // the header's, when it has one
	hasSEID   bool
	cause     uint8 // 0: no Cause IE
	offending uint16
	report    uint8  // Report Type, of a Session Report Request
	raw       []byte // only while keep is on
}

// PFCP message types the test names.
const (
	msgHeartbeatReq   = 1
	msgHeartbeatResp  = 2
	msgAssocSetupReq  = 5
	msgAssocSetupResp = 6
	msgEstReq         = 50
	msgEstResp        = 51
	msgModReq         = 52
	msgModResp        = 53
	msgDelReq         = 54
	msgDelResp        = 55
	msgReportReq      = 56
	msgReportResp     = 57
)

var msgNames = map[uint8]string{
	1: "Heartbeat Request", 2: "Heartbeat Response", 5: "Association Setup Request",
	6: "Association Setup Response", 9: "Association Release Request", 10: "Association Release Response",
	12: "Node Report Request", 13: "Node Report Response",
	50: "Session Establishment Request", 51: "Session Establishment Response",
	52: "Session Modification Request", 53: "Session Modification Response",
	54: "Session Deletion Request", 55: "Session Deletion Response",
	56: "Session Report Request", 57: "Session Report Response",
}

func (m pfcpMsg) String() string {
	from := "pfcpsim"
	if m.fromUPF {
		from = "upfd"
	}
	s := fmt.Sprintf("%s from %s, seq %d", msgNames[m.typ], from, m.seq)
	if m.hasSEID {
		s += fmt.Sprintf(", SEID %#x", m.seid)
	}
	if m.cause != 0 {
		s += fmt.Sprintf(", cause %d", m.cause)
	}
	if m.offending != 0 {
		s += fmt.Sprintf(", offending IE %d", m.offending)
	}
	if m.report != 0 {
		s += fmt.Sprintf(", report type %#x", m.report)
	}
	return s
}

// capture starts capturing on dev in ns until the test ends.
func capture(t *testing.T, ns, dev string) *n4 {
	t.Helper()
	c := &n4{done: make(chan struct{})}
	err := netns.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		// ETH_P_ALL: a socket for one protocol sees only frames received,
		// not those pfcpsim sends.
		proto := int(htons(unix.ETH_P_ALL))
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
		if err != nil {
			return err
		}
		c.fd = fd
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: uint16(proto), Ifindex: ifc.Index}); err != nil {
			unix.Close(fd)
			return err
		}
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
		return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 100_000})
	})
	if err != nil {
		t.Fatalf("capture on %s: %v", dev, err)
	}
	stop := make(chan struct{})
	go c.read(stop)
	t.Cleanup(func() { close(stop); <-c.done; unix.Close(c.fd) })
	return c
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (c *n4) read(stop <-chan struct{}) {
	defer close(c.done)
	buf := make([]byte, 65536)
	for {
		select {
		case <-stop:
			return
		default:
		}
		n, _, err := unix.Recvfrom(c.fd, buf, 0)
		if err != nil {
			continue // the timeout, to look at stop
		}
		c.frame(buf[:n], time.Now())
	}
}

// frame takes an Ethernet frame; IPv4 UDP to or from port 8805 is PFCP.
func (c *n4) frame(f []byte, at time.Time) {
	if len(f) < 14+20+8 || binary.BigEndian.Uint16(f[12:]) != unix.ETH_P_IP {
		return
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[9] != unix.IPPROTO_UDP || len(ip) < ihl+8 {
		return
	}
	udp := ip[ihl:]
	if binary.BigEndian.Uint16(udp) != 8805 && binary.BigEndian.Uint16(udp[2:]) != 8805 {
		return
	}
	m, ok := parsePFCP(udp[8:])
	if !ok {
		return
	}
	m.at = at
	m.fromUPF = bytes.Equal(ip[12:16], []byte{198, 18, 4, 2})
	c.mu.Lock()
	if c.keep {
		m.raw = bytes.Clone(udp[8:])
	}
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
}

// parsePFCP reads a PFCP header and the top-level Cause, Offending IE and
// Report Type.
func parsePFCP(b []byte) (pfcpMsg, bool) {
	var m pfcpMsg
	if len(b) < 8 || b[0]>>5 != 1 {
		return m, false
	}
	m.typ = b[1]
	end := min(len(b), 4+int(binary.BigEndian.Uint16(b[2:])))
	i := 4
	if b[0]&0x01 != 0 {
		if len(b) < 16 {
			return m, false
		}
		m.seid, m.hasSEID = binary.BigEndian.Uint64(b[4:]), true
		i = 12
	}
	m.seq = uint32(b[i])<<16 | uint32(b[i+1])<<8 | uint32(b[i+2])
	for i += 4; i+4 <= end; {
		typ, l := binary.BigEndian.Uint16(b[i:]), int(binary.BigEndian.Uint16(b[i+2:]))
		v := b[i+4 : min(end, i+4+l)]
		switch {
		case typ == 19 && len(v) > 0:
			m.cause = v[0]
		case typ == 40 && len(v) > 1:
			m.offending = binary.BigEndian.Uint16(v)
		case typ == 39 && len(v) > 0:
			m.report = v[0]
		}
		i += 4 + l
	}
	return m, true
}

// mark is where the capture is now, to look at what comes after.
func (c *n4) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// since is what was captured after mark.
func (c *n4) since(mark int) []pfcpMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]pfcpMsg(nil), c.msgs[mark:]...)
}

// keepBytes turns on or off keeping each message's bytes.
func (c *n4) keepBytes(on bool) {
	c.mu.Lock()
	c.keep = on
	c.mu.Unlock()
}

// lost is how many frames the kernel dropped before the capture read
// them: the capture is complete when it is 0.
func (c *n4) lost() uint32 {
	st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.drops += st.Drops // reading the statistics resets them
	}
	return c.drops
}

// tally counts messages by type and direction, and lists those whose
// cause is not Request accepted.
type tally struct {
	byType  map[string]int
	refused []pfcpMsg
}

func count(msgs []pfcpMsg) tally {
	t := tally{byType: map[string]int{}}
	for _, m := range msgs {
		from := "pfcpsim"
		if m.fromUPF {
			from = "upfd"
		}
		t.byType[msgNames[m.typ]+" from "+from]++
		if m.cause > 1 {
			t.refused = append(t.refused, m)
		}
	}
	return t
}
