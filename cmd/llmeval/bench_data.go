package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llm-eval/llm_eval/scoring"
)

// Datasets bench reads, with their default files (in benchDataDir).
var benchDatasets = []struct{ name, file, scorer, about string }{
	{"ifeval", "ifeval_dev.jsonl", scoring.Checks, "IFEval prompts; per-instruction followed labels (checks scorer)"},
	{"halueval", "halueval_qa_dev.jsonl", scoring.Hallucination, "HaluEval QA answers labelled faithful or hallucinated"},
	{"crows", "crows_pairs_dev.jsonl", scoring.Bias, "CrowS-Pairs: the more stereotypical sentence is biased, the other not"},
	{"davidson", "davidson_toxicity_dev.jsonl", scoring.Toxicity, "Davidson et al. tweets: hate speech or offensive (toxic) or neither"},
}

// benchDatasetNames lists the --dataset names: "a, b or c".
func benchDatasetNames() string {
	names := make([]string, len(benchDatasets))
	for i, d := range benchDatasets {
		names[i] = d.name
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// benchDatasetTable is the datasets' table of bench -h, each column as wide
// as its longest entry.
func benchDatasetTable() string {
	var wName, wFile, wScorer int
	for _, d := range benchDatasets {
		wName, wFile, wScorer = max(wName, len(d.name)), max(wFile, len(d.file)), max(wScorer, len(d.scorer))
	}
	var b strings.Builder
	for _, d := range benchDatasets {
		fmt.Fprintf(&b, "  %-*s  %-*s  default scorer %-*s  %s\n", wName, d.name, wFile, d.file, wScorer, d.scorer, d.about)
	}
	return b.String()
}

// benchDataDir is where the repository keeps the datasets.
const benchDataDir = "testdata/bench"

// findBenchFile looks for name in benchDataDir of dir and then of each of
// its parents, and returns the first path found: bench finds the datasets
// from anywhere inside a clone of the repository.
func findBenchFile(dir, name string) (string, error) {
	for d := dir; ; {
		p := filepath.Join(d, filepath.FromSlash(benchDataDir), name)
		if _, err := os.Stat(p); err == nil {
			if rel, err := filepath.Rel(dir, p); err == nil {
				return rel, nil
			}
			return p, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("%s not found in %s of %s or of a directory above it: run bench inside a clone of llm_eval, or give --file", name, benchDataDir, dir)
		}
		d = parent
	}
}

// benchCase is one labelled case: Positive means the bad outcome the scorer
// should flag (hallucinated, biased).
type benchCase struct {
	ID       string
	Case     scoring.Case
	Positive bool
	Pair     string // CrowS-Pairs pair id, "" otherwise
	More     bool   // CrowS-Pairs: the more stereotypical sentence
}

// ifevalRow is one line of ifeval_dev.jsonl.
type ifevalRow struct {
	Key          int                 `json:"key"`
	Prompt       string              `json:"prompt"`
	Response     string              `json:"response"`
	Instructions []ifevalInstruction `json:"instructions"`
}

type ifevalInstruction struct {
	ID          string         `json:"id"`
	Kwargs      map[string]any `json:"kwargs"`
	Description string         `json:"description"`
	Followed    *bool          `json:"followed"`
}

type haluevalRow struct {
	ID      string   `json:"id"`
	Input   string   `json:"input"`
	Context []string `json:"context"`
	Output  string   `json:"output"`
	Label   string   `json:"label"`
}

type crowsRow struct {
	ID       string `json:"id"`
	BiasType string `json:"bias_type"`
	More     string `json:"more"`
	Less     string `json:"less"`
}

// davidsonRow is one line of davidson_toxicity_dev.jsonl: a tweet and the
// label its annotators' majority class maps to.
type davidsonRow struct {
	ID    string `json:"id"`
	Text  string `json:"text"`
	Class int    `json:"class"`
	Label string `json:"label"`
}

// loadDavidson reads the toxicity cases: each tweet is the output to judge,
// with no question; "toxic" (hate speech or offensive) is positive.
func loadDavidson(path string) ([]benchCase, error) {
	rows, err := readJSONL(path, func(r davidsonRow) error {
		if r.Label != "toxic" && r.Label != "not_toxic" {
			return fmt.Errorf("label %q: want toxic or not_toxic", r.Label)
		}
		if strings.TrimSpace(r.Text) == "" {
			return errors.New("text must be set")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]benchCase, len(rows))
	for i, r := range rows {
		out[i] = benchCase{ID: r.ID, Positive: r.Label == "toxic", Case: scoring.Case{Output: r.Text}}
	}
	return out, nil
}

// readJSONL decodes every non-blank line of path into a T, naming the
// line of the first bad one.
func readJSONL[T any](path string, check func(T) error) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	r := bufio.NewReader(f)
	for line := 1; ; line++ {
		text, err := r.ReadString('\n')
		if strings.TrimSpace(text) != "" {
			var v T
			if jerr := json.Unmarshal([]byte(text), &v); jerr != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, jerr)
			}
			if cerr := check(v); cerr != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, cerr)
			}
			out = append(out, v)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no cases", path)
	}
	return out, nil
}

func loadIFEval(path string) ([]ifevalRow, error) {
	return readJSONL(path, func(r ifevalRow) error {
		if len(r.Instructions) == 0 {
			return errors.New("no instructions: not an IFEval row")
		}
		return nil
	})
}

func loadHaluEval(path string) ([]benchCase, error) {
	rows, err := readJSONL(path, func(r haluevalRow) error {
		if r.Label != "faithful" && r.Label != "hallucinated" {
			return fmt.Errorf("label %q: want faithful or hallucinated", r.Label)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]benchCase, len(rows))
	for i, r := range rows {
		out[i] = benchCase{ID: r.ID, Positive: r.Label == "hallucinated",
			Case: scoring.Case{Input: r.Input, Output: r.Output, Context: r.Context}}
	}
	return out, nil
}

// loadCrows turns each pair into two cases: the more stereotypical sentence
// (positive, biased) and its minimal edit (negative).
func loadCrows(path string) ([]benchCase, error) {
	rows, err := readJSONL(path, func(r crowsRow) error {
		if strings.TrimSpace(r.More) == "" || strings.TrimSpace(r.Less) == "" {
			return errors.New("more and less must both be set")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]benchCase, 0, 2*len(rows))
	for _, r := range rows {
		out = append(out,
			benchCase{ID: r.ID + "-more", Pair: r.ID, More: true, Positive: true, Case: scoring.Case{Output: r.More}},
			benchCase{ID: r.ID + "-less", Pair: r.ID, Case: scoring.Case{Output: r.Less}})
	}
	return out, nil
}
