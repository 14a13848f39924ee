// Command upfctl is upfd's REST API for people: tables by default, the
// API's JSON with -o json.
//
//	upfctl [--api URL] [--token T] [-o table|json] VERB [ARGS]
//
//	health [--wait D]                       is upfd serving N4? (exit status 1 if not; --wait: until it is, up to D)
//	version                                 upfd's and upfctl's versions (upfctl's alone without upfd)
//	associations                            the SMFs' PFCP associations
//	sessions [--peer P] [--ue A] [--teid T] [--limit N] [--cursor C]
//	session SEID                            one session: rules and live counters
//	stats                                   datapath counters by verdict, drop reason, interface
//	drain [on|off]                          refuse new sessions, or accept them again (needs --token)
//
// Flags may come before or after the verb. --api defaults to UPFCTL_API,
// then http://127.0.0.1:8080; --token to UPFCTL_TOKEN.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

const usage = `upfctl: upfd's REST API for people

Usage: upfctl [--api URL] [--token T] [-o table|json] VERB [ARGS]

Verbs:
  health [--wait DURATION]     is upfd serving N4? (exit status 1 if not); --wait: wait until it is, up to DURATION
  version                      upfd's and upfctl's versions (upfctl's alone without upfd)
  associations                 the SMFs' PFCP associations
  sessions [--peer NODE-ID] [--ue ADDRESS] [--teid TEID] [--limit N] [--cursor C]
                               sessions in SEID order, a page at a time
  session SEID                 one session with its rules and live counters (SEID: 0x1f or 31)
  stats                        datapath counters by verdict, drop reason and interface
  drain [on|off]               show, or set, whether new sessions are refused (setting needs --token)

Flags (before or after the verb):
  --api URL       upfd's API (api.listen); default $UPFCTL_API, else http://127.0.0.1:8080
  --token T       api.token, for drain on|off; default $UPFCTL_TOKEN
  -o table|json   tables for people (default), or the API's JSON
`

// exit statuses
const (
	exitOK    = 0
	exitError = 1 // upfd refused, could not be reached, or is not ready
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv, time.Now))
}

// globals are the flags every verb takes.
type globals struct {
	api, token, output string
}

func (g *globals) register(fs *flag.FlagSet) {
	// The defaults are the values so far, so that flags given before the
	// verb stay when the verb's flags are parsed.
	fs.StringVar(&g.api, "api", g.api, "upfd's API URL")
	fs.StringVar(&g.token, "token", g.token, "api.token")
	fs.StringVar(&g.output, "o", g.output, "table or json")
	fs.StringVar(&g.output, "output", g.output, "table or json")
}

// cli is one run of upfctl.
type cli struct {
	out, errOut io.Writer
	client      *client
	json        bool
	now         func() time.Time
}

// usageError is bad usage: the message, then a pointer to the help.
type usageError string

func (e usageError) Error() string { return string(e) }

func run(args []string, stdout, stderr io.Writer, getenv func(string) string, now func() time.Time) int {
	g := &globals{api: getenv("UPFCTL_API"), token: getenv("UPFCTL_TOKEN"), output: "table"}
	if g.api == "" {
		g.api = "http://127.0.0.1:8080"
	}
	verb, rest, err := parseGlobals(g, args)
	if errors.Is(err, flag.ErrHelp) || verb == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err == nil && verb == "" {
		err = usageError("no verb")
	}
	if err != nil {
		return failUsage(stderr, err)
	}
	c := &cli{out: stdout, errOut: stderr, now: now}
	err = c.dispatch(g, verb, rest)
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		return exitOK
	case errors.As(err, &ue):
		return failUsage(stderr, err)
	case err != nil:
		fmt.Fprintln(stderr, "upfctl:", err)
		return exitError
	}
	return exitOK
}

func failUsage(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "upfctl: %v\nRun upfctl help for the verbs and flags.\n", err)
	return exitUsage
}

// parseGlobals reads the flags before the verb.
func parseGlobals(g *globals, args []string) (verb string, rest []string, err error) {
	fs := flag.NewFlagSet("upfctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs)
	if err := fs.Parse(args); err != nil {
		return "", nil, flagError(err)
	}
	if fs.NArg() == 0 {
		return "", nil, nil
	}
	return fs.Arg(0), fs.Args()[1:], nil
}

func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError(err.Error())
}

// parseVerb reads a verb's flags and arguments, in any order, with the
// global flags among them.
func parseVerb(g *globals, fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	g.register(fs)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagError(err)
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func (c *cli) dispatch(g *globals, verb string, args []string) error {
	verbs := map[string]func(*globals, []string) error{
		"health": c.health, "version": c.version, "associations": c.associations, "sessions": c.sessions,
		"session": c.session, "stats": c.stats, "drain": c.drain,
	}
	f, ok := verbs[verb]
	if !ok {
		return usageError(fmt.Sprintf("unknown verb %q", verb))
	}
	return f(g, args)
}

// connect checks the global flags once the verb's are read.
func (c *cli) connect(g *globals) error {
	switch g.output {
	case "table":
	case "json":
		c.json = true
	default:
		return usageError(fmt.Sprintf("-o %q: want table or json", g.output))
	}
	cl, err := newClient(g.api, g.token)
	if err != nil {
		return usageError(err.Error())
	}
	c.client = cl
	return nil
}

// noArgs parses a verb that takes no arguments.
func (c *cli) noArgs(g *globals, verb string, args []string) error {
	pos, err := parseVerb(g, flag.NewFlagSet(verb, flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError(fmt.Sprintf("%s takes no arguments, not %q", verb, strings.Join(pos, " ")))
	}
	return c.connect(g)
}
