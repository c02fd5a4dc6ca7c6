// Package zaplog builds the JSON logger of Warren's commands (warren-apiserver,
// warren-agent), so that their log lines have one shape.
package zaplog

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New writes JSON lines with ISO 8601 timestamps to w. Unlike zap's production preset it
// never samples (every line counts) and adds no stack trace to error lines (a failed request
// or a lost connection has nothing to show; a panic logs its own stack).
func New(level zap.AtomicLevel, w io.Writer) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	return zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(zapcore.AddSync(w)), level), zap.AddCaller())
}

// ParseLevel reads a --log-level value: debug, info, warn or error.
func ParseLevel(s string) (zap.AtomicLevel, error) {
	level, err := zap.ParseAtomicLevel(s)
	if err != nil {
		return level, fmt.Errorf("--log-level %q is not one of debug, info, warn, error", s)
	}
	return level, nil
}
