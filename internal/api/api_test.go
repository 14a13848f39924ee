package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/api/apitest"
)

// These tests run the real handler on the stand-in of apitest; the
// privileged ones run it on the real N4 server and datapath.

func newFake(t *testing.T, token string) (*contract, *apitest.N4) {
	n4 := apitest.New()
	return newContract(t, api.New(api.Options{N4: n4, Datapath: apitest.Datapath{}, Version: "test", Token: token})), n4
}

func TestEveryEndpointFollowsTheDocument(t *testing.T) {
	k, _ := newFake(t, "s3cret")
	for _, c := range []struct {
		call call
		want int
	}{
		{call{method: "GET", path: "/api/v1/health"}, 200},
		{call{method: "GET", path: "/api/v1/ready"}, 200},
		{call{method: "GET", path: "/api/v1/version"}, 200},
		{call{method: "GET", path: "/api/v1/associations"}, 200},
		{call{method: "GET", path: "/api/v1/sessions"}, 200},
		{call{method: "GET", path: "/api/v1/sessions?limit=1"}, 200},
		{call{method: "GET", path: "/api/v1/sessions/0x1"}, 200},
		{call{method: "GET", path: "/api/v1/sessions/31"}, 200},
		{call{method: "GET", path: "/api/v1/sessions/0x99"}, 404},
		{call{method: "GET", path: "/api/v1/stats"}, 200},
		{call{method: "GET", path: "/api/v1/drain"}, 200},
		{call{method: "PUT", path: "/api/v1/drain", body: `{"draining": true}`, token: "s3cret"}, 200},
		{call{method: "GET", path: "/api/v1/openapi.yaml"}, 200},
	} {
		k.do(c.call, c.want)
	}
	k.allExercised()
}

func TestSessionPaging(t *testing.T) {
	k, _ := newFake(t, "")
	var seids []string
	cursor := ""
	for range 4 {
		l := decode[api.SessionList](t, k.do(call{method: "GET", path: "/api/v1/sessions?limit=2" + cursor}, 200))
		if l.Total != 3 {
			t.Errorf("total %d, want 3 on every page", l.Total)
		}
		for _, s := range l.Sessions {
			seids = append(seids, s.SEID)
		}
		if l.NextCursor == "" {
			break
		}
		cursor = "&cursor=" + l.NextCursor
	}
	if want := []string{"0x1", "0x2", "0x1f"}; !slices.Equal(seids, want) {
		t.Errorf("pages gave %v, want %v", seids, want)
	}
}

func TestSessionFilters(t *testing.T) {
	k, _ := newFake(t, "")
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"by peer", "peer=smf2.example", []string{"0x1f"}},
		{"by UE address", "ue=10.45.0.3", []string{"0x2"}},
		{"by local F-TEID in hex", "teid=0x102", []string{"0x1f"}},
		{"by local F-TEID in decimal", "teid=256", []string{"0x1"}},
		{"by the gNB's TEID", "teid=0x300", []string{"0x1f"}},
		{"by peer and UE, matching none", "peer=smf2.example&ue=10.45.0.2", []string{}},
		{"an address no session has", "ue=2001:db8::1", []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := decode[api.SessionList](t, k.do(call{method: "GET", path: "/api/v1/sessions?" + c.query}, 200))
			got := []string{}
			for _, s := range l.Sessions {
				got = append(got, s.SEID)
			}
			if !slices.Equal(got, c.want) || l.Total != len(c.want) {
				t.Errorf("sessions %v (total %d), want %v", got, l.Total, c.want)
			}
		})
	}
}

func TestBadParametersAreNamed(t *testing.T) {
	k, _ := newFake(t, "")
	for _, c := range []struct {
		name, path, param string
	}{
		{"limit not a number", "/api/v1/sessions?limit=ten", "limit"},
		{"limit zero", "/api/v1/sessions?limit=0", "limit"},
		{"limit over the maximum", "/api/v1/sessions?limit=1001", "limit"},
		{"UE not an address", "/api/v1/sessions?ue=10.45.0", "ue"},
		{"TEID over 32 bits", "/api/v1/sessions?teid=0x100000000", "teid"},
		{"TEID not a number", "/api/v1/sessions?teid=abc", "teid"},
		{"cursor not an SEID", "/api/v1/sessions?cursor=next", "cursor"},
		{"peer empty", "/api/v1/sessions?peer=", "peer"},
		{"a parameter given twice", "/api/v1/sessions?limit=1&limit=2", "limit"},
		{"an unknown parameter", "/api/v1/sessions?peers=smf", "peers"},
		{"SEID not a number", "/api/v1/sessions/abc", "seid"},
		{"SEID over 64 bits", "/api/v1/sessions/0x10000000000000000", "seid"},
		{"SEID written in octal", "/api/v1/sessions/0o17", "seid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := decode[api.Error](t, k.do(call{method: "GET", path: c.path, bad: true}, 400))
			if e.Parameter != c.param || !strings.HasPrefix(e.Error, c.param+": ") {
				t.Errorf("error %+v, want one naming %q", e, c.param)
			}
		})
	}
}

