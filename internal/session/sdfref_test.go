package session

import (
	"errors"
	"testing"
)

// Open5GS (since 2.7.1) puts a bidirectional flow's description in the
// downlink PDR, with BID and an SDF Filter ID, and only the ID in the
// uplink PDR: the uplink filter is the downlink one's, never match-all.
func TestSDFFilterIDNamesTheSessionsFilter(t *testing.T) {
	flow := func(s string) *Flow {
		f, err := ParseFlow(s)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	web, dns := flow("permit out tcp from 198.18.7.10 80 to assigned"), flow("permit out udp from 198.18.7.10 53 to assigned")
	r := plain(1)
	r.PDRs[1].PDI.SDFs = []SDF{{Flow: web, FilterID: 7, HasID: true}}
	r.PDRs[0].PDI.SDFs = []SDF{{FilterID: 7, HasID: true, Ref: true}}
	s := newStore()
	c := commit(t, s, r)
	if got := ruleOf(t, c.Next.PDRs, 1).PDI.SDFs[0]; got.Flow != web || !got.Ref {
		t.Fatalf("uplink filter %+v, want the downlink one's flow", got)
	}

	// The filter named changes: the reference follows it.
	dl := ruleOf(t, c.Next.PDRs, 2)
	dl.PDI.SDFs = []SDF{{Flow: dns, FilterID: 7, HasID: true}}
	c = commit(t, s, &Modify{SEID: c.Next.SEID, UpdatePDRs: []PDRUpdate{{ID: 2, PDI: &dl.PDI}}})
	if got := ruleOf(t, c.Next.PDRs, 1).PDI.SDFs[0]; got.Flow != dns {
		t.Errorf("uplink filter after the downlink's changed: %+v, want its new flow", got)
	}

	// An ID the session has no filter for is refused.
	bad := plain(2)
	bad.PDRs[0].PDI.SDFs = []SDF{{FilterID: 9, HasID: true, Ref: true}}
	_, err := newStore().Plan(bad)
	var e *Error
	if !errors.As(err, &e) || e.Cause != CauseRuleFailure || e.IE != IESDFFilter {
		t.Errorf("a reference to no filter: %v, want Rule creation/modification failure naming the SDF Filter", err)
	}
}
