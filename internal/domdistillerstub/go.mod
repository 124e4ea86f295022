// A stand-in for github.com/markusmobius/go-domdistiller: see distiller.go.
module github.com/markusmobius/go-domdistiller

go 1.22
