// Package dateparser stands in for github.com/markusmobius/go-dateparser in
// researchbot's build (a replace directive in the main go.mod).
//
// go-trafilatura extracts the pages' main text; it imports go-htmldate for
// publication dates, which imports go-dateparser. go-dateparser compiles
// about 4,000 regular expressions for 200 locales in its package init: every
// researchbot process, `researchbot --help` included, paid about 0.15 s and
// kept 27 MB of live heap for them (upstream issue
// markusmobius/go-dateparser#20). researchbot runs go-htmldate in fast mode
// (trafilatura.Fast), which finds dates in metadata, JSON-LD, <time>
// elements, URLs and dated text patterns with its own code and never calls
// the date parser; only its extensive mode does. This stand-in provides the
// declarations go-htmldate compiles against, and every parse fails, so an
// extensive search would find no date rather than a wrong one.
package dateparser

import (
	"errors"
	"time"
)

// ErrNotLinked is what every parse returns.
var ErrNotLinked = errors.New("go-dateparser is not linked into this program (go-htmldate's extensive mode is unavailable)")

// PreferredDateSource, as in go-dateparser.
type PreferredDateSource uint8

// The preferred date sources.
const (
	CurrentPeriod PreferredDateSource = iota
	Past
	Future
)

// Configuration holds the settings go-htmldate passes; they are ignored.
type Configuration struct {
	PreferredDateSource PreferredDateSource
	StrictParsing       bool
}

// ParserType, as in go-dateparser.
type ParserType uint8

// The parser types.
const (
	Timestamp ParserType = iota
	NegativeTimestamp
	RelativeTime
	CustomFormat
	AbsoluteTime
	NoSpacesTime
)

// Parser is a date parser that parses nothing.
type Parser struct {
	ParserTypes []ParserType
}

// Date is a parse result.
type Date struct {
	Time time.Time
}

// Parse always fails with ErrNotLinked.
func (p *Parser) Parse(cfg *Configuration, str string, formats ...string) (Date, error) {
	return Date{}, ErrNotLinked
}
