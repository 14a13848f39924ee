// Command upflab measures a user plane function on one machine, in network
// namespaces: topology, SMF emulator, traffic generator and sink, probes,
// scenarios and reports.
//
//	upflab run [SCENARIO.yaml]     the default scenario against upfd, or a file
//	upflab topo up|down|show       the lab's namespaces
//	upflab smf ...                 associate and drive sessions over PFCP
//	upflab version                 upflab's version
//	upflab help                    every command
//
// Each command lives in a file of its own and registers itself in init.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one verb of upflab.
type command struct {
	name    string
	summary string // one line for help
	run     func(args []string) error
}

var commands = map[string]command{}

// register adds a verb; each command's file calls it from init.
func register(name, summary string, run func(args []string) error) {
	if _, dup := commands[name]; dup {
		panic("upflab: command registered twice: " + name)
	}
	commands[name] = command{name, summary, run}
}

// errUsage marks an error whose message already says how to use the verb.
var errUsage = errors.New("usage")

func main() {
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage()
		return
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "upflab: unknown command %q; `upflab help` lists them\n", os.Args[1])
		os.Exit(2)
	}
	if err := c.run(os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, prefixed("upflab "+c.name, err))
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// prefixed puts the verb before err, unless err names its package that
// is also the verb's name: "upflab topo: no such lab", not "topo: topo:".
func prefixed(verb string, err error) string {
	msg := err.Error()
	if _, name, _ := strings.Cut(verb, " "); strings.HasPrefix(msg, name+": ") {
		return "upflab " + msg
	}
	return verb + ": " + msg
}

func usage() {
	fmt.Println("upflab measures a user plane function on one machine, in network namespaces.")
	fmt.Println()
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("  upflab %-8s %s\n", n, commands[n].summary)
	}
	fmt.Println()
	fmt.Println("`upflab COMMAND -h` gives a command's flags.")
}

// flags makes a verb's flag set. A parse error comes back to main, which
// prints it once; -h prints the synopsis and the flags to standard output.
func flags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("upflab "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: upflab %s %s\n\nflags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseAll parses a verb's flags and refuses arguments left over.
func parseAll(fs *flag.FlagSet, args []string) error {
	files, err := parseWithFiles(fs, args)
	if err == nil && len(files) > 0 {
		err = fmt.Errorf("%w: unexpected argument %q; `%s -h` lists the flags", errUsage, files[0], fs.Name())
	}
	return err
}

// parseWithFiles parses flags given before or after the file names.
func parseWithFiles(fs *flag.FlagSet, args []string) (files []string, err error) {
	for {
		if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stdout)
			fs.Usage()
			return nil, err
		} else if err != nil {
			return nil, fmt.Errorf("%w: %v; `%s -h` lists the flags", errUsage, err, fs.Name())
		}
		if fs.NArg() == 0 {
			return files, nil
		}
		files = append(files, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
