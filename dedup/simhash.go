package dedup

import (
	"hash/fnv"
	"math/bits"
	"strings"
	"unicode"
)

// shingleSize is the number of consecutive words hashed together.
const shingleSize = 3

// MaxHammingDistance is the largest number of differing bits for which
// NearDuplicate reports two fingerprints as the same content. With 64-bit
// fingerprints over 3-word shingles, 3 bits is the threshold commonly used for
// near-duplicate web pages (Manku, Jain, Das Sarma, WWW 2007): texts differing
// only in boilerplate, punctuation or a few words fall within it, while
// unrelated texts differ in about 32 bits.
const MaxHammingDistance = 3

// Simhash returns a 64-bit fingerprint of text: words are lower-cased letters
// and digits, every run of three consecutive words (a shingle) is hashed with
// FNV-1a, and each bit of the result is set when most shingle hashes have that
// bit set. Similar texts get fingerprints that differ in few bits. Text with
// no words returns 0, which callers treat as "no content".
func Simhash(text string) uint64 {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) == 0 {
		return 0
	}
	n := len(words) - shingleSize + 1
	if n < 1 {
		n = 1 // shorter than one shingle: the whole text is the shingle
	}
	var votes [64]int
	h := fnv.New64a()
	for i := 0; i < n; i++ {
		h.Reset()
		end := min(i+shingleSize, len(words))
		for j, w := range words[i:end] {
			if j > 0 {
				h.Write([]byte{' '})
			}
			h.Write([]byte(w))
		}
		sum := h.Sum64()
		for b := 0; b < 64; b++ {
			if sum&(1<<b) != 0 {
				votes[b]++
			} else {
				votes[b]--
			}
		}
	}
	var fp uint64
	for b := 0; b < 64; b++ {
		if votes[b] > 0 {
			fp |= 1 << b
		}
	}
	return fp
}

// NearDuplicate reports whether two fingerprints from Simhash differ in at most
// MaxHammingDistance (3) bits.
func NearDuplicate(a, b uint64) bool {
	return bits.OnesCount64(a^b) <= MaxHammingDistance
}
