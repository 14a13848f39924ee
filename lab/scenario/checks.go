package scenario

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sluice-upf/sluice/internal/yamlfile"
)

// The checks of upflab verify are step kinds like the others (policing.go,
// usage.go, ...): each yields verdicts, a figure against a limit its keys
// state. What they share is here.

//go:embed verify.yaml
var verifyYAML []byte

//go:embed verify-short.yaml
var verifyShortYAML []byte

// The names errors give the embedded suites.
const (
	VerifyFile      = "verify.yaml"
	VerifyShortFile = "verify-short.yaml"
)

// Verify is the suite of checks `upflab verify` runs, or with short its
// short form, which CI runs; file and data are its text, for Parse with
// another UPF.
func Verify(short bool) (file string, data []byte) {
	if short {
		return VerifyShortFile, append([]byte(nil), verifyShortYAML...)
	}
	return VerifyFile, append([]byte(nil), verifyYAML...)
}

// withPFCP refuses a check of the step at path when the UPF under test
// is the reference forwarder: checks drive rules over PFCP.
func (v *validator) withPFCP(path string, s *Scenario) {
	if s.UPF.Kind != UPFReference {
		return
	}
	kind := v.where("upf.kind", "upf")
	v.add(yamlfile.KeyPath(path, "kind"), "a check drives the UPF's rules over PFCP, which the reference forwarder does not speak; check upfd or a command UPF, so change %s%s",
		kind, v.onLine(kind))
}

// parseLimit reads a check's limit in percent: "2%", or "0".
var parseLimit = percentage("e.g. 2% or 0.1%")

// byteUnits are the units of a volume, lower-cased, decimal as TS 29.244
// counts octets.
var byteUnits = map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9}

// parseBytes reads a volume: 1500000, 1.5MB, 64kB.
func parseBytes(s string) (uint64, error) {
	number, unit := splitUnit(s)
	scale, ok := byteUnits[strings.ToLower(unit)]
	v, err := strconv.ParseFloat(number, 64)
	switch {
	case !ok || err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("%s is not a volume; want bytes, e.g. 1MB, 500kB or 1500000", yamlfile.Quote(s))
	case v*scale < 1 || v*scale > 1e15:
		return 0, fmt.Errorf("%s is out of range; want 1 byte to 1000TB", yamlfile.Quote(s))
	}
	return uint64(math.Round(v * scale)), nil
}

// parseFactor reads how many times a rate to offer: "2x" or "2", from 1.1.
func parseFactor(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "x"), 64)
	if err != nil || math.IsNaN(v) || v < 1.1 || v > 100 {
		return 0, fmt.Errorf("%s is not a factor from 1.1 to 100; want e.g. 2x", yamlfile.Quote(s))
	}
	return v, nil
}

// bytesWord writes a volume as the file would: 1MB, 1.5MB, 700B.
func bytesWord(n uint64) string {
	for _, u := range []struct {
		name  string
		scale float64
	}{{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if float64(n) >= u.scale {
			return strconv.FormatFloat(float64(n)/u.scale, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}

// parsePacketRate reads a check's steady packet rate: flat out, frames are
// lost whatever the check does, and the loss must be the check's.
func parsePacketRate(s string) (Rate, error) {
	if strings.EqualFold(s, "max") || strings.EqualFold(s, "flood") {
		return Rate{}, fmt.Errorf("%s loses frames whatever the check does; give a steady rate below saturation, e.g. 20kpps", yamlfile.Quote(s))
	}
	r, err := parseFixedRate(s)
	if err == nil && r.BPS > 0 {
		return Rate{}, fmt.Errorf("%s is a bit rate; give packets, e.g. 20kpps", yamlfile.Quote(s))
	}
	return r, err
}
