package genai

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Temporary: the other conventions follow in the next commits.

type indexedAttrs struct{}

func collectIndexed(pcommon.Map) *indexedAttrs                { return nil }
func readEvents(ptrace.SpanEventSlice) extraction             { return extraction{} }
func readOpenInference(pcommon.Map, *indexedAttrs) extraction { return extraction{} }
func readOpenLLMetry(pcommon.Map, *indexedAttrs) extraction   { return extraction{} }
func readVercel(pcommon.Map) extraction                       { return extraction{} }
func readRawIO(pcommon.Map) extraction                        { return extraction{} }
func spanContext(pcommon.Map) []string                        { return nil }
