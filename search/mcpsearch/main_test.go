package mcpsearch

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/internal/mcpfake"
)

// fakeModeEnv, when set, makes the test binary an MCP server over stdio in
// that mcpfake.Mode ("normal" for Normal): the stdio tests start it as the
// configured command.
const fakeModeEnv = "RESEARCHBOT_MCPFAKE_MODE"

func TestMain(m *testing.M) {
	if mode, ok := os.LookupEnv(fakeModeEnv); ok {
		if mode == "normal" {
			mode = ""
		}
		if err := mcpfake.New(mcpfake.Options{Mode: mcpfake.Mode(mode)}).RunStdio(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}
