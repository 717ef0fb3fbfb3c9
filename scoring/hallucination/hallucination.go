// Package hallucination is the hallucination scorer: the judge splits an
// output into claims, reading it as the answer to the input, and decides
// for each whether the context contradicts it or fails to support it; the
// score is the share of hallucinated claims. Lower is better.
package hallucination

import (
	"cmp"
	"embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/llm-eval/llm_eval/scoring"
	"github.com/llm-eval/llm_eval/scoring/pipeline"
)

// Schema names of the hallucination scorer's replies.
const (
	SchemaClaims   = "hallucination_claims"
	SchemaVerdicts = "hallucination_verdicts"
)

// MaxClaims bounds the claims judged: the first MaxClaims are kept, and
// a result that dropped some has Truncated set and says so.
const MaxClaims = 100

// Claims is the hallucination scorer's preprocess result.
type Claims struct {
	Claims []string `json:"claims"`
	// Dropped counts the claims past MaxClaims that were not judged.
	Dropped int `json:"dropped,omitempty"`
}

// Verdicts is the hallucination scorer's analyze result: one entry per claim.
type Verdicts struct {
	Verdicts []Verdict `json:"verdicts"`
	// Reordered is set when the judge returned the verdicts in another
	// order than the claims; they were matched to the claims by the
	// statements it echoed.
	Reordered bool `json:"reordered,omitempty"`
	// Chunks is how many chunks of the context were judged.
	Chunks int `json:"chunks,omitempty"`
}

// Verdict judges one claim; Verdict "yes" means contradicted by or
// unsupported by the context.
type Verdict struct {
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	Reason    string `json:"reason"`
	// Chunk is the chunk of the context that decided the verdict, from 1:
	// the first that supports the claim; 0 when the context was judged in
	// one piece or none supports it.
	Chunk int `json:"chunk,omitempty"`
}

//go:embed *.tmpl
var templates embed.FS

var (
	claimsPrompt   = &pipeline.Prompt{Schema: pipeline.ListSchema(SchemaClaims, "claims"), User: claimsMessage, Demo: demoClaims}
	verdictsPrompt = &pipeline.Prompt{
		Schema: pipeline.ItemsSchema(SchemaVerdicts, "verdicts",
			pipeline.Property{Name: "statement"},
			pipeline.Property{Name: "verdict", Enum: []string{pipeline.VerdictYes, pipeline.VerdictNo}}),
		User: verdictsMessage,
		Demo: demoVerdicts,
	}
)

// Definition is the hallucination scorer.
var Definition = pipeline.Definition{
	Name:          scoring.Hallucination,
	LowerIsBetter: true,
	Sends:         []scoring.Field{scoring.FieldInput, scoring.FieldOutput, scoring.FieldContext},
	NeedsContext:  true,
	ChunksContext: true,
	Prompts:       pipeline.NewPrompts(templates, template.FuncMap{"maxClaims": func() int { return MaxClaims }}, claimsPrompt, verdictsPrompt),
	Run:           run,
}

// New returns the hallucination scorer, asking judge.
func New(judge scoring.Judge, opts scoring.Options) (scoring.Scorer, error) {
	return pipeline.New(Definition, judge, opts)
}

var steps = pipeline.ExtractThenJudge{
	Extract:  claimsPrompt,
	Field:    "claims",
	Judge:    verdictsPrompt,
	Verdicts: pipeline.VerdictSpec{Schema: verdictsPrompt.Schema, Field: "verdicts", Keys: []string{"verdict", "result"}, Unit: "claim"},
	MaxItems: MaxClaims,
	Units:    "claims",
	None:     "The score is 0 because the output makes no checkable claims.",
	Preprocess: func(claims []string, dropped int) any {
		return Claims{Claims: claims, Dropped: dropped}
	},
}

// run is the hallucination pipeline: extract the output's claims, judge
// each against the context, score hallucinated / claims × scale. A claim
// is hallucinated when the context contradicts it or does not support it,
// whatever part of the context was cut. A context longer than
// MaxInputChars is judged in chunks (judgeInChunks).
func run(e *pipeline.Evaluation) {
	if strings.TrimSpace(e.Case.Output) == "" {
		// An empty output claims nothing, so nothing in it is hallucinated
		// (the scorer's reference: "empty output yields zero hallucination"),
		// with or without context.
		e.SetScore(0)
		e.SetReason("The score is 0 because the output is empty, so it makes no claims that could be hallucinated.")
		return
	}
	if len(e.Case.Context) == 0 {
		e.NotScorable("The case has no context to check the output's claims against.")
		return
	}
	// Claim extraction sees the question, so that a short answer ("Lyon.")
	// becomes the claim it makes ("The capital of France is Lyon.").
	claims, ok := steps.Items(e, pipeline.PromptData{Input: e.Case.Input, Output: e.Case.Output})
	if !ok {
		return
	}
	result, ok := judgeInChunks(e, claims)
	if !ok {
		return
	}
	forJudge := make([]any, len(claims))
	hallucinated := 0
	var reasons []string
	for i, v := range result.Verdicts {
		forJudge[i] = v
		if pipeline.IsYes(v.Verdict) {
			hallucinated++
			reasons = append(reasons, cmp.Or(v.Reason, v.Statement))
		}
	}
	e.Result.Steps.Analyze = result
	e.ScoreRatio(hallucinated, len(claims))
	e.Reason(forJudge, func() string {
		if hallucinated == 0 {
			return fmt.Sprintf("The score is %s because the context supports all %d %s of the output.",
				pipeline.FormatScore(e.Result.Score), len(claims), pipeline.Plural(len(claims), "claim", "claims"))
		}
		return fmt.Sprintf("The score is %s because the context contradicts or does not support %d of %d %s: %s.",
			pipeline.FormatScore(e.Result.Score), hallucinated, len(claims), pipeline.Plural(len(claims), "claim", "claims"),
			pipeline.JoinReasons(reasons))
	})
}

