package pfcp

import (
	"iter"
	"net/netip"
	"time"
)

// cacheFor is how long a response is kept: long enough to outlive an
// SMF's retransmissions (T1 x N1 is seconds).
const cacheFor = 30 * time.Second

// cacheChunk is the size of the chunks the responses are kept in.
const cacheChunk = 1 << 20

// responseCache keeps every response for cacheFor, to answer a
// retransmitted request with what it got the first time (§6.4).
//
// At tens of thousands of requests a second it holds a million responses.
// So nothing in it is a pointer the garbage collector would follow: the
// responses lie end to end in large byte chunks, the index holds where,
// and they expire in the order they came, a chunk at a time.
type responseCache struct {
	index map[cacheKey]cached
	// order is the responses' keys as they came, which is the order they
	// expire in; a key answered again is in it twice, and only the later
	// one is in the index.
	order []queued
	// chunks hold the responses; chunks[0] is chunk number first.
	chunks [][]byte
	first  uint32
}

// cacheKey is a request as the peer numbers it. The address is kept in
// its 16-byte form: netip.Addr holds a pointer (its zone).
type cacheKey struct {
	addr [16]byte
	port uint16
	seq  uint32
}

func keyOf(from netip.AddrPort, seq uint32) cacheKey {
	return cacheKey{from.Addr().As16(), from.Port(), seq}
}

func (k cacheKey) from() netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom16(k.addr).Unmap(), k.port)
}

type cached struct {
	req     uint64 // the request's hash: a new request that reuses the number is not a retransmission
	at      place
	expires int64 // Unix nanoseconds
}

// place is where a response lies: chunk number, offset and length.
type place struct{ chunk, off, n uint32 }

// queued is a response in the order they came. It is current while the
// index still names its place; a key answered again leaves it stale.
type queued struct {
	key cacheKey
	at  place
}

func (c *responseCache) current(q queued) (cached, bool) {
	e, ok := c.index[q.key]
	return e, ok && e.at == q.at
}

func newResponseCache() responseCache {
	return responseCache{index: map[cacheKey]cached{}}
}

func (c *responseCache) get(k cacheKey, req uint64) ([]byte, bool) {
	e, ok := c.index[k]
	if !ok || e.req != req {
		return nil, false
	}
	return c.bytes(e.at), true
}

func (c *responseCache) bytes(at place) []byte {
	ch := c.chunks[at.chunk-c.first]
	return ch[at.off : at.off+at.n : at.off+at.n]
}

// put keeps a copy of b until expires. Responses expire in the order
// they came: one put with an earlier expiry than the one before it is
// kept until that one expires.
func (c *responseCache) put(k cacheKey, req uint64, b []byte, expires time.Time) {
	at := c.append(b)
	c.index[k] = cached{req, at, expires.UnixNano()}
	c.order = append(c.order, queued{k, at})
}

// append copies b after the last response, in a new chunk if it does
// not fit. Chunks are never written again once full, so the bytes that
// get returned stay as they are for as long as anyone holds them.
func (c *responseCache) append(b []byte) place {
	n := len(c.chunks)
	if n == 0 || len(c.chunks[n-1])+len(b) > cap(c.chunks[n-1]) {
		c.chunks = append(c.chunks, make([]byte, 0, max(cacheChunk, len(b))))
		n++
	}
	last := c.chunks[n-1]
	at := place{c.first + uint32(n-1), uint32(len(last)), uint32(len(b))}
	c.chunks[n-1] = append(last, b...)
	return at
}

// expire drops the responses that expired by now, and the chunks no
// response still lies in. A response its key no longer names goes as
// soon as it is first in order.
func (c *responseCache) expire(now time.Time) {
	t := now.UnixNano()
	for len(c.order) > 0 {
		q := c.order[0]
		if e, ok := c.current(q); ok {
			if e.expires >= t {
				break
			}
			delete(c.index, q.key)
		}
		c.order = c.order[1:]
	}
	keep := c.first + uint32(len(c.chunks)) // none, when no response is left
	if len(c.order) > 0 {
		keep = c.order[0].at.chunk
	}
	for c.first < keep {
		c.chunks[0] = nil
		c.chunks = c.chunks[1:]
		c.first++
	}
}

// forget drops every response kept for a peer's address: they answered
// requests of an association that is over, and must never answer a later
// one's that reuses a sequence number. It walks the whole index, which
// only an association's start or end asks for.
func (c *responseCache) forget(peer netip.Addr) {
	a := peer.As16()
	for k := range c.index {
		if k.addr == a {
			delete(c.index, k)
		}
	}
}

// all yields the responses kept, in the order they came.
func (c *responseCache) all() iter.Seq2[cacheKey, cached] {
	return func(yield func(cacheKey, cached) bool) {
		for _, q := range c.order {
			if e, ok := c.current(q); ok && !yield(q.key, e) {
				return
			}
		}
	}
}
