package smf

// The SMF emulator against the real upfd, built from ./cmd/upfd and run
// in the UPF namespace of a lab of our own.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/testenv"
	"github.com/sluice-upf/sluice/lab/topo"
)

// upfdConfig is upfd in the lab, with room for the tests' sessions.
// max_sessions is 16 times what they need: upfd keeps lists of several PDRs
// in a direction (Open5GS's uplink and Router Solicitation PDRs share a
// TEID) for one session in sixteen (datapath.SizesFor).
const upfdConfig = testenv.UPFDLab + `teid_range: 0x100-0xffffff
max_sessions: 16384
xdp_mode: native
gtpu:
  echo_interval: 0
`

// testTimers are quick enough that a lost request shows within seconds,
// slow enough that a loaded UPF is not sent copies while it works.
const (
	testT1 = time.Second
	testN1 = 3
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// startUPFD runs upfd in the lab's UPF namespace until the test ends; its
// log is the returned function's.
func startUPFD(t *testing.T, lab testenv.Lab) (log func() string) {
	t.Helper()
	l, _ := testenv.StartUPFD(t, lab.UPF, upfdConfig)
	return l.String
}

// dialUPFD associates a client with profile p in the lab's SMF namespace,
// waiting up to 10 s for upfd to listen. At cleanup whatever sessions are
// left are deleted.
func dialUPFD(t *testing.T, lab testenv.Lab, log func() string, cfg Config) *Client {
	t.Helper()
	cfg.Namespace, cfg.T1, cfg.N1 = lab.SMF, testT1, testN1
	c, err := Dial(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.Delete(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		c.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = c.Associate(ctx)
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("association: %v\n%s", err, log())
		}
	}
}

func logPhases(t *testing.T, phases ...Phase) {
	t.Helper()
	for _, p := range phases {
		t.Log(p)
	}
}

// TestPrivilegedProfiles: each profile's thousand sessions are
// established, switched to the second gNB and back, and deleted, every
// request accepted, every session with what the traffic generator needs.
func TestPrivilegedProfiles(t *testing.T) {
	testenv.RequirePrivileges(t)
	lab := testenv.NewLab(t)
	log := startUPFD(t, lab)
	const n = 1000
	for _, p := range Profiles {
		t.Run(string(p), func(t *testing.T) {
			ctx := context.Background()
			c := dialUPFD(t, lab, log, Config{Profile: p})
			phases, err := c.Establish(ctx, n)
			logPhases(t, phases...)
			if err != nil {
				t.Fatalf("%v\n%s", err, log())
			}
			checkSessions(t, c.Sessions(), n, topo.GNBN3)
			for _, to := range []netip.Addr{topo.GNB2N3, topo.GNBN3} {
				ph, err := c.SwitchPath(ctx, to)
				logPhases(t, ph)
				if err != nil {
					t.Fatalf("%v\n%s", err, log())
				}
				checkSessions(t, c.Sessions(), n, to)
			}
			// An MBR on half of them, and taken away again: the profile's
			// QER takes it in each.
			for _, r := range []*Bitrate{{UplinkKbps: 10_000, DownlinkKbps: 20_000}, nil} {
				ph, err := c.SetMBR(ctx, n/2, r)
				logPhases(t, ph)
				if err != nil || ph.Accepted != n/2 {
					t.Fatalf("MBR %v: %d accepted, %v\n%s", r, ph.Accepted, err, log())
				}
			}
			ph, err := c.Delete(ctx)
			logPhases(t, ph)
			if err != nil {
				t.Fatalf("%v\n%s", err, log())
			}
			if left := c.Sessions(); len(left) != 0 {
				t.Errorf("%d sessions left after deleting them all", len(left))
			}
		})
	}
}

// checkSessions: n sessions, UE addresses from the pool's first in order,
// a UP SEID and an uplink TEID each, no TEID twice, downlink to gnb.
func checkSessions(t *testing.T, got []Session, n int, gnb netip.Addr) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d sessions, want %d", len(got), n)
	}
	teids := map[uint32]bool{}
	for i, s := range got {
		if want := topo.UEAddr(topo.UEPool, i); s.UE != want {
			t.Fatalf("session %d: UE %v, want %v", i, s.UE, want)
		}
		if s.UPSEID == 0 || s.UplinkTEID == 0 || s.UplinkAddr != topo.UPFN3 || teids[s.UplinkTEID] {
			t.Fatalf("session %d: UP SEID %#x, uplink TEID %#x at %v (a TEID of another session: %v)",
				i, s.UPSEID, s.UplinkTEID, s.UplinkAddr, teids[s.UplinkTEID])
		}
		teids[s.UplinkTEID] = true
		if s.GNB != gnb || s.DownlinkTEID != uint32(i)+1 || s.QFI == 0 {
			t.Fatalf("session %d: downlink TEID %#x at %v, QFI %d; want TEID %#x at %v", i, s.DownlinkTEID, s.GNB, s.QFI, i+1, gnb)
		}
	}
}

