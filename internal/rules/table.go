package rules

// table is a small map kept as a slice: a session has a handful of rules,
// so a scan beats hashing, and a million sessions' images stay small.
// Entries keep the order they were set in.
type table[K comparable, V any] []entry[K, V]

type entry[K comparable, V any] struct {
	Key K
	Val V
}

func (t table[K, V]) get(k K) (V, bool) {
	for _, e := range t {
		if e.Key == k {
			return e.Val, true
		}
	}
	var zero V
	return zero, false
}

// at is get without the flag: the zero value when k is absent.
func (t table[K, V]) at(k K) V {
	v, _ := t.get(k)
	return v
}

func (t *table[K, V]) set(k K, v V) {
	for i := range *t {
		if (*t)[i].Key == k {
			(*t)[i].Val = v
			return
		}
	}
	*t = append(*t, entry[K, V]{k, v})
}
