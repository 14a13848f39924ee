package topo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A lab one run has claimed is refused to a second claim, in this process
// or another, with the holder's PID, until it is released.
func TestClaimIsExclusive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the claims are kept in " + ClaimDir)
	}
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("needs util-linux's flock")
	}
	name := fmt.Sprintf("claimtest-%d", os.Getpid())
	path := filepath.Join(ClaimDir, name+".lock")
	t.Cleanup(func() { os.Remove(path) })
	otherProcessGets := func() bool {
		return exec.Command(flock, "--nonblock", path, "true").Run() == nil
	}

	release, err := Claim(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Claim(name)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), "--lab") {
		t.Errorf("a second claim: %v, want ErrInUse naming pid %d and what to do", err, os.Getpid())
	}
	if err := CheckFree(name); !errors.Is(err, ErrInUse) {
		t.Errorf("CheckFree while claimed: %v, want ErrInUse", err)
	}
	if otherProcessGets() {
		t.Error("another process took the lab while it was claimed")
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lock file after release: %v, want it removed", err)
	}
	if err := CheckFree(name); err != nil {
		t.Errorf("CheckFree once released: %v", err)
	}
	if !otherProcessGets() {
		t.Error("another process could not take the lab once it was released")
	}
	release, err = Claim(name)
	if err != nil {
		t.Fatalf("claim again once released: %v", err)
	}
	release()
}

func TestClaimRefusesABadName(t *testing.T) {
	if _, err := Claim("../etc"); err == nil || !strings.Contains(err.Error(), "lab name") {
		t.Errorf("claim of ../etc: %v, want a lab name error", err)
	}
}
