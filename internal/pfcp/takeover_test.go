package pfcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wmnsk/go-pfcp/ie"
	"github.com/wmnsk/go-pfcp/message"
	"golang.org/x/sys/unix"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/saved"
)

// startKept runs a server that keeps its state in the journal at path, as
// a pinned upfd does: the state there is restored first, and compared
// with the maps unless the process before stopped cleanly.
func startKept(t *testing.T, d *datapath.Datapath, path string) (*Server, Takeover, func()) {
	t.Helper()
	cfg := Config{NodeID: "198.18.4.2", Listen: netip.MustParseAddrPort("127.0.0.1:0"), Recovery: time.Unix(1_700_000_000, 0)}
	// As saved: no monotonic reading.
	return startKeptWith(t, d, d, cfg, func() time.Time { return time.Now().UTC().Round(0) }, path)
}

// startKeptWith is startKept with the server's configuration, the
// datapath its meters read, and its clock.
func startKeptWith(t *testing.T, d *datapath.Datapath, dp Datapath, cfg Config, now func() time.Time, path string) (*Server, Takeover, func()) {
	t.Helper()
	store, compiler := testRules(d)
	srv, err := New(cfg, store, compiler, dp, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv.now = now
	j, st, err := OpenState(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	var took Takeover
	if st.For("test") == nil {
		if err := srv.Restore(st); err != nil {
			t.Fatal(err)
		}
		if !st.Clean {
			if took, err = srv.Reconcile(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := srv.Keep(j, "test", false); err != nil {
		t.Fatal(err)
	}
	return srv, took, serveUntilStopped(t, srv)
}

// crashImage is the journal at path as a process killed now leaves it:
// every record it wrote, no more (the copy is taken between turns).
func crashImage(t *testing.T, srv *Server, path string) string {
	t.Helper()
	img := path + ".crash"
	srv.Do(context.Background(), func() {}) // a turn ends: its records are handed on
	time.Sleep(50 * time.Millisecond)       // and written
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return img
}

// A process that dies between changing the maps and its journal leaves
// the maps ahead of the state: the next one puts the maps back as the
// state has them (the SMF was told nothing of the rest), and the SMF's
// retransmissions then make the changes again, in order.
func TestPrivilegedTakeOverPutsTheMapsBackAsTheStateHasThem(t *testing.T) {
	d := loadDatapath(t, 1024)
	path := filepath.Join(t.TempDir(), "state.journal")
	first, _, stopFirst := startKept(t, d, path)
	n := newN4Client(t, first)
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
	o5gs := &smfSession{t: t, n: n, cp: 7} // a PDR list on its uplink F-TEID
	o5gs.establish(o5gsOf(7)...)
	o5gs.modify("activate", o5gsActivate(0x1001, servingGNB, false)...)
	gone := &smfSession{t: t, n: n, cp: 8}
	gone.establish(o5gsOf(8)...)
	var was []string
	first.Do(context.Background(), func() { was, _ = saveLines(first) })
	img := crashImage(t, first, path)

	// What the journal of the dead process lacks: a path switch, a new
	// session, a deletion. The maps have all three.
	switched := message.NewSessionModificationRequest(0, 0, o5gs.up, n.next(), 0, o5gsActivate(0x1002, targetGNB, false)...)
	if c := causeIn(n.ask(switched)); c != 1 {
		t.Fatalf("path switch: cause %d", c)
	}
	extra := &smfSession{t: t, n: n, cp: 9}
	extra.establish(o5gsOf(9)...)
	gone.release()
	stopFirst()

	second, took, _ := startKept(t, d, img)
	if want := (Takeover{Repaired: 2, Strays: 4}); took != want {
		t.Errorf("take-over %+v, want %+v: the switched and the deleted session written again, the four entries of the new one removed", took, want)
	}
	second.Do(context.Background(), func() {
		now, _ := saveLines(second)
		if !slices.Equal(withoutHeader(now), withoutHeader(was)) {
			t.Errorf("the state after the take-over is not the journal's")
		}
		holdsExactly(t, second, d)
	})

	// The SMF, unanswered, sends again: each change is made anew.
	n.upf = net.UDPAddrFromAddrPort(second.Addr())
	if c := causeIn(n.ask(switched)); c != 1 {
		t.Errorf("the path switch sent again: cause %d", c)
	}
	extra.n = n
	extra.establish(o5gsOf(9)...)
	gone.release()
	second.Do(context.Background(), func() { holdsExactly(t, second, d) })
}

// o5gsOf is an Open5GS session of UE i: a PDR list on its uplink F-TEID.
func o5gsOf(i int) []*ie.IE {
	flow := o5gsDefaultFlowOf(fmt.Sprintf("10.45.%d.%d", 10+i/250, 1+i%250), fmt.Sprintf("2001:db8:9:%x::", i))
	return append(append(flow, o5gsCPForwarding()[0]), o5gsSessionIEs()...)
}

// withoutHeader drops the header's line: the journals name their maps apart.
func withoutHeader(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return len(l) > 10 && l[:10] == `{"Kind":"h` })
}

// holdsExactly: the maps hold every session of srv as it has it, and no
// lookup entry besides.
func holdsExactly(t *testing.T, srv *Server, d *datapath.Datapath) {
	t.Helper()
	var want []any
	for seid := range srv.sessionSEIDs {
		ops, err := srv.rules.Installed(seid)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if ok, err := d.Holds(op); !ok || err != nil {
				t.Errorf("session %#x: the maps do not hold %s (%v)", seid, op, err)
			}
			switch o := op.(type) {
			case datapath.PutUplink:
				want = append(want, o.Key)
			case datapath.PutDownlink:
				want = append(want, o.UE)
			}
		}
	}
	up, down, err := d.Lookups()
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, k := range up {
		got = append(got, k)
	}
	for _, k := range down {
		got = append(got, k)
	}
	if len(got) != len(want) {
		t.Errorf("the maps hold %d lookup entries, the sessions %d: %v, want %v", len(got), len(want), got, want)
	}
}

// A full disk fails the journal: upfd serves on, says so (JournalStats),
// and writes the whole state again once there is room; that journal
// gives back everything.
func TestPrivilegedJournalOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	filler := filepath.Join(dir, "filler")
	d := loadDatapath(t, 1024)
	path := filepath.Join(dir, "state.journal")
	srv, _, stop := startKept(t, d, path)
	n := newN4Client(t, srv)
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filler, make([]byte, fs.Bavail*uint64(fs.Bsize)), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		s := &smfSession{t: t, n: n, cp: 100 + uint64(i)}
		s.establish(o5gsOf(100 + i)...)
	}
	var st JournalStats
	srv.Do(context.Background(), func() {})
	time.Sleep(50 * time.Millisecond)
	srv.Do(context.Background(), func() { st = srv.journalStats() })
	if !st.Behind || st.Errors == 0 {
		t.Fatalf("a full disk: %+v, want the journal behind", st)
	}
	os.Remove(filler)
	deadline := time.Now().Add(5 * time.Second)
	for st.Behind && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		srv.Do(context.Background(), func() { st = srv.journalStats() })
	}
	if st.Behind {
		t.Fatalf("room again, but the journal is still behind: %+v", st)
	}
	var was []string
	srv.Do(context.Background(), func() { was, _ = saveLines(srv) })
	stop()
	j, got, err := OpenState(path)
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	if got.Sessions() != 20 || !got.Clean {
		t.Errorf("the journal after the disk filled: %d sessions, clean %v", got.Sessions(), got.Clean)
	}
	second, _, _ := startKept(t, d, path)
	second.Do(context.Background(), func() {
		now, _ := saveLines(second)
		if !reflect.DeepEqual(withoutHeader(now), withoutHeader(was)) {
			t.Errorf("the state read back differs from the state written")
		}
	})
}

