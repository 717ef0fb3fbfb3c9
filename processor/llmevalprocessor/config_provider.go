package llmevalprocessor // import "github.com/llm-eval/llm_eval/processor/llmevalprocessor"

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/llm-eval/llm_eval/scoring/openai"
)

// AzureConfig selects Azure OpenAI for the judge (docs/providers.md).
type AzureConfig struct {
	// Deployment is the name of the model deployment.
	Deployment string `mapstructure:"deployment"`
	// APIVersion is "v1" for the v1 API ({endpoint}/openai/v1, the
	// deployment sent as the model) or a dated version for the classic
	// deployment path ({endpoint}/openai/deployments/{deployment}/...
	// ?api-version=); default openai.DefaultAzureAPIVersion.
	APIVersion string `mapstructure:"api_version"`
}

// azureAPIVersion matches a dated Azure OpenAI api-version, GA or preview.
var azureAPIVersion = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}(-preview)?$`)

// reasoningEffortWord is one effort value: the providers name theirs with
// lowercase words (minimal, low, medium, high; Ollama's none).
var reasoningEffortWord = regexp.MustCompile(`^[a-z][a-z_-]*$`)

// model is the judge model as results, metrics and prices name it: model,
// or on Azure the deployment when model is unset.
func (jc *JudgeConfig) model() string {
	if jc.Azure != nil {
		return cmp.Or(strings.TrimSpace(jc.Model), strings.TrimSpace(jc.Azure.Deployment))
	}
	return jc.Model
}

// validateProvider checks the provider settings; each error names its key.
func (jc *JudgeConfig) validateProvider() []error {
	var errs []error
	if az := jc.Azure; az != nil {
		if strings.TrimSpace(az.Deployment) == "" {
			errs = append(errs, errors.New("azure::deployment: must be set (the name of the model deployment in Azure OpenAI)"))
		}
		if v := az.APIVersion; v != "" && v != openai.AzureV1 && !azureAPIVersion.MatchString(v) {
			errs = append(errs, fmt.Errorf("azure::api_version: %q is neither %q nor a dated version such as %s or 2025-04-01-preview",
				v, openai.AzureV1, openai.DefaultAzureAPIVersion))
		}
	}
	if jc.ReasoningEffort != "" && !reasoningEffortWord.MatchString(jc.ReasoningEffort) {
		errs = append(errs, fmt.Errorf("reasoning_effort: %q is not one lowercase word (OpenAI: minimal, low, medium, high; Ollama: none to stop thinking)", jc.ReasoningEffort))
	}
	for _, k := range slices.Sorted(maps.Keys(jc.ChatTemplateKwargs)) {
		if _, err := json.Marshal(jc.ChatTemplateKwargs[k]); err != nil {
			errs = append(errs, fmt.Errorf("chat_template_kwargs::%s: not a JSON value: %w", k, err))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(jc.ExtraBody)) {
		if err := openai.CheckExtraBodyField(k, jc.ExtraBody[k]); err != nil {
			errs = append(errs, fmt.Errorf("extra_body::%s: %w", k, err))
		}
	}
	return errs
}

// providerConfig copies the provider settings into the judge client's
// configuration.
func (jc *JudgeConfig) providerConfig(oc *openai.Config) {
	oc.Model = jc.model()
	oc.OmitTemperature = jc.OmitTemperature
	oc.ReasoningEffort = jc.ReasoningEffort
	oc.ChatTemplateKwargs = jc.ChatTemplateKwargs
	oc.ExtraBody = jc.ExtraBody
	if az := jc.Azure; az != nil {
		oc.Azure, oc.AzureDeployment, oc.AzureAPIVersion = true, az.Deployment, az.APIVersion
	}
}
