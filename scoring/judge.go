package scoring

import (
	"context"
	"encoding/json"
)

// Judge answers one chat request with the text of the model's reply. It is
// the only way scorers reach an LLM.
type Judge interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Message is one chat message sent to the judge.
type Message struct {
	Role    string `json:"role"` // system, user or assistant
	Content string `json:"content"`
}

// Request is one call to the judge.
type Request struct {
	Messages []Message
	// Schema describes the JSON object the reply must be; its Name says
	// which reply it is. Judges that support structured outputs enforce
	// it; others are told it in the prompt.
	Schema *Schema
	// Step names the pipeline step (StepPreprocess, StepAnalyze, StepReason,
	// StepSplit) for telemetry and test scripting.
	Step string
}

// Schema is a named JSON Schema of a step's reply.
type Schema struct {
	Name   string
	Schema json.RawMessage
}

// Response is the judge's reply.
type Response struct {
	Content          string
	FinishReason     string
	PromptTokens     int
	CompletionTokens int
	// Retries counts the attempts that failed and were retried before this
	// reply (structured-output fallbacks are not counted).
	Retries int
	// Model is the model that answered, as the judge names it (openai's
	// Judge: its configured model); "" when the judge does not say.
	Model string
}

// Step names set on Request.Step.
const (
	StepPreprocess = "preprocess"
	StepAnalyze    = "analyze"
	StepReason     = "reason"
	// StepSplit is the instruction split (Splitter), which runs before a
	// scorer that judges a system prompt's instructions.
	StepSplit = "split"
)

// Schema names of the replies every scorer shares; each scorer's package
// names its own.
const (
	// SchemaReason is the reply of the reason step.
	SchemaReason = "reason"
	// SchemaInstructionSplit is the reply of an instruction split.
	SchemaInstructionSplit = "instruction_split"
)
