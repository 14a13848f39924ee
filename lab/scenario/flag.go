package scenario

// Values a command line gives (upflab gen, upflab cbr), read with the
// words a scenario file takes, so that both say a rate alike.

// ParseRate reads a rate as a step's rate key does: 1Mpps, 500kpps,
// 2Gbps, or max (flood).
func ParseRate(s string) (Rate, error) { return parseRateAs("max")(s) }
