package main

import (
	"errors"
	"slices"
	"testing"
)

func TestPingFlags(t *testing.T) {
	var ul uint32
	for _, tc := range []struct {
		in   string
		want uint32
		ok   bool
	}{
		{"0x100", 0x100, true},
		{"256", 256, true},
		{"0xffffffff", 0xffffffff, true},
		{"0x100000000", 0, false},
		{"-1", 0, false},
	} {
		if err := teidFlag(&ul)(tc.in); (err == nil) != tc.ok || (tc.ok && ul != tc.want) {
			t.Errorf("teid %q: %#x, %v", tc.in, ul, err)
		}
	}
	var s []int
	if err := sizesFlag(&s)("56, 512,1400"); err != nil || !slices.Equal(s, []int{56, 512, 1400}) {
		t.Errorf("sizes: %v, %v", s, err)
	}
	if err := sizesFlag(&s)("56,big"); err == nil {
		t.Error("sizes 56,big accepted")
	}
}

func TestPingNeedsASession(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--ue", "10.45.0.2", "--teid-ul", "0x100"},
		{"--ue", "10.45.0.2", "--teid-ul", "0x100", "--teid-dl", "0x200", "--qfi", "64"},
	} {
		if err := runPing(args); !errors.Is(err, errUsage) {
			t.Errorf("ping %q: %v, want a usage error", args, err)
		}
	}
}
