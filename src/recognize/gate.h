// The gate: a handful of words, one of which every failure report contains.
//
// A large input (a log of gigabytes) is not scanned with every recognizer's
// patterns from end to end: a scan for these few words (a small literal set
// that vectorscan matches at memory speed) finds the blocks where something
// failed; the full pattern set then runs over the head of the input, over those
// blocks and their neighbours, so the context around a failure (the kernel
// report's other lines, the settings printed before it) is read as well.
// Patterns that only ever give context (settings, tables) carry kContext; every
// other pattern must contain a gate word, which a test checks.
#pragma once

#include <span>
#include <string_view>

namespace aimem {

std::span<const std::string_view> gate_words();  // matched case-insensitively
// Whether `pattern` (a literal, or the text of a regex) contains a gate word.
bool gate_covers(std::string_view pattern);

}  // namespace aimem
