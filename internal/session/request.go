package session

import "net/netip"

// Request is a change asked of the Store: *Establish, *Modify or *Delete.
type Request interface{ isRequest() }

// Establish is a Session Establishment Request.
type Establish struct {
	Peer   string // node ID of the SMF's association
	CPSEID uint64
	CPAddr netip.Addr
	Info   Info
	PDRs   []PDR
	FARs   []FAR
	QERs   []QER
	URRs   []URR
	BARs   []BAR
}

// Modify is a Session Modification Request.
type Modify struct {
	SEID uint64
	// CP is the SMF's F-SEID from now on, when it changes it (§7.5.4.1:
	// CP F-SEID); nil keeps the one it has.
	CP         *CPFSEID
	CreatePDRs []PDR
	CreateFARs []FAR
	CreateQERs []QER
	CreateURRs []URR
	CreateBARs []BAR
	UpdatePDRs []PDRUpdate
	UpdateFARs []FARUpdate
	UpdateQERs []QERUpdate
	UpdateURRs []URRUpdate
	RemovePDRs []uint16
	RemoveFARs []uint32
	RemoveQERs []uint32
	RemoveURRs []uint32
	RemoveBARs []uint8
	QueryURRs  []uint32
	QueryAll   bool // QAURR (§8.2.58)
	DropBuffer bool // DROBU
}

// CPFSEID is the SMF's F-SEID of a session.
type CPFSEID struct {
	SEID uint64
	Addr netip.Addr
}

// Delete is a Session Deletion Request.
type Delete struct{ SEID uint64 }

func (*Establish) isRequest() {}
func (*Modify) isRequest()    {}
func (*Delete) isRequest()    {}

// PDRUpdate changes the fields that are set (Update PDR, §7.5.4.2).
type PDRUpdate struct {
	ID         uint16
	Precedence *uint32
	PDI        *PDI
	OHR        *uint8
	FARID      *uint32
	QERIDs     []uint32 // with SetQERs: the whole new list
	SetQERs    bool
	URRIDs     []uint32
	SetURRs    bool
}

// FARUpdate changes the fields that are set (Update FAR, §7.5.4.3).
type FARUpdate struct {
	ID     uint32
	Action *uint16
	Forw   *ForwardingUpdate
	BARID  *uint8
}

// ForwardingUpdate is Update Forwarding Parameters (§7.5.4.3-2).
type ForwardingUpdate struct {
	Dest            *uint8
	NetworkInstance *string
	OHC             *OHC
	TOS             *uint8
	InterfaceType   *uint8 // 3GPP Interface Type of the destination (§8.2.118)
	EndMarker       bool   // SNDEM: End Marker to the old peer
}

// QERUpdate changes the fields that are set (Update QER, §7.5.4.5).
type QERUpdate struct {
	ID             uint32
	GateUL, GateDL *uint8
	MBRUL, MBRDL   *uint64
	GBRUL, GBRDL   *uint64
	QFI            *uint8
	RQI            *bool
}

// URRUpdate changes the fields that are set (Update URR, §7.5.4.4).
type URRUpdate struct {
	ID            uint32
	Method        *uint8
	Triggers      *uint32
	Period        *uint32
	VolThreshold  *Volume
	VolQuota      *Volume
	TimeThreshold *uint32
	TimeQuota     *uint32
	QuotaHolding  *uint32
	QuotaValidity *uint32
}

// ApplyTo sets in p what the update sets.
func (u PDRUpdate) ApplyTo(p *PDR) {
	p.ID = u.ID
	set(&p.Precedence, u.Precedence)
	if u.PDI != nil {
		p.PDI = *u.PDI
	}
	if u.OHR != nil {
		p.OHR = u.OHR
	}
	set(&p.FARID, u.FARID)
	if u.SetQERs {
		p.QERIDs = u.QERIDs
	}
	if u.SetURRs {
		p.URRIDs = u.URRIDs
	}
}

// ApplyTo sets in f what the update sets; forwarding parameters are merged.
func (u FARUpdate) ApplyTo(f *FAR) {
	f.ID = u.ID
	set(&f.Action, u.Action)
	if u.BARID != nil {
		f.BARID = u.BARID
	}
	if u.Forw != nil {
		next := Forwarding{}
		if f.Forw != nil {
			next = *f.Forw
		}
		u.Forw.ApplyTo(&next)
		f.Forw = &next
	}
}

// ApplyTo sets in f what Update Forwarding Parameters set. The End Marker
// request holds for this change only.
func (u ForwardingUpdate) ApplyTo(f *Forwarding) {
	set(&f.Dest, u.Dest)
	set(&f.NetworkInstance, u.NetworkInstance)
	if u.OHC != nil {
		f.OHC = u.OHC
	}
	if u.TOS != nil {
		f.TOS = u.TOS
	}
	if u.InterfaceType != nil {
		f.InterfaceType = u.InterfaceType
	}
	f.EndMarker = u.EndMarker
}

// ApplyTo sets in q what the update sets.
func (u QERUpdate) ApplyTo(q *QER) {
	q.ID = u.ID
	set(&q.GateUL, u.GateUL)
	set(&q.GateDL, u.GateDL)
	set(&q.MBRUL, u.MBRUL)
	set(&q.MBRDL, u.MBRDL)
	set(&q.GBRUL, u.GBRUL)
	set(&q.GBRDL, u.GBRDL)
	set(&q.QFI, u.QFI)
	set(&q.RQI, u.RQI)
}

// ApplyTo sets in x what the update sets.
func (u URRUpdate) ApplyTo(x *URR) {
	x.ID = u.ID
	set(&x.Method, u.Method)
	set(&x.Triggers, u.Triggers)
	set(&x.Period, u.Period)
	set(&x.TimeThreshold, u.TimeThreshold)
	set(&x.TimeQuota, u.TimeQuota)
	set(&x.QuotaHolding, u.QuotaHolding)
	set(&x.QuotaValidity, u.QuotaValidity)
	if u.VolThreshold != nil {
		x.VolThreshold = u.VolThreshold
	}
	if u.VolQuota != nil {
		x.VolQuota = u.VolQuota
	}
	if u.VolQuota != nil || u.TimeQuota != nil || u.QuotaValidity != nil {
		x.Grant++
	}
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
