package doclinks

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// phonyTargets returns the targets the Makefile at path declares .PHONY.
func phonyTargets(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var targets []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), ".PHONY:"); ok {
			targets = append(targets, strings.Fields(rest)...)
		}
	}
	return targets, sc.Err()
}

// TestBuildingListsEveryMakeTarget fails when a target of the Makefile is
// missing from docs/building.md's list of make targets, so a page that
// tells users to run one (docs/scaling.md: make rules-test) finds it there.
func TestBuildingListsEveryMakeTarget(t *testing.T) {
	root := repoRoot(t)
	targets, err := phonyTargets(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	require.Contains(t, targets, "rules-test", "the Makefile's .PHONY line was read")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "building.md"))
	require.NoError(t, err)
	for _, target := range targets {
		assert.Contains(t, string(doc), "`make "+target+"`", "docs/building.md does not list make %s", target)
	}
}
