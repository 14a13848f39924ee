package datapath

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/cilium/ebpf/ringbuf"
)

// EventType says what an event reports.
type EventType uint16

const (
	EventUnknownTEID = EventType(bpfUpfEventTypeUPF_EV_UNKNOWN_TEID) // G-PDU for no session
	EventBuffer      = EventType(bpfUpfEventTypeUPF_EV_BUFFER)       // a frame to hold (FAR BUFF)
	EventNotify      = EventType(bpfUpfEventTypeUPF_EV_NOTIFY)       // first packet for a FAR with NOCP
	EventQuota       = EventType(bpfUpfEventTypeUPF_EV_QUOTA)        // a URR's volume quota is spent
	EventNoNeigh     = EventType(bpfUpfEventTypeUPF_EV_NO_NEIGH)     // next hop needs resolving
	EventExtHeader   = EventType(bpfUpfEventTypeUPF_EV_EXT_HEADER)   // a peer sent an extension header we must comprehend and do not
)

// Event is one record from the datapath.
type Event struct {
	Type    EventType
	Session uint32
	PDRID   uint16
	QFI     uint8
	Iface   Role
	ID      uint32     // FAR ID (Buffer, Notify) or URR ID (Quota)
	TEID    uint32     // the unknown TEID
	Ifindex int        // ingress device, or the egress device for NoNeigh
	Peer    netip.Addr // GTP-U sender (UnknownTEID, ExtHeader) or next hop (NoNeigh)
	Frame   []byte     // the whole frame (Buffer)
}

// EventReader reads events in the order the datapath wrote them.
type EventReader struct{ rd *ringbuf.Reader }

// Events opens the event ring. One reader at a time.
func (d *Datapath) Events() (*EventReader, error) {
	rd, err := ringbuf.NewReader(d.objs.Events)
	if err != nil {
		return nil, fmt.Errorf("open event ring: %w", err)
	}
	return &EventReader{rd: rd}, nil
}

// ErrNoEvent is returned by Read when the deadline passed with nothing to read.
var ErrNoEvent = errors.New("no event")

// Read waits for the next event until the deadline (zero: forever).
func (r *EventReader) Read(deadline time.Time) (Event, error) {
	r.rd.SetDeadline(deadline)
	rec, err := r.rd.Read()
	if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, os.ErrDeadlineExceeded) {
		return Event{}, ErrNoEvent
	}
	if err != nil {
		return Event{}, err
	}
	return decodeEvent(rec.RawSample)
}

// Close stops the reader; a blocked Read returns.
func (r *EventReader) Close() error { return r.rd.Close() }

func decodeEvent(raw []byte) (Event, error) {
	var h bpfUpfEvent
	if err := binary.Read(bytes.NewReader(raw), binary.NativeEndian, &h); err != nil {
		return Event{}, fmt.Errorf("short event (%d bytes): %w", len(raw), err)
	}
	ev := Event{
		Type:    EventType(h.Type),
		Session: h.Session,
		PDRID:   h.PdrId,
		QFI:     h.Qfi,
		Iface:   Role(h.Iface),
		ID:      h.Id,
		TEID:    wordBE(h.Teid),
		Ifindex: int(h.Ifindex),
	}
	if h.PeerFamily != 0 {
		ev.Peer = wordsAddr(h.Peer.A, h.PeerFamily)
	}
	if h.Len > 0 {
		start := binary.Size(h)
		if len(raw) < start+int(h.Len) {
			return ev, fmt.Errorf("event frame of %d bytes in a %d-byte record", h.Len, len(raw))
		}
		ev.Frame = bytes.Clone(raw[start : start+int(h.Len)])
	}
	return ev, nil
}
