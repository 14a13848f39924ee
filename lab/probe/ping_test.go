package probe

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/lab/pkt"
)

var (
	ue     = netip.MustParseAddr("10.45.0.2")
	target = netip.MustParseAddr("198.18.7.10")
)

// downlink is a G-PDU as a UPF sends it to the gNB: an echo reply from
// target to ue in teid, with a DL PDU Session Container.
func downlink(teid uint32, id, seq uint16) []byte {
	p := pkt.ICMPEcho(ue, target, id, seq, 8)
	copy(p[12:16], target.AsSlice())
	copy(p[16:20], ue.AsSlice())
	p[20] = pkt.ICMPEchoReply
	g := pkt.UplinkGPDU(teid, 9, p)
	g[13] = 0 // DL PDU SESSION INFORMATION
	return g
}

func TestParseReply(t *testing.T) {
	good := downlink(0x200, 0x1234, 7)
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"a reply in the downlink tunnel", good, true},
		{"without extension headers", append([]byte{0x30, 0xff, 0, byte(len(good) - 16), 0, 0, 2, 0}, good[16:]...), true},
		{"another tunnel", downlink(0x201, 0x1234, 7), false},
		{"an echo request, not a reply", pkt.UplinkGPDU(0x200, 9, pkt.ICMPEcho(target, ue, 0x1234, 7, 8)), false},
		{"from another host", pkt.UplinkGPDU(0x200, 9, pkt.ICMPEcho(ue, ue, 0x1234, 7, 8)), false},
		{"a GTP-U Echo Request", []byte{0x32, 1, 0, 4, 0, 0, 0, 0, 0, 1, 0, 0}, false},
		{"truncated header", good[:7], false},
		{"length beyond the datagram", good[:len(good)-1], false},
		{"extension header of length 0", func() []byte { b := bytes.Clone(good); b[12] = 0; return b }(), false},
		{"extension header beyond the datagram", func() []byte { b := bytes.Clone(good); b[12] = 200; return b }(), false},
		{"inner packet cut short", func() []byte {
			b := bytes.Clone(good[:16+20+4])
			binary.BigEndian.PutUint16(b[2:], uint16(len(b)-8))
			return b
		}(), false},
		{"GTP version 2", func() []byte { b := bytes.Clone(good); b[0] = 0x54; return b }(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := parseReply(tc.b, 0x200, target, ue)
			if ok != tc.ok || (ok && e != (echo{0x1234, 7})) {
				t.Errorf("parseReply = %+v, %v; want ok %v", e, ok, tc.ok)
			}
		})
	}
}

func FuzzParseReply(f *testing.F) {
	f.Add(downlink(0x200, 1, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseReply(b, 0x200, target, ue) // must not panic
	})
}

func TestStats(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x * float64(time.Millisecond))
		}
		return d
	}
	for _, tc := range []struct {
		name                string
		sent                int
		rtts                []time.Duration
		loss                float64
		min, avg, max, mdev time.Duration
		summary             string
	}{
		{"all answered: mdev is sqrt(mean(rtt²) - mean(rtt)²)", 4, ms(1, 2, 3, 4), 0,
			time.Millisecond, 2500 * time.Microsecond, 4 * time.Millisecond, 1118034 * time.Nanosecond,
			"4 SDUs transmitted, 4 received, 0% packet loss, time: 10.000 ms\nrtt min/avg/max/mdev = 1.000/2.500/4.000/1.118 ms\n"},
		{"one answer has no deviation", 1, ms(0.05), 0, 50 * time.Microsecond, 50 * time.Microsecond, 50 * time.Microsecond, 0,
			"1 SDUs transmitted, 1 received, 0% packet loss, time: 10.000 ms\nrtt min/avg/max/mdev = 0.050/0.050/0.050/0.000 ms\n"},
		{"loss is rounded up, as oping does", 3, ms(1, 1), 100.0 / 3, time.Millisecond, time.Millisecond, time.Millisecond, 0,
			"3 SDUs transmitted, 2 received, 34% packet loss, time: 10.000 ms\nrtt min/avg/max/mdev = 1.000/1.000/1.000/0.000 ms\n"},
		{"no answer, no rtt line", 2, nil, 100, 0, 0, 0, 0,
			"2 SDUs transmitted, 0 received, 100% packet loss, time: 10.000 ms\n"},
		{"nothing sent", 0, nil, 0, 0, 0, 0, 0,
			"0 SDUs transmitted, 0 received, 0% packet loss, time: 10.000 ms\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := stats(56, tc.sent, 10*time.Millisecond, tc.rtts)
			if s.Loss != tc.loss || s.Min != tc.min || s.Avg != tc.avg || s.Max != tc.max || s.Mdev != tc.mdev {
				t.Errorf("loss %v min %v avg %v max %v mdev %v; want %v %v %v %v %v", s.Loss, s.Min, s.Avg, s.Max, s.Mdev, tc.loss, tc.min, tc.avg, tc.max, tc.mdev)
			}
			if got := s.summary(); got != tc.summary {
				t.Errorf("summary\n%s\nwant\n%s", got, tc.summary)
			}
		})
	}
}

