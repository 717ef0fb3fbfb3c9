package genai

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// JudgeAttribute marks the judge's own spans (on the span or its resource):
// they are never scored, so the evaluator does not evaluate itself.
const JudgeAttribute = "llm_eval.judge"

// signals holds the few attribute values Classify decides on.
type signals struct {
	operation      string // gen_ai.operation.name
	oiKind         string // openinference.span.kind
	llmRequestType string // llm.request.type (OpenLLMetry)
	aiOperationID  string // ai.operationId (Vercel)
	operationName  string // operation.name (Vercel: "<operationId> <functionId>")
	traceloopKind  string // traceloop.span.kind
	mastraType     string // mastra.span.type
	langfuseType   string // langfuse.observation.type
	genkitType     string // genkit:type
	genkitSubtype  string // genkit:metadata:subtype
	judge          bool
	retrieverHits  bool // gen_ai.retriever.results is present (LangChain Azure tracer)
}

// Classify says what a span is. It is called for every span of every batch,
// so it makes one pass over the span's attributes, looks at a key only when
// its first byte can start a key of interest, and allocates nothing.
func Classify(resource pcommon.Resource, span ptrace.Span) Kind {
	var s signals
	for k, v := range span.Attributes().All() {
		if len(k) < 11 {
			continue // shorter than the shortest key of interest
		}
		switch k[0] {
		case 'g', 'o', 'l', 'a', 't', 'm':
		default:
			continue
		}
		switch k {
		case "gen_ai.operation.name":
			s.operation = strValue(v)
		case "openinference.span.kind":
			s.oiKind = strValue(v)
		case "llm.request.type":
			s.llmRequestType = strValue(v)
		case "ai.operationId":
			s.aiOperationID = strValue(v)
		case "operation.name":
			s.operationName = strValue(v)
		case "traceloop.span.kind":
			s.traceloopKind = strValue(v)
		case attrMastraType:
			s.mastraType = strValue(v)
		case attrLangfuseType:
			s.langfuseType = strValue(v)
		case attrGenkitType:
			s.genkitType = strValue(v)
		case attrGenkitSubtype:
			s.genkitSubtype = strValue(v)
		case JudgeAttribute:
			s.judge = true
		case attrRetrieverResults:
			s.retrieverHits = true
		}
	}
	if !s.judge {
		_, s.judge = resource.Attributes().Get(JudgeAttribute)
	}
	if k, ok := mastraKind(s.mastraType); ok && !s.judge {
		return k
	}
	return s.kind(span.Name())
}

func strValue(v pcommon.Value) string {
	if v.Type() != pcommon.ValueTypeStr {
		return ""
	}
	return v.Str()
}

func (s *signals) kind(spanName string) Kind {
	if s.judge || s.operation == "evaluation" || strings.EqualFold(s.oiKind, "EVALUATOR") {
		return KindJudge
	}
	switch s.operation {
	case "chat", "text_completion", "generate_content", "completion", "generate":
		return KindGeneration
	case "invoke_agent", "create_agent", "invoke_workflow":
		return KindAggregate
	case "retrieval", "execute_tool", "search_memory":
		return KindContext
	}
	switch strings.ToUpper(s.oiKind) {
	case "LLM":
		return KindGeneration
	case "AGENT", "CHAIN":
		return KindAggregate
	case "RETRIEVER", "TOOL":
		return KindContext
	}
	switch s.llmRequestType {
	case "chat", "completion":
		return KindGeneration
	}
	if s.aiOperationID != "" {
		if k := vercelKind(s.aiOperationID); k != KindOther {
			return k
		}
	} else if s.operationName != "" {
		if k := vercelKind(firstWord(s.operationName)); k != KindOther {
			return k
		}
	} else if strings.HasPrefix(spanName, "ai.") {
		if k := vercelKind(spanName); k != KindOther {
			return k
		}
	}
	switch s.langfuseType {
	case "generation":
		return KindGeneration
	case "agent", "chain":
		return KindAggregate
	case "tool", "retriever":
		return KindContext
	}
	if k, ok := genkitKind(s.genkitType, s.genkitSubtype); ok {
		return k
	}
	switch s.traceloopKind {
	case "workflow", "agent":
		return KindAggregate
	case "tool", "task":
		return KindContext
	}
	if s.retrieverHits {
		return KindContext
	}
	return KindOther
}

// vercelKind maps a Vercel AI SDK operation id: the per-provider-call
// doGenerate/doStream spans are generations, their outer spans aggregates,
// ai.toolCall spans context.
func vercelKind(op string) Kind {
	switch op {
	case "ai.generateText.doGenerate", "ai.streamText.doStream",
		"ai.generateObject.doGenerate", "ai.streamObject.doStream":
		return KindGeneration
	case "ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject":
		return KindAggregate
	case "ai.toolCall":
		return KindContext
	}
	return KindOther
}

// vercelOperation is a span's Vercel AI SDK operation id: ai.operationId,
// else the first word of operation.name, else the span name.
func vercelOperation(span ptrace.Span) string {
	attrs := span.Attributes()
	if op := attrString(attrs, "ai.operationId"); op != "" {
		return op
	}
	if op := firstWord(attrString(attrs, "operation.name")); op != "" {
		return op
	}
	return span.Name()
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}
