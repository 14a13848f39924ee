// Package netns runs code inside a named network namespace.
//
// Namespaces are per thread: Do locks the goroutine to its OS thread, enters
// the namespace, runs the function and returns the thread to where it was.
// If it cannot return, the thread is left locked so that Go retires it
// rather than reusing it in the wrong namespace.
package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// Dir is where iproute2 keeps named namespaces.
const Dir = "/var/run/netns"

// Do runs fn inside the namespace called name ("" runs it where we are).
func Do(name string, fn func() error) error {
	if name == "" {
		return fn()
	}
	target, err := os.Open(filepath.Join(Dir, name))
	if err != nil {
		return fmt.Errorf("open netns %s: %w", name, err)
	}
	defer target.Close()

	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open own netns: %w", err)
	}
	defer self.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", name, err)
	}
	ferr := fn()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("leave netns %s: %w (thread retired)", name, err)
	}
	runtime.UnlockOSThread()
	return ferr
}
