// Package scoring scores LLM generations with an LLM judge: bias,
// hallucination and prompt alignment.
package scoring
