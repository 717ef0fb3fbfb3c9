package openai

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// chatResponse is the part of a chat completion the judge reads.
type chatResponse struct {
	Choices []chatChoice `json:"choices"`
	Usage   chatUsage    `json:"usage"`
}

type chatChoice struct {
	Message      chatMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type chatMessage struct {
	Content string `json:"content"`
	Refusal string `json:"refusal"` // set instead of content when the model refuses
}

type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// decodeReply decodes a chat completion as json.Unmarshal does. Replies
// as endpoints write them take a direct path: encoding/json scans a reply
// twice and reflects over the struct, several per cent of an evaluation's
// collector CPU in a load profile. Anything that path does not expect exactly
// (a \u escape, a key in another case, a repeated key, a number that is
// not a plain integer, a value of another type, deep nesting, invalid
// JSON) goes to json.Unmarshal, which decides. So the replies accepted
// and their values are json.Unmarshal's (FuzzDecodeReply compares them).
func decodeReply(data []byte) (chatResponse, error) {
	var cr chatResponse
	p := replyParser{b: data}
	if p.response(&cr) {
		return cr, nil
	}
	cr = chatResponse{}
	err := json.Unmarshal(data, &cr)
	return cr, err
}

// replyParser reads one chat completion from b. Each method returns false
// when the input leaves the direct path; the caller then gives up.
type replyParser struct {
	b []byte
	i int
}

// maxSkipDepth bounds the nesting of skipped values on the direct path.
const maxSkipDepth = 64

func (p *replyParser) response(cr *chatResponse) bool {
	var seenChoices, seenUsage bool
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return once(&seenChoices) && p.choices(cr)
		case "usage":
			return once(&seenUsage) && p.usage(cr)
		}
		return p.unknown(key, "choices", "usage")
	})
	p.space()
	return ok && p.i == len(p.b)
}

func (p *replyParser) choices(cr *chatResponse) bool {
	if p.null() {
		cr.Choices = nil
		return true
	}
	cr.Choices = make([]chatChoice, 0, 1)
	return p.array(func() bool {
		cr.Choices = append(cr.Choices, chatChoice{})
		return p.choice(&cr.Choices[len(cr.Choices)-1])
	})
}

func (p *replyParser) choice(c *chatChoice) bool {
	var seenMessage, seenFinish bool
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "message":
			return once(&seenMessage) && p.message(&c.Message)
		case "finish_reason":
			return once(&seenFinish) && p.stringOrNull(&c.FinishReason)
		}
		return p.unknown(key, "message", "finish_reason")
	})
}

func (p *replyParser) message(m *chatMessage) bool {
	if p.null() {
		return true
	}
	var seenContent, seenRefusal bool
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "content":
			return once(&seenContent) && p.stringOrNull(&m.Content)
		case "refusal":
			return once(&seenRefusal) && p.stringOrNull(&m.Refusal)
		}
		return p.unknown(key, "content", "refusal")
	})
}

func (p *replyParser) usage(cr *chatResponse) bool {
	if p.null() {
		return true
	}
	var seenPrompt, seenCompletion bool
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return once(&seenPrompt) && p.intOrNull(&cr.Usage.PromptTokens)
		case "completion_tokens":
			return once(&seenCompletion) && p.intOrNull(&cr.Usage.CompletionTokens)
		}
		return p.unknown(key, "prompt_tokens", "completion_tokens")
	})
}

// once reports whether a key is seen for the first time: a repeated key
// leaves the direct path, since encoding/json merges repeated values.
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// unknown skips the value of a key the judge does not read. encoding/json
// matches keys without regard to case, so a key that might fold to a known
// one leaves the direct path.
func (p *replyParser) unknown(key []byte, known ...string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for _, k := range known {
		if len(key) == len(k) && strings.EqualFold(string(key), k) {
			return false
		}
	}
	return p.skip(0)
}

