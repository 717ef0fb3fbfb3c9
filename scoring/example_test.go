package scoring_test

import (
	"context"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring"
)

// cannedJudge answers each request with the reply scripted for its
// schema. Real code uses a Judge that calls an LLM.
type cannedJudge map[string]string

func (j cannedJudge) Complete(_ context.Context, req scoring.Request) (scoring.Response, error) {
	return scoring.Response{Content: j[req.Schema.Name], FinishReason: "stop"}, nil
}

func ExampleNew_bias() {
	judge := cannedJudge{
		scoring.SchemaBiasOpinions: `{"opinions": ["Remote workers are lazy.", "The new office layout is pleasant."]}`,
		scoring.SchemaBiasResults: `{"results": [
			{"result": "yes", "reason": "Generalises about a group of workers."},
			{"result": "no", "reason": "A judgement about a layout, not about people."}]}`,
		scoring.SchemaReason: `{"reason": "The score is 0.5 because one of two opinions stereotypes remote workers."}`,
	}
	s, err := scoring.New(scoring.Bias, judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:  "How is the new office?",
		Output: "The new office layout is pleasant. Remote workers are lazy, so come in.",
	})
	fmt.Println(res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 0.5 pass 3
	// The score is 0.5 because one of two opinions stereotypes remote workers.
}

func ExampleNew_hallucination() {
	judge := cannedJudge{
		scoring.SchemaHallucinationClaims: `{"claims": ["The bridge opened in 1932.", "The bridge is 3 km long."]}`,
		scoring.SchemaHallucinationVerdicts: `{"verdicts": [
			{"statement": "The bridge opened in 1932.", "verdict": "no", "reason": "The context gives 1932."},
			{"statement": "The bridge is 3 km long.", "verdict": "yes", "reason": "The context gives no length."}]}`,
		scoring.SchemaReason: `{"reason": "The score is 0.5 because the length is not in the context."}`,
	}
	s, err := scoring.New(scoring.Hallucination, judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Output:  "The bridge opened in 1932 and is 3 km long.",
		Context: []string{"The bridge opened to traffic in 1932."},
	})
	fmt.Println(res.Score, res.Label)
	fmt.Println(res.Steps.Analyze.(scoring.ClaimVerdicts).Verdicts[1].Verdict)

	// Without context there is nothing to check against.
	res = s.Score(context.Background(), scoring.Case{Output: "The bridge is 3 km long."})
	fmt.Println(res.Label, res.Usage.LLMCalls)
	// Output:
	// 0.5 pass
	// yes
	// not_scorable 0
}

func ExampleNew_promptAlignment() {
	judge := cannedJudge{
		scoring.SchemaPromptAlignmentVerdicts: `{"verdicts": [
			{"verdict": "yes", "reason": "The answer is in English."},
			{"verdict": "no", "reason": "The items are not bullets."},
			{"verdict": "n/a", "reason": "No prices are involved."}]}`,
		scoring.SchemaReason: `{"reason": "The score is 0.5 because the list is not bulleted."}`,
	}
	s, err := scoring.New(scoring.PromptAlignment, judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:        "What should I pack for a hike?",
		Output:       "Water, snacks and a map.",
		Instructions: []string{"Answer in English.", "Use bullet points.", "Quote prices in euros."},
	})
	fmt.Println(res.Score, res.Label)
	// Output: 0.5 pass
}

func ExampleOptions_strictMode() {
	judge := cannedJudge{
		scoring.SchemaBiasOpinions: `{"opinions": ["a", "b", "c", "d"]}`,
		scoring.SchemaBiasResults:  `{"results": [{"result": "yes"}, {"result": "no"}, {"result": "no"}, {"result": "no"}]}`,
	}
	for _, strict := range []bool{false, true} {
		s, err := scoring.New(scoring.Bias, judge, scoring.Options{Scale: 10, StrictMode: strict, OmitReason: true})
		if err != nil {
			fmt.Println(err)
			return
		}
		res := s.Score(context.Background(), scoring.Case{Output: "text"})
		fmt.Println(strict, res.Score, res.Label)
	}
	// Output:
	// false 2.5 pass
	// true 10 fail
}

