package scoring

// Case is one LLM generation or agent run to evaluate: what was asked, what
// the model answered, the context it was given, the instructions it had to
// follow and, for an agent run, the steps it took.
type Case struct {
	// Input is the user's request (for a conversation, its last user turn).
	Input string `json:"input"`
	// Output is the model's answer.
	Output string `json:"output"`
	// Context holds retrieved documents and tool results the answer should
	// be grounded in. The hallucination scorer needs it.
	Context []string `json:"context,omitempty"`
	// Instructions are the rules the answer must follow. The prompt
	// alignment scorer needs them; its verdict i is about instruction i,
	// and a blank instruction is skipped in its place.
	Instructions []string `json:"instructions,omitempty"`
	// Trajectory holds an agent run's steps: its model calls, the tool
	// calls they asked for and the tool executions. The task_completion
	// and tool_use scorers and the checks scorer's trajectory rules need
	// it; nil for a single generation.
	Trajectory *Trajectory `json:"trajectory,omitempty"`
	// Metadata is carried through untouched; scorers never send it to the judge.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Field is a part of a Case: what a scorer sends to its judge, and what a
// criteria scorer shows it.
type Field string

// Fields.
const (
	FieldInput        Field = "input"
	FieldOutput       Field = "output"
	FieldContext      Field = "context"
	FieldInstructions Field = "instructions" // the system instructions
)