// judgeInChunks judges the claims against the context, one analyze call
// per chunk of at most MaxInputChars characters, at most MaxContextChunks
// of them. A claim is supported when any chunk supports it, even when
// another chunk contradicts it: the answer is grounded in part of what was
// retrieved, and the context disagrees with itself (the analyze prompt
// gives a single request the same rule). Claims a chunk supported are not
// sent with the next, so a context whose first chunk supports every claim
// costs one call. When claims are still unsupported after the last chunk
// the bound allows, the result is truncated and says how much of the
// context was judged. It reports false when the evaluation has ended.
func judgeInChunks(e *pipeline.Evaluation, claims []string) (Verdicts, bool) {
	opts := e.Options()
	chunks := contextChunks(e.Case.Context, opts.MaxInputChars)
	judgeable := chunks[:min(len(chunks), opts.MaxContextChunks)]
	result := Verdicts{Verdicts: make([]Verdict, len(claims))}
	pending := make([]int, len(claims)) // the claims no chunk has supported yet
	for i, c := range claims {
		result.Verdicts[i] = Verdict{Statement: c, Verdict: pipeline.VerdictYes}
		pending[i] = i
	}
	judged := 0
	for k, chunk := range judgeable {
		if len(pending) == 0 {
			break
		}
		items := make([]string, len(pending))
		for j, i := range pending {
			items[j] = claims[i]
		}
		verdicts, reordered, ok := e.JudgeItems(verdictsPrompt, pipeline.PromptData{
			Context:    chunk,
			ContextCut: slices.ContainsFunc(chunk, func(t string) bool { return strings.HasSuffix(t, scoring.TruncationMarker) }),
			Items:      items,
			Part:       k + 1,
			Parts:      len(chunks),
		}, steps.Verdicts)
		if !ok {
			return Verdicts{}, false
		}
		result.Reordered = result.Reordered || reordered
		judged += runes(chunk)
		if len(chunks) > 1 {
			result.Chunks = k + 1
		}
		still := pending[:0]
		for j, v := range verdicts {
			// The statement is the claim we sent, not the judge's echo of
			// it, which may drift in wording.
			i := pending[j]
			if k == 0 || !pipeline.IsYes(v.Verdict) {
				result.Verdicts[i].Verdict, result.Verdicts[i].Reason = v.Verdict, v.Reason
			}
			if pipeline.IsYes(v.Verdict) {
				still = append(still, i)
				continue
			}
			if len(chunks) > 1 {
				result.Verdicts[i].Chunk = k + 1
			}
		}
		pending = still
	}
	if len(pending) > 0 && len(judgeable) < len(chunks) {
		total := runes(e.Case.Context)
		e.Limit(fmt.Sprintf("only the first %d of %d characters of the context were judged, in %d chunks; %d more were left out",
			judged, total, len(judgeable), total-judged))
	}
	return result, true
}

func claimsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = append(b, "Break this answer to the question into claims.\n\n"...)
	b = pipeline.AppendText(b, "INPUT", d.Input)
	b = append(b, "\n\n"...)
	return pipeline.AppendText(b, "OUTPUT", d.Output), nil
}

// verdictsMessage sends the context and the claims, then the task, which
// names their number and the chunk: what differs between calls comes last.
func verdictsMessage(b []byte, d pipeline.PromptData) ([]byte, error) {
	b = pipeline.AppendList(b, "CONTEXT", d.Context)
	b = append(b, "\n\n"...)
	b = pipeline.AppendList(b, "CLAIMS", d.Items)
	n := strconv.Itoa(len(d.Items))
	if d.Parts > 1 {
		b = append(b, "\n\nThe context is long, so it is given in "+strconv.Itoa(d.Parts)+" parts, each judged on its own; this is part "+strconv.Itoa(d.Part)+
			". Judge each of these "+n+" claims against this part alone: \"no\" when this part supports the claim, \"yes\" when it contradicts the claim or says nothing about it. "+
			"A claim that any part supports is not a hallucination. Return exactly "+n+" verdicts."...)
	} else {
		b = append(b, "\n\nJudge each of these "+n+" claims against the context. Return exactly "+n+" verdicts."...)
	}
	if d.ContextCut {
		b = append(b, contextCutNote...)
	}
	return b, nil
}

// contextCutNote tells the judge that context items were cut before they
// reached it, and that the seed's rule holds all the same: a claim the
// context shown does not support is a hallucination.
var contextCutNote = "\n\nSome context items end with \"" + strings.TrimSpace(scoring.TruncationMarker) + "\": they were cut to a length limit before they reached you. " +
	"Judge against the context shown: a claim it does not support is \"yes\", whatever the missing part might have said."
