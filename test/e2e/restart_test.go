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
	pin := fmt.Sprintf("/sys/fs/bpf/sluice-e2e-restart-%d", os.Getpid())
	t.Cleanup(func() { os.RemoveAll(pin) }) // runs after upfd stops: the programs go with the pins
	cfg := config + fmt.Sprintf("pin_path: %s\nstate_file: %s\n", pin, filepath.Join(t.TempDir(), "state.journal"))
	log, stop := testenv.StartUPFD(t, lab.UPF, cfg)
	s := newSMF(t, lab)
	s.associate(log)
	est := s.ask(establishment(s.next(), "10.45.0.2", volumeURR(1))).(*message.SessionEstablishmentResponse)
	if c := cause(t, est.Cause); c != 1 {
		t.Fatalf("establishment: cause %d\n%s", c, log)
	}
	up, _ := est.UPFSEID.FSEID()
	teid := createdTEID(t, est)
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2152")
	dnRx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5001")
	dnTx := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5002")

	// 20,000 frames each way at 10,000 per second; upfd restarts after
	// the first half second.
	const count, rate = 20_000, 10_000
	upGot, downGot := receiveAsync(dnRx, count), receiveAsync(gnb, count)
	ue := &net.UDPAddr{IP: net.IPv4(10, 45, 0, 2), Port: 40000}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		steady(count, rate, func(i int) {
			sendUplinkFrom(t, gnb, "10.45.0.2", teid, i)
			msg := make([]byte, 100)
			binary.BigEndian.PutUint32(msg, uint32(i))
			dnTx.WriteToUDP(msg, ue)
		})
	}()
	time.Sleep(500 * time.Millisecond)
	before := s.ask(message.NewHeartbeatRequest(s.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil)).(*message.HeartbeatResponse)
	began := time.Now()
	stop()
	log2, _ := testenv.StartUPFD(t, lab.UPF, cfg)
	waitFor(t, log2, "serving N4", 10*time.Second)
	t.Logf("upfd restarted in %v", time.Since(began).Round(time.Millisecond))
	<-sent
	if n := len(<-upGot); n != count {
		t.Errorf("uplink: %d of %d datagrams reached the DN across the restart\n%s\n%s", n, count, log, log2)
	}
	if n := len(<-downGot); n != count {
		t.Errorf("downlink: %d of %d G-PDUs reached the gNB across the restart", n, count)
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
	del := s.ask(message.NewSessionDeletionRequest(0, 0, up.SEID, s.next(), 0)).(*message.SessionDeletionResponse)
	if c := cause(t, del.Cause); c != 1 {
		t.Fatalf("deletion after the restart: cause %d\n%s", c, log2)
	}
	want := volume{ul: count * 128, dl: count * 128, ulPkts: count, dlPkts: count}
	if got := usageIn(t, del.UsageReport, 1); got != want {
		t.Errorf("final usage after the restart %+v, want %+v", got, want)
	}
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
