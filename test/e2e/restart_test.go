package e2e

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedUPFDRestartUnderTraffic restarts a pinned upfd while
// traffic flows both ways: not a frame is lost, the SMF sees the same
// Recovery Time Stamp, and the session's final usage counts every frame,
// from before, during and after the restart.
func TestPrivilegedUPFDRestartUnderTraffic(t *testing.T) {
	lab := testenv.NewLab(t)
	cfg := pinnedConfig(t, "restart", config)
	log, stop := testenv.StartUPFD(t, lab.UPF, cfg)
	s := newSMF(t, lab)
	s.associate(log)
	up, teid := trafficSession(t, s, log)

	// 20,000 frames each way at 10,000 per second; upfd restarts after
	// the first half second.
	const count, rate = 20_000, 10_000
	traffic := bothWays(t, lab, teid, count, rate)
	time.Sleep(500 * time.Millisecond)
	before := s.ask(message.NewHeartbeatRequest(s.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil)).(*message.HeartbeatResponse)
	began := time.Now()
	stop()
	log2, _ := testenv.StartUPFD(t, lab.UPF, cfg)
	waitFor(t, log2, "serving N4", 10*time.Second)
	t.Logf("upfd restarted in %v", time.Since(began).Round(time.Millisecond))
	if upN, downN := traffic.arrived(); upN != count || downN != count {
		t.Errorf("across the restart: uplink %d of %d datagrams reached the DN, downlink %d of %d G-PDUs the gNB\n%s\n%s",
			upN, count, downN, count, log, log2)
	}
	if !strings.Contains(log2.String(), "sessions=1") {
		t.Errorf("the new upfd did not take the session back:\n%s", log2)
	}

	// The SMF cannot tell: same Recovery Time Stamp, and the session
	// answers with every frame counted.
	after := s.ask(message.NewHeartbeatRequest(s.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil)).(*message.HeartbeatResponse)
	if a, b := recoveryOf(t, before), recoveryOf(t, after); !a.Equal(b) {
		t.Errorf("Recovery Time Stamp %v before the restart, %v after: the SMF would drop its sessions", a, b)
	}
	del := s.ask(message.NewSessionDeletionRequest(0, 0, up, s.next(), 0)).(*message.SessionDeletionResponse)
	if c := cause(t, del.Cause); c != 1 {
		t.Fatalf("deletion after the restart: cause %d\n%s", c, log2)
	}
	want := volume{ul: count * 128, dl: count * 128, ulPkts: count, dlPkts: count}
	if got := usageIn(t, del.UsageReport, 1); got != want {
		t.Errorf("final usage after the restart %+v, want %+v", got, want)
	}
}

// pinnedConfig is base with pin_path and state_file of the test's own;
// the pins go at cleanup, after upfd stops (cleanups run last first):
// the programs go with them.
func pinnedConfig(t *testing.T, name, base string) string {
	pin := fmt.Sprintf("/sys/fs/bpf/sluice-e2e-%s-%d", name, os.Getpid())
	t.Cleanup(func() { os.RemoveAll(pin) })
	return base + fmt.Sprintf("pin_path: %s\nstate_file: %s\n", pin, filepath.Join(t.TempDir(), "state.journal"))
}

// trafficSession establishes the session of UE 10.45.0.2, a volume URR
// on both PDRs: its SEID and uplink F-TEID.
func trafficSession(t *testing.T, s *smf, log fmt.Stringer) (seid uint64, teid uint32) {
	t.Helper()
	est := s.ask(establishment(s.next(), "10.45.0.2", volumeURR(1))).(*message.SessionEstablishmentResponse)
	if c := cause(t, est.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	up, _ := est.UPFSEID.FSEID()
	return up.SEID, createdTEID(t, est)
}

// twoWay is traffic through the session of UE 10.45.0.2 (uplink on teid)
// both ways at once, in the background: count frames each way at rate.
type twoWay struct {
	sent           chan struct{}
	upGot, downGot <-chan [][]byte
}

func bothWays(t *testing.T, lab testenv.Lab, teid uint32, count, rate int) *twoWay {
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	dnRx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5001")
	dnTx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5002")
	w := &twoWay{sent: make(chan struct{}), upGot: receiveAsync(dnRx, count), downGot: receiveAsync(gnb, count)}
	ue := &net.UDPAddr{IP: net.IPv4(10, 45, 0, 2), Port: 40000}
	go func() {
		defer close(w.sent)
		steady(count, rate, func(i int) {
			sendUplinkFrom(t, gnb, "10.45.0.2", teid, i)
			msg := make([]byte, 100)
			binary.BigEndian.PutUint32(msg, uint32(i))
			dnTx.WriteToUDP(msg, ue)
		})
	}()
	return w
}

// arrived waits until the traffic is sent and what comes has come: the
// frames that arrived each way.
func (w *twoWay) arrived() (up, down int) {
	<-w.sent
	return len(<-w.upGot), len(<-w.downGot)
}

// steady calls send for 0..n-1 at rate per second, in 1 ms batches.
func steady(n, rate int, send func(i int)) {
	perTick := max(rate/1000, 1)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i := 0; i < n; {
		for end := min(i+perTick, n); i < end; i++ {
			send(i)
		}
		<-tick.C
	}
}

// waitFor waits until log has want, or fails after d.
func waitFor(t *testing.T, log *testenv.Log, want string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); !strings.Contains(log.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("upfd did not log %q within %v:\n%s", want, d, log)
		}
	}
}

func recoveryOf(t *testing.T, r *message.HeartbeatResponse) time.Time {
	t.Helper()
	if r.RecoveryTimeStamp == nil {
		t.Fatal("Heartbeat Response without a Recovery Time Stamp")
	}
	ts, err := r.RecoveryTimeStamp.RecoveryTimeStamp()
	if err != nil {
		t.Fatal(err)
	}
	return ts
}