// TestPrivilegedRefusals: a request upfd refuses comes back as an error
// that names the session, the request, the cause and the Offending IE,
// and changes nothing on our side.
func TestPrivilegedRefusals(t *testing.T) {
	testenv.RequirePrivileges(t)
	lab := testenv.NewLab(t)
	log := startUPFD(t, lab)
	ctx := context.Background()
	c := dialUPFD(t, lab, log, Config{})
	if _, err := c.Establish(ctx, 1); err != nil {
		t.Fatalf("%v\n%s", err, log())
	}
	first := c.live()[0]
	// another is a session of its own but for what change says.
	another := func(change func(s *Session)) *Session {
		s := &Session{CPSEID: 1000, UE: topo.UEAddr(topo.UEPool, 500), GNB: topo.GNBN3, DownlinkTEID: 501, UPSEID: first.UPSEID + 1000, slot: 500}
		c.flow.prepare(s)
		change(s)
		return s
	}
	for _, tc := range []struct {
		name      string
		sess      *Session
		request   func(*Session) *op
		message   string
		cause     uint8
		offending uint16 // 0: not checked
	}{
		{"establishment with a UE address in use", another(func(s *Session) { s.UE = first.UE }),
			c.establishment, "Session Establishment Request", 73, 93},
		{"establishment with a CP F-SEID in use", another(func(s *Session) { s.CPSEID = first.CPSEID }),
			c.establishment, "Session Establishment Request", 64, 57},
		{"modification of an unknown session", another(func(*Session) {}),
			c.pathSwitch(topo.GNB2N3), "Session Modification Request", 65, 0},
		{"deletion of an unknown session", another(func(*Session) {}),
			c.deletion, "Session Deletion Request", 65, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			phase, err := c.run(ctx, tc.name, []*Session{tc.sess}, tc.request)
			var refused *CauseError
			if !errors.As(err, &refused) {
				t.Fatalf("want a refusal, got %v", err)
			}
			if refused.Request != tc.message || refused.CPSEID != tc.sess.CPSEID || refused.UE != tc.sess.UE ||
				refused.Cause != tc.cause || tc.offending != 0 && refused.Offending != tc.offending {
				t.Errorf("got %+v, want %s for session %#x, cause %d, offending IE %d", refused, tc.message, tc.sess.CPSEID, tc.cause, tc.offending)
			}
			for _, want := range []string{tc.message, fmt.Sprintf("session %#x", tc.sess.CPSEID), fmt.Sprintf("cause %d (%s)", tc.cause, CauseName(tc.cause))} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if phase.Refused[tc.cause] != 1 || phase.Accepted != 0 {
				t.Errorf("phase %v: want one refusal with cause %d", phase, tc.cause)
			}
		})
	}
	if got := c.Sessions(); len(got) != 1 || got[0].CPSEID != first.CPSEID || got[0].GNB != topo.GNBN3 {
		t.Errorf("sessions after the refusals: %+v, want only the first, unchanged", got)
	}
}

// TestPrivilegedChurn: while sessions come and go at a set rate, the
// population stays as it was, and everything the churn made is gone
// when it returns. Open5GS's sessions are activated on the way.
func TestPrivilegedChurn(t *testing.T) {
	testenv.RequirePrivileges(t)
	lab := testenv.NewLab(t)
	log := startUPFD(t, lab)
	ctx := context.Background()
	for _, tc := range []struct {
		profile   Profile
		perSecond int
		duration  time.Duration
	}{
		{Plain, 100, 2 * time.Second},
		{Open5GS, 100, time.Second},
	} {
		t.Run(string(tc.profile), func(t *testing.T) {
			ticks := tc.perSecond * int(tc.duration/time.Second)
			base := ticks / 2 // each switched twice: back at the first gNB
			c := dialUPFD(t, lab, log, Config{Profile: tc.profile, Window: 16})
			if _, err := c.Establish(ctx, base); err != nil {
				t.Fatalf("%v\n%s", err, log())
			}
			res, err := c.Churn(ctx, Churn{PerSecond: tc.perSecond, Duration: tc.duration})
			logPhases(t, res.Phases()...)
			if err != nil {
				t.Fatalf("%v\n%s", err, log())
			}
			if res.Establish.Accepted != ticks || res.Switch.Accepted != ticks ||
				res.Delete.Accepted+res.Cleanup.Accepted != ticks {
				t.Errorf("churn of %d a kind: %d established, %d switched, %d+%d deleted",
					ticks, res.Establish.Accepted, res.Switch.Accepted, res.Delete.Accepted, res.Cleanup.Accepted)
			}
			if tc.profile == Open5GS && res.Activate.Accepted != ticks {
				t.Errorf("%d of %d sessions activated", res.Activate.Accepted, ticks)
			}
			checkSessions(t, c.Sessions(), base, topo.GNBN3)
		})
	}
}
