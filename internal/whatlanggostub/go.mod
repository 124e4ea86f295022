// A stand-in for github.com/RadhiFadlillah/whatlanggo: see whatlanggo.go.
module github.com/RadhiFadlillah/whatlanggo

go 1.22