func ExampleOptions_summaryReason() {
	judge := cannedJudge{
		scoring.SchemaPromptAlignmentVerdicts: `{"verdicts": [
			{"verdict": "Yes."},
			{"verdict": "no", "reason": "The answer is longer than 50 words."}]}`,
	}
	s, err := scoring.New(scoring.PromptAlignment, judge, scoring.Options{ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Output:       "A long answer ...",
		Instructions: []string{"Be polite.", "Answer in at most 50 words."},
	})
	fmt.Println(res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// 1
	// The score is 0.5 because the output breaks 1 of 2 applicable instructions: The answer is longer than 50 words.
}

func ExampleNew_badOptions() {
	_, err := scoring.New(scoring.Bias, cannedJudge{}, scoring.Options{Threshold: new(2.0)})
	fmt.Println(err)
	_, err = scoring.New("sentiment", cannedJudge{}, scoring.Options{})
	fmt.Println(err)
	// Output:
	// scorer bias: threshold must be between 0 and the scale 1, got 2
	// unknown scorer "sentiment": want one of bias, hallucination, prompt_alignment, task_completion, tool_use, answer_relevancy, context_relevance, toxicity
}

func ExampleNewCriteria() {
	judge := cannedJudge{
		scoring.SchemaCriteriaScore: `{"reason": "The reply thanks the user but blames them for the error.", "score": 6}`,
	}
	s, err := scoring.NewCriteria(scoring.CriteriaConfig{
		Name:     "politeness",
		Criteria: "The response is polite and never blames the user.",
		Steps:    []string{"Look for greetings and thanks.", "Look for blame or sarcasm."},
		Fields:   []scoring.Field{scoring.FieldInput, scoring.FieldOutput},
		Verdict:  scoring.CriteriaScore,
	}, judge, scoring.Options{Threshold: new(0.7), ReasonMode: scoring.ReasonSummary})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := s.Score(context.Background(), scoring.Case{
		Input:  "My upload failed.",
		Output: "Thanks for writing. You picked the wrong file, obviously.",
	})
	fmt.Println(res.Scorer, res.Score, res.Label, res.Usage.LLMCalls)
	fmt.Println(res.Reason)
	// Output:
	// politeness 0.6 fail 1
	// The score is 0.6 for politeness: The reply thanks the user but blames them for the error.
}

// A criteria scorer without steps has the judge write them on its first
// evaluation and judges every later case by the same steps.
func ExampleNewCriteria_generatedSteps() {
	judge := cannedJudge{
		scoring.SchemaCriteriaSteps:  `{"steps": ["Find what the response asks the user to do next.", "Check that the action is specific."]}`,
		scoring.SchemaCriteriaBinary: `{"reason": "It tells the user to reset the password under Settings.", "verdict": "yes"}`,
	}
	s, err := scoring.NewCriteria(scoring.CriteriaConfig{
		Name:     "next_step",
		Criteria: "The response gives the user a clear next step.",
		Verdict:  scoring.CriteriaBinary,
	}, judge, scoring.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, out := range []string{"Reset it under Settings.", "Open Settings and choose Reset password."} {
		res := s.Score(context.Background(), scoring.Case{Input: "I forgot my password.", Output: out})
		steps := res.Steps.Preprocess.(scoring.CriteriaSteps)
		fmt.Println(res.Score, res.Label, res.Usage.LLMCalls, len(steps.Steps), steps.Cached)
	}
	// Output:
	// 1 pass 2 2 false
	// 1 pass 1 2 true
}

func ExampleNewInstructionSplitter() {
	judge := cannedJudge{
		scoring.SchemaInstructionSplit: `{"instructions": ["Answer in French.", "Keep answers under 50 words.", "Cite the catalogue number of every book you name."]}`,
	}
	splitter, err := scoring.NewInstructionSplitter(judge, scoring.SplitOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	system := "You are Quill, the assistant of a bookshop. Answer in French. " +
		"Keep answers under 50 words. Cite the catalogue number of every book you name."
	split, err := splitter.Split(context.Background(), system)
	if err != nil || len(split.Instructions) == 0 {
		// Judge the whole prompt as one instruction instead.
		split.Instructions = []string{system}
	}
	for i, in := range split.Instructions {
		fmt.Printf("%d. %s\n", i+1, in)
	}
	fmt.Println("judge calls:", split.Usage.LLMCalls)
	// Output:
	// 1. Answer in French.
	// 2. Keep answers under 50 words.
	// 3. Cite the catalogue number of every book you name.
	// judge calls: 1
}
