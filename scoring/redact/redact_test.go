package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func newAllRedactor(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Config{Builtin: Builtins()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func TestRedactBuiltins(t *testing.T) {
	r := newAllRedactor(t)
	for _, tc := range []struct {
		name, in, want string
	}{
		// e-mail
		{"email", "mail john.doe@example.com now", "mail [REDACTED:email] now"},
		{"email with tag and subdomains", "<a+tag@sub.example.co.uk>", "<[REDACTED:email]>"},
		{"email with dash and underscore", "x_y@example-mail.org.", "[REDACTED:email]."},
		{"two emails", "a@b.io, c@d.io", "[REDACTED:email], [REDACTED:email]"},
		{"no tld", "user@localhost", "user@localhost"},
		{"handle", "ping @handle or foo@bar", "ping @handle or foo@bar"},
		{"one-letter tld", "a@b.c", "a@b.c"},

		// payment cards
		{"visa plain", "card 4111111111111111 ok", "card [REDACTED:payment_card] ok"},
		{"visa spaced", "4111 1111 1111 1111", "[REDACTED:payment_card]"},
		{"mastercard dashed", "5555-5555-5555-4444.", "[REDACTED:payment_card]."},
		{"amex 4-6-5", "amex 3782 822463 10005", "amex [REDACTED:payment_card]"},
		{"diners 4-6-4", "3056 930902 5904", "[REDACTED:payment_card]"},
		{"visa 13", "4222222222222", "[REDACTED:payment_card]"},
		{"after hash", "card #4111111111111111", "card #[REDACTED:payment_card]"},
		{"card then year", "4111 1111 1111 1111 2024", "[REDACTED:payment_card] 2024"},
		{"luhn fails", "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"epoch millis", "ts=1718112345678", "ts=1718112345678"},
		{"luhn-valid but not a card prefix", "ids 1718112345679 9000123456789016 1234567890123452",
			"ids 1718112345679 9000123456789016 1234567890123452"},
		{"card in order id", "ORD-4111111111111111", "ORD-4111111111111111"},
		{"mixed separators", "4111 1111-1111 1111", "4111 1111-1111 1111"},
		{"twenty digits", "41111111111111111111", "41111111111111111111"},

		// phones
		{"intl spaced", "call +1 555 123 4567 now", "call [REDACTED:phone] now"},
		{"intl uk", "+44 20 7946 0958", "[REDACTED:phone]"},
		{"intl compact", "tel:+442079460958", "tel:[REDACTED:phone]"},
		{"intl de", "+49 30 12345678", "[REDACTED:phone]"},
		{"intl fr", "+33 1 23 45 67 89", "[REDACTED:phone]"},
		{"intl in", "+91-98765-43210", "[REDACTED:phone]"},
		{"intl parens", "+1 (555) 123-4567", "[REDACTED:phone]"},
		{"nanp parens", "(555) 123-4567", "[REDACTED:phone]"},
		{"nanp dashes", "Call me at 555-123-4567.", "Call me at [REDACTED:phone]."},
		{"nanp dots", "555.123.4567", "[REDACTED:phone]"},
		{"nanp leading 1", "1-555-123-4567", "[REDACTED:phone]"},
		{"uk national", "ring 020 7946 0958", "ring [REDACTED:phone]"},
		{"uk mobile", "07700 900123", "[REDACTED:phone]"},
		{"fr national", "01 23 45 67 89", "[REDACTED:phone]"},
		{"nl mobile", "0612345678", "[REDACTED:phone]"},

		// ordinary numbers that must stay
		{"year", "in 2024 we grew", "in 2024 we grew"},
		{"short numbers", "call 911 or 112, room 1205", "call 911 or 112, room 1205"},
		{"iso date", "on 2024-01-15 at 10:30:45", "on 2024-01-15 at 10:30:45"},
		{"dotted date", "15.01.2024", "15.01.2024"},
		{"slashed date", "01/02/2024", "01/02/2024"},
		{"timestamp", "2024-01-15T10:30:00Z", "2024-01-15T10:30:00Z"},
		{"versions", "v1.2.3 and 10.4.12 and 2.14.1-rc.1", "v1.2.3 and 10.4.12 and 2.14.1-rc.1"},
		{"order id", "ORD-2024-000123", "ORD-2024-000123"},
		{"order id dashed phone-like", "ORD-555-123-4567", "ORD-555-123-4567"},
		{"order number", "order 98765432", "order 98765432"},
		{"order number leading zeros", "order 000123456789", "order 000123456789"},
		{"plain ten digits", "id 1234567890", "id 1234567890"},
		{"thousands", "1,234,567 and 1 234 567", "1,234,567 and 1 234 567"},
		{"decimal", "pi is 3.14159265", "pi is 3.14159265"},
		{"score change", "+5 points, +1", "+5 points, +1"},
		{"too few digits after +", "+12345 and +123 4567", "+12345 and +123 4567"},
		{"too few digits after 0", "code 01 23 45 today", "code 01 23 45 today"},
		{"ip address", "192.168.100.200", "192.168.100.200"},
		{"uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"},
		{"isbn", "ISBN 978-3-16-148410-0", "ISBN 978-3-16-148410-0"},
		{"exponent", "1e+1234567890", "1e+1234567890"},

		// mixed
		{"all kinds", "Jo (jo@x.org, +44 20 7946 0958) paid with 4111-1111-1111-1111 on 2024-01-15.",
			"Jo ([REDACTED:email], [REDACTED:phone]) paid with [REDACTED:payment_card] on 2024-01-15."},
		// The first phone's redaction frees the second from the digit glued to it.
		{"adjacent phones", "09585554567+5951111-4111", "[REDACTED:phone][REDACTED:phone]"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Redact(tc.in)
			if got != tc.want {
				t.Fatalf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			if again := r.Redact(got); again != got {
				t.Fatalf("Redact is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactSelectsBuiltinsByName(t *testing.T) {
	const in = "jo@x.org 555-123-4567 4111111111111111"
	for _, tc := range []struct {
		builtin []string
		want    string
	}{
		{[]string{Email}, "[REDACTED:email] 555-123-4567 4111111111111111"},
		{[]string{Phone}, "jo@x.org [REDACTED:phone] 4111111111111111"},
		{[]string{PaymentCard}, "jo@x.org 555-123-4567 [REDACTED:payment_card]"},
		{[]string{Phone, Email}, "[REDACTED:email] [REDACTED:phone] 4111111111111111"},
	} {
		r, err := New(Config{Builtin: tc.builtin})
		if err != nil {
			t.Fatalf("New(%v): %v", tc.builtin, err)
		}
		if got := r.Redact(in); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.builtin, got, tc.want)
		}
	}
}

func TestRedactUserPatterns(t *testing.T) {
	r, err := New(Config{
		Builtin:  []string{Email},
		Patterns: []string{`\bACCT-\d{6}\b`, `(?i)secret project \w+`, `[A-Z]+`},
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	in := "acct ACCT-123456 of jo@x.org about Secret Project Falcon"
	want := "acct [REDACTED:custom] of [REDACTED:email] about [REDACTED:custom]"
	got := r.Redact(in)
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// [A-Z]+ would match REDACTED inside the markers: markers are left alone.
	if again := r.Redact(got); again != got {
		t.Fatalf("not idempotent: %q -> %q", got, again)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"nothing selected", Config{}, "no built-in pattern or pattern selected"},
		{"unknown builtin", Config{Builtin: []string{"email", "ssn"}}, `unknown built-in pattern "ssn"`},
		{"invalid regex", Config{Patterns: []string{`ok`, `a(b`}}, `pattern 1 "a(b"`},
		{"empty match", Config{Patterns: []string{`x*`}}, `pattern 0 "x*" matches empty text`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(tc.cfg)
			if err == nil || r != nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want error containing %q", r, err, tc.want)
			}
		})
	}
}

// A pattern that matches only empty text at some positions (\b) must not
// insert markers.
func TestRedactSkipsEmptyMatches(t *testing.T) {
	r, err := New(Config{Patterns: []string{`\b`}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if got := r.Redact("two words"); got != "two words" {
		t.Fatalf("got %q", got)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"",
		"john.doe@example.com",
		"a@b.co@c.de",
		"xa@b.cob@c.de",
		"Jo (jo@x.org, +44 20 7946 0958) paid with 4111-1111-1111-1111 on 2024-01-15.",
		"4111 1111 1111 1111 2024 555-123-4567",
		"5555555555554444 4111111111111111",
		"[REDACTED:email]@example.com",
		"[REDACTED:phone]4111111111111111",
		"+1 (555) 123-4567 ext 89",
		"01 23 45 67 89 01 23 45 67 89",
		"\xff\xfe@\xffexample.com",
		"ORD-4111111111111111",
	} {
		f.Add(s)
	}
	r := newAllRedactor(f)
	f.Fuzz(func(t *testing.T, in string) {
		once := r.Redact(in)
		if twice := r.Redact(once); twice != once {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", in, once, twice)
		}
		if e := redactEmailRE.FindString(once); e != "" {
			t.Fatalf("e-mail %q survived in %q (input %q)", e, once, in)
		}
		for _, e := range redactEmailRE.FindAllString(in, -1) {
			if strings.Contains(once, e) {
				t.Fatalf("input e-mail %q survived in %q", e, once)
			}
		}
		if utf8.ValidString(in) && !utf8.ValidString(once) {
			t.Fatalf("valid UTF-8 %q became invalid: %q", in, once)
		}
	})
}
