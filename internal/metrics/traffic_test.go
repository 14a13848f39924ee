package metrics

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/pkt"
)

// Known traffic through a real datapath and a real N4 server in the lab's
// namespaces; the scrape must count exactly what was sent, frame by frame
// and byte by byte, message by message and cause by cause.
func TestPrivilegedScrapeCountsTraffic(t *testing.T) {
	lab := testenv.NewLab(t)
	quiet(t, lab)
	d := loadDatapath(t, lab.UPF, 64)
	if err := netns.Do(lab.UPF, func() error { return d.Attach(datapath.Native) }); err != nil {
		t.Fatal(err)
	}
	srv := startN4(t, lab.UPF, netip.AddrPortFrom(addrN4, 8805), d, 64, netip.MustParsePrefix("10.45.0.0/16"))
	h := newHandler(t, Sources{Datapath: d, N4: srv})

	// N4: an association, two sessions (one forwards, one buffers its
	// downlink), two refusals, a heartbeat and a message of no known type.
	smf := dialSMF(t, lab.SMF)
	smf.accept(message.NewAssociationSetupRequest(smf.next(), smfNodeID(), ie.NewRecoveryTimeStamp(time.Unix(1_600_000_000, 0))))
	uplinkTEID := smf.establish(ueForwarding, forwardToGNB)
	smf.establish(ueBuffering, bufferAndNotify)
	noNode := establishment(smf.next(), 3, ueSpare, forwardToGNB)
	noNode.NodeID = nil
	smf.refused(noNode, "Mandatory IE missing")
	smf.refused(message.NewSessionModificationRequest(0, 0, 0xdead, smf.next(), 0), "Session context not found")
	smf.heartbeat()
	smf.send(unknownType(smf.next()))

	before := upfSamples(families(t, scrape(t, h)))
	peers := dialPeers(t, lab)
	sent := peers.run(t, uplinkTEID)
	smf.answerReport(ie.NewReportType(0, 0, 0, 1)) // DLDR, for the first buffered frame

	want := sent.datapath()
	for k, v := range map[string]float64{
		`upf_pfcp_received_messages_total{message_type="Association Setup Request"}`:                                      1,
		`upf_pfcp_received_messages_total{message_type="Session Establishment Request"}`:                                  3,
		`upf_pfcp_received_messages_total{message_type="Session Modification Request"}`:                                   1,
		`upf_pfcp_received_messages_total{message_type="Heartbeat Request"}`:                                              1,
		`upf_pfcp_received_messages_total{message_type="Session Report Response"}`:                                        1,
		`upf_pfcp_received_messages_total{message_type="other"}`:                                                          1,
		`upf_pfcp_sent_messages_total{message_type="Association Setup Response"}`:                                         1,
		`upf_pfcp_sent_messages_total{message_type="Session Establishment Response"}`:                                     3,
		`upf_pfcp_sent_messages_total{message_type="Session Modification Response"}`:                                      1,
		`upf_pfcp_sent_messages_total{message_type="Heartbeat Response"}`:                                                 1,
		`upf_pfcp_sent_messages_total{message_type="Session Report Request"}`:                                             1,
		`upf_pfcp_sent_responses_total{cause="Request accepted (success)",message_type="Association Setup Response"}`:     1,
		`upf_pfcp_sent_responses_total{cause="Request accepted (success)",message_type="Session Establishment Response"}`: 2,
		`upf_pfcp_sent_responses_total{cause="Mandatory IE missing",message_type="Session Establishment Response"}`:       1,
		`upf_pfcp_sent_responses_total{cause="Session context not found",message_type="Session Modification Response"}`:   1,
		`upf_pfcp_session_reports_total{report_type="DLDR"}`:                                                              1,
		`upf_pfcp_sessions{}`:                                  2,
		`upf_pfcp_associations{state="up"}`:                    1,
		`upf_buffer_packets{}`:                                 float64(sent.buffered),
		`upf_scrape_collector_success{collector="datapath"}`:   1,
		`upf_scrape_collector_success{collector="pfcp"}`:       1,
		`upf_scrape_collector_success{collector="pfcp_state"}`: 1,
	} {
		want[k] = v
	}
	// Frames buffered and the report reach the serve loop through the
	// datapath's ring buffer: give them a moment.
	var diffs []string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if diffs = compare(upfSamples(families(t, scrape(t, h))), before, want); len(diffs) == 0 {
			return
		}
	}
	t.Errorf("the scrape differs from the traffic sent (%v):\n%s", sent, strings.Join(diffs, "\n"))
}

