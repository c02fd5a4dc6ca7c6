package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"
)

// startSSH is the peer: a throwaway sshd as a child process on a loopback port (its own host
// key and authorized key, no PAM, logging in as the current user) and `ssh -N -R` forwarding
// a port on the sshd side to the app. Its clients speak plain HTTP to the forwarded port.
func startSSH(ctx context.Context, e *env, app *trafficApp) (*trafficPath, error) {
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd" // not on a non-root PATH
		if _, err := os.Stat(sshd); err != nil {
			return nil, errors.New("sshd not found: scripts/bench-deps.sh installs Debian's openssh-server (make bench runs it)")
		}
	}
	me, err := user.Current()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(e.dir, "ssh-")
	if err != nil {
		return nil, err
	}
	hostKey, userKey := filepath.Join(dir, "host_key"), filepath.Join(dir, "user_key")
	if err := writeSSHKey(hostKey, ""); err != nil {
		return nil, err
	}
	if err := writeSSHKey(userKey, filepath.Join(dir, "authorized_keys")); err != nil {
		return nil, err
	}
	sshdAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	fwdAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	sshdHost, sshdPort, _ := net.SplitHostPort(sshdAddr)
	config := strings.Join([]string{
		"ListenAddress " + sshdAddr,
		"HostKey " + hostKey,
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"PidFile none",
		"UsePAM no",
		"StrictModes no", // the scratch directory is not the user's home
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PermitRootLogin prohibit-password",
		"AllowTcpForwarding remote",
		"LogLevel ERROR",
	}, "\n") + "\n"
	configFile := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// sshd run as root insists on its privilege separation directory, which Debian's
		// service makes when it starts.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, err
		}
	}
	logFile := filepath.Join(dir, "log")
	logs, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer logs.Close()
	readLogs := func() string { data, _ := os.ReadFile(logFile); return string(data) }

	server, err := startChild(withOutput(exec.Command(sshd, "-D", "-e", "-f", configFile), logs))
	if err != nil {
		return nil, err
	}
	if err := waitFor(ctx, func() bool {
		c, err := net.Dial("tcp", sshdAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, server.done); err != nil {
		server.stop()
		return nil, fmt.Errorf("sshd: %w: %s", err, readLogs())
	}
	_, fwdPort, _ := net.SplitHostPort(fwdAddr)
	tunnel, err := startChild(withOutput(exec.Command("ssh", "-N", "-F", "/dev/null", "-i", userKey, "-p", sshdPort,
		"-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "ExitOnForwardFailure=yes", "-o", "LogLevel=ERROR",
		"-R", "127.0.0.1:"+fwdPort+":"+app.addr, me.Username+"@"+sshdHost), logs))
	if err != nil {
		server.stop()
		return nil, err
	}
	p := &trafficPath{
		name: "ssh -R", url: "http://" + fwdAddr, addr: fwdAddr,
		memory: func() (int64, error) { return residentOfTrees(server.cmd.Process.Pid, tunnel.cmd.Process.Pid) },
		close:  func() { tunnel.stop(); server.stop() },
	}
	if err := waitFor(ctx, func() bool { return p.answering(ctx) }, tunnel.done); err != nil {
		p.close()
		return nil, fmt.Errorf("ssh -R: %w: %s", err, readLogs())
	}
	return p, nil
}

// child is a process the section started, its exit watched.
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

func startChild(cmd *exec.Cmd) (*child, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.done) }()
	return c, nil
}

// stop asks the process to end and waits until it has.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	<-c.done
}

func withOutput(cmd *exec.Cmd, w io.Writer) *exec.Cmd {
	cmd.Stdout, cmd.Stderr = w, w
	return cmd
}

// sshCipher is the cipher ssh and sshd agree on by default: the first of ssh's list (sshd's
// defaults hold the same ones).
func sshCipher() string {
	out, err := exec.Command("ssh", "-G", "-F", "/dev/null", "127.0.0.1").Output()
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(out), "\n") {
		if list, ok := strings.CutPrefix(line, "ciphers "); ok {
			first, _, _ := strings.Cut(list, ",")
			return first
		}
	}
	return "unknown"
}

// waitFor polls ready until it holds, for at most 15 s, failing early when exited (the exit
// of the process that should make it hold; nil for none) is closed.
func waitFor(ctx context.Context, ready func() bool, exited <-chan struct{}) error {
	deadline := time.Now().Add(15 * time.Second)
	for !ready() {
		select {
		case <-exited:
			return errors.New("exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("not ready after 15 s")
		}
	}
	return nil
}

// writeSSHKey writes a new Ed25519 private key in OpenSSH's format to path, and its public
// half as an authorized key to authorized unless that is empty.
func writeSSHKey(path, authorized string) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := ssh.MarshalPrivateKey(priv, "warren bench")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	if authorized == "" {
		return nil
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return err
	}
	return os.WriteFile(authorized, ssh.MarshalAuthorizedKey(sshPub), 0o600)
}

// residentOfTrees sums the resident memory of processes and all their descendants (sshd
// serves each connection in processes of its own).
func residentOfTrees(roots ...int) (int64, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	children := map[int][]int{}
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], pid)
	}
	var total int64
	for queue := slices.Clone(roots); len(queue) > 0; queue = queue[1:] {
		rss, _, err := memoryOf(queue[0])
		if err != nil && slices.Contains(roots, queue[0]) {
			return 0, err
		}
		total += rss // a descendant gone meanwhile counts 0
		queue = append(queue, children[queue[0]]...)
	}
	return total, nil
}
