// Package whatlanggo stands in for github.com/RadhiFadlillah/whatlanggo in
// researchbot's build (a replace directive in the main go.mod).
//
// go-trafilatura detects the language of every page it extracts with
// whatlanggo, to refuse pages not in Options.TargetLanguage (researchbot
// sets none) and to fill the result's Metadata.Language (researchbot reads
// no such field). On the 983 pages of go-trafilatura's comparison corpus
// the detection took 7 % of the extraction's time, and its package
// initialisation, which builds its language tables, 1.6–2 ms and 0.35 MB of
// every researchbot process's start (docs/performance.md, Start-up).
//
// This stand-in declares what go-trafilatura compiles against, and
// DetectLang finds no language: Metadata.Language stays empty, and a
// TargetLanguage would refuse every page, so extract sets none.
package whatlanggo

// Lang is a language; the stand-in knows none.
type Lang int

// Unknown is the only Lang DetectLang returns.
const Unknown Lang = -1

// DetectLang returns Unknown.
func DetectLang(string) Lang { return Unknown }

// Iso6391 is the ISO 639-1 code of l: none, for Unknown.
func (l Lang) Iso6391() string { return "" }
