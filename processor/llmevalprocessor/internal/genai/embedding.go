package genai

import "encoding/json"

// minEmbeddingLen is the shortest list of numbers taken for an embedding.
// Embedding models return hundreds of dimensions; a tool's short list of
// numbers stays context.
const minEmbeddingLen = 16

// isEmbedding says whether a task's output is an embedding vector (a list
// of numbers only, e.g. LlamaIndex's get_query_embedding task traced by
// OpenLLMetry), which is no context to judge an answer against.
func isEmbedding(list []any) bool {
	if len(list) < minEmbeddingLen {
		return false
	}
	for _, e := range list {
		switch e.(type) {
		case json.Number, float64, int64:
		default:
			return false
		}
	}
	return true
}
