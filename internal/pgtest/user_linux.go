package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
)

// account is who the server's processes run as: the postgres user when the
// tests run as root (initdb and postgres refuse root), else the tests' own
// user.
type account struct {
	cred     *syscall.Credential // nil: as ourselves
	uid, gid int
}

func serverAccount() (account, error) {
	if os.Geteuid() != 0 {
		return account{uid: os.Getuid(), gid: os.Getgid()}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return account{}, fmt.Errorf("pgtest: no postgres user (%w); %s", err, InstallHint)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return account{cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, uid: uid, gid: gid}, nil
}

// command is name run as a, in a process group of its own.
func (a account) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: a.cred, Setpgid: true}
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGTZ=UTC")
	return cmd
}

// daemon is command for the postmaster itself: it dies with the test binary
// (Pdeathsig), also when go test kills the binary on a timeout, so that no
// server outlives a run. pg_ctl start would daemonize it beyond our reach;
// the postmaster is started directly instead, and pg_ctl stops it.
func (a account) daemon(name string, args ...string) *exec.Cmd {
	cmd := a.command(name, args...)
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	return cmd
}

// chown gives path to a.
func (a account) chown(path string) error { return os.Lchown(path, a.uid, a.gid) }

// signalAll sends sig to the postmaster pid and to every process it forked.
// Each backend leads a process group of its own (setsid), so one signal to
// the postmaster's group would miss them. The postmaster is stopped first,
// so that it forks nobody while its children are listed; SIGCONT reaches
// the children before the postmaster, so that none of them is left
// stopped.
func signalAll(pid int, sig syscall.Signal) {
	if sig == syscall.SIGCONT {
		for _, c := range children(pid) {
			_ = syscall.Kill(c, sig)
		}
		_ = syscall.Kill(pid, sig)
		return
	}
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	for _, c := range children(pid) {
		_ = syscall.Kill(c, sig)
	}
	_ = syscall.Kill(pid, sig)
	if sig == syscall.SIGKILL {
		return
	}
	if sig != syscall.SIGSTOP {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses,
		// so read after the last ')'.
		st := string(b)
		i := strings.LastIndexByte(st, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(st[i+1:])
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == pid {
				out = append(out, n)
			}
		}
	}
	return out
}
