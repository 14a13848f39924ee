package datapath

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// FuzzDatapath feeds arbitrary frames to the N3 or N6 program. Whatever
// arrives, the program never aborts, every packet is counted exactly once,
// and what it sends out is a well-formed frame from one of our ports.
func FuzzDatapath(f *testing.F) {
	ns := testenv.UPF(f)
	d := loadIn(f, ns, Options{})
	if err := d.Apply(baseSession()); err != nil {
		f.Fatal(err)
	}
	f.Add(uplink(ulTunnel, upFlow), false)
	f.Add(uplink(tunnel{src: addrGNB, dst: addrN3, teid: teidUL, qfi: 9, pduType: 1, seq: u16p(7)}, upFlow6), false)
	f.Add(uplink(tunnel{src: addrGNBv6, dst: addrN3v6, teid: teidUL}, upFlow), false)
	f.Add(gtpuFrame(macN3, macGNB, tunnel{src: addrGNB, dst: addrN3, msgType: 1, seq: u16p(1)}, nil), false)
	f.Add(downlink(downFlow), true)
	f.Add(downlink(down6), true)

	f.Fuzz(func(t *testing.T, frame []byte, n6 bool) {
		if len(frame) < 14 || len(frame) > 1600 {
			return // BPF_PROG_RUN wants at least an Ethernet header and one page
		}
		role := N3
		if n6 {
			role = N6
		}
		before, _ := d.Stats()
		v, out := runXDP(t, d, ns, role, frame)
		after, _ := d.Stats()

		var counted uint64
		for i := range after.Verdicts {
			counted += after.Verdicts[i] - before.Verdicts[i]
		}
		if counted != 1 {
			t.Fatalf("verdict counted %d times", counted)
		}
		switch v {
		case Dropped:
			if len(diffDrops(before, after)) != 1 {
				t.Fatalf("dropped with reasons %v", diffDrops(before, after))
			}
		case Passed:
			if !bytes.Equal(out, frame) {
				t.Fatalf("frame passed to the kernel was altered")
			}
		case Transmitted, Redirected:
			checkSent(t, out)
		default:
			t.Fatalf("verdict %d", v)
		}
	})
}

// checkSent: our source MAC, an IP EtherType, and an IP length that is the frame's.
func checkSent(t *testing.T, out []byte) {
	t.Helper()
	if len(out) < 14+20 {
		t.Fatalf("sent a %d-byte frame", len(out))
	}
	src := out[6:12]
	if !bytes.Equal(src, macN3) && !bytes.Equal(src, macN6) && !bytes.Equal(src, macN9) {
		t.Fatalf("sent from %x", src)
	}
	var ipLen int
	switch binary.BigEndian.Uint16(out[12:]) {
	case 0x0800:
		ipLen = int(binary.BigEndian.Uint16(out[16:]))
	case 0x86dd:
		ipLen = 40 + int(binary.BigEndian.Uint16(out[18:]))
	default:
		t.Fatalf("sent EtherType %#x", out[12:14])
	}
	if ipLen != len(out)-14 {
		t.Fatalf("IP length %d in a %d-byte frame", ipLen, len(out))
	}
}
