package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/sluice-upf/sluice/internal/api"
)

// contract serves an API handler over real HTTP and holds every request
// and answer to openapi.yaml: the status must be one the operation
// documents, the body must match its schema. It records which operations
// were exercised, so a test can require them all.
type contract struct {
	t      *testing.T
	srv    *httptest.Server
	router routers.Router
	seen   map[string]bool // operationId -> exercised
	doc    *openapi3.T
}

func newContract(t *testing.T, h http.Handler) *contract {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid OpenAPI 3: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	doc.Servers = openapi3.Servers{{URL: srv.URL}} // the document's is the default api.listen
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &contract{t: t, srv: srv, router: router, seen: map[string]bool{}, doc: doc}
}

// call is one request; bad marks a request made to be refused, which the
// document need not accept (its answer is still checked).
type call struct {
	method, path string
	body         string
	token        string // sent as a bearer token if set
	bad          bool
}

// do sends c, checks the answer against the document and its status
// against want, and returns the body.
func (k *contract) do(c call, want int) []byte {
	k.t.Helper()
	req, err := http.NewRequest(c.method, k.srv.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		k.t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := k.srv.Client().Do(req)
	if err != nil {
		k.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		k.t.Fatal(err)
	}
	if resp.StatusCode != want {
		k.t.Errorf("%s %s: status %d, want %d: %s", c.method, c.path, resp.StatusCode, want, body)
	}
	k.check(c, req, resp, body)
	return body
}

func (k *contract) check(c call, req *http.Request, resp *http.Response, body []byte) {
	k.t.Helper()
	route, params, err := k.router.FindRoute(req)
	if err != nil {
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			k.checkError(c, body) // outside the document: still a JSON error
			return
		}
		k.t.Errorf("%s %s is not in openapi.yaml: %v", c.method, c.path, err)
		return
	}
	k.seen[route.Operation.OperationID] = true
	opts := &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if c.body != "" {
		req.Body = io.NopCloser(strings.NewReader(c.body))
	}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && !c.bad {
		k.t.Errorf("%s %s: the request does not follow openapi.yaml: %v", c.method, c.path, err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(body)), Options: opts}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		k.t.Errorf("%s %s: the answer (%d) does not follow openapi.yaml: %v\n%s", c.method, c.path, resp.StatusCode, err, body)
	}
}

func (k *contract) checkError(c call, body []byte) {
	var e api.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Error == "" {
		k.t.Errorf("%s %s: not a JSON error: %s", c.method, c.path, body)
	}
}

// allExercised fails the test for each operation in the document that no
// request reached.
func (k *contract) allExercised() {
	k.t.Helper()
	var missing []string
	for path, item := range k.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !k.seen[op.OperationID] {
				missing = append(missing, method+" "+path)
			}
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		k.t.Errorf("operations in openapi.yaml that no request exercised: %v", missing)
	}
}

// decode reads a JSON body into v.
func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("answer does not decode into %T: %v\n%s", v, err, body)
	}
	return v
}
