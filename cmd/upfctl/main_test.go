package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/api/apitest"
)

// upfctl runs against the real API handler over HTTP, on the stand-in N4
// of apitest; the clock reads 3h12m after the stand-in started.

var now = apitest.Started.Add(3*time.Hour + 12*time.Minute)

// upfd serves the API on a stand-in with api.token s3cret.
func upfd(t *testing.T) (*httptest.Server, *apitest.N4) {
	n4 := apitest.New()
	srv := httptest.NewServer(api.New(api.Options{N4: n4, Datapath: apitest.Datapath{}, Version: "v0.1.0", Token: "s3cret"}))
	t.Cleanup(srv.Close)
	return srv, n4
}

type result struct {
	out, err string
	code     int
}

// upfctl runs the command with the environment env (KEY=value).
func upfctl(env []string, args ...string) result {
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	code := run(args, &out, &errb, getenv, func() time.Time { return now })
	return result{out.String(), errb.String(), code}
}

func TestTables(t *testing.T) {
	srv, _ := upfd(t)
	for _, c := range []struct {
		name string
		args []string
		out  string
		err  string
	}{
		{"health", []string{"health"}, `
READY   N4        DRAINING
yes     serving   no
`, ""},
		{"associations", []string{"associations"}, `
NODE ID        ADDRESS           STATE       SESSIONS   AGE     RECOVERY TIME STAMP
198.18.4.1     198.18.4.1:8805   up          2          3h11m   2026-11-22T07:00:00Z
smf2.example   198.18.4.5:8805   lost 3h2m   1          3h11m   2026-11-22T06:00:00Z
`, ""},
		{"sessions", []string{"sessions"}, `
SEID   PEER           CP SEID              UE          F-TEID             TUNNEL             PDR   FAR   QER   URR
0x1    198.18.4.1     0xabc                10.45.0.2   0x100@198.18.3.2   0x200@198.18.3.1   2     2     1     1
0x2    198.18.4.1     0xabd                10.45.0.3   0x101@198.18.3.2   -                  2     2     1     1
0x1f   smf2.example   0x7000000000000001   10.45.0.4   0x102@198.18.3.2   0x300@198.18.3.1   2     2     1     1
`, ""},
		{"a page of sessions says how to get the next", []string{"sessions", "--peer", "198.18.4.1", "--limit", "1"}, `
SEID   PEER         CP SEID   UE          F-TEID             TUNNEL             PDR   FAR   QER   URR
0x1    198.18.4.1   0xabc     10.45.0.2   0x100@198.18.3.2   0x200@198.18.3.1   2     2     1     1
`, "1 of 2 sessions; next page: upfctl sessions --peer 198.18.4.1 --limit 1 --cursor 0x1\n"},
		{"sessions by UE", []string{"sessions", "--ue", "10.45.0.4"}, `
SEID   PEER           CP SEID              UE          F-TEID             TUNNEL             PDR   FAR   QER   URR
0x1f   smf2.example   0x7000000000000001   10.45.0.4   0x102@198.18.3.2   0x300@198.18.3.1   2     2     1     1
`, ""},
		{"no sessions match", []string{"sessions", "--teid", "0x999"}, "", "No sessions.\n"},
		{"one session", []string{"session", "0x1"}, `
SEID:      0x1
CP F-SEID: 0xabc at 198.18.4.1
peer:      198.18.4.1

PDRs
ID   PRECEDENCE   SOURCE   F-TEID             UE                SDF FILTERS                                              QFI   OUTER HEADER REMOVAL   FAR   QER   URR
1    255          access   0x100@198.18.3.2   10.45.0.2 (src)   -                                                        -     gtp-u/udp/ipv4         1     1     1
2    255          core     -                  10.45.0.2 (dst)   permit out 17 from 198.18.7.0/24 to assigned 5000-5010   -     -                      2     1     1

FARs
ID   APPLY ACTION   DESTINATION   NETWORK INSTANCE   TUNNEL             BAR
1    FORW           core          internet           -                  -
2    FORW           access        -                  0x200@198.18.3.1   -

QERs
ID   GATE UL/DL   MBR UL/DL   GBR UL/DL   QFI
1    open/open    100M/200M   -/-         9

URRs (counted since each URR was created)
ID   METHOD   TRIGGERS      UL PACKETS   UL BYTES   DL PACKETS   DL BYTES
1    volume   PERIO,VOLTH   10           920        5            7000
`, ""},
		{"stats", []string{"stats"}, `
VERDICT       PACKETS
redirected    15
transmitted   1
passed        12
dropped       7
aborted       0

Drops
REASON       PACKETS
mbr          3
no_session   4

Interfaces
INTERFACE   RX PACKETS   RX BYTES   TX PACKETS   TX BYTES
n3          24           2400       6            8000
n6          10           7200       10           920
n9          0            0          0            0
`, ""},
		{"drain", []string{"drain"}, "\nnot draining: new sessions are accepted\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := upfctl(nil, append([]string{"--api", srv.URL}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.err)
			}
			if c.out != "" && r.out != c.out[1:] {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.out, c.out[1:])
			}
			if r.err != c.err {
				t.Errorf("stderr %q, want %q", r.err, c.err)
			}
		})
	}
	if r := upfctl(nil, "--api", srv.URL, "session", "2"); !strings.Contains(r.out, "2    BUFF,NOCP") {
		t.Errorf("session 2 (decimal), its downlink buffered:\n%s", r.out)
	}
}

