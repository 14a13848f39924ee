package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/api"
	"github.com/sluice-upf/sluice/internal/buildinfo"
)

// printJSON writes the API's answer as it came: -o json.
func (c *cli) printJSON(a answer) { c.out.Write(a.body) }

func (c *cli) health(g *globals, args []string) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	wait := fs.Duration("wait", 0, "wait up to this long for upfd to answer and be ready")
	pos, err := parseVerb(g, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fmt.Sprintf("health takes no arguments, not %q", strings.Join(pos, " ")))
	}
	if err := c.connect(g); err != nil {
		return err
	}
	// A script that has just started upfd waits here until it answers,
	// ready.
	a, r, err := c.readiness()
	var none *noAnswer
	for end := time.Now().Add(*wait); (errors.As(err, &none) || err == nil && !r.Ready) && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
		a, r, err = c.readiness()
	}
	if err != nil {
		return err
	}
	if c.json {
		c.printJSON(a)
	} else {
		t := c.table("READY", "N4", "DRAINING")
		t.row(yesNo(r.Ready), r.N4, yesNo(r.Draining))
		t.flush()
	}
	if !r.Ready {
		return fmt.Errorf("upfd is not ready: %s", r.Reason)
	}
	return nil
}

// readiness asks upfd whether it is ready.
func (c *cli) readiness() (answer, api.Readiness, error) {
	var r api.Readiness
	a, err := c.client.call("GET", "/ready", nil)
	if err != nil {
		return a, r, err
	}
	if a.status != http.StatusOK && a.status != http.StatusServiceUnavailable {
		return a, r, c.client.refusal(a)
	}
	if err := json.Unmarshal(a.body, &r); err != nil {
		return a, r, fmt.Errorf("upfd's answer does not decode (is upfctl as new as upfd?): %w", err)
	}
	return a, r, nil
}

func (c *cli) version(g *globals, args []string) error {
	if err := c.noArgs(g, "version", args); err != nil {
		return err
	}
	var v api.Version
	a, err := c.client.get("/version", &v)
	var none *noAnswer
	switch {
	case errors.As(err, &none) && !c.json:
		// upfctl's own version needs no upfd.
		t := c.fields()
		t.row("upfd:", "no answer: "+err.Error())
		t.row("upfctl:", buildinfo.Version())
		t.flush()
		return nil
	case err != nil:
		return err
	case c.json:
		c.printJSON(a)
		return nil
	}
	t := c.fields()
	t.row("upfd:", v.Version)
	t.row("go:", v.Go)
	t.row("node ID:", v.NodeID)
	t.row("started:", fmt.Sprintf("%s (%s ago)", stamp(v.Started), age(c.now().Sub(v.Started))))
	t.row("upfctl:", buildinfo.Version())
	t.flush()
	return nil
}

func (c *cli) associations(g *globals, args []string) error {
	if err := c.noArgs(g, "associations", args); err != nil {
		return err
	}
	var as api.Associations
	a, err := c.client.get("/associations", &as)
	if err != nil {
		return err
	}
	if c.json {
		c.printJSON(a)
		return nil
	}
	if len(as.Associations) == 0 {
		fmt.Fprintln(c.errOut, "No associations: no SMF has set one up.")
		return nil
	}
	t := c.table("NODE ID", "ADDRESS", "STATE", "SESSIONS", "AGE", "RECOVERY TIME STAMP")
	for _, x := range as.Associations {
		state := x.State
		if x.LostSince != nil {
			state = "lost " + age(c.now().Sub(*x.LostSince))
		}
		t.row(x.NodeID, x.Address, state, fmt.Sprint(x.Sessions), age(c.now().Sub(x.Since)), stamp(x.Recovery))
	}
	t.flush()
	return nil
}

