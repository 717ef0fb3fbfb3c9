package redact

import (
	"slices"
	"testing"
)

func TestSecretScrubber(t *testing.T) {
	s := NewSecretScrubber("sk-live-KEY123", "az-header-SECRET", "p@ss w/rd", "", "eu", "az-header-SECRET-long")
	tests := []struct {
		name, in, want string
	}{
		{"key", "auth failed for Bearer sk-live-KEY123.", "auth failed for Bearer [REDACTED]."},
		{"longer secret containing a shorter one", "x az-header-SECRET-long y", "x [REDACTED] y"},
		{"query-escaped", "GET /v1?pw=p%40ss+w%2Frd", "GET /v1?pw=[REDACTED]"},
		{"path-escaped", "http://u:p%40ss%20w%2Frd@h/", "http://u:[REDACTED]@h/"},
		{"short values are left", "region eu is down", "region eu is down"},
		{"nothing to scrub", "plain text", "plain text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Scrub(tc.in); got != tc.want {
				t.Fatalf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	var none *SecretScrubber
	if got := none.Scrub("sk-live-KEY123"); got != "sk-live-KEY123" {
		t.Fatalf("nil scrubber changed text: %q", got)
	}
}

func TestURLSecretsAndScrubURL(t *testing.T) {
	tests := []struct {
		url, scrubbed string
		secrets       []string
	}{
		{"https://api.openai.com/v1", "https://api.openai.com/v1", nil},
		{"http://user:hunter22@judge:8080/v1", "http://user:[REDACTED]@judge:8080/v1", []string{"hunter22", "dXNlcjpodW50ZXIyMg=="}},
		{"https://x.azure.com/v1?api-key=QKEY-999&api-version=2024-10-21", "https://x.azure.com/v1?api-key=[REDACTED]&api-version=[REDACTED]", []string{"QKEY-999", "2024-10-21"}},
		{"http://user@judge/v1", "http://user@judge/v1", nil},
		{"http://bad host/%zz", "[REDACTED]", nil},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			if got := ScrubURL(tc.url); got != tc.scrubbed {
				t.Fatalf("ScrubURL = %q, want %q", got, tc.scrubbed)
			}
			got := URLSecrets(tc.url)
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(tc.secrets))) {
				t.Fatalf("URLSecrets = %q, want %q", got, tc.secrets)
			}
		})
	}
}
