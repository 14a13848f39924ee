package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/netns"
	"github.com/sluice-upf/sluice/internal/testenv"
)

// upfdConfig is the lab's upfd, with
//   - a Heartbeat Request every second: pfcpsim never answers them (its
//     receive loop drops them) but sends its own every 5 s, and upfd must
//     take any message as a sign of life (the window is heartbeat_retries
//     x t1, 9 s), so pfcpsim must stay associated throughout;
//   - no GTP-U Echo: the test's gNB socket counts what it gets
//     (TestPrivilegedPfcpsimEcho turns it on);
//   - room for the 10,000 sessions.
func upfdConfig(t *testing.T) string {
	const peers = "  peers: [198.18.4.1]\n"
	if !strings.Contains(testenv.UPFDLab, peers) {
		t.Fatalf("testenv.UPFDLab has no %q to add heartbeat_interval after", peers)
	}
	return strings.Replace(testenv.UPFDLab, peers, peers+"  heartbeat_interval: 1s\n", 1) + `max_sessions: 20000
xdp_mode: native
gtpu:
  echo_interval: 0
`
}

// associated checks that upfd holds pfcpsim's association, up, and never
// found it lost.
func associated(t *testing.T, ns string, log *testenv.Log) {
	t.Helper()
	var as api.Associations
	apiGet(t, ns, "/associations", &as)
	if len(as.Associations) != 1 || as.Associations[0].NodeID != "198.18.4.1" || as.Associations[0].State != "up" {
		t.Errorf("upfd's associations: %+v, want pfcpsim's (198.18.4.1), up", as.Associations)
	}
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "peer lost") {
			t.Errorf("upfd found pfcpsim lost: %s", l)
		}
	}
}

// apiGet reads upfd's REST API (on loopback in the UPF namespace) into v.
func apiGet(t *testing.T, ns, path string, v any) {
	t.Helper()
	if err := apiTry(ns, path, v); err != nil {
		t.Fatal(err)
	}
}

func apiTry(ns, path string, v any) error {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (c net.Conn, err error) {
		err = netns.Do(ns, func() error { // the socket is made here, in ns
			c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := cl.Get("http://127.0.0.1:8080/api/v1" + path)
	if err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	return nil
}

// waitReady waits until upfd serves N4, for at most 10 s: pfcpsim sends
// its Association Setup Request once.
func waitReady(t *testing.T, ns string, log *testenv.Log) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var r api.Readiness
		if err = apiTry(ns, "/ready", &r); err == nil {
			return
		}
	}
	t.Fatalf("upfd is not ready after 10 s: %v\n%s", err, log)
}

// sessionCount is how many sessions upfd holds.
func sessionCount(t *testing.T, ns string) int {
	t.Helper()
	var l api.SessionList
	apiGet(t, ns, "/sessions?limit=1", &l)
	return l.Total
}

// dropReasons are the datapath's drop counters the test accounts for.
var dropReasons = []string{"no_session", "no_pdr", "far_drop", "far_missing", "gate_closed", "mbr", "quota", "buffered"}

// drops reads the datapath's drop counters.
func drops(t *testing.T, ns string) map[string]uint64 {
	t.Helper()
	var s api.Stats
	apiGet(t, ns, "/stats", &s)
	return s.Drops
}

// wantDrops checks that the counters went up by exactly want since before
// (a reason want leaves out: not at all).
func wantDrops(t *testing.T, ns, what string, before map[string]uint64, want map[string]uint64) {
	t.Helper()
	after := drops(t, ns)
	var bad []string
	for _, r := range dropReasons {
		if d := after[r] - before[r]; d != want[r] {
			bad = append(bad, fmt.Sprintf("%s %d (want %d)", r, d, want[r]))
		}
	}
	if bad != nil {
		t.Errorf("%s: upfd's drops: %s", what, strings.Join(bad, ", "))
	}
}
