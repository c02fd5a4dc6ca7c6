// Package browsertest runs a real headless Chromium (Debian's, installed by
// scripts/browser-deps.sh) for the tests of browser flows: the edge's logins through an
// identity provider.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Timeout bounds one test's browser.
const Timeout = 60 * time.Second

// New starts a headless Chromium for t and returns its context (pass it to chromedp.Run);
// the browser ends with the test. Every host name resolves to 127.0.0.1, so a test's edges
// (served by host name on loopback ports) and identity providers are reached by their names,
// and the tests' own certificate authorities are accepted. A missing Chromium fails the test
// rather than skipping it: `make test` installs it.
func New(t testing.TB) context.Context {
	t.Helper()
	path := ExecPath()
	if path == "" {
		t.Fatal("browsertest: no Chromium found (chromium, chromium-browser or google-chrome); run scripts/browser-deps.sh")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests may run as root, which Chromium's sandbox refuses
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("host-resolver-rules", "MAP * 127.0.0.1"),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, Timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("browsertest: start Chromium %s: %v", path, err)
	}
	return ctx
}

// ExecPath is the Chromium this machine has ("" when none): $WARREN_CHROMIUM, else the
// first of chromium, chromium-browser and google-chrome on PATH.
func ExecPath() string {
	if p := os.Getenv("WARREN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
