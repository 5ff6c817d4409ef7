// Stack overflows, the look-alike (src/recognize/families/stack_limits.cc).
// Inputs written here in each runtime's format with our own values, modelled
// on: a Nest/Electron "Maximum call stack size exceeded" from Array.push with
// a spread of millions of rows; Rust's "has overflowed its stack"; Go's
// "goroutine stack exceeds 1000000000-byte limit"; Python's RecursionError.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

TEST(StackLimits, EachRuntimesOverflowIsNotMemory) {
  for (const char* text : {
           "[Nest] 23180  - 2021/10/29 15:12:09   ERROR [ExceptionsHandler] Maximum call stack size exceeded\n"
           "RangeError: Maximum call stack size exceeded\n    at Array.push (<anonymous>)\n",
           "thread 'main' has overflowed its stack\nfatal runtime error: stack overflow\nAborted (core dumped)\n",
           "runtime: goroutine stack exceeds 1000000000-byte limit\nruntime: sp=0xc020160398 stack=[0xc020160000, 0xc040160000]\n"
           "fatal error: stack overflow\n",
           "  File \"/app/tree.py\", line 41, in walk\n    return walk(node.child)\n"
           "RecursionError: maximum recursion depth exceeded while calling a Python object\n",
           "Exception in thread \"main\" java.lang.StackOverflowError\n\tat com.example.Tree.walk(Tree.java:41)\n"}) {
    Diagnosis d = diagnose_text(text);
    EXPECT_EQ(d.layer, Layer::not_memory) << text;
    EXPECT_EQ(d.cause, Cause::not_memory) << text;
  }
}

// A real heap failure beside it is the failure.
TEST(StackLimits, ARealHeapFailureBesideItWins) {
  Diagnosis d = diagnose_text(
      "RangeError: Maximum call stack size exceeded\n"
      "<--- Last few GCs --->\n"
      "[8812:0x5d1c2a0]    91234 ms: Mark-Compact 4037.2 (4129.6) -> 4021.8 (4131.1) MB, 2210.31 / 0.00 ms  (average mu = "
      "0.101, current mu = 0.012) allocation failure; scavenge might not succeed\n"
      "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
  EXPECT_EQ(d.layer, Layer::js_heap);
}

}  // namespace
}  // namespace aimem
