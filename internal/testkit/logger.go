package testkit

import (
	"log/slog"
	"os"
)

// Logger discards everything unless TIDE_TEST_LOG is set, then it writes debug text to
// stderr.
func Logger() *slog.Logger {
	if os.Getenv("TIDE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}
