package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Shell completion asks the program itself: the script a shell loads
// (`researchbot completion bash|zsh|fish`) calls `researchbot __complete
// WORDS… CURRENT`, which prints the candidates one a line. The candidates
// come from the same tables help uses (commands, the checkpoints
// subcommands) and from each command's own -h, so they cannot drift.

// completionScripts are the scripts `researchbot completion SHELL` prints.
var completionScripts = map[string]string{
	"bash": `# researchbot completion for bash: source <(researchbot completion bash)
_researchbot() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local IFS=$'\n'
  COMPREPLY=($(researchbot __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null))
}
complete -o default -F _researchbot researchbot
`,
	"zsh": `# researchbot completion for zsh: source <(researchbot completion zsh)
autoload -U +X bashcompinit && bashcompinit
_researchbot() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local IFS=$'\n'
  COMPREPLY=($(researchbot __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null))
}
complete -o default -F _researchbot researchbot
`,
	"fish": `# researchbot completion for fish: researchbot completion fish | source
complete -c researchbot -f -a '(researchbot __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`,
}

// cmdCompletion prints the completion script for a shell.
func cmdCompletion(args []string, stdout, stderr io.Writer) error {
	shells := []string{"bash", "zsh", "fish"}
	rest, err := parseFlags(newFlags("completion"), "completion", args, false, stdout, stderr)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError(stderr, "completion", "needs one shell: bash, zsh or fish")
	}
	script, ok := completionScripts[rest[0]]
	if !ok {
		return usageError(stderr, "completion", "no completion for %q (bash, zsh or fish)%s", rest[0], suggestion(rest[0], shells))
	}
	fmt.Fprint(stdout, script)
	return nil
}

// helpFlag finds a flag in a command's help (flag.PrintDefaults' lines).
var helpFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^  -(\w[\w-]*)`) })

// cmdComplete prints the completions of current after the words before it.
func cmdComplete(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		args = []string{""}
	}
	words, current := args[:len(args)-1], args[len(args)-1]
	var candidates []string
	switch {
	case len(words) == 0:
		candidates = append(commandNames(), "--version", "--help")
	case words[0] == "help":
		for _, c := range commands {
			if name := strings.Fields(c.name); len(name) > len(words)-1 && slices.Equal(name[:len(words)-1], words[1:]) {
				candidates = append(candidates, name[len(words)-1])
			}
		}
	case strings.HasPrefix(current, "-"):
		// The command's own help lists its flags.
		var help bytes.Buffer
		_ = dispatch(ctx, append(slices.Clone(words), "-h"), getenv, nil, &help, io.Discard)
		for _, m := range helpFlag().FindAllStringSubmatch(help.String(), -1) {
			candidates = append(candidates, "--"+m[1])
		}
		if words[0] == "checkpoints" && len(words) == 1 {
			candidates = append(candidates, "--json")
		}
		candidates = append(candidates, "--help")
	case len(words) == 1 && words[0] == "runs":
		candidates = []string{"prune"}
	case len(words) == 1 && words[0] == "docs":
		candidates = docsSubcommands
	case len(words) == 1 && words[0] == "checkpoints":
		candidates = checkpointsSubcommands
	case len(words) == 1 && words[0] == "completion":
		candidates = []string{"bash", "zsh", "fish"}
	}
	var printed []string
	for _, c := range candidates {
		if strings.HasPrefix(c, current) && !slices.Contains(printed, c) {
			printed = append(printed, c)
			fmt.Fprintln(stdout, c)
		}
	}
	return nil
}