// What the SMF was answered stands after a crash: a retransmitted
// establishment gets the answer it got, the same F-SEID, not a second
// session; the responses of an association released before the crash
// answer no later request.
func TestPrivilegedTakeOverAnswersRetransmissionsAsBefore(t *testing.T) {
	d := loadDatapath(t, 1024)
	path := filepath.Join(t.TempDir(), "state.journal")
	first, _, stopFirst := startKept(t, d, path)
	n := newN4Client(t, first)
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
	estSeq := n.next()
	est := encode(t, message.NewSessionEstablishmentRequest(0, 0, 0, estSeq, 0,
		append([]*ie.IE{smfNode, ie.NewFSEID(0x77, profileSMF, nil)}, o5gsOf(1)...)...))
	answered := n.raw(est)
	img := crashImage(t, first, path)
	stopFirst()
	key := entityKey{kindResponse, responseName(keyOf(n.smf.LocalAddr().(*net.UDPAddr).AddrPort(), estSeq))}
	keeps := func(image string) bool {
		j, st, err := OpenState(image)
		if err != nil {
			t.Fatal(err)
		}
		j.Close()
		_, kept := st.entities[key]
		return kept
	}
	if !keeps(img) {
		t.Fatal("the journal does not keep the establishment's response")
	}

	second, _, _ := startKept(t, d, img)
	n.upf = net.UDPAddrFromAddrPort(second.Addr())
	if again := n.raw(est); !bytes.Equal(again, answered) {
		t.Errorf("the establishment sent again after the crash was answered anew:\n% x\nwant\n% x", again, answered)
	}
	second.Do(context.Background(), func() {
		if got := second.store.Len(); got != 1 {
			t.Errorf("%d sessions after the retransmission, want the one", got)
		}
	})

	// Released, then the crash: the cache has forgotten the peer.
	rel := n.ask(message.NewAssociationReleaseRequest(n.next(), smfNode)).(*message.AssociationReleaseResponse)
	if c, _ := rel.Cause.Cause(); c != 1 {
		t.Fatalf("release: cause %d", c)
	}
	if keeps(crashImage(t, second, img)) {
		t.Error("the establishment's response is kept after its association was released")
	}
}

