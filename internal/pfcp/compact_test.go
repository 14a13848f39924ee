package pfcp

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluice-upf/sluice/internal/saved"
)

// A compaction keeps each entity's last change and the responses still
// kept: not those expired, nor those of a peer forgotten before them,
// while a response kept after the forget stays.
func TestCompactionKeepsWhatIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.journal")
	j, _, err := OpenState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	k := newKeeper(j, "test", false)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	now := time.Unix(1_800_000_000, 0)
	smf1, smf2 := netip.MustParseAddrPort("198.18.4.1:8805"), netip.MustParseAddrPort("[2001:db8::4]:8805")
	response := func(from netip.AddrPort, seq uint32, expires time.Time) change {
		return set(kindResponse, responseName(keyOf(from, seq)), &savedResponse{From: from, Seq: seq, B: []byte{1, 2}, Expires: expires})
	}
	later := now.Add(cacheFor)
	k.rewrite(k.changesOf([]change{set(kindHeader, "", &stateHeader{stateVersion, "test", layout()})}), log)
	for _, cs := range [][]change{
		{response(smf1, 1, now.Add(-time.Second)), response(smf1, 2, later), response(smf2, 1, later), set(kindSession, "1", &sessionParts{Store: 1})},
		{set(kindSession, "1", &sessionParts{Store: 2}), set(kindSession, "2", &sessionParts{Store: 3})},
		{gone(kindForget, smf1.Addr().String()), response(smf1, 3, later), gone(kindSession, "2")},
	} {
		k.write(turn{changes: cs}, now, log)
	}
	if err := k.rewrite(k.copyLive(now), log); err != nil {
		t.Fatal(err)
	}
	_, st, err := OpenState(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for key := range st.entities {
		got = append(got, key.kind+" "+key.key)
	}
	slices.Sort(got)
	if err := st.For("test"); err != nil {
		t.Errorf("the header: %v", err)
	}
	want := []string{"response 198.18.4.1:8805/3", "response [2001:db8::4]:8805/1", "session 1"}
	if !slices.Equal(got, want) {
		t.Errorf("after the compaction: %q, want %q", got, want)
	}
	var parts savedSession
	var store int
	err = eachOf(st, kindSession, func(s savedSession) { parts = s })
	if err = errors.Join(err, saved.Read(parts.Store, &store)); store != 2 {
		t.Errorf("session 1 is %d (%v), not its last change", store, err)
	}
}
