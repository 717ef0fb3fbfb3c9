package doclinks

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// yamlBlock is one ```yaml fenced block of a Markdown file.
type yamlBlock struct {
	line int // the line of the opening fence
	text string
}

// yamlBlocks returns the ```yaml (or ```yml) fenced blocks of a Markdown file.
func yamlBlocks(path string) ([]yamlBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks []yamlBlock
		fence  string // the open fence, "" outside a block
		inYAML bool
		cur    yamlBlock
		body   strings.Builder
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				if inYAML {
					cur.text = body.String()
					blocks = append(blocks, cur)
				}
				fence, inYAML = "", false
				continue
			}
			if inYAML {
				body.WriteString(line)
				body.WriteByte('\n')
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			info := strings.ToLower(strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])))
			lang, _, _ := strings.Cut(info, " ")
			inYAML = lang == "yaml" || lang == "yml"
			cur = yamlBlock{line: n}
			body.Reset()
		}
	}
	return blocks, sc.Err()
}

// parseAsCollector parses a YAML document the way the Collector reads a
// config file: confmap's YAML loader, then the result as a configuration.
// A list (a Prometheus rule group's rules, say) is valid YAML that is no
// Collector configuration, and passes.
func parseAsCollector(text string) error {
	retrieved, err := confmap.NewRetrievedFromYAML([]byte(text))
	if err != nil {
		return err
	}
	if raw, err := retrieved.AsRaw(); err == nil {
		if _, isList := raw.([]any); isList {
			return nil
		}
	}
	_, err = retrieved.AsConf()
	return err
}

// checkYAML returns one line per ```yaml block under root that the
// Collector could not load, and how many blocks it parsed.
func checkYAML(t *testing.T, root string) (problems []string, checked int) {
	t.Helper()
	for _, f := range markdownFiles(t, root) {
		blocks, err := yamlBlocks(f)
		require.NoError(t, err, f)
		rel, _ := filepath.Rel(root, f)
		for _, b := range blocks {
			checked++
			if err := parseAsCollector(b.text); err != nil {
				problems = append(problems, fmt.Sprintf("%s:%d: %v", rel, b.line, err))
			}
		}
	}
	return problems, checked
}

// TestYAMLBlocksParse fails on a ```yaml block of the repository's Markdown
// that the Collector's config loader rejects, so a configuration a reader
// copies from the docs at least loads.
func TestYAMLBlocksParse(t *testing.T) {
	problems, checked := checkYAML(t, repoRoot(t))
	assert.Empty(t, problems, "YAML blocks the Collector cannot load:\n%s", strings.Join(problems, "\n"))
	assert.Greater(t, checked, 20, "the README and docs alone hold more YAML blocks than this")
}

// TestYAMLCheckerFindsBadBlocks runs the YAML check on a document with one
// good block, a flow mapping holding ${env:...} (YAML reads its { as a
// nested mapping), a list (valid YAML, a rule file's rules) and a block in
// another language, which it skips.
func TestYAMLCheckerFindsBadBlocks(t *testing.T) {
	dir := t.TempDir()
	doc := "# Doc\n\n```yaml\njudge:\n  api_key: ${env:OPENAI_API_KEY}\n```\n\n" +
		"```yaml\njudge: {model: m, api_key: ${env:OPENAI_API_KEY}}\n```\n\n" +
		"```sh\nnot: {yaml: ${x}}\n```\n\n" +
		"```yml\n- alert: A\n  expr: up == 0\n```\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o600))

	blocks, err := yamlBlocks(filepath.Join(dir, "doc.md"))
	require.NoError(t, err)
	require.Len(t, blocks, 3)
	assert.Equal(t, 3, blocks[0].line)
	assert.Equal(t, "judge:\n  api_key: ${env:OPENAI_API_KEY}\n", blocks[0].text)

	problems, checked := checkYAML(t, dir)
	assert.Equal(t, 3, checked)
	require.Len(t, problems, 1)
	assert.True(t, strings.HasPrefix(problems[0], "doc.md:8: "), problems[0])
}
