package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// readAll opens the journal at path and returns its records.
func readAll(t *testing.T, path string) (*Journal, [][]byte, Tail) {
	t.Helper()
	var got [][]byte
	j, tail, err := Open(path, func(p []byte) error {
		got = append(got, slices.Clone(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j, got, tail
}

func records(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, bytes.Repeat([]byte{byte('a' + i)}, 10+i*7))
	}
	return out
}

func TestAppendedRecordsReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	j, got, tail := readAll(t, path)
	if len(got) != 0 || tail != (Tail{}) {
		t.Fatalf("a new journal has %d records, tail %+v", len(got), tail)
	}
	want := records(5)
	for _, r := range want {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	_, got, tail = readAll(t, path)
	if !slices.EqualFunc(got, want, bytes.Equal) || tail != (Tail{Records: 5}) {
		t.Errorf("read back %q, tail %+v", got, tail)
	}
}

// A death in the middle of a write leaves any prefix of the last record:
// every cut keeps the records before it, and the journal goes on from
// there as if the last had never been begun.
func TestTornTailIsCutAtEveryByte(t *testing.T) {
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole")
	j, _, _ := readAll(t, whole)
	want := records(3)
	for _, r := range want {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	last := len(b) - (HeaderSize + len(want[2]))
	for cut := last; cut < len(b); cut++ {
		t.Run(fmt.Sprintf("%d of %d bytes", cut, len(b)), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprint(cut))
			if err := os.WriteFile(path, b[:cut], 0o600); err != nil {
				t.Fatal(err)
			}
			j, got, tail := readAll(t, path)
			if !slices.EqualFunc(got, want[:2], bytes.Equal) || tail != (Tail{Records: 2, Cut: int64(cut - last)}) {
				t.Fatalf("read %d records, tail %+v", len(got), tail)
			}
			if err := j.Append([]byte("next")); err != nil {
				t.Fatal(err)
			}
			j.Close()
			_, got, tail = readAll(t, path)
			if !slices.EqualFunc(got, append(slices.Clone(want[:2]), []byte("next")), bytes.Equal) || tail.Cut != 0 {
				t.Errorf("after an append: %q, tail %+v", got, tail)
			}
		})
	}
}

// A record whose bytes changed fails its checksum: it and what follows
// are not read.
func TestCorruptRecordEndsTheJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	j, _, _ := readAll(t, path)
	want := records(3)
	for _, r := range want {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	b, _ := os.ReadFile(path)
	b[HeaderSize+len(want[0])+HeaderSize+3] ^= 0x40 // in the second record's payload
	os.WriteFile(path, b, 0o600)
	_, got, tail := readAll(t, path)
	if len(got) != 1 || tail.Records != 1 || tail.Cut != int64(len(b)-HeaderSize-len(want[0])) {
		t.Errorf("read %d records, tail %+v", len(got), tail)
	}
}

func TestRewriteReplacesTheRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	j, _, _ := readAll(t, path)
	for _, r := range records(4) {
		j.Append(r)
	}
	err := j.Rewrite(true, func(add func([]byte) error) error {
		return errors.Join(add([]byte("snapshot 1")), add([]byte("snapshot 2")))
	})
	if err != nil {
		t.Fatal(err)
	}
	j.Append([]byte("after"))
	if err := j.Rewrite(true, func(add func([]byte) error) error { return errors.New("stopped half way") }); err == nil {
		t.Error("a failed rewrite returned no error")
	}
	j.Append([]byte("after a failed rewrite"))
	j.Close()
	_, got, _ := readAll(t, path)
	want := [][]byte{[]byte("snapshot 1"), []byte("snapshot 2"), []byte("after"), []byte("after a failed rewrite")}
	if !slices.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("read %q", got)
	}
	if _, err := os.Stat(path + ".new"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed rewrite left its file: %v", err)
	}
}

func TestSyncCoversWhatWasAppended(t *testing.T) {
	j, _, _ := readAll(t, filepath.Join(t.TempDir(), "state"))
	j.Append([]byte("one"))
	mark := j.Appended()
	if err := j.Sync(mark); err != nil {
		t.Fatal(err)
	}
	if j.synced.Load() != mark {
		t.Errorf("synced %d, want %d", j.synced.Load(), mark)
	}
	j.Append([]byte("two"))
	if err := j.Sync(mark); err != nil || j.synced.Load() != mark {
		t.Errorf("a sync to a mark already synced ran again: %v, %d", err, j.synced.Load())
	}
}

// A full disk (a 64 KiB tmpfs) refuses an append: the error says so, the
// journal holds every record before it, and appends go on once there is
// room again.
func TestPrivilegedFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, 32<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state")
	j, _, _ := readAll(t, path)
	record := bytes.Repeat([]byte{'r'}, 3000)
	var appended int
	var err error
	for range 100 {
		if err = j.Append(record); err != nil {
			break
		}
		appended++
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("after %d appends: %v, want ENOSPC", appended, err)
	}
	if err := j.Append(record); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("the next append: %v", err)
	}
	j.Close()
	j, got, tail := readAll(t, path)
	if len(got) != appended || tail.Cut != 0 {
		t.Fatalf("read %d records of %d appended, tail %+v", len(got), appended, tail)
	}
	// Room again: the journal goes on.
	os.Remove(filler)
	if err := j.Append(record); err != nil {
		t.Fatal(err)
	}
	if err := j.Rewrite(true, func(add func([]byte) error) error { return add([]byte("snapshot")) }); err != nil {
		t.Fatal(err)
	}
}
