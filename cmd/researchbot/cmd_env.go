package main

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/tracing"
)

// cmdEnv lists every variable researchbot reads, from the one table in
// config: its current value (secrets masked) and where the value comes
// from, then what it means; then the OpenTelemetry variables tracing reads.
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
	for _, v := range tracing.Variables() {
		def := v.Default
		def = cmp.Or(def, "none")
		if value := strings.TrimSpace(getenv(v.Name)); value != "" {
			fmt.Fprintf(stdout, "%s=%s  (from the environment; default: %s)\n", v.Name, redactedURL(value), def)
		} else {
			fmt.Fprintf(stdout, "%s unset  (default: %s)\n", v.Name, def)
		}
		fmt.Fprintf(stdout, "    %s\n", v.Meaning)
	}
	return nil
}

// redactedURL is value with a URL's password masked (an OTLP endpoint may
// carry one); any other value as it is.
func redactedURL(value string) string {
	if u, err := url.Parse(value); err == nil && u.User != nil {
		return u.Redacted()
	}
	return value
}
