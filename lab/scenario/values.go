package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-upf/sluice/internal/yamlfile"
	"github.com/sluice-upf/sluice/lab/tgen"
)

// The parsers below turn one value of the file into its Go form. Their
// errors are the part after "file:line: key: " and end with what to write.

// Payload sizes are of the inner UDP (or ICMP) payload, as in the published
// UPF measurements ("the UDP payload size is set to 1400 bytes").
const (
	// MinPayload holds the stamp the generator writes into every packet it
	// sends: flow, sequence number and send time.
	MinPayload = tgen.StampLen
	// MaxPayload fills the lab's 1500-byte MTU on N3 after the uplink
	// encapsulation (outer IPv4, UDP, GTP-U with a PDU Session Container:
	// 44 bytes) and the inner IPv4 and UDP headers (28 bytes).
	MaxPayload = 1500 - 44 - 28
)

// Size is a step's packet size: one payload size, or the IMIX.
type Size struct {
	Bytes int  // payload bytes; 0 when IMIX
	IMIX  bool // the mix of IMIX, in its proportions
}

// Weighted is one size of a mix and its share of the packets.
type Weighted struct {
	Bytes  int
	Weight int
}

// IMIX is the simple IMIX (7:4:1) on the lab's payload sizes: the smallest
// and the largest size the published measurements use around the classic
// 576. A 1500-byte inner packet would not fit N3's MTU after the tunnel.
var IMIX = []Weighted{{64, 7}, {576, 4}, {1400, 1}}

// Mix gives the sizes to send and their shares: IMIX, or the one size.
func (s Size) Mix() []Weighted {
	if s.IMIX {
		return IMIX
	}
	return []Weighted{{s.Bytes, 1}}
}

// MeanBytes is the average payload of the mix.
func (s Size) MeanBytes() float64 {
	var bytes, packets int
	for _, w := range s.Mix() {
		bytes += w.Bytes * w.Weight
		packets += w.Weight
	}
	return float64(bytes) / float64(packets)
}

func (s Size) String() string {
	if s.IMIX {
		return "imix"
	}
	return strconv.Itoa(s.Bytes)
}

func parseSize(s string) (Size, error) {
	if strings.EqualFold(s, "imix") {
		return Size{IMIX: true}, nil
	}
	if _, ok := yamlfile.Number(s, false); !ok {
		return Size{}, fmt.Errorf("%s is not a size; want payload bytes from %d to %d, e.g. 64 or 1400, or imix",
			yamlfile.Quote(s), MinPayload, MaxPayload)
	}
	n, err := parsePayload(s)
	return Size{Bytes: n}, err
}

// parsePayload reads one payload size the generator sends: room for its
// stamp, and no more than fits the MTU after the tunnel.
func parsePayload(s string) (int, error) {
	return payloadIn(s, MinPayload, fmt.Sprintf("the generator's stamp takes %d, and %d fill a 1500-byte MTU after the tunnel", MinPayload, MaxPayload))
}

// parsePingPayload reads one ICMP payload size of the ping probe, which
// stamps nothing into its requests.
func parsePingPayload(s string) (int, error) {
	return payloadIn(s, 0, fmt.Sprintf("%d fill a 1500-byte MTU after the tunnel", MaxPayload))
}

// payloadIn reads a payload size from least to MaxPayload bytes; why says
// where the bounds come from.
func payloadIn(s string, least int, why string) (int, error) {
	digits, ok := yamlfile.Number(s, false)
	n, err := strconv.Atoi(digits)
	switch {
	case !ok:
		return 0, fmt.Errorf("%s is not a size; want payload bytes from %d to %d, e.g. 64 or 1400", yamlfile.Quote(s), least, MaxPayload)
	case err != nil || n < least || n > MaxPayload:
		return 0, fmt.Errorf("%s bytes is out of range; want %d to %d (%s)", s, least, MaxPayload, why)
	}
	return n, nil
}

// Rate is how fast a step sends: flat out, a packet rate or a bit rate.
type Rate struct {
	Max bool    // as fast as the generator goes ("max", or "flood" as ocbr says)
	PPS float64 // packets per second; 0 if given in bits
	BPS float64 // bits per second of the frames sent; 0 if given in packets
}

// PacketsPerSecond converts the rate for frames of frameBytes; 0 means
// flat out.
func (r Rate) PacketsPerSecond(frameBytes float64) float64 {
	switch {
	case r.Max:
		return 0
	case r.BPS > 0:
		return r.BPS / (8 * frameBytes)
	}
	return r.PPS
}

func (r Rate) String() string {
	switch {
	case r.Max:
		return "max"
	case r.BPS > 0:
		return withPrefix(r.BPS, "bps")
	}
	return withPrefix(r.PPS, "pps")
}

