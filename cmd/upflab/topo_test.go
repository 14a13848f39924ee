package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/lab/topo"
)

func TestWriteDevicesWarnsOfAVethWithoutXDPOrGRO(t *testing.T) {
	devs := []topo.Device{
		{Namespace: "l-gnb", Name: "n3", MAC: topo.MACGNBN3, Up: true, Queues: 1,
			Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.3.1/24")}, Peer: "l-upf/n3"},
		{Namespace: "l-upf", Name: "n3", MAC: topo.MACUPFN3, Up: true, Queues: 1, GRO: true,
			Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.3.2/24")}, Peer: "l-gnb/n3", XDP: []string{"xdp_n3#7 native"}},
		{Namespace: "l-upf", Name: "n6", MAC: topo.MACUPFN6, Up: true, Queues: 1, GRO: true,
			Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.6.2/24")}, Peer: "l-dn/n6", XDP: []string{"xdp_n6#8 native"}},
		{Namespace: "l-dn", Name: "lo", MAC: net.HardwareAddr{0, 0, 0, 0, 0, 0}, Up: true, Queues: 1},
		{Namespace: "l-dn", Name: "n6", MAC: topo.MACDNN6, Up: true, Queues: 1, GRO: true,
			Addrs: []netip.Prefix{netip.MustParsePrefix("198.18.6.1/24")}, Peer: "l-upf/n6"},
	}
	var b strings.Builder
	if err := writeDevices(&b, devs); err != nil {
		t.Fatal(err)
	}
	want := `NAMESPACE  DEVICE  MAC                STATE  QUEUES  GRO  ADDRESSES      PEER      XDP
l-gnb      n3      02:00:00:00:03:01  up     1       off  198.18.3.1/24  l-upf/n3  -
l-upf      n3      02:00:00:00:03:02  up     1       on   198.18.3.2/24  l-gnb/n3  xdp_n3#7 native
l-upf      n6      02:00:00:00:06:02  up     1       on   198.18.6.2/24  l-dn/n6   xdp_n6#8 native
l-dn       lo      00:00:00:00:00:00  up     1       -    -              -         -
l-dn       n6      02:00:00:00:06:01  up     1       on   198.18.6.1/24  l-upf/n6  -
note: l-gnb/n3 has neither an XDP program nor GRO on, so the veth drops what XDP on l-upf/n3 sends out of it; ` + "`upflab topo up`" + ` turns GRO on
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTopoUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"sideways"}, {"up", "extra"}, {"up", "--queues", "x"}, {"down", "--n9"}} {
		if err := runTopo(args); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("topo %q: %v, want a usage error", args, err)
		}
	}
}

// A lab a run is using is not taken down under it.
func TestTopoDownRefusesALabInUse(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the claims are kept in " + topo.ClaimDir)
	}
	name := fmt.Sprintf("downtest-%d", os.Getpid())
	release, err := topo.Claim(name)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := runTopo([]string{"down", "--name", name}); !errors.Is(err, topo.ErrInUse) {
		t.Errorf("topo down of a lab in use: %v, want ErrInUse", err)
	}
}
