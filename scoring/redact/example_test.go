package redact_test

import (
	"fmt"

	"github.com/llm-eval/llm_eval/scoring/redact"
)

func ExampleRedactor() {
	r, err := redact.New(redact.Config{
		Builtin:  []string{redact.Email, redact.Phone, redact.PaymentCard},
		Patterns: []string{`\bEMP-\d{5}\b`},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Plug it into a scorer: scoring.Options{Redact: r.Redact}.
	fmt.Println(r.Redact("Jo (EMP-40213, jo@example.com, +44 20 7946 0958) paid with 4111 1111 1111 1111 on 2024-01-15, order 98765432."))
	// Output:
	// Jo ([REDACTED:custom], [REDACTED:email], [REDACTED:phone]) paid with [REDACTED:payment_card] on 2024-01-15, order 98765432.
}