func TestVersion(t *testing.T) {
	srv, _ := upfd(t)
	r := upfctl(nil, "--api", srv.URL, "version")
	for _, want := range []string{"upfd:    v0.1.0\n", "node ID: 198.18.4.2\n", "started: 2026-11-22T08:00:00Z (3h12m ago)\n", "upfctl:  "} {
		if !strings.Contains(r.out, want) {
			t.Errorf("version output lacks %q:\n%s", want, r.out)
		}
	}
}

// health --wait waits for an upfd that is starting: one that answers only
// after a while, and one not ready yet.
func TestHealthWaits(t *testing.T) {
	srv, _ := upfd(t)
	var calls atomic.Int32
	starting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"ready": false, "n4": "starting", "draining": false, "reason": "N4 is starting"}`))
			return
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(starting.Close)
	if r := upfctl(nil, "--api", starting.URL, "health", "--wait", "10s"); r.code != 0 || !strings.Contains(r.out, "yes") {
		t.Errorf("an upfd getting ready: exit %d, %q %q; want ready", r.code, r.out, r.err)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	start := time.Now()
	if r := upfctl(nil, "--api", gone.URL, "health", "--wait", "300ms"); r.code != 1 || !strings.Contains(r.err, "cannot reach upfd") || time.Since(start) < 300*time.Millisecond {
		t.Errorf("no upfd: exit %d, %q after %v; want exit 1 once --wait is up", r.code, r.err, time.Since(start))
	}
}

// upfctl's version needs no upfd: without an answer it gives its own and
// says why upfd's is missing; -o json, the API's answer, has none to give.
func TestVersionWithoutUpfd(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	r := upfctl(nil, "--api", gone.URL, "version")
	want := "upfd:   no answer: cannot reach upfd at " + gone.URL + ": is upfd running with api.listen set?"
	if r.code != 0 || !strings.HasPrefix(r.out, want) || !strings.Contains(r.out, "\nupfctl: ") || r.err != "" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 0 and stdout starting %q, then upfctl's line", r.code, r.out, r.err, want)
	}
	if r := upfctl(nil, "--api", gone.URL, "-o", "json", "version"); r.code != 1 || r.out != "" {
		t.Errorf("-o json without upfd: exit %d, stdout %q; want exit 1 and nothing", r.code, r.out)
	}
}

// -o json prints what the API answered, byte for byte.
func TestJSONIsTheAPIs(t *testing.T) {
	srv, _ := upfd(t)
	for _, c := range []struct {
		args []string
		path string
	}{
		{[]string{"health"}, "/ready"},
		{[]string{"version"}, "/version"},
		{[]string{"associations"}, "/associations"},
		{[]string{"sessions", "--limit", "2"}, "/sessions?limit=2"},
		{[]string{"session", "0x1f"}, "/sessions/0x1f"},
		{[]string{"stats"}, "/stats"},
		{[]string{"drain"}, "/drain"},
	} {
		t.Run(c.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + api.Prefix + c.path)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, flags := range [][]string{{"-o", "json"}, {"--output=json"}} {
				args := append(append([]string{"--api", srv.URL}, c.args...), flags...) // flags after the verb
				if r := upfctl(nil, args...); r.code != 0 || r.out != string(want) {
					t.Errorf("upfctl %v: exit %d, stdout:\n%s\nwant:\n%s", args, r.code, r.out, want)
				}
			}
		})
	}
}

func TestDrain(t *testing.T) {
	srv, n4 := upfd(t)
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		says string
		on   bool
	}{
		{"on without a token", nil, []string{"drain", "on"}, 1, "this needs upfd's api.token: pass it with --token or UPFCTL_TOKEN", false},
		{"on with the wrong token", nil, []string{"--token", "guess", "drain", "on"}, 1, "upfd refused the token: it is not upfd's api.token", false},
		{"on", nil, []string{"--token", "s3cret", "drain", "on"}, 0, "draining: new sessions are refused", true},
		{"shown", nil, []string{"drain"}, 0, "draining: new sessions are refused", true},
		{"off, the token from the environment", []string{"UPFCTL_TOKEN=s3cret"}, []string{"drain", "off"}, 0, "not draining", false},
		{"neither on nor off", nil, []string{"--token", "s3cret", "drain", "maybe"}, 2, `drain takes on or off, not "maybe"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := upfctl(c.env, append([]string{"--api", srv.URL}, c.args...)...)
			if r.code != c.code || !strings.Contains(r.out+r.err, c.says) {
				t.Errorf("exit %d, output %q%q; want exit %d saying %q", r.code, r.out, r.err, c.code, c.says)
			}
			if n4.Draining() != c.on {
				t.Errorf("draining %v, want %v", n4.Draining(), c.on)
			}
		})
	}
}

