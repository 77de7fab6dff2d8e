package pgtest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// InstallHint is what a test says when PostgreSQL's server binaries are
// missing.
const InstallHint = "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found under /usr/lib/postgresql/*/bin; " +
	"install them with `apt-get update && apt-get install -y postgresql` (./test.sh does this for you)"

// binDir finds the newest installed PostgreSQL's bin directory: Debian keeps
// each major version under /usr/lib/postgresql/<version>/bin, outside PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var ok []string
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "pg_ctl")) && isExec(filepath.Join(d, "postgres")) {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		return "", fmt.Errorf("pgtest: %s", InstallHint)
	}
	slices.SortFunc(ok, func(a, b string) int { return version(a) - version(b) })
	return ok[len(ok)-1], nil
}

// version is the major version a bin directory belongs to, 0 if unknown.
func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