func TestWritesNeedTheToken(t *testing.T) {
	for _, c := range []struct {
		name       string
		configured string // api.token
		header     string // Authorization
		want       int
		says       string
	}{
		{"no token configured: writes are off", "", "Bearer anything", 403, "set api.token"},
		{"no Authorization", "s3cret", "", 401, "Authorization: Bearer <api.token>"},
		{"another scheme", "s3cret", "Basic czNjcmV0", 401, "Authorization: Bearer"},
		{"the wrong token", "s3cret", "Bearer guess", 401, "not upfd's api.token"},
		{"the token", "s3cret", "Bearer s3cret", 200, ""},
		{"the scheme in lower case", "s3cret", "bearer s3cret", 200, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n4 := apitest.New()
			h := api.New(api.Options{N4: n4, Datapath: apitest.Datapath{}, Token: c.configured})
			k := newContract(t, withHeader(h, "Authorization", c.header))
			body := k.do(call{method: "PUT", path: "/api/v1/drain", body: `{"draining": true}`}, c.want)
			if c.want != 200 {
				if e := decode[api.Error](t, body); !strings.Contains(e.Error, c.says) {
					t.Errorf("error %q does not say %q", e.Error, c.says)
				}
			}
			if n4.Draining() != (c.want == 200) {
				t.Errorf("draining %v after a %d", n4.Draining(), c.want)
			}
		})
	}
}

// withHeader sets a request header before h sees the request.
func withHeader(h http.Handler, key, value string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if value != "" {
			r.Header.Set(key, value)
		}
		h.ServeHTTP(w, r)
	})
}

func TestDrainBody(t *testing.T) {
	k, n4 := newFake(t, "s3cret")
	for _, c := range []struct {
		name, body string
		want       int
		draining   bool
	}{
		{"on", `{"draining": true}`, 200, true},
		{"on again: no change", `{"draining": true}`, 200, true},
		{"off", `{"draining": false}`, 200, false},
		{"no field", `{}`, 400, false},
		{"an unknown field", `{"draining": true, "now": true}`, 400, false},
		{"not JSON", `on`, 400, false},
		{"a string, not a boolean", `{"draining": "yes"}`, 400, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := k.do(call{method: "PUT", path: "/api/v1/drain", body: c.body, token: "s3cret", bad: c.want != 200}, c.want)
			if c.want == 400 {
				if e := decode[api.Error](t, body); e.Parameter != "draining" {
					t.Errorf("error %+v does not name draining", e)
				}
			}
			if n4.Draining() != c.draining {
				t.Errorf("draining %v, want %v", n4.Draining(), c.draining)
			}
		})
	}
}

func TestOutsideTheDocument(t *testing.T) {
	k, _ := newFake(t, "")
	for _, c := range []struct {
		name, method, path string
		want               int
	}{
		{"an unknown endpoint", "GET", "/api/v1/sesions", 404},
		{"outside the prefix", "GET", "/metrics", 404},
		{"a method an endpoint does not take", "DELETE", "/api/v1/drain", 405},
		{"a write to a read-only endpoint", "POST", "/api/v1/sessions", 405},
	} {
		t.Run(c.name, func(t *testing.T) {
			k.do(call{method: c.method, path: c.path, bad: true}, c.want)
		})
	}
}

func TestNotReadyOnceN4Stops(t *testing.T) {
	k, n4 := newFake(t, "")
	n4.Stopped = true
	r := decode[api.Readiness](t, k.do(call{method: "GET", path: "/api/v1/ready"}, 503))
	if r.Ready || r.N4 != "stopped" {
		t.Errorf("readiness %+v, want not ready, N4 stopped", r)
	}
	k.do(call{method: "GET", path: "/api/v1/associations"}, 503)
	k.do(call{method: "GET", path: "/api/v1/health"}, 200)
}

func TestParseID(t *testing.T) {
	for _, c := range []struct {
		in   string
		bits int
		want uint64
		ok   bool
	}{
		{"0x1f", 64, 31, true},
		{"0X1F", 64, 31, true},
		{"31", 64, 31, true},
		{"017", 64, 17, true}, // decimal, not octal
		{"0xffffffff", 32, 0xffffffff, true},
		{"0x100000000", 32, 0, false},
		{"0x", 64, 0, false},
		{"", 64, 0, false},
		{"-1", 64, 0, false},
		{"1_000", 64, 0, false},
		{"0b101", 64, 0, false},
	} {
		got, err := api.ParseID(c.in, c.bits)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseID(%q, %d) = %d, %v; want %d, ok %v", c.in, c.bits, got, err, c.want, c.ok)
		}
	}
}
