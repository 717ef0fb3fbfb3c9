package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"bias", "hallucination", "prompt_alignment", "max_wait", "percentage", "endpoint"}
	tests := []struct{ name, want string }{
		{"halucination", "hallucination"},
		{"hallucinaton", "hallucination"},
		{"max_wiat", "max_wait"}, // a swap is one edit
		{"percent", "percentage"},
		{"bais", "bias"},
		{"toxicity", ""},
		{"url", ""},
		{"ab", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.name, names); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"Prompt-Alignment": "prompt_alignment", " task completion ": "task_completion", "bias": "bias"} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"", "abc", 3}, {"é", "e", 1},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestScorer(t *testing.T) {
	known := []string{"bias", "hallucination", "tool_use", "answer_relevancy", "conversation_relevancy", "checks"}
	tests := []struct{ name, want string }{
		{"turn_relevancy", "conversation_relevancy"}, // deepeval's TurnRelevancyMetric
		{"TurnRelevancyMetric", "conversation_relevancy"},
		{"turn-relevancy", "conversation_relevancy"},
		{"tool_call_accuracy", "tool_use"}, // Mastra's tool call accuracy scorer
		{"AnswerRelevancyMetric", "answer_relevancy"},
		{"halucination", "hallucination"},
		{"helpfulness", ""},
	}
	for _, tt := range tests {
		if got := Scorer(tt.name, known); got != tt.want {
			t.Errorf("Scorer(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := Scorer("turn_relevancy", []string{"bias"}); got != "" {
		t.Errorf("an alias outside known is not suggested, got %q", got)
	}
}
