package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/researchbot/researchbot/extract"
	"github.com/researchbot/researchbot/pipeline"
)

// Bounds of the files given to a run with --file.
const (
	// maxFileBytes is the largest file read: the fetch body limit, so a
	// file weighs no more than a fetched page may.
	maxFileBytes = extract.DefaultMaxBytes
	// maxFilesBytes bounds all the files of one run together.
	maxFilesBytes = 4 * extract.DefaultMaxBytes
	// fileReadTimeout bounds the extraction of one file.
	fileReadTimeout = 30 * time.Second
)

// readFiles reads and extracts the files given with --file, in order,
// within the bounds above. Any file that cannot be read, or is of a kind
// not read, is an exit-2 error naming it and the kinds accepted; the run
// does not start without it.
func readFiles(ctx context.Context, paths []string) ([]pipeline.File, error) {
	if len(paths) > pipeline.MaxFiles {
		return nil, fileError("", fmt.Sprintf("%d files given; a run reads at most %d", len(paths), pipeline.MaxFiles))
	}
	var files []pipeline.File
	var total int64
	for _, path := range paths {
		body, err := readBounded(path)
		if err != nil {
			return nil, fileError(path, err.Error())
		}
		if total += int64(len(body)); total > maxFilesBytes {
			return nil, fileError(path, fmt.Sprintf("the files together are larger than %d MiB", maxFilesBytes>>20))
		}
		f, err := extractFile(ctx, path, body)
		if err != nil {
			return nil, fileError(path, err.Error())
		}
		files = append(files, f)
	}
	return files, nil
}

// readBounded reads a regular file of at most maxFileBytes.
func readBounded(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, describeOpenError(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	body, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %w", err)
	}
	if len(body) > maxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB", maxFileBytes>>20)
	}
	return body, nil
}

func describeOpenError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied")
	}
	return fmt.Errorf("cannot open it: %w", err)
}

// extractFile turns one file's bytes into the run's File: its base name
// (never the path), kind and text with page offsets.
func extractFile(ctx context.Context, path string, body []byte) (pipeline.File, error) {
	mt, _ := extract.MediaTypeOfName(path)
	ctx, cancel := context.WithTimeout(ctx, fileReadTimeout)
	defer cancel()
	d, err := extract.Extract(ctx, body, mt, extract.Limits{MaxBytes: maxFileBytes})
	if err != nil {
		return pipeline.File{}, err
	}
	return pipeline.File{
		Name: filepath.Base(path), Kind: string(d.Kind), Bytes: int64(len(body)), Text: d.Text, Truncated: d.Truncated,
		PageCount: d.PageCount, PageStarts: d.PageStarts, Note: d.Note,
	}, nil
}

// fileError is the one-line exit-2 message for a file given with --file.
func fileError(path, why string) error {
	msg := "researchbot: --file"
	if path != "" {
		msg += fmt.Sprintf(" %s", path)
	}
	msg += ": " + why
	if !strings.Contains(why, "accepted:") {
		msg += "; accepted: " + extract.Accepted
	}
	return &exitError{code: 2, msg: msg}
}

// filesLine says which files the run was given, for the terminal.
func filesLine(files []pipeline.File) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Describe()
	}
	return "files attached, read first: " + strings.Join(names, ", ")
}
