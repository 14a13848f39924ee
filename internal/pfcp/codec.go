package pfcp

import "github.com/wmnsk/go-pfcp/ie"

// go-pfcp asks whether an IE type is grouped, several times for each IE it
// decodes or encodes, under a global lock: about a tenth of the server's
// time went there. The answer never changes, so it is read once into a
// table that needs no lock.
func init() {
	var grouped [1 << 16 / 64]uint64
	for t := range 1 << 16 {
		if (&ie.IE{Type: uint16(t)}).IsGrouped() {
			grouped[t/64] |= 1 << (t % 64)
		}
	}
	ie.SetIsGroupedFun(func(t uint16) bool { return grouped[t/64]&(1<<(t%64)) != 0 })
}
