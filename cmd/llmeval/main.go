// Command llmeval scores LLM generations offline with an LLM judge and
// hosts the project's helper commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (I/O, judge setup)
	exitUsage   = 2 // bad command line
	// exitCasesErrored: llmeval score ran, but some cases ended in error.
	exitCasesErrored = 3
)

// subcommand is one "llmeval NAME" command. run gets the arguments after
// NAME and returns the exit code.
type subcommand struct {
	name    string
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// subcommands lists every command, one line each.
var subcommands = []subcommand{
	{"score", "score JSONL cases from stdin with an LLM judge, JSONL results on stdout", runScore},
	{"bench", "measure a scorer's accuracy on a labelled dataset (" + benchDatasetNames() + ")", runBench},
	{"demo-judge", "serve the OFFLINE DEMO judge (canned replies, not an LLM) for make demo", runDemoJudge},
	{"traffic", "send sample GenAI traces of several conventions (and GenAI log events) over OTLP/HTTP", runTraffic},
	{"results", "summarise evaluation results in a file exporter output (and Prometheus lines)", runResults},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run dispatches args[0] to its subcommand.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	for _, c := range subcommands {
		if c.name == args[0] {
			return c.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "llmeval: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

// parseFlags parses a subcommand's flags. When it returns false the
// command ends with the returned code: 0 for -h, exitUsage for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	return exitOK, true
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: llmeval <command> [flags]\n\nCommands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"llmeval <command> -h\" for a command's flags.")
}
