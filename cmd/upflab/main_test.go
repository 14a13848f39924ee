package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets a test run upflab itself: the test binary, re-run with
// UPFLAB_MAIN set, is upflab with the arguments after "--".
func TestMain(m *testing.M) {
	if os.Getenv("UPFLAB_MAIN") != "" {
		os.Args = append([]string{"upflab"}, os.Args[2:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// upflab runs the command line args as upflab would.
func upflab(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--"}, args...)...)
	cmd.Env = append(os.Environ(), "UPFLAB_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// The command line answers as a newcomer would try it: help where asked
// for, on standard output with status 0; a mistake said once, on standard
// error, with what to do and status 2.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string // each in standard output
		stderr string   // all of standard error
	}{
		{name: "topo -h lists the verbs", args: []string{"topo", "-h"},
			stdout: []string{"usage: upflab topo up [--name N]", "  down   remove them"}},
		{name: "topo up -h gives its flags", args: []string{"topo", "up", "-h"},
			stdout: []string{"usage: upflab topo up [--name N] [--n9] [--queues Q]", "-queues int"}},
		{name: "run --help names the scenario", args: []string{"run", "--help"},
			stdout: []string{"usage: upflab run [flags] [SCENARIO.yaml]", "-show-default"}},
		{name: "a mistyped flag is said once", args: []string{"run", "--kep"}, code: 2,
			stderr: "upflab run: usage: flag provided but not defined: -kep; `upflab run -h` lists the flags\n"},
		{name: "a mistyped flag of a topo verb", args: []string{"topo", "down", "--n9"}, code: 2,
			stderr: "upflab topo: usage: flag provided but not defined: -n9; `upflab topo down -h` lists the flags\n"},
		{name: "an argument too many", args: []string{"smf", "extra"}, code: 2,
			stderr: "upflab smf: usage: unexpected argument \"extra\"; `upflab smf -h` lists the flags\n"},
		{name: "version", args: []string{"version"}, stdout: []string{"upflab "}},
		{name: "a package error is not prefixed twice", args: []string{"topo", "up", "--name", "no/slash"}, code: 1,
			stderr: "upflab topo: lab name \"no/slash\": want up to 32 letters, digits, '.', '_' or '-', starting with a letter or digit\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := upflab(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit status %d, want %d", code, tc.code)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("standard output lacks %q:\n%s", want, stdout)
				}
			}
			if stderr != tc.stderr {
				t.Errorf("standard error:\n%s\nwant:\n%s", stderr, tc.stderr)
			}
		})
	}
}
