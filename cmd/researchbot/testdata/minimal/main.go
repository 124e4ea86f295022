// Command minimal is BenchmarkStartup's yardstick: the least a Go command
// using net/http and encoding/json does to start. It links both packages
// (a handler and a JSON encoding), prints a line and exits, so its time is
// the runtime's start, the standard library's package initialisation and
// the page faults of a small binary on this machine, now.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	out, err := json.Marshal(struct {
		Usage string `json:"usage"`
	}{"minimal [--help]"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(out), mux != nil)
}
