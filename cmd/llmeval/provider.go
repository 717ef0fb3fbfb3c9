package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"

	"github.com/llm-eval/llm_eval/scoring/openai"
)

// providerFlags are the provider settings of the processor's judge
// section (docs/providers.md), as flags of score and bench.
type providerFlags struct {
	azureAPIVersion    string
	omitTemperature    bool
	reasoningEffort    string
	chatTemplateKwargs jsonObject
	extraBody          jsonObject
}

// register adds the provider flags to fs.
func (p *providerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.azureAPIVersion, "azure-api-version", "", `with --azure: "v1" or a dated api-version (default `+openai.DefaultAzureAPIVersion+`)`)
	fs.BoolVar(&p.omitTemperature, "omit-temperature", false, "send no temperature, for reasoning deployments whose names do not show it")
	fs.StringVar(&p.reasoningEffort, "reasoning-effort", "", "sent as reasoning_effort, e.g. low (OpenAI, Azure, Bedrock) or none (Ollama thinking models)")
	fs.Var(&p.chatTemplateKwargs, "chat-template-kwargs", `JSON object sent as chat_template_kwargs (vLLM, SGLang), e.g. '{"enable_thinking": false}'`)
	fs.Var(&p.extraBody, "extra-body", `JSON object whose fields are added to every request body, e.g. '{"top_k": 20}'`)
}

// apply copies the settings into cfg; errors name the flag at fault.
func (p providerFlags) apply(cfg *openai.Config) error {
	if p.azureAPIVersion != "" && !cfg.Azure {
		return errors.New("--azure-api-version needs --azure")
	}
	if err := openai.CheckExtraBody(p.extraBody); err != nil {
		return fmt.Errorf("--extra-body: %w", err)
	}
	cfg.AzureAPIVersion = p.azureAPIVersion
	cfg.OmitTemperature = p.omitTemperature
	cfg.ReasoningEffort = p.reasoningEffort
	cfg.ChatTemplateKwargs = p.chatTemplateKwargs
	cfg.ExtraBody = p.extraBody
	return nil
}

// jsonObject is a flag holding one JSON object.
type jsonObject map[string]any

func (o *jsonObject) String() string {
	if o == nil || *o == nil {
		return ""
	}
	b, _ := json.Marshal(*o)
	return string(b)
}

func (o *jsonObject) Set(s string) error {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return fmt.Errorf("want a JSON object such as '{\"key\": 1}'")
	}
	*o = m
	return nil
}
