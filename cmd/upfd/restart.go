package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-upf/sluice/internal/datapath"
	"github.com/sluice-upf/sluice/internal/pfcp"
)

// A restart with pinning on keeps forwarding: the programs and maps stay
// in bpffs, and what N4 knows goes to the state file on the way out and
// comes back on the way in. The file names the maps it belongs to (their
// kernel IDs), is read once and removed, so that it is never applied to
// other maps, nor twice.

// stateVersion changes when the saved form does: an older file is not read.
// 5: an IPv4 source alone (the UE's address) is inline and keeps no SDF
// slot; an IPv4v6 UE's IPv6 source, lost before, keeps one.
const stateVersion = 5

type stateHeader struct {
	Version  int
	Datapath string // datapath.Identity of the maps the state describes
	Saved    time.Time
}

// saveState writes srv's state for the next process, atomically.
func saveState(path string, d *datapath.Datapath, srv *pfcp.Server) error {
	id, err := d.Identity()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("save state: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	err = errors.Join(enc.Encode(stateHeader{stateVersion, id, time.Now()}), srv.Save(enc), w.Flush(), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save state to %s: %w", path, err)
	}
	return nil
}

// savedState is a state file opened for the maps it was saved with.
type savedState struct {
	f   *os.File
	dec *json.Decoder
}

// openState opens the state saved for d's maps, and removes the file: it
// is read once, whatever comes of it. An error means there is none to
// take: no file, or one saved for other maps, or one that does not read.
func openState(path string, d *datapath.Datapath) (*savedState, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("no state file: %w", err)
	}
	err = os.Remove(path)
	id, idErr := d.Identity()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	var h stateHeader
	err = errors.Join(err, idErr, dec.Decode(&h))
	if err == nil && (h.Version != stateVersion || h.Datapath != id) {
		err = fmt.Errorf("%s was saved for other maps (version %d, %s; these are %s)", path, h.Version, h.Datapath, id)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &savedState{f, dec}, nil
}

// restore reads the sessions, associations and meters into srv.
func (s *savedState) restore(srv *pfcp.Server) error {
	defer s.f.Close()
	if err := srv.Restore(s.dec); err != nil {
		return fmt.Errorf("restore state from %s: %w", s.f.Name(), err)
	}
	return nil
}