// withPrefix writes a rate as the file would: 1.5Mpps, 500kpps, 2Gbps.
func withPrefix(v float64, unit string) string {
	for _, p := range []struct {
		prefix string
		scale  float64
	}{{"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if v >= p.scale {
			return strconv.FormatFloat(v/p.scale, 'f', -1, 64) + p.prefix + unit
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + unit
}

// packetRateUnits are the units of a packet rate, lower-cased, and the
// power of ten each is worth; bit rates take yamlfile's units.
var packetRateUnits = map[string]int{"pps": 0, "kpps": 3, "mpps": 6}

// rateExponent is the power of ten unit is worth, and whether it counts
// bits or packets.
func rateExponent(unit string) (exponent int, bits, known bool) {
	if e, ok := packetRateUnits[strings.ToLower(unit)]; ok {
		return e, false, true
	}
	exponent, known = yamlfile.BitRateExponent(unit)
	return exponent, true, known
}

// parseRateAs returns a parser of rates whose hint ends with flatOut, the
// word for "as fast as it goes" in that step ("max" or "flood").
func parseRateAs(flatOut string) func(string) (Rate, error) {
	return func(s string) (Rate, error) {
		if strings.EqualFold(s, "max") || strings.EqualFold(s, "flood") {
			return Rate{Max: true}, nil
		}
		r, err := parseFixedRate(s)
		if err != nil {
			return Rate{}, fmt.Errorf("%w or %s", err, yamlfile.Quote(flatOut))
		}
		return r, nil
	}
}

// parseFixedRate reads a number and a unit: 1Mpps, 500kpps, 2Gbps.
func parseFixedRate(s string) (Rate, error) {
	text, unit := splitUnit(s)
	number, isNumber := yamlfile.Number(text, true)
	exponent, bits, known := rateExponent(unit)
	hint := fmt.Errorf("%s is not a rate; want e.g. 1Mpps, 500kpps, 2Gbps", yamlfile.Quote(s))
	switch {
	case !isNumber:
		return Rate{}, hint
	case unit == "":
		return Rate{}, fmt.Errorf("%s has no unit; want e.g. %skpps or %sMbps", yamlfile.Quote(s), text, text)
	case !known:
		return Rate{}, hint
	}
	v, err := strconv.ParseFloat(number+"e"+strconv.Itoa(exponent), 64)
	switch {
	case err != nil || math.IsInf(v, 0):
		return Rate{}, hint
	case v <= 0:
		return Rate{}, fmt.Errorf("%s is not above 0; want e.g. 1Mpps, 500kpps, 2Gbps", yamlfile.Quote(s))
	case bits:
		return Rate{BPS: v}, nil
	}
	return Rate{PPS: v}, nil
}

// parseBitRate reads a rate in bits per second, for the subscriber model.
func parseBitRate(s string) (Rate, error) {
	r, err := parseFixedRate(s)
	switch {
	case err != nil:
		return Rate{}, fmt.Errorf("%w; this one in bits, e.g. 567.2kbps", err)
	case r.BPS == 0:
		return Rate{}, fmt.Errorf("%s is a packet rate; write the bit rate here (e.g. 567.2kbps) and the packets in pps:", yamlfile.Quote(s))
	}
	return r, nil
}

// splitUnit cuts "1.5 Mpps" into "1.5" and "Mpps".
func splitUnit(s string) (number, unit string) { return yamlfile.SplitUnit(s) }

// parsePercent reads a loss tolerance: "0", "0%" or "0.5%".
var parsePercent = percentage("e.g. 0% (the non-drop rate) or 0.5% (a partial-drop rate)")

// percentage returns a parser of a percentage from 0 to below 100: "0",
// or a number with %; examples is the hint an error gives.
func percentage(examples string) func(string) (float64, error) {
	return func(s string) (float64, error) {
		text := strings.TrimSpace(s)
		number, hasSign := strings.CutSuffix(text, "%")
		v, err := strconv.ParseFloat(strings.TrimSpace(number), 64)
		switch {
		case err != nil || math.IsNaN(v):
			return 0, fmt.Errorf("%s is not a percentage; want %s", yamlfile.Quote(s), examples)
		case !hasSign && v != 0:
			// 0.005 could be a fraction or a percentage: make the user say.
			return 0, fmt.Errorf("%s has no %%; write it as a percentage, e.g. %s%%", yamlfile.Quote(s), number)
		case v < 0 || v >= 100:
			return 0, fmt.Errorf("%s is out of range; want 0%% or more, below 100%%", yamlfile.Quote(s))
		}
		return v, nil
	}
}

// parseDuration reads a positive Go duration ("2s", "500ms", "1m30s").
func parseDuration(s string) (time.Duration, error) {
	d, err := yamlfile.ParseDuration("2s")(s)
	if err == nil && d <= 0 {
		return 0, fmt.Errorf("%s is not above 0; want a duration such as 2s or 500ms", yamlfile.Quote(s))
	}
	return d, err
}

// parseInterval is parseDuration that also takes 0: send the next packet
// as soon as the answer to the last one is in.
func parseInterval(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil && d == 0 {
		return 0, nil
	}
	return parseDuration(s)
}

// countRange is the span of a whole-number key, both ends included.
type countRange struct{ min, max int }

// parseCount returns a parser of whole numbers in r.
func parseCount(r countRange) func(string) (int, error) {
	return yamlfile.ParseCount(yamlfile.Range{Min: r.min, Max: r.max})
}

// parsePPS reads a packet rate as a plain number, for the subscriber model.
func parsePPS(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "pps"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("%s is not a packet rate; want packets per second above 0, e.g. 175", yamlfile.Quote(s))
	}
	return v, nil
}

// oneOf returns a parser that takes one of words, as written.
func oneOf(what string, words ...string) func(string) (string, error) {
	return yamlfile.OneOf(what, words...)
}

// parseName reads a name used in paths and namespaces: letters, digits,
// '-' and '_', at most limit characters.
func parseName(limit int) func(string) (string, error) {
	return func(s string) (string, error) {
		switch {
		case s == "":
			return "", fmt.Errorf("empty; want letters, digits, '-' or '_', e.g. upflab")
		case len(s) > limit:
			return "", fmt.Errorf("%s is longer than %d characters; shorten it", yamlfile.Quote(s), limit)
		}
		for _, r := range s {
			if !isNameRune(r) {
				return "", fmt.Errorf("%s has %q; use only letters, digits, '-' and '_'", yamlfile.Quote(s), r)
			}
		}
		return s, nil
	}
}

func isNameRune(r rune) bool {
	return r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

// parseText takes any text on one line.
func parseText(s string) (string, error) {
	if strings.ContainsAny(s, "\n\r") {
		return "", fmt.Errorf("spans lines; keep it on one")
	}
	return s, nil
}
