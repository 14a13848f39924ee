package e2e

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"

	"github.com/sluice-upf/sluice/internal/testenv"
)

// TestPrivilegedUPFDKilledUnderTraffic kills a pinned upfd with SIGKILL,
// three times, at random points of a storm of establishments,
// modifications and deletions, while a session carries traffic both ways;
// each time a new upfd starts at once. The SMF retransmits what went
// unanswered, as SMFs do, and sees nothing amiss: every request answered
// Accepted, every session it was told of still there with its F-SEID and
// F-TEID, the same Recovery Time Stamp, not a frame lost, and the final
// usage exact to the byte.
func TestPrivilegedUPFDKilledUnderTraffic(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, seed))
	lab := testenv.NewLab(t)
	cfg := pinnedConfig(t, "crash", config)
	upfd := testenv.StartUPFDProcess(t, lab.UPF, cfg)
	logs := []*testenv.Log{upfd.Log}
	s := newSMF(t, lab)
	s.associate(upfd.Log)
	up, teid := trafficSession(t, s, upfd.Log)
	before := s.ask(message.NewHeartbeatRequest(s.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil)).(*message.HeartbeatResponse)
	const count, rate = 30_000, 10_000 // 3 s each way
	traffic := bothWays(t, lab, teid, count, rate)

	// The killer: three times, after 200 to 700 ms, SIGKILL and a new
	// upfd at once, which must be serving within 10 s.
	killed := make(chan []*testenv.Log)
	go func() {
		var started []*testenv.Log
		defer func() { killed <- started }()
		for range 3 {
			time.Sleep(time.Duration(200+rnd.IntN(500)) * time.Millisecond)
			upfd.Kill()
			upfd = testenv.StartUPFDProcess(t, lab.UPF, cfg)
			started = append(started, upfd.Log)
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(upfd.Log.String(), "serving N4"); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("the upfd started after a kill is not serving within 10 s:\n%s", upfd.Log)
					return
				}
			}
		}
	}()

	// The storm, until the killer is done: each session established,
	// switched to another gNB tunnel, and every other one deleted (the
	// first 800; then all).
	alive := map[string]uint32{} // UE address -> its uplink F-TEID
	var cps []uint64             // the SEIDs upfd gave the sessions alive
	var restarted []*testenv.Log
storm:
	for i := 0; ; i++ {
		select {
		case restarted = <-killed:
			break storm
		default:
		}
		ueAddr := fmt.Sprintf("10.45.%d.%d", 1+i/250, 1+i%250)
		r := s.ask(establishment(s.next(), ueAddr, volumeURR(1))).(*message.SessionEstablishmentResponse)
		if c := cause(t, r.Cause); c != 1 {
			t.Fatalf("storm session %d: establishment cause %d", i, c)
		}
		f, _ := r.UPFSEID.FSEID()
		mod := s.ask(message.NewSessionModificationRequest(0, 0, f.SEID, s.next(), 0,
			ie.NewUpdateFAR(ie.NewFARID(2), ie.NewUpdateForwardingParameters(
				ie.NewOuterHeaderCreation(0x0100, 0x300+uint32(i), "198.18.3.1", "", 0, 0, 0))))).(*message.SessionModificationResponse)
		if c := cause(t, mod.Cause); c != 1 {
			t.Fatalf("storm session %d (SEID %#x): modification cause %d", i, f.SEID, c)
		}
		if i%2 == 1 && len(alive) < 400 { // within max_sessions
			alive[ueAddr] = createdTEID(t, r)
			cps = append(cps, f.SEID)
			continue
		}
		del := s.ask(message.NewSessionDeletionRequest(0, 0, f.SEID, s.next(), 0)).(*message.SessionDeletionResponse)
		if c := cause(t, del.Cause); c != 1 {
			t.Fatalf("storm session %d (SEID %#x): deletion cause %d", i, f.SEID, c)
		}
	}
	logs = append(logs, restarted...)
	t.Logf("storm: %d sessions kept", len(alive))
	upN, downN := traffic.arrived()
	t.Logf("traffic across three kills: uplink %d of %d, downlink %d of %d", upN, count, downN, count)
	if upN != count || downN != count {
		t.Errorf("frames lost across the kills: uplink %d of %d, downlink %d of %d", upN, count, downN, count)
	}
	for i, l := range restarted {
		line, ok := logLine(l, "took over after a crash")
		if !ok {
			t.Errorf("upfd %d after a kill did not take over:\n%s", i+1, l)
		}
		t.Logf("upfd %d: %s", i+1, line)
	}

	// Every session the SMF was told of is there: it answers by its F-SEID,
	// and forwards on its F-TEID.
	for _, seid := range cps {
		r := s.ask(message.NewSessionModificationRequest(0, 0, seid, s.next(), 0, ie.NewQueryURR(ie.NewURRID(1)))).(*message.SessionModificationResponse)
		if c := cause(t, r.Cause); c != 1 {
			t.Errorf("session %#x after the kills: cause %d", seid, c)
		}
	}
	gnb := testenv.ListenUDP(t, lab.GNB, "198.18.3.1:2153") // G-PDUs from another port of the gNB's
	storm := testenv.ListenUDP(t, lab.DN, "198.18.7.10:5003")
	stormGot := receiveAsync(storm, len(alive))
	n := 0
	for ueAddr, teid := range alive {
		sendUplinkTo(t, gnb, ueAddr, 5003, teid, n)
		n++
	}
	if got := len(<-stormGot); got != len(alive) {
		t.Errorf("%d of the %d sessions kept forwarded on their F-TEID after the kills", got, len(alive))
	}

	after := s.ask(message.NewHeartbeatRequest(s.next(), ie.NewRecoveryTimeStamp(smfRecovery), nil)).(*message.HeartbeatResponse)
	if a, b := recoveryOf(t, before), recoveryOf(t, after); !a.Equal(b) {
		t.Errorf("Recovery Time Stamp %v before the kills, %v after: the SMF would drop its sessions", a, b)
	}
	del := s.ask(message.NewSessionDeletionRequest(0, 0, up, s.next(), 0)).(*message.SessionDeletionResponse)
	if c := cause(t, del.Cause); c != 1 {
		t.Fatalf("deletion after the kills: cause %d", c)
	}
	want := volume{ul: uint64(upN) * 128, dl: uint64(downN) * 128, ulPkts: uint64(upN), dlPkts: uint64(downN)}
	if got := usageIn(t, del.UsageReport, 1); got != want {
		t.Errorf("final usage after the kills %+v, want %+v (what arrived)", got, want)
	}
	if t.Failed() {
		for i, l := range logs {
			t.Logf("upfd %d:\n%s", i, l)
		}
	}
}

// logLine is the first line of log that has want.
func logLine(log *testenv.Log, want string) (string, bool) {
	for line := range strings.Lines(log.String()) {
		if strings.Contains(line, want) {
			return strings.TrimSpace(line), true
		}
	}
	return "", false
}
