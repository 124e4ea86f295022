package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/researchbot/researchbot/config"
)

// cmdEnv lists every variable researchbot reads, from the one table in
// config: its current value (secrets masked) and where the value comes
// from, then what it means.
func cmdEnv(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := noArgs("env", args, stdout, stderr); err != nil {
		return err
	}
	for _, v := range config.Variables() {
		for _, name := range v.Names {
			value := strings.TrimSpace(getenv(name))
			if value != "" {
				fmt.Fprintf(stdout, "%s=%s  (from the environment; default: %s)\n", name, v.Show(value), v.DefaultString())
			} else {
				fmt.Fprintf(stdout, "%s unset  (default: %s)\n", name, v.DefaultString())
			}
		}
		fmt.Fprintf(stdout, "    %s\n", strings.ReplaceAll(v.Meaning, "`", ""))
	}
	return nil
}
