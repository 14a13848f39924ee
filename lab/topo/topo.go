package topo

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/sluice-upf/sluice/internal/netns"
)

// Options say which lab to build.
type Options struct {
	Name   string // prefix of the namespaces; DefaultName if empty
	N9     bool   // a second UPF namespace, <name>-upf2, joined by n9
	Queues int    // TX and RX queues of every veth; 1 if zero
}

// MaxQueues bounds Options.Queues: one queue per CPU is all a veth uses.
const MaxQueues = 64

// Lab is a built lab: its namespaces (UPF2 empty without N9) and how it
// was asked for.
type Lab struct {
	Name string
	Names
	N9     bool
	Queues int
}

// ErrNoLab is returned for a lab none of whose namespaces exist.
var ErrNoLab = errors.New("no such lab")

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

// Up builds the lab o asks for and returns it. A lab that is already
// there as asked is left as it is; one that is not (a crash half-way, a
// namespace deleted, other options) is removed and built again. If the
// build fails, what it made is removed.
func Up(o Options) (Lab, error) {
	l, err := o.lab()
	if err != nil {
		return Lab{}, err
	}
	off, err := l.deviations()
	if err != nil {
		return Lab{}, err
	}
	if len(off) == 0 {
		return l, nil
	}
	if err := Down(l.Name); err != nil {
		return Lab{}, err
	}
	if err := IPAll(l.buildCommands()); err != nil {
		return Lab{}, errors.Join(fmt.Errorf("topo: build lab %s: %w", l.Name, err), Down(l.Name))
	}
	// The build said nothing failed; check that it made what the plan says.
	if off, err = l.deviations(); err == nil && len(off) > 0 {
		err = fmt.Errorf("built, yet %s", strings.Join(off, "; "))
	}
	if err != nil {
		return Lab{}, errors.Join(fmt.Errorf("topo: build lab %s: %w", l.Name, err), Down(l.Name))
	}
	return l, nil
}

// Down removes every namespace of the lab called name, lab/gnb's UE
// namespace too, and with them their devices, addresses and routes; a lab
// half made or half removed included. There being nothing to remove is no error. Processes left
// running inside a namespace keep it alive, unnamed, until they exit.
func Down(name string) error {
	if name == "" {
		name = DefaultName
	}
	var errs []error
	// The UE namespace first: a run killed outright leaves it, and with
	// it a veth whose peer is in the gNB's namespace.
	n := NamesOf(name)
	for _, ns := range append([]string{n.UE}, n.all()...) {
		if !exists(ns) {
			continue
		}
		if _, err := IP("netns", "del", ns); err != nil {
			errs = append(errs, fmt.Errorf("topo: remove namespace %s: %w", ns, err))
		}
	}
	return errors.Join(errs...)
}

// Open finds the lab called name, which must be complete: a lab half
// made is an error that says to build it again.
func Open(name string) (Lab, error) {
	if name == "" {
		name = DefaultName
	}
	n := NamesOf(name)
	if !slices.ContainsFunc(n.all(), exists) {
		return Lab{}, fmt.Errorf("topo: %w %q: `upflab topo up --name %s` makes it", ErrNoLab, name, name)
	}
	l, err := Options{Name: name, N9: exists(n.UPF2), Queues: queuesOf(n.UPF, DevN3)}.lab()
	if err != nil {
		return Lab{}, err
	}
	off, err := l.deviations()
	if err != nil {
		return Lab{}, err
	}
	if len(off) > 0 {
		return Lab{}, fmt.Errorf("topo: lab %s is incomplete (%s): `upflab topo up --name %s` builds it again", name, strings.Join(off, "; "), name)
	}
	return l, nil
}

// Do runs fn inside ns, one of the lab's namespaces (l.GNB, ...).
func (l Lab) Do(ns string, fn func() error) error {
	if !slices.Contains(l.all(), ns) {
		return fmt.Errorf("topo: %q is not a namespace of lab %s", ns, l.Name)
	}
	return netns.Do(ns, fn)
}

// XDP names the XDP programs attached to dev in ns, one of the lab's
// namespaces, as Show does ("xdp_sink#42 native").
func (l Lab) XDP(ns, dev string) ([]string, error) {
	if !slices.Contains(l.all(), ns) {
		return nil, fmt.Errorf("topo: %q is not a namespace of lab %s", ns, l.Name)
	}
	var links []ipLink
	if err := ipJSON(&links, "-n", ns, "-d", "link", "show", "dev", dev); err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	if len(links) != 1 {
		return nil, fmt.Errorf("topo: no device %s in %s", dev, ns)
	}
	return links[0].XDP.programs(), nil
}

// Command prepares a program to run inside ns, one of the lab's
// namespaces, as `ip netns exec` does (so that /sys is the namespace's
// too).
func (l Lab) Command(ns, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	if !slices.Contains(l.all(), ns) {
		cmd.Err = fmt.Errorf("topo: %q is not a namespace of lab %s", ns, l.Name) // Start returns it
	}
	return cmd
}

func (o Options) lab() (Lab, error) {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Queues == 0 {
		o.Queues = 1
	}
	if err := checkName(o.Name); err != nil {
		return Lab{}, err
	}
	if o.Queues < 1 || o.Queues > MaxQueues {
		return Lab{}, fmt.Errorf("topo: %d queues: want 1 to %d", o.Queues, MaxQueues)
	}
	l := Lab{Name: o.Name, Names: NamesOf(o.Name), N9: o.N9, Queues: o.Queues}
	if !o.N9 {
		l.UPF2 = ""
	}
	return l, nil
}

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("topo: lab name %q: want up to 32 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// exists says whether a named namespace is there.
func exists(ns string) bool {
	_, err := os.Stat(filepath.Join(netns.Dir, ns))
	return err == nil
}
