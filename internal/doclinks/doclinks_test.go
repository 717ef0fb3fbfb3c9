// Package doclinks checks the repository's Markdown: every relative link
// names a file or directory that exists, every anchor into a Markdown
// file names one of its headings, as GitHub renders them, every ```yaml
// block loads, and docs/building.md lists every make target.
package doclinks

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// skipDirs are directories whose Markdown is not ours (npm packages,
// build output, tools) or not part of the checkout.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "_build": true, ".tools": true, "bin": true,
}

var (
	// inlineLink matches [text](target) and ![alt](target); the target
	// ends at the first space (a title follows) or closing parenthesis.
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition matches a reference-style definition: [label]: target.
	refDefinition = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s+(\S+)`)
	codeSpan      = regexp.MustCompile("`+[^`]*`+")
	htmlAnchor    = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	headingLine   = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkInHeading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// link is one relative link found in a Markdown file.
type link struct {
	line   int
	target string
}

// markdownFiles lists every .md file under root outside skipDirs.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// scan reads a Markdown file outside its fenced code blocks and returns
// its relative links and its anchors (heading slugs and HTML ids).
func scan(path string) (links []link, anchors map[string]bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	anchors = map[string]bool{}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		if m := headingLine.FindStringSubmatch(line); m != nil {
			slug := slugify(m[2])
			if k := seen[slug]; k > 0 {
				anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
		text := codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		if m := refDefinition.FindStringSubmatch(text); m != nil {
			// <> is an empty destination (mdatagen's comment line).
			targets = append(targets, strings.Trim(m[1], "<>"))
		}
		for _, target := range targets {
			if isRelative(target) {
				links = append(links, link{line: n, target: target})
			}
		}
	}
	return links, anchors, sc.Err()
}

// isRelative reports whether a link target points into the repository.
func isRelative(target string) bool {
	if target == "" {
		return false
	}
	lower := strings.ToLower(target)
	return !strings.Contains(lower, "://") && !strings.HasPrefix(lower, "mailto:")
}

// slugify makes a heading's anchor the way GitHub does: the heading's text
// (link text kept, markup dropped) in lower case, spaces as hyphens, and
// every character other than a letter, digit, hyphen or underscore left out.
func slugify(heading string) string {
	heading = linkInHeading.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// check returns one line per broken link in the Markdown files under
// root, and how many relative links it checked.
func check(t *testing.T, root string) (problems []string, checked int) {
	t.Helper()
	files := markdownFiles(t, root)
	require.NotEmpty(t, files)
	anchorsOf := map[string]map[string]bool{}
	linksOf := map[string][]link{}
	for _, f := range files {
		links, anchors, err := scan(f)
		require.NoError(t, err, f)
		anchorsOf[f], linksOf[f] = anchors, links
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		for _, l := range linksOf[f] {
			checked++
			path, anchor, _ := strings.Cut(l.target, "#")
			dest := f
			if path != "" {
				if strings.HasPrefix(path, "/") {
					dest = filepath.Join(root, path)
				} else {
					dest = filepath.Join(filepath.Dir(f), path)
				}
				if _, err := os.Stat(dest); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file or directory", rel, l.line, l.target))
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			anchors, ok := anchorsOf[dest]
			if !ok {
				var err error
				_, anchors, err = scan(dest)
				require.NoError(t, err, dest)
				anchorsOf[dest] = anchors
			}
			if !anchors[anchor] {
				problems = append(problems, fmt.Sprintf("%s:%d: %s: no heading makes #%s", rel, l.line, l.target, anchor))
			}
		}
	}
	return problems, checked
}

// repoRoot is the repository's root directory, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository root is two levels up")
	return root
}

// TestRelativeLinksResolve fails on a relative link to a path that does
// not exist, and on an anchor that no heading of the Markdown file it
// points into makes.
func TestRelativeLinksResolve(t *testing.T) {
	problems, checked := check(t, repoRoot(t))
	assert.Empty(t, problems, "broken links:\n%s", strings.Join(problems, "\n"))
	assert.Greater(t, checked, 100, "the README and docs alone hold more links than this")
}

// TestCheckerFindsBrokenLinks runs the checker's parts on a document with
// one good and several broken links, so a checker that finds nothing fails.
func TestCheckerFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	doc := "# Title\n\n## Setup `make` & run\n\n## Setup `make` & run\n\n" +
		"[ok](#setup-make--run) [dup](#setup-make--run-1) [file](other.md#part) " +
		"[missing](gone.md) [web](https://example.com/x) `[code](nothere.md)`\n\n" +
		"```\n[fenced](nothere.md)\n# not a heading\n```\n\n[ref]: ./other.md\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o600))
	links, anchors, err := scan(filepath.Join(dir, "doc.md"))
	require.NoError(t, err)

	var targets []string
	for _, l := range links {
		targets = append(targets, l.target)
	}
	assert.Equal(t, []string{"#setup-make--run", "#setup-make--run-1", "other.md#part", "gone.md", "./other.md"}, targets)
	assert.Equal(t, map[string]bool{"title": true, "setup-make--run": true, "setup-make--run-1": true}, anchors)
	assert.Equal(t, "what-an-evaluation-costs", slugify("What an evaluation costs"))
	assert.Equal(t, "the-prompt-prefix-a-provider-can-cache-benchmarkevaluationcost-testcasedatacomeslast",
		slugify("The prompt prefix a provider can cache (`BenchmarkEvaluationCost`, `TestCaseDataComesLast`)"))
	assert.Equal(t, "llm_eval-processor", slugify("[`llm_eval` processor](x.md)"))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other\n\n## Part\n"), 0o600))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node_modules", "x"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "node_modules", "x", "README.md"), []byte("[not ours](nowhere.md)\n"), 0o600))
	problems, checked := check(t, dir)
	assert.Equal(t, 5, checked)
	assert.Equal(t, []string{"doc.md:7: gone.md: no such file or directory"}, problems)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.md"), []byte("# Other\n"), 0o600))
	problems, _ = check(t, dir)
	assert.Equal(t, []string{"doc.md:7: other.md#part: no heading makes #part", "doc.md:7: gone.md: no such file or directory"}, problems)
}
