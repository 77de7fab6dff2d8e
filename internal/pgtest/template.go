package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// tmpl is a data directory initdb made once per test binary: every server
// starts from a copy of it, which takes a fraction of initdb's time.
type tmpl struct {
	acct account
	bin  string
	dir  string // holds data/
}

var (
	tmplOnce sync.Once
	tmplVal  *tmpl
	tmplErr  error
)

// template returns the binary's template, made on first use.
func template() (*tmpl, error) {
	tmplOnce.Do(func() { tmplVal, tmplErr = makeTemplate() })
	return tmplVal, tmplErr
}

func makeTemplate() (*tmpl, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	acct, err := serverAccount()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-template-")
	if err != nil {
		return nil, err
	}
	if err := acct.chown(dir); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	cmd := acct.command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--no-sync", "-E", "UTF8", "--locale=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w: %s", err, out)
	}
	return &tmpl{acct: acct, bin: bin, dir: dir}, nil
}

// copyTo copies the template's data directory to data, inside dir, both
// owned by the server's user.
func (t *tmpl) copyTo(dir, data string) error {
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	if err := t.acct.chown(dir); err != nil {
		return err
	}
	// cp -a keeps owners and modes: the postmaster wants its data
	// directory its own and 0700.
	if out, err := exec.Command("cp", "-a", filepath.Join(t.dir, "data"), data).CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: copy the template: %w: %s", err, out)
	}
	return nil
}

// removeTemplate removes the template, once the binary's tests are done.
func removeTemplate() {
	if tmplVal != nil {
		_ = os.RemoveAll(tmplVal.dir)
	}
}
