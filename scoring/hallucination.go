package scoring

import (
	"cmp"
	"fmt"
	"strings"
)

var claimVerdictSpec = verdictSpec{schema: schemaHallucinationVerdicts, field: "verdicts", keys: []string{"verdict", "result"}, unit: "claim"}

// runHallucination is the hallucination pipeline: extract the output's
// claims, judge each against the context, score hallucinated / claims ×
// scale. A claim is hallucinated when the context contradicts it or does
// not support it.
func runHallucination(e *evaluation) {
	if strings.TrimSpace(e.c.Output) == "" {
		// An empty output claims nothing, so nothing in it is hallucinated
		// (the scorer's reference: "empty output yields zero hallucination"),
		// with or without context.
		e.setScore(0)
		e.setReason("The score is 0 because the output is empty, so it makes no claims that could be hallucinated.")
		return
	}
	if len(e.c.Context) == 0 {
		e.notScorable("The case has no context to check the output's claims against.")
		return
	}

	// Claim extraction sees the question, so that a short answer ("Lyon.")
	// becomes the claim it makes ("The capital of France is Lyon.").
	msgs, err := render(SchemaHallucinationClaims, promptData{Scorer: Hallucination, Input: e.c.Input, Output: e.c.Output})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepPreprocess, Err: err})
		return
	}
	var claims []string
	if err := e.ask(StepPreprocess, schemaHallucinationClaims, msgs, func(reply string) error {
		var perr error
		claims, perr = parseStrings(reply, schemaHallucinationClaims, "claims")
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	e.res.Steps.Preprocess = Claims{Claims: claims}
	if len(claims) == 0 {
		e.setScore(0)
		e.setReason("The score is 0 because the output makes no checkable claims.")
		return
	}

	msgs, err = render(SchemaHallucinationVerdicts, promptData{Scorer: Hallucination, Context: e.c.Context, ContextCut: e.cut[FieldContext], Items: claims})
	if err != nil {
		e.fail(&Error{Type: ErrorInvalidCase, Step: StepAnalyze, Err: err})
		return
	}
	var verdicts []judged
	var reordered bool
	if err := e.ask(StepAnalyze, schemaHallucinationVerdicts, msgs, func(reply string) error {
		parsed, perr := parseVerdicts(reply, claimVerdictSpec, len(claims))
		if perr != nil {
			return perr
		}
		verdicts, reordered, perr = matchStatements(parsed, claims, claimVerdictSpec)
		return perr
	}); err != nil {
		e.fail(err)
		return
	}
	result := ClaimVerdicts{Verdicts: make([]ClaimVerdict, len(verdicts)), Reordered: reordered}
	hallucinated := 0
	var reasons []string
	forJudge := make([]any, len(verdicts))
	for i, v := range verdicts {
		// The statement is the claim we sent, not the judge's echo of it,
		// which may drift in wording; matchStatements put them in order.
		cv := ClaimVerdict{Statement: claims[i], Verdict: v.Verdict, Reason: v.Reason}
		result.Verdicts[i] = cv
		forJudge[i] = cv
		if isYes(v.Verdict) {
			hallucinated++
			reasons = append(reasons, cmp.Or(v.Reason, claims[i]))
		}
	}
	e.res.Steps.Analyze = result
	e.scoreRatio(hallucinated, len(claims))
	e.reason(forJudge, func() string {
		if hallucinated == 0 {
			return fmt.Sprintf("The score is %s because the context supports all %d %s of the output.",
				formatScore(e.res.Score), len(claims), plural(len(claims), "claim", "claims"))
		}
		return fmt.Sprintf("The score is %s because the context contradicts or does not support %d of %d %s: %s.",
			formatScore(e.res.Score), hallucinated, len(claims), plural(len(claims), "claim", "claims"),
			joinReasons(reasons))
	})
}