// 29 of 100 answered: 71% lost, where 100 - 100×0.29 in floating point
// would round up to 72.
func TestLossRoundsUpExactly(t *testing.T) {
	rtts := make([]time.Duration, 29)
	if got := stats(56, 100, time.Second, rtts).summary(); !strings.Contains(got, " 71% packet loss") {
		t.Errorf("summary %q, want 71%% packet loss", got)
	}
}

func TestWrite(t *testing.T) {
	ms := time.Millisecond
	r := PingResult{Sizes: []PingStats{
		stats(56, 2, 3*ms, []time.Duration{ms, 3 * ms}),
		stats(1400, 2, 4*ms, []time.Duration{2 * ms}),
	}}
	r.Total = total(r.Sizes)
	var b strings.Builder
	if err := r.Write(&b, "198.18.7.10"); err != nil {
		t.Fatal(err)
	}
	want := `
--- 198.18.7.10 (56 bytes) ping statistics ---
2 SDUs transmitted, 2 received, 0% packet loss, time: 3.000 ms
rtt min/avg/max/mdev = 1.000/2.000/3.000/1.000 ms

--- 198.18.7.10 (1400 bytes) ping statistics ---
2 SDUs transmitted, 1 received, 50% packet loss, time: 4.000 ms
rtt min/avg/max/mdev = 2.000/2.000/2.000/0.000 ms

--- 198.18.7.10 (all sizes) ping statistics ---
4 SDUs transmitted, 3 received, 25% packet loss, time: 7.000 ms
rtt min/avg/max/mdev = 1.000/2.000/3.000/0.816 ms
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPingOptions(t *testing.T) {
	valid := PingOptions{UE: ue, TEIDUplink: 0x100, TEIDDownlink: 0x200}
	o, err := valid.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Count != 10 || o.QFI != 9 || len(o.Sizes) != 1 || o.Sizes[0] != 56 || o.Timeout != time.Second || o.Target != target {
		t.Errorf("defaults %+v", o)
	}
	for _, tc := range []struct {
		name   string
		change func(*PingOptions)
	}{
		{"a UE address is required", func(o *PingOptions) { o.UE = netip.Addr{} }},
		{"IPv4 only", func(o *PingOptions) { o.UE = netip.MustParseAddr("2001:db8:45::2") }},
		{"TEID 0 is no session's", func(o *PingOptions) { o.TEIDDownlink = 0 }},
		{"a QFI has 6 bits", func(o *PingOptions) { o.QFI = 64 }},
		{"the sequence number has 16 bits", func(o *PingOptions) { o.Count = 65536 }},
		{"no negative interval", func(o *PingOptions) { o.Interval = -time.Second }},
		{"a payload that would be fragmented", func(o *PingOptions) { o.Sizes = []int{56, MaxPayload + 1} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid
			tc.change(&o)
			if _, err := o.withDefaults(); err == nil {
				t.Error("accepted")
			}
		})
	}
}
