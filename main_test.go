package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuietUnlessLogging(t *testing.T) {
	// clear empties every logging variable of the environment for the test.
	clear := func() {
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TF_LOG") || k == "TF_ACC_LOG_PATH" {
				t.Setenv(k, "")
			}
		}
	}
	levels := func() []string {
		var out []string
		for _, k := range sdkLogLevels {
			out = append(out, os.Getenv(k))
		}
		return out
	}

	t.Run("terraform logging off", func(t *testing.T) {
		clear()
		for _, k := range sdkLogLevels {
			t.Setenv(k, "") // restored after the test
		}
		quietUnlessLogging()
		for i, v := range levels() {
			if v != "OFF" {
				t.Errorf("%s = %q, want OFF", sdkLogLevels[i], v)
			}
		}
	})
	for _, set := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_PATH", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_PROVIDER_WARREN", "TF_ACC_LOG_PATH"} {
		t.Run(set+" set", func(t *testing.T) {
			clear()
			t.Setenv(set, "DEBUG")
			quietUnlessLogging()
			for i, v := range levels() {
				want := ""
				if sdkLogLevels[i] == set {
					want = "DEBUG"
				}
				if v != want {
					t.Errorf("with %s set, %s = %q, want %q (untouched)", set, sdkLogLevels[i], v, want)
				}
			}
		})
	}
}

func TestProfileCPU(t *testing.T) {
	dir := t.TempDir()
	stop := profileCPU(filepath.Join(dir, "p"))
	stop()
	data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("p.%d.pprof", os.Getpid())))
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is a gzipped protocol buffer.
	if zr, err := gzip.NewReader(bytes.NewReader(data)); err != nil {
		t.Errorf("not a pprof profile: %v", err)
	} else if body, err := io.ReadAll(zr); err != nil || len(body) == 0 {
		t.Errorf("an empty or broken profile: %d bytes, %v", len(body), err)
	}

	// A prefix that cannot be written is no profile, and no failure.
	profileCPU(filepath.Join(dir, "missing", "p"))()
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("stat of the missing directory: %v", err)
	}
}