func (c *cli) sessions(g *globals, args []string) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	q := url.Values{}
	for _, f := range []struct{ name, help string }{
		{"peer", "the SMF's node ID"}, {"ue", "a UE address"}, {"teid", "a local F-TEID or a gNB's TEID"},
		{"limit", "sessions per page"}, {"cursor", "the next page's cursor"},
	} {
		fs.Func(f.name, f.help, func(v string) error { q.Set(f.name, v); return nil })
	}
	pos, err := parseVerb(g, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fmt.Sprintf("sessions takes flags, not %q: for one session, upfctl session %s", strings.Join(pos, " "), pos[0]))
	}
	if err := c.connect(g); err != nil {
		return err
	}
	path := "/sessions"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var l api.SessionList
	a, err := c.client.get(path, &l)
	if err != nil {
		return err
	}
	if c.json {
		c.printJSON(a)
		return nil
	}
	if len(l.Sessions) == 0 {
		fmt.Fprintln(c.errOut, "No sessions.")
		return nil
	}
	t := c.table("SEID", "PEER", "CP SEID", "UE", "F-TEID", "TUNNEL", "PDR", "FAR", "QER", "URR")
	for _, s := range l.Sessions {
		var fteids, tunnels []string
		for _, f := range s.FTEIDs {
			fteids = append(fteids, fteidString(f))
		}
		for _, x := range s.Tunnels {
			tunnels = append(tunnels, tunnelString(x))
		}
		t.row(s.SEID, s.Peer, s.CPSEID, list(s.UEAddresses), list(fteids), list(tunnels),
			fmt.Sprint(s.PDRs), fmt.Sprint(s.FARs), fmt.Sprint(s.QERs), fmt.Sprint(s.URRs))
	}
	t.flush()
	if l.NextCursor != "" {
		q.Set("cursor", l.NextCursor)
		fmt.Fprintf(c.errOut, "%d of %d sessions; next page: upfctl sessions%s\n", len(l.Sessions), l.Total, flagsOf(q))
	}
	return nil
}

// flagsOf writes query parameters back as upfctl's flags.
func flagsOf(q url.Values) string {
	var b strings.Builder
	for _, name := range []string{"peer", "ue", "teid", "limit", "cursor"} {
		if v := q.Get(name); v != "" {
			fmt.Fprintf(&b, " --%s %s", name, v)
		}
	}
	return b.String()
}

func (c *cli) session(g *globals, args []string) error {
	pos, err := parseVerb(g, flag.NewFlagSet("session", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("session takes one SEID (0x1f or 31); list them with upfctl sessions")
	}
	if _, err := api.ParseID(pos[0], 64); err != nil {
		return usageError(fmt.Sprintf("SEID %q: %v", pos[0], err))
	}
	if err := c.connect(g); err != nil {
		return err
	}
	var s api.Session
	a, err := c.client.get("/sessions/"+url.PathEscape(pos[0]), &s)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusNotFound {
		return fmt.Errorf("no session with SEID %s: list them with upfctl sessions", pos[0])
	}
	if err != nil {
		return err
	}
	if c.json {
		c.printJSON(a)
		return nil
	}
	c.describeSession(s)
	return nil
}

func (c *cli) stats(g *globals, args []string) error {
	if err := c.noArgs(g, "stats", args); err != nil {
		return err
	}
	var s api.Stats
	a, err := c.client.get("/stats", &s)
	if err != nil {
		return err
	}
	if c.json {
		c.printJSON(a)
		return nil
	}
	c.describeStats(s)
	return nil
}

func (c *cli) drain(g *globals, args []string) error {
	pos, err := parseVerb(g, flag.NewFlagSet("drain", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	var body *api.Drain
	switch {
	case len(pos) == 0:
	case len(pos) == 1 && (pos[0] == "on" || pos[0] == "off"):
		body = &api.Drain{Draining: pos[0] == "on"}
	default:
		return usageError(fmt.Sprintf("drain takes on or off, not %q", strings.Join(pos, " ")))
	}
	if err := c.connect(g); err != nil {
		return err
	}
	var d api.Drain
	var a answer
	if body == nil {
		a, err = c.client.get("/drain", &d)
	} else {
		a, err = c.client.put("/drain", body, &d)
	}
	if err != nil {
		return err
	}
	if c.json {
		c.printJSON(a)
		return nil
	}
	if d.Draining {
		fmt.Fprintln(c.out, "draining: new sessions are refused (PFCP cause 75, No resources available); existing sessions go on")
	} else {
		fmt.Fprintln(c.out, "not draining: new sessions are accepted")
	}
	return nil
}
