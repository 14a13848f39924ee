package session

import (
	"cmp"
	"iter"
	"slices"
)

// RuleSet is a session's rules of one kind (PDR, FAR, QER, URR or BAR),
// kept in a slice sorted by ID. A session has a handful of rules, so a
// search of the slice costs no more than hashing, and it takes a fraction
// of a map's memory: a Go map allocates a group of eight slots for even one
// entry. Over a million sessions, the maps took some 1.5 GB more.
// The zero value is empty.
//
// A copy of a RuleSet shares its rules; Clone one to change it apart.
type RuleSet[K cmp.Ordered, V rule[K]] struct {
	rules []V
}

// rule is a rule, or an update of one: it names the rule's ID.
type rule[K cmp.Ordered] interface{ ruleID() K }

func (p PDR) ruleID() uint16 { return p.ID }
func (f FAR) ruleID() uint32 { return f.ID }
func (q QER) ruleID() uint32 { return q.ID }
func (u URR) ruleID() uint32 { return u.ID }
func (b BAR) ruleID() uint8  { return b.ID }

func (u PDRUpdate) ruleID() uint16 { return u.ID }
func (u FARUpdate) ruleID() uint32 { return u.ID }
func (u QERUpdate) ruleID() uint32 { return u.ID }
func (u URRUpdate) ruleID() uint32 { return u.ID }

// find is the index of the rule with id, or where it would go.
func (t RuleSet[K, V]) find(id K) (int, bool) {
	return slices.BinarySearchFunc(t.rules, id, func(v V, id K) int { return cmp.Compare(v.ruleID(), id) })
}

// Get is the rule with id.
func (t RuleSet[K, V]) Get(id K) (V, bool) {
	if i, ok := t.find(id); ok {
		return t.rules[i], true
	}
	var zero V
	return zero, false
}

// Has reports whether there is a rule with id.
func (t RuleSet[K, V]) Has(id K) bool {
	_, ok := t.find(id)
	return ok
}

// Put adds v, or replaces the rule with v's ID.
func (t *RuleSet[K, V]) Put(v V) {
	i, ok := t.find(v.ruleID())
	if ok {
		t.rules[i] = v
		return
	}
	t.rules = slices.Insert(t.rules, i, v)
}

// Delete removes the rule with id, and reports whether there was one.
func (t *RuleSet[K, V]) Delete(id K) bool {
	i, ok := t.find(id)
	if ok {
		t.rules = slices.Delete(t.rules, i, i+1)
	}
	return ok
}

// Grow makes room for n more rules, so that adding them allocates once.
func (t *RuleSet[K, V]) Grow(n int) { t.rules = slices.Grow(t.rules, n) }

// Len is the number of rules.
func (t RuleSet[K, V]) Len() int { return len(t.rules) }

// All yields the rules by ID, in ID order.
func (t RuleSet[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for _, v := range t.rules {
			if !yield(v.ruleID(), v) {
				return
			}
		}
	}
}

// IDs yields the rules' IDs in order.
func (t RuleSet[K, V]) IDs() iter.Seq[K] {
	return func(yield func(K) bool) {
		for _, v := range t.rules {
			if !yield(v.ruleID()) {
				return
			}
		}
	}
}

// Clone is a copy with rules of its own: changing one leaves the other as
// it was.
func (t RuleSet[K, V]) Clone() RuleSet[K, V] { return RuleSet[K, V]{slices.Clone(t.rules)} }
