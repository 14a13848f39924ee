package smf

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
)

var (
	// ErrTimeout: a request went unanswered after N1 sends, T1 apart.
	ErrTimeout = errors.New("no answer")
	// ErrClosed: the client was closed while a request was in flight.
	ErrClosed = errors.New("client closed")
)

// CauseError is an answer whose cause is not Request accepted.
type CauseError struct {
	Request   string     // the request's message type, "Session Establishment Request"
	CPSEID    uint64     // the session (0 for node messages)
	UE        netip.Addr // the session's UE address, if it has one
	Cause     uint8      // TS 29.244 §8.2.1
	Offending uint16     // the Offending IE's type, 0 when the answer names none
}

func (e *CauseError) Error() string {
	var b strings.Builder
	if e.CPSEID != 0 {
		fmt.Fprintf(&b, "session %#x", e.CPSEID)
		if e.UE.IsValid() {
			fmt.Fprintf(&b, " (UE %v)", e.UE)
		}
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "%s: cause %d (%s)", e.Request, e.Cause, CauseName(e.Cause))
	if e.Offending != 0 {
		fmt.Fprintf(&b, ", offending IE %d", e.Offending)
	}
	return b.String()
}

// causeNames are the causes of TS 29.244 §8.2.1 Table 8.2.1-1.
var causeNames = map[uint8]string{
	ie.CauseRequestAccepted:                 "Request accepted",
	2:                                       "More Usage Report to send",
	ie.CauseRequestRejected:                 "Request rejected",
	ie.CauseSessionContextNotFound:          "Session context not found",
	ie.CauseMandatoryIEMissing:              "Mandatory IE missing",
	ie.CauseConditionalIEMissing:            "Conditional IE missing",
	ie.CauseInvalidLength:                   "Invalid length",
	ie.CauseMandatoryIEIncorrect:            "Mandatory IE incorrect",
	ie.CauseInvalidForwardingPolicy:         "Invalid Forwarding Policy",
	ie.CauseInvalidFTEIDAllocationOption:    "Invalid F-TEID allocation option",
	ie.CauseNoEstablishedPFCPAssociation:    "No established PFCP Association",
	ie.CauseRuleCreationModificationFailure: "Rule creation/modification Failure",
	ie.CausePFCPEntityInCongestion:          "PFCP entity in congestion",
	ie.CauseNoResourcesAvailable:            "No resources available",
	ie.CauseServiceNotSupported:             "Service not supported",
	ie.CauseSystemFailure:                   "System failure",
	ie.CauseRedirectionRequested:            "Redirection Requested",
	79:                                      "All dynamic addresses are occupied",
}

// CauseName names a cause value.
func CauseName(c uint8) string {
	if n, ok := causeNames[c]; ok {
		return n
	}
	return "unknown cause"
}

// accepted returns nil when m accepts req, else a CauseError naming the
// session s (nil for node messages).
func accepted(req, m message.Message, s *Session) error {
	cause, offending, err := outcome(m)
	if err != nil {
		err = fmt.Errorf("%s: %w", req.MessageTypeName(), err)
		if s != nil {
			err = s.errorf("%w", err)
		}
		return err
	}
	if cause == ie.CauseRequestAccepted {
		return nil
	}
	e := &CauseError{Request: req.MessageTypeName(), Cause: cause, Offending: offending}
	if s != nil {
		e.CPSEID, e.UE = s.CPSEID, s.UE
	}
	return e
}

// outcome reads the Cause and Offending IE of an answer. Heartbeat
// Responses carry no cause: they count as accepted.
func outcome(m message.Message) (cause uint8, offending uint16, err error) {
	var c, o *ie.IE
	switch m := m.(type) {
	case *message.HeartbeatResponse:
		return ie.CauseRequestAccepted, 0, nil
	case *message.AssociationSetupResponse:
		c = m.Cause
	case *message.SessionEstablishmentResponse:
		c, o = m.Cause, m.OffendingIE
	case *message.SessionModificationResponse:
		c, o = m.Cause, m.OffendingIE
	case *message.SessionDeletionResponse:
		c, o = m.Cause, m.OffendingIE
	default:
		return 0, 0, fmt.Errorf("%s is not an answer this client asks for", m.MessageTypeName())
	}
	if c == nil {
		return 0, 0, fmt.Errorf("%s without a Cause", m.MessageTypeName())
	}
	if cause, err = c.Cause(); err != nil {
		return 0, 0, fmt.Errorf("%s: Cause: %w", m.MessageTypeName(), err)
	}
	if o != nil {
		offending, _ = o.OffendingIE() // an undecodable one is no worse than none
	}
	return cause, offending, nil
}
