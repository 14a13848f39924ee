package tgen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

const (
	xdpDrop = 1
	xdpPass = 2
	xdpTX   = 3
)

// The generator's frames, byte for byte: each frame of a run is built on a
// page still holding whatever the far side wrote into its headers (here:
// garbage up to the end of the stamp; nobody writes the payload after it),
// cycles over the sessions and then the flows, and carries that session's
// TEID, QFI and UE address, the flow's port and next sequence number.
func TestPrivilegedGeneratorFrames(t *testing.T) {
	for _, c := range []struct {
		dir Direction
		v6  bool
	}{{Uplink, false}, {Downlink, false}, {Uplink, true}, {Downlink, true}} {
		t.Run(fmt.Sprintf("%v/ipv6=%v", c.dir, c.v6), func(t *testing.T) {
			s := testSpec(c.dir, c.v6)
			g := newGenerator(t, s)
			dirty := bytes.Clone(g.frame)
			stampEnd := len(dirty) - (s.Size - ipHeaderLen(s.Sessions[0].UE) - 8) + 24
			copy(dirty, bytes.Repeat([]byte{0xa5}, stampEnd))
			onCPU(t, 0, func() {
				if err := g.setWorkers([]int{0}, RunOptions{}); err != nil {
					t.Fatal(err)
				}
				start := monotonic(t)
				for i := range 2*s.FlowCount() + 1 {
					flow, seq := i%s.FlowCount(), uint64(i/s.FlowCount())
					ret, out := runXDP(t, g.Program(), dirty)
					now := monotonic(t)
					if ret != xdpTX {
						t.Fatalf("frame %d: verdict %d, want XDP_TX", i, ret)
					}
					// flat out, every frame of a batch has the time it began
					stamp := out[len(out)-(s.Size-ipHeaderLen(s.Sessions[0].UE)-8):]
					ts := binary.BigEndian.Uint64(stamp[16:])
					if ts < start || ts > now {
						t.Errorf("frame %d: stamped %d, not between %d and %d", i, ts, start, now)
					}
					if want := sent(s, flow, seq, s.Size, ts); !bytes.Equal(out, want) {
						t.Fatalf("frame %d (flow %d, seq %d):\n got %x\nwant %x", i, flow, seq, out, want)
					}
					checkChecksums(t, out)
				}
			})
			got, _ := sentPerFlow(t, g)
			if got[0] != 3 || got[1] != 2 || got[5] != 2 {
				t.Errorf("sent per flow %v, want 3 for flow 0 and 2 for the others", got)
			}
		})
	}
}

// checkChecksums verifies every IPv4 header checksum from first principles
// and every UDP checksum over IPv6 with gopacket.
func checkChecksums(t *testing.T, frame []byte) {
	t.Helper()
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	var ip6 *layers.IPv6 // the header the next UDP checksum covers
	for _, l := range p.Layers() {
		switch l := l.(type) {
		case *layers.IPv4:
			if !ipv4HeaderOK(l.Contents) {
				t.Errorf("IPv4 header checksum %#04x wrong", l.Checksum)
			}
			ip6 = nil
		case *layers.IPv6:
			ip6 = l
		case *layers.UDP:
			if ip6 == nil {
				continue
			}
			l.SetNetworkLayerForChecksum(ip6)
			if err, r := l.VerifyChecksum(); err != nil || !r.Valid {
				t.Errorf("UDP checksum %#04x wrong (want %#04x): %v", l.Checksum, r.Correct, err)
			}
		}
	}
	if el := p.ErrorLayer(); el != nil {
		t.Errorf("frame does not decode: %v", el.Error())
	}
}

