// Package openai is a scoring.Judge on an OpenAI-compatible chat
// completions endpoint: OpenAI, Azure OpenAI, vLLM, Ollama, LiteLLM and
// llama.cpp server. It calls the endpoint with
// github.com/sashabaranov/go-openai over the *http.Client it is given, and
// adds what a judge needs: temperature 0, structured-output modes and their
// fallback, retries with backoff and Retry-After, a bounded reply body, and
// the typing of failures as *scoring.Error with the HTTP status when there
// was one.
//
//	judge, err := openai.NewJudge(openai.Config{
//		BaseURL: "https://api.openai.com/v1",
//		APIKey:  os.Getenv("OPENAI_API_KEY"),
//		Model:   "gpt-4o-mini",
//	})
//	s, err := bias.New(judge, scoring.Options{})
//
// Files: openai.go calls and types failures, chat.go builds the request
// and reads the reply, transport.go records the status and Retry-After of
// each reply and bounds its body, retry.go retries.
//
// Error messages never carry the secrets the judge knows (API key, header
// values, URL password and query values), never the reply body (go-openai's
// own error text prints it, so it is never used), and of the endpoint's
// own error message only a short, scrubbed excerpt with every run it quotes
// from the request cut out, since that is the evaluated text.
package openai
