package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/api"
)

// client talks to upfd's API.
type client struct {
	base  string // e.g. http://127.0.0.1:8080
	token string
	http  *http.Client
}

func newClient(base, token string) (*client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--api %q: want a URL such as http://127.0.0.1:8080 (upfd's api.listen)", base)
	}
	return &client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// answer is what the API said: its status and JSON body.
type answer struct {
	status int
	body   []byte
}

// call sends a request to an API path and returns the answer if it is
// JSON from upfd, whatever its status.
func (c *client) call(method, path string, body any) (answer, error) {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+api.Prefix+path, in)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, c.unreachable(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return answer{}, fmt.Errorf("read upfd's answer from %s: %w", c.base, err)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" {
		return answer{}, fmt.Errorf("%s answered %s with %q, not upfd's JSON: is --api upfd's api.listen address?", c.base, resp.Status, ct)
	}
	return answer{resp.StatusCode, b}, nil
}

// noAnswer is a request that upfd did not answer: it may not be running.
type noAnswer struct{ msg string }

func (e *noAnswer) Error() string { return e.msg }

// unreachable says what to do when the request did not get an answer.
func (c *client) unreachable(err error) error {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return &noAnswer{fmt.Sprintf("cannot resolve %s: check --api", dns.Name)}
	case errors.As(err, &op) && op.Op == "dial":
		return &noAnswer{fmt.Sprintf("cannot reach upfd at %s: is upfd running with api.listen set? (%v)", c.base, op.Err)}
	case isTimeout(err):
		return &noAnswer{fmt.Sprintf("upfd at %s did not answer within %s: it may be overloaded", c.base, c.http.Timeout)}
	}
	return &noAnswer{fmt.Sprintf("cannot talk to upfd at %s: %v", c.base, err)}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// get reads an API path into v (a pointer) and returns the answer too, for
// -o json. A refusal is an error that says what to do.
func (c *client) get(path string, v any) (answer, error) {
	a, err := c.call("GET", path, nil)
	return a, c.decode(a, err, v)
}

func (c *client) put(path string, body, v any) (answer, error) {
	a, err := c.call("PUT", path, body)
	return a, c.decode(a, err, v)
}

func (c *client) decode(a answer, err error, v any) error {
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return c.refusal(a)
	}
	if err := json.Unmarshal(a.body, v); err != nil {
		return fmt.Errorf("upfd's answer does not decode (is upfctl as new as upfd?): %w", err)
	}
	return nil
}

// apiError is a refusal by the API.
type apiError struct {
	status int
	msg    string
	param  string // the parameter at fault, if the API named one
}

func (e *apiError) Error() string { return e.msg }

// refusal turns an answer that is not 200 into an error that says what
// to do.
func (c *client) refusal(a answer) error {
	var body api.Error
	if err := json.Unmarshal(a.body, &body); err != nil || body.Error == "" {
		body.Error = fmt.Sprintf("upfd answered %d: %s", a.status, bytes.TrimSpace(a.body))
	}
	e := &apiError{status: a.status, msg: body.Error, param: body.Parameter}
	switch a.status {
	case http.StatusUnauthorized:
		e.msg = "this needs upfd's api.token: pass it with --token or UPFCTL_TOKEN"
		if c.token != "" {
			e.msg = "upfd refused the token: it is not upfd's api.token; pass that with --token or UPFCTL_TOKEN"
		}
	case http.StatusServiceUnavailable:
		e.msg = "upfd is not serving N4: " + e.msg
	case http.StatusBadRequest:
		// The API names its query parameters; upfctl's flags have their names.
		if p := e.param; p != "" && p != "seid" && p != "draining" {
			e.msg = "--" + e.msg
		}
	}
	return e
}
