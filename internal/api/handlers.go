package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/pfcp"
)

// health: the process answers HTTP (liveness).
func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, Health{Status: "ok"})
}

// readyWithin bounds readiness: a probe must answer quickly, and a serve
// loop that takes a second to run an empty function is not serving N4.
const readyWithin = time.Second

// ready: N4 is served when its serve loop runs a function for us.
func (h *handler) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyWithin)
	defer cancel()
	rd := Readiness{Ready: true, N4: "serving", Draining: h.opts.N4.Draining()}
	if err := h.opts.N4.Ready(ctx); err != nil {
		rd.Ready, rd.N4, rd.Reason = false, "not answering", n4Trouble(err, readyWithin)
		if errors.Is(err, pfcp.ErrStopped) {
			rd.N4 = "stopped"
		}
		reply(w, http.StatusServiceUnavailable, rd)
		return
	}
	reply(w, http.StatusOK, rd)
}

func (h *handler) version(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, Version{Version: h.opts.Version, Go: runtime.Version(),
		NodeID: h.opts.N4.NodeID(), Started: timeOf(h.opts.N4.Recovery())})
}

func (h *handler) associations(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := h.n4Context(r)
	defer cancel()
	as, err := h.opts.N4.Associations(ctx)
	if err != nil {
		h.n4Failed(w, err)
		return
	}
	out := Associations{Associations: make([]Association, 0, len(as))}
	for _, a := range as {
		out.Associations = append(out.Associations, associationOf(a))
	}
	reply(w, http.StatusOK, out)
}

func (h *handler) sessions(w http.ResponseWriter, r *http.Request) {
	q, perr := parseSessionQuery(r.URL.Query())
	if perr != nil {
		badParam(w, perr.param, perr.msg)
		return
	}
	ctx, cancel := h.n4Context(r)
	defer cancel()
	page, err := h.opts.N4.Sessions(ctx, q.filter, q.after, q.limit)
	if err != nil {
		h.n4Failed(w, err)
		return
	}
	out := SessionList{Sessions: make([]SessionSummary, 0, len(page.Sessions)), Total: page.Total}
	for _, x := range page.Sessions {
		out.Sessions = append(out.Sessions, summaryOf(x))
	}
	if page.More && len(page.Sessions) > 0 {
		out.NextCursor = seidString(page.Sessions[len(page.Sessions)-1].SEID)
	}
	reply(w, http.StatusOK, out)
}

func (h *handler) session(w http.ResponseWriter, r *http.Request) {
	arg := r.PathValue("seid")
	seid, err := ParseID(arg, 64)
	if err != nil {
		badParam(w, "seid", fmt.Sprintf("%q: %v", arg, err))
		return
	}
	ctx, cancel := h.n4Context(r)
	defer cancel()
	v, err := h.opts.N4.Session(ctx, seid)
	switch {
	case errors.Is(err, pfcp.ErrNoSession):
		fail(w, http.StatusNotFound, fmt.Sprintf("no session with SEID %s: list them at %s/sessions", seidString(seid), Prefix))
	case errors.Is(err, pfcp.ErrStopped) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		h.n4Failed(w, err)
	case err != nil:
		fail(w, http.StatusInternalServerError, err.Error())
	default:
		reply(w, http.StatusOK, sessionOf(v))
	}
}

func (h *handler) stats(w http.ResponseWriter, r *http.Request) {
	s, err := h.opts.Datapath.Stats()
	if err != nil {
		fail(w, http.StatusInternalServerError, "read the datapath's counters: "+err.Error())
		return
	}
	reply(w, http.StatusOK, statsOf(s))
}

func (h *handler) drain(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, Drain{Draining: h.opts.N4.Draining()})
}

// setDrain turns draining on or off: {"draining": true}.
func (h *handler) setDrain(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	var body struct {
		Draining *bool `json:"draining"`
	}
	if err := readBody(r, &body); err != nil || body.Draining == nil {
		why := "missing"
		if err != nil {
			why = err.Error()
		}
		reply(w, http.StatusBadRequest, Error{Error: fmt.Sprintf(`body: %s; send {"draining": true} or {"draining": false}`, why), Parameter: "draining"})
		return
	}
	h.opts.N4.SetDraining(*body.Draining)
	h.opts.Log.Info("api: drain set", "draining", *body.Draining, "from", r.RemoteAddr)
	reply(w, http.StatusOK, Drain{Draining: h.opts.N4.Draining()})
}

// authorized checks a write's bearer token against api.token, answering
// the client itself when it is refused.
func (h *handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Token == "" {
		fail(w, http.StatusForbidden, "writes are disabled: set api.token in upfd's configuration, then send it as Authorization: Bearer <token>")
		return false
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="upfd"`)
		fail(w, http.StatusUnauthorized, "this write needs the token: send Authorization: Bearer <api.token>")
		return false
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(h.opts.Token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="upfd", error="invalid_token"`)
		fail(w, http.StatusUnauthorized, "the bearer token is not upfd's api.token")
		return false
	}
	return true
}

func (h *handler) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(OpenAPI)
}
