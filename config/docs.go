package config

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// docsDirs reads a list of folders separated like PATH (':' on Unix): each
// must be an existing directory; duplicates are dropped.
func (p *parser) docsDirs(name string) []string {
	v := p.str(name, "")
	if v == "" {
		return nil
	}
	var dirs []string
	for _, d := range filepath.SplitList(v) {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			p.bad(name, "%q: %v", d, err)
			continue
		}
		st, err := os.Stat(abs)
		switch {
		case err != nil:
			p.bad(name, "%q is not a readable folder: %v", d, err)
			continue
		case !st.IsDir():
			p.bad(name, "%q is not a folder", d)
			continue
		}
		if !slices.Contains(dirs, abs) {
			dirs = append(dirs, abs)
		}
	}
	if len(dirs) == 0 {
		p.bad(name, "no folder named in %q", v)
	}
	return dirs
}

// docsIndexDir is where the collection's index lives: the variable's
// value, or researchbot/docs-index in the user cache directory. It is ""
// when there is no collection.
func (p *parser) docsIndexDir(name string, dirs []string) string {
	if v := p.str(name, ""); v != "" {
		abs, err := filepath.Abs(v)
		if err != nil {
			p.bad(name, "%q: %v", v, err)
			return ""
		}
		return abs
	}
	if len(dirs) == 0 {
		return ""
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		p.bad(name, "not set, and there is no user cache directory to default to (%v)", err)
		return ""
	}
	return filepath.Join(cache, "researchbot", "docs-index")
}

// boundedDur reads a duration between lo and hi inclusive.
func (p *parser) boundedDur(name string, def, lo, hi time.Duration) time.Duration {
	d := p.dur(name, def, true)
	if d < lo || d > hi {
		p.bad(name, "want between %s and %s, got %s", lo, hi, d)
		return def
	}
	return d
}
