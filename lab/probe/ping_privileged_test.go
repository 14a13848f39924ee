package probe

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/topo"
)

// upfdConfig runs upfd on the lab's defaults, quiet on N4 and N3 but for
// what the test asks.
const upfdConfig = `node_id: 198.18.4.2
pfcp:
  listen: 198.18.4.2:8805
  peers: [198.18.4.1]
  heartbeat_interval: 0
interfaces:
  - {name: n3, role: n3, address: 198.18.3.2}
  - {name: n6, role: n6}
dnns:
  - {name: internet, pools: [10.45.0.0/16]}
xdp_mode: native
gtpu:
  echo_interval: 0
`

func TestPrivilegedPingThroughUPFD(t *testing.T) {
	lab := testLab(t)
	startUPFD(t, lab)
	const dlTEID = 0x200
	ulTEID := establish(t, lab, dlTEID)
	for _, end := range [][2]string{{lab.GNB, topo.DevN3}, {lab.DN, topo.DevN6}} {
		c, err := lab.AttachPass(end[0], end[1])
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}

	replies := 0
	res, err := Ping(context.Background(), PingOptions{
		Namespace: lab.GNB, UE: ue, TEIDUplink: ulTEID, TEIDDownlink: dlTEID,
		Count: 5, Interval: 20 * time.Millisecond, Sizes: []int{56, MaxPayload}, Timeout: time.Second,
		OnReply: func(Reply) { replies++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.Write(&out, target.String())
	t.Logf("%s", out.String())
	for _, s := range append(res.Sizes, res.Total) {
		if s.Loss != 0 || s.Min <= 0 || s.Max >= time.Second || s.Min > s.Avg || s.Avg > s.Max {
			t.Errorf("%d bytes: %d of %d answered, rtt %v/%v/%v; want all, between 0 and 1 s", s.Size, s.Received, s.Sent, s.Min, s.Avg, s.Max)
		}
	}
	if res.Total.Sent != 10 || replies != 10 {
		t.Errorf("%d sent, %d replies reported; want 10 and 10", res.Total.Sent, replies)
	}

	// The replies came through the session: in a tunnel upfd does not
	// know, nothing comes back.
	res, err = Ping(context.Background(), PingOptions{Namespace: lab.GNB, UE: ue, TEIDUplink: ulTEID + 1, TEIDDownlink: dlTEID,
		Count: 1, Timeout: 200 * time.Millisecond})
	if err != nil || res.Total.Received != 0 {
		t.Errorf("through an unknown tunnel: %d replies, %v; want none", res.Total.Received, err)
	}
}

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var labSeq atomic.Int64

// testLab builds a lab named as the topo tests name theirs (so that they
// clean up after a test process that died), torn down at cleanup.
func testLab(t *testing.T) topo.Lab {
	t.Helper()
	testenv.RequirePrivileges(t)
	name := fmt.Sprintf("sluicetest-%d-p%d", os.Getpid(), labSeq.Add(1))
	t.Cleanup(func() {
		if err := topo.Down(name); err != nil {
			t.Errorf("tear down: %v", err)
		}
	})
	lab, err := topo.Up(topo.Options{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// startUPFD runs upfd in the lab's UPF namespace until the test ends,
// showing its log if the test failed.
func startUPFD(t *testing.T, lab topo.Lab) {
	t.Helper()
	var log fmt.Stringer
	t.Cleanup(func() { // runs after upfd's stop, which StartUPFD registers later
		if t.Failed() && log != nil {
			t.Logf("upfd's log:\n%s", log)
		}
	})
	log, _ = testenv.StartUPFD(t, lab.UPF, upfdConfig)
}

// establish associates with upfd from the SMF namespace and creates a
// session for ue: uplink on a TEID upfd chooses (returned), downlink to
// the gNB in dlTEID.
func establish(t *testing.T, lab topo.Lab, dlTEID uint32) uint32 {
	t.Helper()
	var conn *net.UDPConn
	err := lab.Do(lab.SMF, func() (err error) {
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: topo.SMFN4.AsSlice(), Port: 8805})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	smf := topo.SMFN4.String()
	assoc := ask(t, conn, message.NewAssociationSetupRequest(1, ie.NewNodeID(smf, "", ""), ie.NewRecoveryTimeStamp(time.Now())))
	if c, _ := assoc.(*message.AssociationSetupResponse).Cause.Cause(); c != ie.CauseRequestAccepted {
		t.Fatalf("association: cause %d", c)
	}
	est := ask(t, conn, message.NewSessionEstablishmentRequest(0, 0, 0, 2, 0,
		ie.NewNodeID(smf, "", ""), ie.NewFSEID(1, topo.SMFN4.AsSlice(), nil),
		ie.NewCreatePDR(ie.NewPDRID(1), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceAccess), ie.NewFTEID(0x0d, 0, nil, nil, 1), // CHOOSE: upfd picks the TEID
				ie.NewNetworkInstance("internet"), ie.NewUEIPAddress(0x02, ue.String(), "", 0, 0)),
			ie.NewOuterHeaderRemoval(0, 0), ie.NewFARID(1)),
		ie.NewCreatePDR(ie.NewPDRID(2), ie.NewPrecedence(255),
			ie.NewPDI(ie.NewSourceInterface(ie.SrcInterfaceCore), ie.NewNetworkInstance("internet"),
				ie.NewUEIPAddress(0x06, ue.String(), "", 0, 0)),
			ie.NewFARID(2)),
		ie.NewCreateFAR(ie.NewFARID(1), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceCore), ie.NewNetworkInstance("internet"))),
		ie.NewCreateFAR(ie.NewFARID(2), ie.NewApplyAction(0x02),
			ie.NewForwardingParameters(ie.NewDestinationInterface(ie.DstInterfaceAccess),
				ie.NewOuterHeaderCreation(0x0100, dlTEID, topo.GNBN3.String(), "", 0, 0, 0))),
	)).(*message.SessionEstablishmentResponse)
	if c, _ := est.Cause.Cause(); c != ie.CauseRequestAccepted {
		t.Fatalf("establishment: cause %d", c)
	}
	for _, created := range est.CreatedPDR {
		kids, _ := created.CreatedPDR()
		for _, k := range kids {
			if f, err := k.FTEID(); err == nil {
				return f.TEID
			}
		}
	}
	t.Fatal("no F-TEID in the Created PDRs")
	return 0
}

// ask sends a request every half second until its response comes, for
// at most 10 s (upfd may still be starting).
func ask(t *testing.T, conn *net.UDPConn, m message.Message) message.Message {
	t.Helper()
	b := make([]byte, m.MarshalLen())
	if err := m.MarshalTo(b); err != nil {
		t.Fatal(err)
	}
	upf := &net.UDPAddr{IP: topo.UPFN4.AsSlice(), Port: 8805}
	buf := make([]byte, 65535)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, err := conn.WriteToUDP(b, upf); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		for {
			n, err := conn.Read(buf)
			if err != nil {
				break // time to send again
			}
			if r, err := message.Parse(bytes.Clone(buf[:n])); err == nil && r.Sequence() == m.Sequence() && r.MessageType() != m.MessageType() {
				return r
			}
		}
	}
	t.Fatalf("upfd did not answer %s", m.MessageTypeName())
	return nil
}