// The writer compacts the journal by copying each entity's last change
// into a new file: what that file reads back is the server's state.
func TestPrivilegedJournalCompactsToTheState(t *testing.T) {
	was := minCompact
	t.Cleanup(func() { minCompact = was }) // after the server stops: cleanups run last first
	minCompact = 16 << 10                  // a few dozen sessions
	d := loadDatapath(t, 1024)
	path := filepath.Join(t.TempDir(), "state.journal")
	srv, _, _ := startKept(t, d, path)
	n := newN4Client(t, srv)
	profileAssociate(t, n, smfNode, ie.NewRecoveryTimeStamp(time.Unix(1_650_000_000, 0)), ie.NewCPFunctionFeatures(0))
	var sessions []*smfSession
	for i := range 60 {
		s := &smfSession{t: t, n: n, cp: uint64(100 + i)}
		s.establish(o5gsOf(i)...)
		sessions = append(sessions, s)
	}
	for _, s := range sessions[:45] {
		s.release()
	}
	sessions[50].modify("activate", o5gsActivate(0x1001, servingGNB, false)...)
	img := crashImage(t, srv, path)

	var st JournalStats
	srv.Do(context.Background(), func() { st = srv.journalStats() })
	if st.Rewrites < 2 || st.Size >= int64(st.Bytes) {
		t.Fatalf("%+v: the journal was not compacted (its first rewrite is at the start)", st)
	}
	_, read, err := OpenState(img)
	if err != nil {
		t.Fatal(err)
	}
	srv.Do(context.Background(), func() {
		want := stateOf(t, srv)
		if read.Sessions() != 15 || !maps.EqualFunc(read.entities, want.entities, func(a, b saved.Raw) bool { return bytes.Equal(a, b) }) {
			t.Errorf("the compacted journal holds %d entities (%d sessions), the server %d (%d)",
				len(read.entities), read.Sessions(), len(want.entities), want.Sessions())
		}
	})
}
