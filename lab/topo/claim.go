package topo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ClaimDir holds a lock file for each lab a run is using.
const ClaimDir = "/run/sluice-lab"

// ErrInUse is returned for a lab that another run is using.
var ErrInUse = errors.New("in use by another run")

// Claim takes the lab called name for one run, until release: a second
// claim, from this process or another, fails with ErrInUse while the first
// holds it, and says which process holds it. Two runs in one lab would
// start two UPFs on the same devices, and the first to end would take the
// lab down under the other. The kernel drops the claim of a process that
// dies; release also removes the lock file.
func Claim(name string) (release func() error, err error) {
	if name == "" {
		name = DefaultName
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(ClaimDir, 0o755); err != nil {
		return nil, fmt.Errorf("topo: claim lab %s: %w", name, err)
	}
	path := filepath.Join(ClaimDir, name+".lock")
	// A holder removes the file before it lets go: a lock taken on a file
	// no longer at path is another's leftover, and the claim starts again.
	for range 8 {
		f, err := lockFile(path, name)
		if err != nil {
			return nil, err
		}
		if f != nil {
			return func() error {
				err := os.Remove(path) // before the lock goes: see above
				if errors.Is(err, os.ErrNotExist) {
					err = nil
				}
				return errors.Join(err, f.Close())
			}, nil
		}
	}
	return nil, fmt.Errorf("topo: claim lab %s: %s keeps being replaced", name, path)
}

// lockFile opens path and locks it: the file, or nil if it was removed or
// replaced meanwhile (try again), or ErrInUse.
func lockFile(path, name string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("topo: claim lab %s: %w", name, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("topo: lab %s is %w (pid %s): wait for it to end; a run can have a lab of its own (upflab run --lab NAME)",
				name, ErrInUse, strings.TrimSpace(string(holder)))
		}
		return nil, fmt.Errorf("topo: claim lab %s: %w", name, err)
	}
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, nil
	}
	// Who holds it, for the error of the next claim; the lock is what counts.
	if f.Truncate(0) == nil {
		fmt.Fprintf(f, "%d\n", os.Getpid())
	}
	return f, nil
}

// CheckFree fails with ErrInUse while a run holds the lab called name: for
// what must not touch a lab in use, such as taking it down.
func CheckFree(name string) error {
	release, err := Claim(name)
	if err != nil {
		return err
	}
	return release()
}
