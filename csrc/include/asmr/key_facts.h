// Key facts of ASCII text: numbers with units, dates, versions, codes, named entities.
//
// The native path of asmr.text.facts.key_facts, for the text every cited
// sentence and every unit is checked with. It finds what the Python extractor's
// regular expressions find, in the same order (codes, then amounts, frequencies and
// unbounded durations written in words, then dates, versions and numbers in text
// order, then entities), with the same text and norm for each
// fact; tests/kernels/test_facts_native.py compares the two on real and generated text.
// Non-ASCII text (CJK names, curly quotes, currency signs other than $) stays with
// the Python extractor.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace asmr {

// The index of a fact's kind in asmr.text.facts.KINDS.
enum FactKind : int32_t { kFactNumber = 0, kFactDate = 1, kFactVersion = 2, kFactCode = 3, kFactEntity = 4 };

// Words that name nothing when capitalised (asmr.text.facts._COMMON), lower case.
struct FactWords {
    std::unordered_set<std::string> common;
};

struct KeyFact {
    int32_t kind;
    std::string text;  // as written
    std::string norm;  // the comparable form
};

// Appends the key facts of text[0, n) to *out and returns true; returns false (and
// appends nothing) for input left to the Python extractor: a byte outside ASCII, or
// a digit run too long for a double to hold its value with a scale word.
bool key_facts_ascii(const char* text, int64_t n, const FactWords& words, std::vector<KeyFact>* out);

}  // namespace asmr
