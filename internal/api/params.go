package api

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/sluice-upf/sluice/internal/pfcp"
)

// Session list paging: a page has DefaultLimit sessions unless asked for
// another number up to MaxLimit.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// ParseID reads an SEID or a TEID as people write them: 0x1f (hex, as
// Wireshark shows them) or 31 (decimal), within bits bits. A leading zero
// is decimal, not octal.
func ParseID(s string, bits int) (uint64, error) {
	base := 10
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		s, base = h, 16
	}
	v, err := strconv.ParseUint(s, base, bits)
	if err != nil || strings.Contains(s, "_") {
		return 0, fmt.Errorf("want a number, decimal or 0x hex, of at most %d bits", bits)
	}
	return v, nil
}

// sessionQuery is a session list request.
type sessionQuery struct {
	filter pfcp.SessionFilter
	after  uint64 // the cursor: SEIDs above it
	limit  int
}

var sessionParams = []string{"peer", "ue", "teid", "limit", "cursor"}

// paramError is a query parameter that cannot be used.
type paramError struct{ param, msg string }

func (e *paramError) Error() string { return e.param + ": " + e.msg }

// parseSessionQuery reads ?peer=&ue=&teid=&limit=&cursor=.
func parseSessionQuery(q url.Values) (sessionQuery, *paramError) {
	out := sessionQuery{limit: DefaultLimit}
	for name, vs := range q {
		if !slices.Contains(sessionParams, name) {
			return out, &paramError{name, "unknown parameter; want " + strings.Join(sessionParams, ", ")}
		}
		if len(vs) > 1 {
			return out, &paramError{name, "given more than once"}
		}
		if vs[0] == "" {
			return out, &paramError{name, "empty"}
		}
	}
	if v := q.Get("peer"); v != "" {
		out.filter.Peer = v
	}
	if v := q.Get("ue"); v != "" {
		a, err := netip.ParseAddr(v)
		if err != nil {
			return out, &paramError{"ue", fmt.Sprintf("%q is not an IPv4 or IPv6 address", v)}
		}
		out.filter.UE = a.Unmap()
	}
	if v := q.Get("teid"); v != "" {
		t, err := ParseID(v, 32)
		if err != nil {
			return out, &paramError{"teid", fmt.Sprintf("%q: %v", v, err)}
		}
		out.filter.TEID, out.filter.MatchTEID = uint32(t), true
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return out, &paramError{"limit", fmt.Sprintf("%q: want a number from 1 to %d", v, MaxLimit)}
		}
		out.limit = n
	}
	if v := q.Get("cursor"); v != "" {
		c, err := ParseID(v, 64)
		if err != nil {
			return out, &paramError{"cursor", fmt.Sprintf("%q: want the next_cursor of the previous page (%v)", v, err)}
		}
		out.after = c
	}
	return out, nil
}
