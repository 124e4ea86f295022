// A stand-in for github.com/markusmobius/go-dateparser: see dateparser.go.
module github.com/markusmobius/go-dateparser

go 1.22
