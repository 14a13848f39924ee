package pfcp

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

var (
	cacheT0   = time.Unix(1_800_000_000, 0)
	cachePeer = netip.MustParseAddrPort("198.18.4.1:8805")
)

// A response is answered again for a retransmission (same number, same
// request) until it expires, and never for a new request that reuses
// the number.
func TestResponseCacheAnswersRetransmissionsUntilExpiry(t *testing.T) {
	c := newResponseCache()
	k := keyOf(cachePeer, 7)
	c.put(k, 0xaa, []byte("first"), cacheT0.Add(cacheFor))
	for _, step := range []struct {
		name string
		req  uint64
		now  time.Time
		want string // "" = not answered from the cache
	}{
		{"retransmission", 0xaa, cacheT0.Add(time.Second), "first"},
		{"the number reused by a new request", 0xbb, cacheT0.Add(time.Second), ""},
		{"retransmission at expiry", 0xaa, cacheT0.Add(cacheFor), "first"},
		{"retransmission after expiry", 0xaa, cacheT0.Add(cacheFor + time.Nanosecond), ""},
	} {
		c.expire(step.now)
		b, ok := c.get(k, step.req)
		if got := string(b); ok != (step.want != "") || got != step.want {
			t.Errorf("%s: got %q (%v), want %q", step.name, got, ok, step.want)
		}
	}
}

// A number answered again (a new request that reused it) keeps its new
// response when the old one's time is up.
func TestResponseCacheKeepsTheLaterOfTwoAnswers(t *testing.T) {
	c := newResponseCache()
	k := keyOf(cachePeer, 7)
	c.put(k, 1, []byte("old"), cacheT0)
	c.put(k, 2, []byte("new"), cacheT0.Add(time.Second))
	c.expire(cacheT0.Add(time.Millisecond))
	if b, ok := c.get(k, 2); !ok || string(b) != "new" {
		t.Errorf("after the old answer expired: got %q (%v), want the new one", b, ok)
	}
	var n int
	for range c.all() {
		n++
	}
	if n != 1 {
		t.Errorf("all yields %d responses, want 1", n)
	}
}

// Responses lie in chunks, one larger than a chunk in its own; a chunk
// goes once every response in it expired, and bytes handed out before
// stay as they were.
func TestResponseCacheDropsChunksAsTheyExpire(t *testing.T) {
	c := newResponseCache()
	big := bytes.Repeat([]byte{0xb}, cacheChunk+1)
	small := bytes.Repeat([]byte{0x5}, cacheChunk/2+1)
	puts := []struct {
		seq uint32
		b   []byte
	}{{1, small}, {2, small}, {3, big}, {4, small}} // chunks 0, 1, 2, 3
	for i, p := range puts {
		c.put(keyOf(cachePeer, p.seq), 1, p.b, cacheT0.Add(time.Duration(i)*time.Second))
	}
	held, _ := c.get(keyOf(cachePeer, 1), 1)
	for _, step := range []struct {
		now        time.Time
		chunks     int
		first      uint32
		responses  int
		firstAlive uint32 // the oldest response still answered
	}{
		{cacheT0, 4, 0, 4, 1},
		{cacheT0.Add(time.Second + 1), 2, 2, 2, 3},
		{cacheT0.Add(3*time.Second + 1), 0, 4, 0, 0},
	} {
		c.expire(step.now)
		if len(c.chunks) != step.chunks || c.first != step.first || len(c.index) != step.responses {
			t.Errorf("at %v: %d chunks from %d, %d responses; want %d from %d, %d", step.now.Sub(cacheT0),
				len(c.chunks), c.first, len(c.index), step.chunks, step.first, step.responses)
		}
		if step.firstAlive == 0 {
			continue
		}
		p := puts[step.firstAlive-1]
		if b, ok := c.get(keyOf(cachePeer, p.seq), 1); !ok || !bytes.Equal(b, p.b) {
			t.Errorf("at %v: response %d lost or changed", step.now.Sub(cacheT0), p.seq)
		}
	}
	if !bytes.Equal(held, small) {
		t.Error("bytes handed out changed after their chunk went")
	}
	c.put(keyOf(cachePeer, 5), 1, []byte("again"), cacheT0.Add(10*time.Second))
	if b, ok := c.get(keyOf(cachePeer, 5), 1); !ok || string(b) != "again" {
		t.Errorf("after every chunk went: got %q (%v)", b, ok)
	}
}

// Peers are told apart by address and port; the key gives both back.
func TestCacheKeyRoundTrips(t *testing.T) {
	for _, s := range []string{"198.18.4.1:8805", "[2001:db8::1]:8805", "198.18.4.1:1234"} {
		from := netip.MustParseAddrPort(s)
		if got := keyOf(from, 9).from(); got != from {
			t.Errorf("%s: key gives back %s", s, got)
		}
	}
	if keyOf(cachePeer, 1) == keyOf(netip.MustParseAddrPort("198.18.4.1:8806"), 1) {
		t.Error("two ports of one address share a key")
	}
}
