package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/sluice-upf/sluice/lab/topo"
)

func init() {
	register("topo", "up|down|show: the lab's namespaces", runTopo)
}

const topoUsage = "upflab topo up [--name N] [--n9] [--queues Q] | down [--name N] | show [--name N]"

const topoHelp = `usage: ` + topoUsage + `

  up     build the lab's namespaces, or repair a half-made lab (a lab already up is left as it is)
  down   remove them, with everything in them
  show   list their devices, addresses, peers and XDP programs

` + "`upflab topo VERB -h`" + ` gives a verb's flags.
`

func runTopo(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, topoUsage)
	}
	switch args[0] {
	case "up":
		return topoUp(args[1:])
	case "down":
		return topoDown(args[1:])
	case "show":
		return topoShow(args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Print(topoHelp)
		return flag.ErrHelp
	}
	return fmt.Errorf("%w: %q is not a topo verb; %s", errUsage, args[0], topoUsage)
}

func topoUp(args []string) error {
	fs := flags("topo up", "[--name N] [--n9] [--queues Q]")
	var o topo.Options
	fs.StringVar(&o.Name, "name", topo.DefaultName, "the lab's name, the prefix of its namespaces")
	fs.BoolVar(&o.N9, "n9", false, "a second UPF namespace, <name>-upf2, joined to the UPF by n9")
	fs.IntVar(&o.Queues, "queues", 1, fmt.Sprintf("TX and RX queues of every veth (1 to %d)", topo.MaxQueues))
	if err := parseAll(fs, args); err != nil {
		return err
	}
	l, err := topo.Up(o)
	if err != nil {
		return err
	}
	fmt.Printf("lab %s is up: namespaces %s, %s, %s, %s", l.Name, l.SMF, l.GNB, l.UPF, l.DN)
	if l.N9 {
		fmt.Printf(", %s", l.UPF2)
	}
	fmt.Printf("\n`upflab topo show --name %s` lists its devices; `upflab topo down --name %s` removes it\n", l.Name, l.Name)
	return nil
}

func topoDown(args []string) error {
	fs := flags("topo down", "[--name N]")
	name := fs.String("name", topo.DefaultName, "the lab's name")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := topo.CheckFree(*name); err != nil {
		return err
	}
	return topo.Down(*name)
}

func topoShow(args []string) error {
	fs := flags("topo show", "[--name N]")
	name := fs.String("name", topo.DefaultName, "the lab's name")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	devs, err := topo.Show(*name)
	if err != nil {
		return err
	}
	return writeDevices(os.Stdout, devs)
}

// writeDevices prints the table of `upflab topo show`, and a warning for
// each veth whose peer runs an XDP program while it has neither one nor
// GRO on: frames that program redirects into the veth are dropped.
func writeDevices(w io.Writer, devs []topo.Device) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tDEVICE\tMAC\tSTATE\tQUEUES\tGRO\tADDRESSES\tPEER\tXDP")
	xdp := map[string][]string{}
	for _, d := range devs {
		state := "down"
		if d.Up {
			state = "up"
		}
		addrs := make([]string, len(d.Addrs))
		for i, a := range d.Addrs {
			addrs[i] = a.String()
		}
		gro := "off"
		switch {
		case d.Name == "lo":
			gro = "-"
		case d.GRO:
			gro = "on"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", d.Namespace, d.Name, d.MAC, state, d.Queues, gro,
			orDash(strings.Join(addrs, ",")), orDash(d.Peer), orDash(strings.Join(d.XDP, ",")))
		xdp[d.Namespace+"/"+d.Name] = d.XDP
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range devs {
		if d.Peer != "" && len(d.XDP) == 0 && !d.GRO && len(xdp[d.Peer]) > 0 {
			fmt.Fprintf(w, "note: %s/%s has neither an XDP program nor GRO on, so the veth drops what XDP on %s sends out of it; `upflab topo up` turns GRO on\n", d.Namespace, d.Name, d.Peer)
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
