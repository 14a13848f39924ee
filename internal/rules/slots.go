package rules

// slots hands out the IDs 1..n-1 of one datapath table; 0 means none.
type slots struct {
	name    string // the table's, as errors and plans name it: FAR, QER, URR, SDF
	next, n uint32
	free    []uint32
}

func newSlots(name string, n uint32) *slots { return &slots{name: name, next: 1, n: n} }

func (s *slots) get() (uint32, bool) {
	if k := len(s.free); k > 0 {
		id := s.free[k-1]
		s.free = s.free[:k-1]
		return id, true
	}
	if s.next >= s.n {
		return 0, false
	}
	s.next++
	return s.next - 1, true
}

func (s *slots) put(id uint32) {
	if id != 0 {
		s.free = append(s.free, id)
	}
}

// inUse is how many slots are held.
func (s *slots) inUse() int { return int(s.next-1) - len(s.free) }
