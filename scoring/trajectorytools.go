package scoring

import "strings"

// Bounds on the tool list a trajectory sends; a trace may list hundreds of
// tools with long descriptions, and the judge needs only what each is for.
const (
	// maxTrajectoryTools caps the tools shown; the rest are left out and
	// the result has Truncated set.
	maxTrajectoryTools = 64
	// maxToolDescriptionChars caps each tool's description.
	maxToolDescriptionChars = 300
)

// prepareTools returns the tools the tool_use judge sees: one per name
// (the first that names it, with the first description found for it),
// descriptions redacted, their markers neutralised and cut, names capped, at most maxTrajectoryTools
// of them. It reports whether it cut or left out anything.
func prepareTools(tools []ToolDefinition, redact func(string) string) ([]ToolDefinition, bool) {
	if len(tools) == 0 {
		return nil, false
	}
	out := make([]ToolDefinition, 0, min(len(tools), maxTrajectoryTools))
	at := make(map[string]int, len(tools))
	cut := false
	for _, d := range tools {
		name := strings.TrimSpace(d.Name)
		if name == "" {
			continue
		}
		desc := strings.TrimSpace(d.Description)
		if i, seen := at[name]; seen {
			if out[i].Description == "" && desc != "" {
				out[i].Description = fitToolDescription(desc, redact, &cut)
			}
			continue
		}
		if len(out) == maxTrajectoryTools {
			cut = true
			continue
		}
		at[name] = len(out)
		shown := name
		if v, ok := truncate(name, maxToolNameChars); ok {
			shown, cut = v, true
		}
		out = append(out, ToolDefinition{Name: shown, Description: fitToolDescription(desc, redact, &cut)})
	}
	return out, cut
}

// fitToolDescription redacts and caps one description, noting a cut.
func fitToolDescription(desc string, redact func(string) string, cut *bool) string {
	if desc == "" {
		return ""
	}
	if redact != nil {
		desc = redact(desc)
	}
	desc = NeutralizeTruncationMarkers(desc) // only our own cut may end with the marker
	if v, ok := truncate(desc, maxToolDescriptionChars); ok {
		*cut = true
		return v
	}
	return desc
}

// toolLine is how one available tool is shown to the judge: one JSON
// object per line of the TOOLS block.
type toolLine struct {
	Tool        string `json:"tool"`
	Description string `json:"description,omitempty"`
}

// toolLines renders the tools for the judge.
func toolLines(tools []ToolDefinition) []any {
	lines := make([]any, len(tools))
	for i, d := range tools {
		lines[i] = toolLine{Tool: d.Name, Description: d.Description}
	}
	return lines
}

// hasOmissions reports whether steps or tool calls of t were left out to
// bound it, so that what the judge sees is not the whole run.
func (t *Trajectory) hasOmissions() bool {
	if t == nil {
		return false
	}
	for _, s := range t.Steps {
		if s.Kind == StepOmitted || s.droppedCalls > 0 {
			return true
		}
	}
	return false
}
