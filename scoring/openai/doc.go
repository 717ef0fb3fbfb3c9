// Package openai is a scoring.Judge on an OpenAI-compatible chat
// completions endpoint: OpenAI, Azure OpenAI, vLLM, Ollama, LiteLLM and
// llama.cpp server. It owns the wire format, structured-output modes and
// their fallback, retries with backoff and Retry-After, and the typing of
// failures as *scoring.Error with the HTTP status when there was one.
//
//	judge, err := openai.NewJudge(openai.Config{
//		BaseURL: "https://api.openai.com/v1",
//		APIKey:  os.Getenv("OPENAI_API_KEY"),
//		Model:   "gpt-4o-mini",
//	})
//	s, err := scoring.New(scoring.Bias, judge, scoring.Options{})
//
// Error messages never carry the secrets the judge knows (API key, header
// values, URL password and query values) nor the reply body beyond a
// short, scrubbed excerpt of the endpoint's own error message.
package openai
