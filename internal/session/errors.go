package session

import "fmt"

// PFCP causes (TS 29.244 §8.2.1) a refusal can carry.
const (
	CauseAccepted             uint8 = 1
	CauseRequestRejected      uint8 = 64
	CauseNoSession            uint8 = 65
	CauseMandatoryIEMissing   uint8 = 66
	CauseConditionalIEMissing uint8 = 67
	CauseInvalidLength        uint8 = 68
	CauseMandatoryIEIncorrect uint8 = 69
	CauseInvalidFTEIDAlloc    uint8 = 71
	CauseNoAssociation        uint8 = 72
	CauseRuleFailure          uint8 = 73
	CauseCongestion           uint8 = 74
	CauseNoResources          uint8 = 75
	CauseServiceNotSupported  uint8 = 76
	CauseSystemFailure        uint8 = 77
	CauseAllAddressesOccupied uint8 = 79
)

// IE types (§8.1.2) that a refusal names as the Offending IE.
const (
	IECreatePDR          uint16 = 1
	IEPDI                uint16 = 2
	IECreateFAR          uint16 = 3
	IEForwardingParams   uint16 = 4
	IECreateURR          uint16 = 6
	IECreateQER          uint16 = 7
	IEUpdatePDR          uint16 = 9
	IEUpdateFAR          uint16 = 10
	IEUpdateURR          uint16 = 13
	IEUpdateQER          uint16 = 14
	IERemovePDR          uint16 = 15
	IERemoveFAR          uint16 = 16
	IERemoveURR          uint16 = 17
	IERemoveQER          uint16 = 18
	IESourceInterface    uint16 = 20
	IEFTEID              uint16 = 21
	IENetworkInstance    uint16 = 22
	IESDFFilter          uint16 = 23
	IEApplicationID      uint16 = 24
	IEGateStatus         uint16 = 25
	IEMBR                uint16 = 26
	IEGBR                uint16 = 27
	IEPrecedence         uint16 = 29
	IEDestinationIface   uint16 = 42
	IEApplyAction        uint16 = 44
	IEReportingTriggers  uint16 = 37
	IEMeasurementMethod  uint16 = 62
	IEPDRID              uint16 = 56
	IEFSEID              uint16 = 57
	IENodeID             uint16 = 60
	IEURRID              uint16 = 81
	IEOuterHeaderCreate  uint16 = 84
	IECreateBAR          uint16 = 85
	IEBARID              uint16 = 88
	IEUEIPAddress        uint16 = 93
	IEOuterHeaderRemoval uint16 = 95
	IEFARID              uint16 = 108
	IEQERID              uint16 = 109
	IEQFI                uint16 = 124
)

// Error is a refusal: the cause and offending IE for the response, and
// what was wrong for the log.
type Error struct {
	Cause uint8
	IE    uint16 // offending IE type, 0 = none
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

func refuse(cause uint8, ie uint16, format string, args ...any) *Error {
	return &Error{Cause: cause, IE: ie, Msg: fmt.Sprintf(format, args...)}
}