// IMIX: frames of 64, 576 and 1500 bytes of IP, 7:4:1, each with its
// lengths and checksums right.
func TestPrivilegedGeneratorIMIX(t *testing.T) {
	for _, dir := range []Direction{Uplink, Downlink} {
		t.Run(dir.String(), func(t *testing.T) {
			s := testSpec(dir, false)
			s.Mix = IMIX
			g := newGenerator(t, s)
			count := map[int]int{}
			onCPU(t, 0, func() {
				if err := g.setWorkers([]int{0}, RunOptions{}); err != nil {
					t.Fatal(err)
				}
				for i := range 24 {
					ret, out := runXDP(t, g.Program(), g.frame)
					if ret != xdpTX {
						t.Fatalf("frame %d: verdict %d", i, ret)
					}
					size := len(out) - (len(g.frame) - 1500)
					count[size]++
					ts := binary.BigEndian.Uint64(out[len(out)-(size-28)+16:])
					if want := sent(s, i%s.FlowCount(), uint64(i/s.FlowCount()), size, ts); !bytes.Equal(out, want) {
						t.Fatalf("frame %d, %d bytes:\n got %x\nwant %x", i, size, out, want)
					}
					checkChecksums(t, out)
				}
			})
			if count[64] != 14 || count[576] != 8 || count[1500] != 2 {
				t.Errorf("sizes %v, want 7:4:1 of 64, 576, 1500", count)
			}
		})
	}
}

// A worker sends its count and no more; at a set rate, nothing before
// its time. Neither the dropped frames nor their flows' sequences count.
func TestPrivilegedGeneratorLimits(t *testing.T) {
	for _, c := range []struct {
		name string
		opts RunOptions
		want []uint32 // verdicts
	}{
		{"count", RunOptions{Count: 3}, []uint32{xdpTX, xdpTX, xdpTX, xdpDrop, xdpDrop}},
		{"rate", RunOptions{Rate: 1}, []uint32{xdpTX, xdpDrop, xdpDrop}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newGenerator(t, testSpec(Downlink, false))
			var got []uint32
			onCPU(t, 0, func() {
				if err := g.setWorkers([]int{0}, c.opts); err != nil {
					t.Fatal(err)
				}
				for range c.want {
					ret, _ := runXDP(t, g.Program(), g.frame)
					got = append(got, ret)
				}
			})
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("verdicts %v, want %v", got, c.want)
			}
			_, total := sentPerFlow(t, g)
			if n, err := g.sentBy(0); err != nil || total != n {
				t.Errorf("flows were sent %d frames, the worker %d (%v)", total, n, err)
			}
		})
	}
}

// IPv4 in an IPv6 G-PDU and the reverse: checksums right, and the sink
// takes what the generator sends.
func TestPrivilegedMixedFamilies(t *testing.T) {
	for _, c := range []struct {
		name        string
		ue6, outer6 bool
	}{{"IPv4 in IPv6", false, true}, {"IPv6 in IPv4", true, false}} {
		t.Run(c.name, func(t *testing.T) {
			s, outer := testSpec(Uplink, c.ue6), testSpec(Uplink, c.outer6)
			s.GNB, s.UPF = outer.GNB, outer.UPF
			g := newGenerator(t, s)
			k := newSink(t, s, Wire)
			onCPU(t, 0, func() {
				if err := g.setWorkers([]int{0}, RunOptions{}); err != nil {
					t.Fatal(err)
				}
				for i := range s.FlowCount() {
					ret, out := runXDP(t, g.Program(), g.frame)
					if ret != xdpTX {
						t.Fatalf("frame %d: verdict %d", i, ret)
					}
					checkChecksums(t, out)
					if ret, _ := runXDP(t, k.Program(), out); ret != xdpDrop {
						t.Fatalf("frame %d: the sink says %d", i, ret)
					}
				}
			})
			if st := stats(t, k, nil); st.Unique != uint64(s.FlowCount()) || len(st.Invalid) != 0 {
				t.Errorf("the sink saw %d unique, invalid %v; want %d valid", st.Unique, st.Invalid, s.FlowCount())
			}
		})
	}
}
