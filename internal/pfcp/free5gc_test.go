package pfcp

// free5GC's own PFCP codec (github.com/free5gc/pfcp, the one its SMF
// decodes our answers with) as a third reader of every response the
// interop tests collect, beside go-pfcp and tshark: it shares no code with
// either, checks most IEs' lengths exactly, and is what a free5GC core
// runs, so a response it cannot read never reaches free5GC's SMF.
// Each response must decode, to the message type, sequence number, SEID,
// Cause, Offending IE, UP F-SEID and Created PDRs go-pfcp reads in it; a
// failure is a check named "free5gc: <response>" under knownIssues.

import (
	"encoding/binary"
	"fmt"
	"maps"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	free5gc "github.com/free5gc/pfcp"
	"github.com/free5gc/pfcp/pfcpType"
	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

// free5gcKnownIssues are the failures free5GC's codec finds that are
// understood, with whose fault each is; init adds them to knownIssues.
var free5gcKnownIssues = map[string]string{
	// free5GC's bug: decode.go's Message.Unmarshal has no case for
	// PFCP_VERSION_NOT_SUPPORTED_RESPONSE (11), which message_type.go
	// defines, and fails "msg type 11 not supported". Ours is the bare
	// header (20 0b 00 04, the request's sequence number, 00), which is
	// all TS 29.244 §7.4.4.7 puts in it; §7.6.2 asks for it.
	"free5gc: version not supported response": "free5GC's codec cannot decode a Version Not Supported Response at all",

	// free5GC's bug: its Session Establishment Response holds one Created
	// PDR (a pointer, not a list, though Table 7.5.3.1-1 allows several),
	// and its TLV decoder decodes a repeated IE into the struct the first
	// one filled: our two Created PDRs (PDR 1 with F-TEID 0x101, PDR 2
	// with the chosen UE IP Address, which free5GC has no field for) read
	// as one, PDR 2 with PDR 1's F-TEID. The same holds for the
	// Modification Response.
	"free5gc: session establishment response, UE address chosen": "free5GC's codec merges several Created PDRs into one",
	"free5gc: scapy: establishment choosing the UE address":      "free5GC's codec merges several Created PDRs into one",
}

func init() { maps.Copy(knownIssues, free5gcKnownIssues) }

// pfcpReading is what a codec reads in a response: its header, Cause and
// Offending IE (0 when absent), the UP F-SEID's SEID, and the PDR ID and
// F-TEID of each Created PDR (the fields of it both codecs model; free5GC
// has none for its UE IP Address).
type pfcpReading struct {
	Type      uint8
	Seq       uint32
	SEID      uint64
	Cause     uint8
	Offending uint16
	UPSEID    uint64
	Created   string
}

func (r pfcpReading) String() string {
	return fmt.Sprintf("type %d seq %d SEID %#x cause %d offending IE %d UP SEID %#x created PDRs [%s]",
		r.Type, r.Seq, r.SEID, r.Cause, r.Offending, r.UPSEID, r.Created)
}

// createdPDR is how a reading puts one Created PDR.
func createdPDR(id uint16, teid uint32, addr net.IP) string {
	if addr == nil {
		return fmt.Sprintf("PDR %d", id)
	}
	return fmt.Sprintf("PDR %d F-TEID %#x at %v", id, teid, addr)
}

// free5gcCheck has free5GC's codec decode each frame and fails each one
// it cannot decode or reads otherwise than go-pfcp.
func free5gcCheck(t *testing.T, frames []pcapFrame) {
	t.Helper()
	for _, fr := range frames {
		problems := free5gcProblems(fr.b)
		if len(problems) > 0 {
			t.Logf("free5gc on %s: % x", fr.name, fr.b)
		}
		interopCheck(t, "free5gc: "+fr.name, problems)
	}
}

// free5gcProblems is what free5GC's codec finds wrong with one response,
// or reads in it differently from go-pfcp.
func free5gcProblems(b []byte) []string {
	got, err := free5gcReading(b)
	if err != nil {
		return []string{fmt.Sprintf("free5GC's codec cannot decode it: %v", err)}
	}
	want, err := goPFCPReading(b)
	if err != nil {
		return []string{fmt.Sprintf("free5GC's codec reads %v, go-pfcp cannot decode it: %v", got, err)}
	}
	if got != want {
		return []string{fmt.Sprintf("free5GC's codec reads %v, go-pfcp %v", got, want)}
	}
	return nil
}

// goPFCPReading is go-pfcp's reading of a response.
func goPFCPReading(b []byte) (pfcpReading, error) {
	h, err := message.ParseHeader(b)
	if err != nil {
		return pfcpReading{}, err
	}
	r := pfcpReading{Type: h.Type, Seq: h.SequenceNumber, SEID: h.SEID}
	if r.Cause, err = causeOfResponse(b); err != nil {
		return r, err
	}
	ies, err := ie.ParseMultiIEs(h.Payload)
	if err != nil {
		return r, err
	}
	var created []string
	for _, i := range ies {
		switch i.Type {
		case ie.OffendingIE:
			r.Offending, err = i.OffendingIE()
		case ie.FSEID:
			var f *ie.FSEIDFields
			if f, err = i.FSEID(); err == nil {
				r.UPSEID = f.SEID
			}
		case ie.CreatedPDR:
			var c string
			c, err = goPFCPCreated(i)
			created = append(created, c)
		}
		if err != nil {
			return r, err
		}
	}
	r.Created = strings.Join(created, "; ")
	return r, nil
}

// goPFCPCreated is go-pfcp's reading of one Created PDR.
func goPFCPCreated(c *ie.IE) (string, error) {
	kids, err := c.ValueAsGrouped()
	if err != nil {
		return "", err
	}
	var id uint16
	var f *ie.FTEIDFields
	for _, k := range kids {
		switch k.Type {
		case ie.PDRID:
			id, err = k.PDRID()
		case ie.FTEID:
			f, err = k.FTEID()
		}
		if err != nil {
			return "", err
		}
	}
	if f == nil {
		return createdPDR(id, 0, nil), nil
	}
	addr := f.IPv4Address
	if addr == nil {
		addr = f.IPv6Address
	}
	return createdPDR(id, f.TEID, addr), nil
}

// free5gcReading is free5GC's reading of a response: Message.Unmarshal,
// then those fields of the body (each struct's Cause, OffendingIE, UPFSEID
// and CreatedPDR) that it has. A panic in its decoders is an error here.
func free5gcReading(b []byte) (r pfcpReading, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	var m free5gc.Message
	if err := m.Unmarshal(b); err != nil {
		return r, err
	}
	r = pfcpReading{Type: uint8(m.Header.MessageType), Seq: m.Header.SequenceNumber, SEID: m.Header.SEID}
	body := reflect.ValueOf(m.Body)
	if body.Kind() != reflect.Struct {
		return r, fmt.Errorf("body %T is not a message", m.Body)
	}
	if f := body.FieldByName("Cause"); f.IsValid() && !f.IsNil() {
		r.Cause = f.Interface().(*pfcpType.Cause).CauseValue
	}
	if f := body.FieldByName("OffendingIE"); f.IsValid() && !f.IsNil() {
		r.Offending = f.Interface().(*pfcpType.OffendingIE).TypeOfOffendingIe
	}
	if f := body.FieldByName("UPFSEID"); f.IsValid() && !f.IsNil() {
		r.UPSEID = f.Interface().(*pfcpType.FSEID).Seid
	}
	// Session Establishment and Modification Responses hold one Created
	// PDR, not a list.
	if f := body.FieldByName("CreatedPDR"); f.IsValid() && !f.IsNil() {
		c := f.Interface().(*free5gc.CreatedPDR)
		var id uint16
		if c.PDRID != nil {
			id = c.PDRID.RuleId
		}
		r.Created = createdPDR(id, 0, nil)
		if t := c.LocalFTEID; t != nil {
			addr := t.Ipv4Address
			if addr == nil {
				addr = t.Ipv6Address
			}
			r.Created = createdPDR(id, t.Teid, addr)
		}
	}
	return r, nil
}

// The check above must see what it looks for: a sound response passes; an
// IE of the wrong length, a cut one, a header whose length is wrong, or a
// response that free5GC reads otherwise than go-pfcp does not.
func TestInteropFree5GCCatchesMalformed(t *testing.T) {
	good := encode(t, message.NewAssociationReleaseResponse(7, ie.NewNodeID("198.18.4.2", "", ""),
		ie.NewCause(1)))
	if p := free5gcProblems(good); len(p) > 0 {
		t.Errorf("a sound association release response: %q", p)
	}
	longCause := append(slices.Clone(good), 0) // the Cause IE, last, with 2 octets
	binary.BigEndian.PutUint16(longCause[2:4], uint16(len(longCause)-4))
	binary.BigEndian.PutUint16(longCause[len(longCause)-4:], 2)
	hb := encode(t, message.NewHeartbeatResponse(1, ie.NewRecoveryTimeStamp(time.Unix(1_700_000_000, 0))))
	cut := slices.Clone(hb)
	binary.BigEndian.PutUint16(cut[len(cut)-6:], 9) // the time stamp claims 9 octets of 4
	long := append(slices.Clone(hb), 0)             // one octet past the header's length
	for name, b := range map[string][]byte{"a 2-octet cause": longCause, "a cut time stamp": cut, "a wrong message length": long} {
		if p := free5gcProblems(b); len(p) == 0 || !strings.Contains(p[0], "free5GC's codec cannot decode it") {
			t.Errorf("%s: %q, want free5GC's codec to fail on it", name, p)
		}
	}
	// What it reads otherwise is caught too: of two Created PDRs, free5GC
	// keeps one, the second's ID with the first's F-TEID.
	two := encode(t, message.NewSessionEstablishmentResponse(0, 0, 0xabc, 9, 0, ie.NewNodeID("198.18.4.2", "", ""),
		ie.NewCause(1), ie.NewFSEID(1, net.IPv4(127, 0, 0, 1).To4(), nil),
		ie.NewCreatedPDR(ie.NewPDRID(1), ie.NewFTEID(0x01, 0x101, net.IPv4(198, 18, 3, 2).To4(), nil, 0)),
		ie.NewCreatedPDR(ie.NewPDRID(2), ie.NewUEIPAddress(0x06, "10.45.0.1", "", 0, 0))))
	want := "free5GC's codec reads type 51 seq 9 SEID 0xabc cause 1 offending IE 0 UP SEID 0x1 created PDRs " +
		"[PDR 2 F-TEID 0x101 at 198.18.3.2], go-pfcp type 51 seq 9 SEID 0xabc cause 1 offending IE 0 UP SEID 0x1 " +
		"created PDRs [PDR 1 F-TEID 0x101 at 198.18.3.2; PDR 2]"
	if p := free5gcProblems(two); len(p) != 1 || p[0] != want {
		t.Errorf("two Created PDRs: %q, want %q", p, want)
	}
}