// compare checks every UPF series: the datapath's as the change since
// before, the others as they stand; a series not in want must be 0.
// Scrape durations vary and are left out.
func compare(got, before, want map[string]float64) []string {
	var diffs []string
	for k, v := range got {
		if strings.HasPrefix(k, "upf_scrape_collector_duration_seconds") {
			continue
		}
		if strings.HasPrefix(k, "upf_datapath_") {
			v -= before[k]
		}
		if v != want[k] {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", k, v, want[k]))
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			diffs = append(diffs, k+" is missing")
		}
	}
	slices.Sort(diffs)
	return diffs
}

// quiet keeps the gNB's and the DN's kernels from sending the UPF frames of
// their own: ARP (static neighbours instead) and IPv6 (off).
func quiet(t *testing.T, lab testenv.Lab) {
	testenv.Sh(t, "ip", "-n", lab.GNB, "neigh", "replace", addrN3.String(), "lladdr", testenv.MACN3.String(), "dev", "gnb0", "nud", "permanent")
	testenv.Sh(t, "ip", "-n", lab.DN, "neigh", "replace", addrN6.String(), "lladdr", testenv.MACN6.String(), "dev", "dn0", "nud", "permanent")
	testenv.Sh(t, "ip", "netns", "exec", lab.GNB, "sysctl", "-qw", "net.ipv6.conf.gnb0.disable_ipv6=1")
	testenv.Sh(t, "ip", "netns", "exec", lab.DN, "sysctl", "-qw", "net.ipv6.conf.dn0.disable_ipv6=1")
}

// The traffic: how much of each kind, all numbered datagrams of payload
// bytes.
const (
	payload    = 100
	uplinks    = 300 // G-PDUs from the gNB into the forwarding session
	downlinks  = 300 // datagrams from the DN to its UE
	buffered   = 5   // to the UE of the buffering session
	strays     = 7   // to a UE address no session has
	echoes     = 3   // GTP-U Echo Requests, answered by the datapath
	badGTPU    = 4   // GTP-U messages of a type no one defined
	ipUDP      = pkt.IPv4Len + pkt.UDPLen
	frameExtra = pkt.EthLen + ipUDP // a datagram's frame over its payload
)

var (
	ueForwarding = netip.MustParseAddr("10.45.0.2")
	ueBuffering  = netip.MustParseAddr("10.45.0.3")
	ueSpare      = netip.MustParseAddr("10.45.0.4")
	ueNone       = netip.MustParseAddr("10.45.0.99")
)

// traffic is what went through, as the far ends saw it.
type traffic struct {
	uplinkGTPU int   // bytes of each uplink G-PDU (a UDP payload)
	downlinkIn []int // bytes of each downlink G-PDU the gNB received
	echoIn     []int // bytes of each Echo Response the gNB received
	uplinkOut  int   // datagrams the DN received
	buffered   int
}

func (s traffic) String() string {
	return fmt.Sprintf("%d uplink G-PDUs of %d bytes, %d downlink datagrams of %d bytes, %d echoes, %d buffered, %d strays, %d of a bad GTP-U type",
		uplinks, s.uplinkGTPU, downlinks, payload, echoes, s.buffered, strays, badGTPU)
}

// datapath is the change each datapath series must show.
func (s traffic) datapath() map[string]float64 {
	frames := func(lens []int) (n float64) {
		for _, l := range lens {
			n += float64(frameExtra + l)
		}
		return n
	}
	dnFrame := float64(frameExtra + payload)
	echoReq, badReq := float64(frameExtra+12), float64(frameExtra+8)
	return map[string]float64{
		`upf_datapath_receive_packets_total{interface="n3"}`:      uplinks + echoes + badGTPU,
		`upf_datapath_receive_bytes_total{interface="n3"}`:        uplinks*float64(frameExtra+s.uplinkGTPU) + echoes*echoReq + badGTPU*badReq,
		`upf_datapath_transmit_packets_total{interface="n3"}`:     float64(len(s.downlinkIn) + len(s.echoIn)),
		`upf_datapath_transmit_bytes_total{interface="n3"}`:       frames(s.downlinkIn) + frames(s.echoIn),
		`upf_datapath_receive_packets_total{interface="n6"}`:      downlinks + buffered + strays,
		`upf_datapath_receive_bytes_total{interface="n6"}`:        (downlinks + buffered + strays) * dnFrame,
		`upf_datapath_transmit_packets_total{interface="n6"}`:     float64(s.uplinkOut),
		`upf_datapath_transmit_bytes_total{interface="n6"}`:       float64(s.uplinkOut) * dnFrame,
		`upf_datapath_packets_total{verdict="redirect"}`:          uplinks + downlinks,
		`upf_datapath_packets_total{verdict="tx"}`:                echoes,
		`upf_datapath_packets_total{verdict="drop"}`:              buffered + strays + badGTPU,
		`upf_datapath_dropped_packets_total{reason="buffered"}`:   buffered,
		`upf_datapath_dropped_packets_total{reason="no_session"}`: strays,
		`upf_datapath_dropped_packets_total{reason="gtpu_type"}`:  badGTPU,
	}
}

