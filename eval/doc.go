// Package eval is researchbot's built-in evaluation: a small collection of
// public-domain and permissively or freely licensed documents (corpus/,
// with their origins in corpus/SOURCES.md), questions over it with the
// facts a correct report states (questions.json), and the grading of a
// finished run's report in code: the share of cited claims whose quote
// was found in the cited source, citation precision (claims citing a
// document that holds the answer) and the expected facts found.
//
// `researchbot eval` runs each question over the collection and prints
// what Grade returns; the package itself does no I/O but reading its
// embedded files.
package eval
