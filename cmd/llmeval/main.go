// Command llmeval scores LLM generations offline with an LLM judge and
// hosts the project's helper commands.
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (I/O, judge setup)
	exitUsage   = 2 // bad command line
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

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: llmeval <command> [flags]\n\nCommands:")
	for _, c := range subcommands {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"llmeval <command> -h\" for a command's flags.")
}
