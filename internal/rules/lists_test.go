package rules

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-upf/sluice/internal/session"
)

// A list takes the smallest run that holds it, two PDRs a slot, aligned
// to its size, from slot 1 on; lists longer than the largest run are
// refused.
func TestListRunSizes(t *testing.T) {
	for _, c := range []struct {
		pdrs, size int
	}{{2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 8}, {17, 16}, {32, 16}} {
		r := newListRuns(1 + 32)
		id, ok := r.get(c.pdrs)
		if !ok || id != 1 || r.size(id) != c.size {
			t.Errorf("a list of %d: slot %d of size %d (%v), want slot 1 of %d", c.pdrs, id, r.size(id), ok, c.size)
		}
	}
	if _, ok := newListRuns(1 + 32).get(33); ok {
		t.Errorf("a list of 33 PDRs got a run")
	}
}

// Small lists split one large run between them, the next list of 32
// takes the next large run, and when the table is full nothing more is
// handed out.
func TestListRunsSplitAndFill(t *testing.T) {
	r := newListRuns(1 + 32)
	var got []uint32
	for _, n := range []int{2, 2, 4, 8, 16, 32} {
		id, ok := r.get(n)
		if !ok {
			t.Fatalf("a list of %d: table full", n)
		}
		got = append(got, id)
	}
	if want := []uint32{1, 2, 3, 5, 9, 17}; !slices.Equal(got, want) {
		t.Errorf("first slots %v, want %v", got, want)
	}
	if id, ok := r.get(2); ok {
		t.Errorf("a full table handed out slot %d", id)
	}
}

// Freed runs merge with their buddies: once every list is given back, the
// whole table is free again in runs of the largest size.
func TestListRunsMerge(t *testing.T) {
	r := newListRuns(1 + 4*16)
	rng := rand.New(rand.NewPCG(1, 2))
	var held []uint32
	for range 5000 {
		if len(held) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(held))
			r.put(held[i])
			held = slices.Delete(held, i, i+1)
			continue
		}
		if id, ok := r.get(2 + rng.IntN(31)); ok {
			held = append(held, id)
		}
		checkDisjoint(t, r, held)
	}
	for _, id := range held {
		r.put(id)
	}
	if r.inUse() != 0 {
		t.Errorf("%d lists held after all were given back", r.inUse())
	}
	for i := range 4 {
		if _, ok := r.get(32); !ok {
			t.Fatalf("run of 32 number %d: none free after everything merged", i+1)
		}
	}
}

// Runs handed out lie inside the table, aligned to their size, and never
// overlap.
func checkDisjoint(t *testing.T, r *listRuns, held []uint32) {
	t.Helper()
	used := make([]bool, r.total+1)
	for _, id := range held {
		n := uint32(r.size(id))
		if n == 0 || (id-1)%n != 0 || id+n-1 > r.total {
			t.Fatalf("run at %d of %d slots: outside the table or unaligned", id, n)
		}
		for s := id; s < id+n; s++ {
			if used[s] {
				t.Fatalf("slot %d is in two runs", s)
			}
			used[s] = true
		}
	}
}

// An allocator restored from the runs in use hands out only what they
// leave free, and refuses runs that cannot have come from it.
func TestListRunsTake(t *testing.T) {
	r := newListRuns(1 + 32)
	if err := r.take([]listRun{{ID: 3, Size: 2}, {ID: 17, Size: 16}, {ID: 1, Size: 1}}); err != nil {
		t.Fatal(err)
	}
	held := []uint32{1, 3, 17}
	for id, ok := r.get(2); ok; id, ok = r.get(2) {
		held = append(held, id)
		checkDisjoint(t, r, held)
	}
	if free := 32 - 1 - 2 - 16; len(held)-3 != free {
		t.Errorf("%d lists of 2 fitted around the restored runs, want %d", len(held)-3, free)
	}

	for _, c := range []struct {
		name string
		runs []listRun
	}{
		{"unaligned", []listRun{{ID: 2, Size: 2}}},
		{"not a power of two", []listRun{{ID: 1, Size: 3}}},
		{"too long", []listRun{{ID: 1, Size: 32}}},
		{"beyond the table", []listRun{{ID: 33, Size: 1}}},
		{"overlapping", []listRun{{ID: 1, Size: 2}, {ID: 2, Size: 1}}},
	} {
		if err := newListRuns(1 + 32).take(c.runs); err == nil {
			t.Errorf("%s: taken", c.name)
		}
	}
}

// A restarted compiler holds the lists the saved one held, with their
// runs' sizes, and frees them with their sessions.
func TestListsSurviveRestore(t *testing.T) {
	c := newCompiler()
	s := pduSession()
	flow, _ := session.ParseFlow("permit out 17 from 198.18.7.0/24 to assigned")
	s.PDRs.Put(session.PDR{ID: 3, Precedence: 10, FARID: 2, PDI: session.PDI{Source: session.Core,
		UEIP: &session.UEIP{V4: ue, Dest: true}, SDFs: []session.SDF{{Flow: flow}}}})
	plan(t, c, s)
	r := restored(t, c, s)
	if r.listRuns.inUse() != 1 || r.listRuns.size(1) != 1 {
		t.Errorf("restored: %d lists held, the one at slot 1 of %d slots; want the one of 1", r.listRuns.inUse(), r.listRuns.size(1))
	}
	if id, _ := r.listRuns.get(2); id == 1 {
		t.Errorf("the restored list's slot was handed out again")
	}
	if got := ops(plan(t, r, nil)); !strings.Contains(got, "free pdr list 1\n") {
		t.Errorf("deletion does not free the restored list:\n%s", got)
	}
}