// peers are the gNB's GTP-U socket and the DN's two.
type peers struct{ gnb, dnRx, dnTx *net.UDPConn }

func dialPeers(t *testing.T, lab testenv.Lab) peers {
	return peers{
		gnb:  testenv.ListenUDP(t, lab.GNB, addrGNB.String()+":2152"),
		dnRx: testenv.ListenUDP(t, lab.DN, addrDN.String()+":5001"),
		dnTx: testenv.ListenUDP(t, lab.DN, addrDN.String()+":5002"),
	}
}

// run sends every kind of traffic in turn, each received before the
// next, and checks that what should get through did.
func (p peers) run(t *testing.T, teid uint32) traffic {
	t.Helper()
	upf := &net.UDPAddr{IP: addrN3.AsSlice(), Port: pkt.GTPUPort}
	var s traffic

	echo := []byte{0x32, 1, 0, 4, 0, 0, 0, 0, 0x12, 0x34, 0, 0} // with a sequence number: 12 bytes
	got := p.sendAndReceive(t, p.gnb, p.gnb, upf, echoes, func(int) []byte { return echo })
	s.echoIn = lengths(got)

	bad := []byte{0x30, 100, 0, 0, 0, 0, 0, 0} // type 100: none
	p.sendAndReceive(t, p.gnb, nil, upf, badGTPU, func(int) []byte { return bad })

	got = p.sendAndReceive(t, p.gnb, p.dnRx, upf, uplinks, func(i int) []byte {
		g := uplinkGPDU(teid, i)
		s.uplinkGTPU = len(g)
		return g
	})
	s.uplinkOut = len(got)

	ue := func(a netip.Addr) *net.UDPAddr { return &net.UDPAddr{IP: a.AsSlice(), Port: 40000} }
	got = p.sendAndReceive(t, p.dnTx, p.gnb, ue(ueForwarding), downlinks, numbered)
	s.downlinkIn = lengths(got)
	p.sendAndReceive(t, p.dnTx, nil, ue(ueBuffering), buffered, numbered)
	s.buffered = buffered
	p.sendAndReceive(t, p.dnTx, nil, ue(ueNone), strays, numbered)

	if len(s.echoIn) != echoes || s.uplinkOut != uplinks || len(s.downlinkIn) != downlinks {
		t.Fatalf("lost on the way: %d of %d echo responses, %d of %d uplink, %d of %d downlink",
			len(s.echoIn), echoes, s.uplinkOut, uplinks, len(s.downlinkIn), downlinks)
	}
	return s
}

// sendAndReceive sends n datagrams made by msg from c to dst, paced to
// stay within the veth rings, while rx (if any) receives them.
func (p peers) sendAndReceive(t *testing.T, c, rx *net.UDPConn, dst *net.UDPAddr, n int, msg func(i int) []byte) [][]byte {
	t.Helper()
	got := make(chan [][]byte, 1)
	if rx != nil {
		go func() { got <- receive(rx, n) }()
	}
	for i := range n {
		if _, err := c.WriteToUDP(msg(i), dst); err != nil {
			t.Fatal(err)
		}
		if i%64 == 63 {
			time.Sleep(time.Millisecond)
		}
	}
	if rx == nil {
		time.Sleep(20 * time.Millisecond) // the drops are counted on the way in
		return nil
	}
	return <-got
}

// receive reads datagrams until n arrived or the line is quiet for a second.
func receive(c *net.UDPConn, n int) [][]byte {
	var out [][]byte
	buf := make([]byte, 2048)
	for len(out) < n {
		c.SetReadDeadline(time.Now().Add(time.Second))
		k, _, err := c.ReadFromUDP(buf)
		if err != nil {
			break
		}
		out = append(out, append([]byte(nil), buf[:k]...))
	}
	return out
}

func lengths(bs [][]byte) []int {
	out := make([]int, len(bs))
	for i, b := range bs {
		out[i] = len(b)
	}
	return out
}

// numbered is a payload that starts with i.
func numbered(i int) []byte {
	b := make([]byte, payload)
	binary.BigEndian.PutUint32(b, uint32(i))
	return b
}

// uplinkGPDU is the G-PDU (a UDP payload) carrying datagram i from the
// forwarding session's UE to the DN.
func uplinkGPDU(teid uint32, i int) []byte {
	f := pkt.Frame{
		Tunnel:  &pkt.Tunnel{Src: addrGNB, Dst: addrN3, TEID: teid, QFI: 9, Uplink: true},
		From:    netip.AddrPortFrom(ueForwarding, 40000),
		To:      netip.AddrPortFrom(addrDN, 5001),
		Payload: numbered(i),
	}
	return f.Bytes()[frameExtra:]
}
