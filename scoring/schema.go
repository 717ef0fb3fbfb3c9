package scoring

import "encoding/json"

// Step names set on Request.Step.
const (
	StepPreprocess = "preprocess"
	StepAnalyze    = "analyze"
	StepReason     = "reason"
	// StepSplit is the instruction split (InstructionSplitter), which runs
	// before a scorer that judges a system prompt's instructions.
	StepSplit = "split"
)

// Schema names set on Request.Schema.Name, one per kind of reply.
const (
	SchemaBiasOpinions                = "bias_opinions"
	SchemaBiasResults                 = "bias_results"
	SchemaHallucinationClaims         = "hallucination_claims"
	SchemaHallucinationVerdicts       = "hallucination_verdicts"
	SchemaPromptAlignmentVerdicts     = "prompt_alignment_verdicts"
	SchemaCriteriaScore               = "criteria_score"
	SchemaCriteriaBinary              = "criteria_binary"
	SchemaCriteriaSteps               = "criteria_steps"
	SchemaTaskCompletionTask          = "task_completion_task"
	SchemaTaskCompletionVerdicts      = "task_completion_verdicts"
	SchemaToolUseVerdicts             = "tool_use_verdicts"
	SchemaAnswerRelevancyStatements   = "answer_relevancy_statements"
	SchemaAnswerRelevancyResults      = "answer_relevancy_results"
	SchemaContextRelevanceEvaluations = "context_relevance_evaluations"
	SchemaToxicityVerdicts            = "toxicity_verdicts"
	SchemaReason                      = "reason"
	SchemaInstructionSplit            = "instruction_split"
)

// The schemas are strict in the OpenAI structured-outputs sense: every
// object lists all its properties as required and forbids others, so the
// same text works for response_format json_schema and for prompts.
var (
	schemaBiasOpinions = &Schema{Name: SchemaBiasOpinions, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "opinions": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["opinions"],
  "additionalProperties": false
}`)}

	schemaBiasResults = &Schema{Name: SchemaBiasResults, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "results": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "opinion": {"type": "string"},
          "result": {"type": "string", "enum": ["yes", "no"]},
          "reason": {"type": "string"}
        },
        "required": ["opinion", "result", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["results"],
  "additionalProperties": false
}`)}

	schemaHallucinationClaims = &Schema{Name: SchemaHallucinationClaims, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "claims": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["claims"],
  "additionalProperties": false
}`)}

	schemaHallucinationVerdicts = &Schema{Name: SchemaHallucinationVerdicts, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "statement": {"type": "string"},
          "verdict": {"type": "string", "enum": ["yes", "no"]},
          "reason": {"type": "string"}
        },
        "required": ["statement", "verdict", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts"],
  "additionalProperties": false
}`)}

	schemaPromptAlignmentVerdicts = &Schema{Name: SchemaPromptAlignmentVerdicts, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "number": {"type": "integer"},
          "instruction": {"type": "string"},
          "verdict": {"type": "string", "enum": ["yes", "no", "n/a"]},
          "reason": {"type": "string"}
        },
        "required": ["number", "instruction", "verdict", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts"],
  "additionalProperties": false
}`)}

	// The reason comes first so the judge explains before it decides.
	schemaCriteriaScore = &Schema{Name: SchemaCriteriaScore, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {"type": "string"},
    "score": {"type": "integer"}
  },
  "required": ["reason", "score"],
  "additionalProperties": false
}`)}

	schemaCriteriaBinary = &Schema{Name: SchemaCriteriaBinary, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {"type": "string"},
    "verdict": {"type": "string", "enum": ["yes", "no"]}
  },
  "required": ["reason", "verdict"],
  "additionalProperties": false
}`)}

	schemaCriteriaSteps = &Schema{Name: SchemaCriteriaSteps, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "steps": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["steps"],
  "additionalProperties": false
}`)}

	schemaTaskCompletionTask = &Schema{Name: SchemaTaskCompletionTask, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "task": {"type": "string"},
    "requirements": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["task", "requirements"],
  "additionalProperties": false
}`)}

	schemaTaskCompletionVerdicts = &Schema{Name: SchemaTaskCompletionVerdicts, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "requirement": {"type": "string"},
          "verdict": {"type": "string", "enum": ["yes", "no", "n/a"]},
          "reason": {"type": "string"}
        },
        "required": ["requirement", "verdict", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts"],
  "additionalProperties": false
}`)}

	schemaToolUseVerdicts = &Schema{Name: SchemaToolUseVerdicts, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "call": {"type": "integer"},
          "right_tool": {"type": "string", "enum": ["yes", "no"]},
          "arguments_supported": {"type": "string", "enum": ["yes", "no"]},
          "result_used": {"type": "string", "enum": ["yes", "no", "n/a"]},
          "reason": {"type": "string"}
        },
        "required": ["call", "right_tool", "arguments_supported", "result_used", "reason"],
        "additionalProperties": false
      }
    },
    "missing_tools": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "tool": {"type": "string"},
          "reason": {"type": "string"}
        },
        "required": ["tool", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts", "missing_tools"],
  "additionalProperties": false
}`)}

	schemaInstructionSplit = &Schema{Name: SchemaInstructionSplit, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "instructions": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["instructions"],
  "additionalProperties": false
}`)}

	schemaReason = &Schema{Name: SchemaReason, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "reason": {"type": "string"}
  },
  "required": ["reason"],
  "additionalProperties": false
}`)}
)

// The schemas of answer_relevancy, context_relevance and toxicity.
var (
	schemaAnswerRelevancyStatements = &Schema{Name: SchemaAnswerRelevancyStatements, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "statements": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["statements"],
  "additionalProperties": false
}`)}

	schemaAnswerRelevancyResults = &Schema{Name: SchemaAnswerRelevancyResults, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "results": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "statement": {"type": "string"},
          "result": {"type": "string", "enum": ["yes", "unsure", "no"]},
          "reason": {"type": "string"}
        },
        "required": ["statement", "result", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["results"],
  "additionalProperties": false
}`)}

	schemaContextRelevanceEvaluations = &Schema{Name: SchemaContextRelevanceEvaluations, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "evaluations": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "item": {"type": "integer"},
          "relevance": {"type": "string", "enum": ["high", "medium", "low", "none"]},
          "used": {"type": "boolean"},
          "reason": {"type": "string"}
        },
        "required": ["item", "relevance", "used", "reason"],
        "additionalProperties": false
      }
    },
    "missing_context": {"type": "array", "items": {"type": "string"}},
    "overall_assessment": {"type": "string"}
  },
  "required": ["evaluations", "missing_context", "overall_assessment"],
  "additionalProperties": false
}`)}

	schemaToxicityVerdicts = &Schema{Name: SchemaToxicityVerdicts, Schema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "statement": {"type": "string"},
          "verdict": {"type": "string", "enum": ["yes", "no"]},
          "reason": {"type": "string"}
        },
        "required": ["statement", "verdict", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts"],
  "additionalProperties": false
}`)}
)

// schemaFor returns a copy of s so a Judge that mutates the request cannot
// change what later requests carry.
func schemaFor(s *Schema) *Schema {
	c := *s
	c.Schema = append(json.RawMessage(nil), s.Schema...)
	return &c
}
