package main

import (
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/lab/smf"
)

func TestSMFFlags(t *testing.T) {
	r, err := parseSMF([]string{"--lab", "x", "--profile", "open5gs", "--sessions", "5", "--window", "8",
		"--churn", "50", "--duration", "2s", "--upf", "198.18.4.2:9000", "--give-teids", "--delete"})
	if err != nil {
		t.Fatal(err)
	}
	want := smf.Config{Namespace: "x-smf", Profile: smf.Open5GS, Window: 8, T1: 3 * time.Second, N1: 3, GiveUplinkTEIDs: true,
		UPF: netip.MustParseAddrPort("198.18.4.2:9000"), Local: netip.MustParseAddrPort("198.18.4.1:8805"),
		NodeID: netip.MustParseAddr("198.18.4.1"), GNB: netip.MustParseAddr("198.18.3.1")}
	if r.cfg != want || r.sessions != 5 || !r.delete || !reflect.DeepEqual(r.churn, smf.Churn{PerSecond: 50, Duration: 2 * time.Second}) {
		t.Errorf("got %+v", r)
	}
}

func TestSMFUsage(t *testing.T) {
	for _, args := range [][]string{
		{"extra"}, {"--profile", "oai"}, {"--window", "0"}, {"--sessions", "-1"}, {"--n1", "0"},
		{"--churn", "10", "--duration", "0s"}, {"--upf", "198.18.4.2"}, {"--timeout", "0s"},
	} {
		if _, err := parseSMF(args); !errors.Is(err, errUsage) {
			t.Errorf("smf %q: %v, want a usage error", args, err)
		}
	}
}
