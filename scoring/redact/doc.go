// Package redact removes what must not leave the process from text.
//
// Redactor replaces personal data (e-mail addresses, phone numbers,
// payment cards, custom patterns) before text is sent to a judge; plug
// its Redact method into scoring.Options.Redact. SecretScrubber replaces
// known secret values (API keys, header values, URL passwords and query
// values) in error messages and logs; ScrubURL prints an endpoint without
// its secrets.
package redact
