package redact

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
)

// SecretMarker replaces a secret in scrubbed text.
const SecretMarker = "[REDACTED]"

// minSecretLen is the shortest value scrubbed. Shorter values (a query
// flag such as "1", a tenant such as "eu") are not credentials, and
// replacing them everywhere would garble every message.
const minSecretLen = 4

// SecretScrubber replaces known secret values in text with SecretMarker.
// It is used on judge error messages, evaluation explanations and log
// fields, so that a judge that echoes a request cannot leak what
// authenticated it. The zero value and nil scrub nothing. It is safe for
// concurrent use.
type SecretScrubber struct {
	secrets []string // longest first, so a secret inside another goes too
}

// NewSecretScrubber returns a scrubber for the given values. Empty and
// very short values are ignored; each value is also scrubbed in its
// URL-escaped forms.
func NewSecretScrubber(secrets ...string) *SecretScrubber {
	var all []string
	for _, s := range secrets {
		if len(s) < minSecretLen {
			continue
		}
		userinfo := strings.TrimPrefix(url.UserPassword("", s).String(), ":")
		all = append(all, s, url.QueryEscape(s), url.PathEscape(s), userinfo)
	}
	slices.SortFunc(all, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return &SecretScrubber{secrets: slices.Compact(all)}
}

// Scrub returns text with every known secret replaced.
func (s *SecretScrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	for _, secret := range s.secrets {
		text = strings.ReplaceAll(text, secret, SecretMarker)
	}
	return text
}

// URLSecrets returns the secrets written into an endpoint URL: the
// userinfo password, the Basic credentials an HTTP client makes of it,
// and every query value. It returns nothing for a URL that does not parse.
func URLSecrets(rawURL string) []string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil
	}
	var out []string
	if pw, ok := u.User.Password(); ok {
		basic := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pw))
		out = append(out, pw, basic)
	}
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}

// ScrubURL returns rawURL fit for a log line: the userinfo password and
// every query value are replaced by SecretMarker; the user name, host and
// path stay. A URL that does not parse is replaced as a whole.
func ScrubURL(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return SecretMarker
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), SecretMarker)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = SecretMarker
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	// url.String escapes the marker's brackets; undo it for readability.
	return strings.NewReplacer("%5B", "[", "%5D", "]").Replace(u.String())
}