// object reads an object, calling member with p at each member's value.
// Keys are the raw bytes between the quotes; a key with an escape leaves
// the direct path.
func (p *replyParser) object(member func(key []byte) bool) bool {
	p.space()
	if !p.byte('{') {
		return false
	}
	p.space()
	if p.byte('}') {
		return true
	}
	for {
		p.space()
		key, ok := p.key()
		if !ok {
			return false
		}
		p.space()
		if !p.byte(':') {
			return false
		}
		p.space()
		if !member(key) {
			return false
		}
		p.space()
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

// array reads an array, calling elem with p at each element.
func (p *replyParser) array(elem func() bool) bool {
	if !p.byte('[') {
		return false
	}
	p.space()
	if p.byte(']') {
		return true
	}
	for {
		p.space()
		if !elem() {
			return false
		}
		p.space()
		if p.byte(']') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

func (p *replyParser) stringOrNull(dst *string) bool {
	if p.null() {
		return true
	}
	s, ok := p.string()
	*dst = s
	return ok
}

func (p *replyParser) intOrNull(dst *int) bool {
	if p.null() {
		return true
	}
	// A plain integer of at most 18 digits cannot overflow an int64.
	start, n := p.i, 0
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		n = n*10 + int(p.b[p.i]-'0')
		p.i++
	}
	l := p.i - digits
	if l == 0 || l > 18 || (l > 1 && p.b[digits] == '0') || p.numberGoesOn() {
		return false
	}
	if p.b[start] == '-' {
		n = -n
	}
	*dst = n
	return true
}

// numberGoesOn reports whether a fraction or exponent follows the digits.
func (p *replyParser) numberGoesOn() bool {
	return p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E')
}

// key reads an object key without escapes or control characters.
func (p *replyParser) key() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// string reads a string whose escapes are all short ones and whose bytes
// are valid UTF-8.
func (p *replyParser) string() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	var buf []byte // set at the first escape
	ascii := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			raw := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			if buf == nil {
				return string(raw), true
			}
			return string(append(buf, p.b[start:p.i-1]...)), true
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", false
			}
			r, ok := shortEscape(p.b[p.i+1])
			if !ok {
				return "", false
			}
			if buf == nil {
				buf = make([]byte, 0, len(p.b)-start)
			}
			if !ascii && !utf8.Valid(p.b[start:p.i]) {
				return "", false
			}
			buf = append(append(buf, p.b[start:p.i]...), r)
			p.i += 2
			start, ascii = p.i, true
		case c < 0x20:
			return "", false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			p.i++
		}
	}
	return "", false
}

// skipString steps over a valid JSON string without decoding it: the
// bytes of a value nobody reads are not checked for UTF-8, as encoding/json
// does not check them either.
func (p *replyParser) skipString() bool {
	p.i++ // the opening quote
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return true
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return false
			}
			if p.b[p.i+1] == 'u' {
				if len(p.b)-p.i < 6 || !isHex(p.b[p.i+2]) || !isHex(p.b[p.i+3]) || !isHex(p.b[p.i+4]) || !isHex(p.b[p.i+5]) {
					return false
				}
				p.i += 6
				continue
			}
			if _, ok := shortEscape(p.b[p.i+1]); !ok {
				return false
			}
			p.i += 2
		case c < 0x20:
			return false
		default:
			p.i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// shortEscape is the byte that \c stands for in JSON, other than \u.
func shortEscape(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// skip steps over one valid JSON value.
func (p *replyParser) skip(depth int) bool {
	if depth > maxSkipDepth || p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(func([]byte) bool { return p.skip(depth + 1) })
	case c == '[':
		return p.array(func() bool { return p.skip(depth + 1) })
	case c == '"':
		return p.skipString()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.null()
	default:
		return p.number()
	}
}

// number steps over a JSON number.
func (p *replyParser) number() bool {
	p.byte('-')
	if !p.byte('0') && !p.digits() {
		return false
	}
	if p.byte('.') && !p.digits() {
		return false
	}
	if p.byte('e') || p.byte('E') {
		if !p.byte('+') {
			p.byte('-')
		}
		if !p.digits() {
			return false
		}
	}
	return true
}

func (p *replyParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

func (p *replyParser) null() bool { return p.literal("null") }

func (p *replyParser) literal(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// byte consumes c if it is next.
func (p *replyParser) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *replyParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}
