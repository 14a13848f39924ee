// Package api is upfd's REST API: JSON over HTTP for operators and for
// upfctl. It answers health and readiness, the version, the SMFs'
// associations, sessions (paged, filtered, and one by one with its rules
// and live counters), the datapath's statistics, and drain.
//
// openapi.yaml, in this directory, is the contract: it is served at
// /api/v1/openapi.yaml and the tests hold every answer to it.
//
// Everything is read-only unless a token is configured; writes then need
// "Authorization: Bearer <token>". Sessions and associations belong to the
// PFCP server's serve loop, so they are read there, through N4.Do.
package api

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
)

// OpenAPI is the API's OpenAPI 3 document.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Prefix is where every endpoint lives.
const Prefix = "/api/v1"

// N4 is what the API reads of the PFCP server: *pfcp.Server. The methods
// with a context wait for its serve loop, which owns sessions and
// associations.
type N4 interface {
	Ready(ctx context.Context) error
	Associations(ctx context.Context) ([]pfcp.Association, error)
	Sessions(ctx context.Context, f pfcp.SessionFilter, after uint64, limit int) (pfcp.SessionPage, error)
	Session(ctx context.Context, seid uint64) (pfcp.SessionView, error)
	Draining() bool
	SetDraining(on bool)
	NodeID() string
	Recovery() time.Time
}

// Datapath is what the API reads of the datapath: *datapath.Datapath.
type Datapath interface {
	Stats() (datapath.Stats, error)
}

// Options are what the API serves.
type Options struct {
	N4       N4
	Datapath Datapath
	Version  string // as `upfd version` prints it
	// Token is api.token: writes need it as a bearer token. Empty: every
	// write is refused.
	Token string
	Log   *slog.Logger
	// Timeout bounds a wait for the serve loop; 0: 5 s. Readiness waits
	// at most a second.
	Timeout time.Duration
}

type handler struct {
	opts Options
	mux  *http.ServeMux
	// methods are each path's methods, for 405 answers.
	methods map[string][]string
}

// New is the API's handler. Serve it with Serve, or mount it anywhere:
// it answers only under Prefix (404 elsewhere).
func New(opts Options) http.Handler {
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	h := &handler{opts: opts, mux: http.NewServeMux(), methods: map[string][]string{}}
	h.route("GET", "/health", h.health)
	h.route("GET", "/ready", h.ready)
	h.route("GET", "/version", h.version)
	h.route("GET", "/associations", h.associations)
	h.route("GET", "/sessions", h.sessions)
	h.route("GET", "/sessions/{seid}", h.session)
	h.route("GET", "/stats", h.stats)
	h.route("GET", "/drain", h.drain)
	h.route("PUT", "/drain", h.setDrain)
	h.route("GET", "/openapi.yaml", h.openAPI)
	for path, methods := range h.methods {
		h.mux.HandleFunc(path, methodNotAllowed(methods))
	}
	h.mux.HandleFunc("/", notFound)
	return h.mux
}

func (h *handler) route(method, path string, f http.HandlerFunc) {
	h.mux.HandleFunc(method+" "+Prefix+path, f)
	h.methods[Prefix+path] = append(h.methods[Prefix+path], method)
}

func methodNotAllowed(methods []string) http.HandlerFunc {
	allow := strings.Join(methods, ", ")
	if slices.Contains(methods, "GET") {
		allow += ", HEAD"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		fail(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: this endpoint takes %s", r.Method, r.URL.Path, allow))
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	fail(w, http.StatusNotFound, fmt.Sprintf("no endpoint %s: the endpoints are listed in %s/openapi.yaml", r.URL.Path, Prefix))
}

// reply writes v as indented JSON: people read it with curl too.
func reply(w http.ResponseWriter, status int, v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<api.token>", not "\u003capi.token\u003e"
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		fmt.Fprintf(&b, "{\"error\": %q}\n", "encode the answer: "+err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func fail(w http.ResponseWriter, status int, msg string) { reply(w, status, Error{Error: msg}) }

// badParam is a 400 naming the parameter at fault.
func badParam(w http.ResponseWriter, param, msg string) {
	reply(w, http.StatusBadRequest, Error{Error: param + ": " + msg, Parameter: param})
}

// n4Context bounds a wait for the serve loop.
func (h *handler) n4Context(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), h.opts.Timeout)
}

// n4Failed answers a request the serve loop did not serve: 503, saying why.
func (h *handler) n4Failed(w http.ResponseWriter, err error) {
	fail(w, http.StatusServiceUnavailable, n4Trouble(err, h.opts.Timeout))
}

// n4Trouble says why the serve loop did not run a function.
func n4Trouble(err error, waited time.Duration) string {
	switch {
	case errors.Is(err, pfcp.ErrStopped):
		return "N4 has stopped serving: upfd is shutting down"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the N4 serve loop did not answer within %s: upfd is overloaded or stuck; see its log", waited)
	}
	return "N4: " + err.Error()
}

// readBody reads a small JSON body into v, refusing unknown fields.
func readBody(r *http.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}
