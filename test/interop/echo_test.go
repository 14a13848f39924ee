package interop

import (
	"encoding/binary"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedPfcpsimEcho runs upfd with GTP-U path management on (an
// Echo Request every second, a path failed after two unanswered) and a gNB
// that answers Echo Requests, while pfcpsim creates a session, modifies it
// to forward and deletes it. Until the modification pfcpsim's downlink FAR
// drops, with an Outer Header Creation to 0.0.0.0 (TEID 0); after it, the
// FAR forwards to the gNB. upfd must find no path failed, and so send no
// Node Report: pfcpsim would take one for the response to its next request.
func TestPrivilegedPfcpsimEcho(t *testing.T) {
	testenv.RequirePrivileges(t)
	lab := testenv.NewLab(t)
	n4 := capture(t, lab.UPF, "n4")
	n4.keepBytes(true)
	cfg := strings.Replace(upfdConfig(t), "  echo_interval: 0\n", "  echo_interval: 1s\n  echo_retries: 2\n", 1)
	log, _ := testenv.StartUPFD(t, lab.UPF, cfg)
	sim := startPfcpsim(t, lab.SMF)
	waitReady(t, lab.UPF, log)
	echoes := answerEchoes(t, lab)

	sim.must(t, 10*time.Second, "service", "configure", "--n3-addr", "198.18.3.2", "--remote-peer-addr", "198.18.4.2")
	sim.must(t, 10*time.Second, "service", "associate")
	b := batch{base: 1, count: 1, pool: "10.45.0.0/16", filters: []string{allow}}
	sim.must(t, time.Minute, b.args("create")...)
	// Four echo intervals: more than a path takes to fail.
	const settle = 4 * time.Second
	time.Sleep(settle)
	if out, _, err := sim.ctl(time.Minute, b.args("modify")...); err != nil {
		t.Errorf("pfcpsim could not modify the session to forward: %v\n%s", err, out)
	}
	before := echoes.Load()
	time.Sleep(settle)
	if n := echoes.Load() - before; n < 2 {
		t.Errorf("the gNB got %d Echo Requests in %v once pfcpsim's FAR forwarded to it, want one a second", n, settle)
	}
	if out, _, err := sim.ctl(time.Minute, b.args("delete")...); err != nil {
		t.Errorf("pfcpsim could not delete the session: %v\n%s", err, out)
	}
	for _, m := range n4.since(0) {
		if m.typ == 12 && m.fromUPF { // Node Report Request
			var failure []string
			for _, l := range strings.Split(log.String(), "\n") {
				if strings.Contains(l, "path failure") {
					failure = append(failure, l)
				}
			}
			t.Errorf("upfd sent a Node Report (%v, for the remote GTP-U peer %s): a path failed:\n%s", m, failedPeer(m.raw), strings.Join(failure, "\n"))
			break
		}
	}
}

// failedPeer is the Remote GTP-U Peer of a Node Report Request's path
// failure report.
func failedPeer(raw []byte) string {
	msg, err := message.Parse(raw)
	if err != nil {
		return err.Error()
	}
	r, ok := msg.(*message.NodeReportRequest)
	if !ok || r.UserPlanePathFailureReport == nil {
		return "none"
	}
	kids, err := r.UserPlanePathFailureReport.ValueAsGrouped()
	if err != nil {
		return err.Error()
	}
	var peers []string
	for _, k := range kids {
		if f, err := k.RemoteGTPUPeer(); err == nil {
			peers = append(peers, f.IPv4Address.String())
		}
	}
	return strings.Join(peers, ", ")
}

// answerEchoes answers the Echo Requests that reach the gNB (198.18.3.1)
// and counts them.
func answerEchoes(t *testing.T, lab testenv.Lab) *atomic.Int64 {
	c := testenv.ListenUDP(t, lab.GNB, gnbAddr+":2152")
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			k, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return // closed at cleanup
			}
			// An Echo Request with its sequence number (S set).
			if k < 12 || buf[1] != 1 || buf[0]&0x02 == 0 {
				continue
			}
			n.Add(1)
			// Echo Response: the same sequence number, Recovery 0 (TS 29.281 §7.2.2).
			resp := []byte{0x32, 2, 0, 6, 0, 0, 0, 0, buf[8], buf[9], 0, 0, 14, 0}
			binary.BigEndian.PutUint16(resp[2:], uint16(len(resp)-8))
			c.WriteToUDP(resp, from)
		}
	}()
	t.Cleanup(func() { c.Close(); <-done })
	return &n
}