func TestErrorsSayWhatToDo(t *testing.T) {
	srv, _ := upfd(t)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html>hello</html>"))
	}))
	t.Cleanup(html.Close)
	readOnly := httptest.NewServer(api.New(api.Options{N4: apitest.New(), Datapath: apitest.Datapath{}}))
	t.Cleanup(readOnly.Close)
	stopped := apitest.New()
	stopped.Stopped = true
	stopping := httptest.NewServer(api.New(api.Options{N4: stopped, Datapath: apitest.Datapath{}}))
	t.Cleanup(stopping.Close)

	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		says string
	}{
		{"upfd not running", nil, []string{"--api", gone.URL, "sessions"}, 1,
			"cannot reach upfd at " + gone.URL + ": is upfd running with api.listen set?"},
		{"the default address from the environment", []string{"UPFCTL_API=" + gone.URL}, []string{"health"}, 1,
			"cannot reach upfd at " + gone.URL},
		{"something else on the port", nil, []string{"--api", html.URL, "stats"}, 1, "not upfd's JSON: is --api upfd's api.listen address?"},
		{"writes with no api.token configured", nil, []string{"--api", readOnly.URL, "--token", "x", "drain", "on"}, 1, "set api.token in upfd's configuration"},
		{"N4 stopped: not ready", nil, []string{"--api", stopping.URL, "health"}, 1, "upfd is not ready: N4 has stopped serving"},
		{"N4 stopped: no sessions to list", nil, []string{"--api", stopping.URL, "sessions"}, 1, "upfd is not serving N4"},
		{"an unknown session", nil, []string{"--api", srv.URL, "session", "0x99"}, 1, "no session with SEID 0x99: list them with upfctl sessions"},
		{"a bad limit names the flag", nil, []string{"--api", srv.URL, "sessions", "--limit", "0"}, 1, `--limit: "0": want a number from 1 to 1000`},
		{"a bad UE address names the flag", nil, []string{"--api", srv.URL, "sessions", "--ue", "10.45"}, 1, "--ue: "},
		{"a bad SEID", nil, []string{"--api", srv.URL, "session", "0xzz"}, 2, `SEID "0xzz": want a number`},
		{"no SEID", nil, []string{"--api", srv.URL, "session"}, 2, "session takes one SEID"},
		{"an SEID to sessions", nil, []string{"--api", srv.URL, "sessions", "0x1"}, 2, "for one session, upfctl session 0x1"},
		{"an unknown verb", nil, []string{"sesions"}, 2, `unknown verb "sesions"`},
		{"no verb", nil, nil, 2, "no verb"},
		{"an unknown flag", nil, []string{"stats", "--all"}, 2, "flag provided but not defined: -all"},
		{"an unknown output", nil, []string{"-o", "yaml", "stats"}, 2, `-o "yaml": want table or json`},
		{"not a URL", nil, []string{"--api", "127.0.0.1:8080", "stats"}, 2, `want a URL such as http://127.0.0.1:8080`},
		{"arguments to a verb that takes none", nil, []string{"--api", srv.URL, "stats", "now"}, 2, `stats takes no arguments, not "now"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := upfctl(c.env, c.args...)
			if r.code != c.code || !strings.Contains(r.err, c.says) {
				t.Errorf("exit %d, stderr %q; want exit %d saying %q", r.code, r.err, c.code, c.says)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"sessions", "-h"}} {
		if r := upfctl(nil, args...); r.code != 0 || !strings.Contains(r.out, "Usage: upfctl") {
			t.Errorf("upfctl %v: exit %d, %q", args, r.code, r.out)
		}
	}
}

func TestAge(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{42 * time.Second, "42s"},
		{119 * time.Second, "119s"},
		{5*time.Minute + 12*time.Second, "5m12s"},
		{45 * time.Minute, "45m"},
		{5*time.Hour + 3*time.Minute, "5h3m"},
		{50 * time.Hour, "2d2h"},
	} {
		if got := age(c.d); got != c.want {
			t.Errorf("age(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
