// The whole heap before and after one collection, as the JVM's collector logs
// print it: "A->B(C)" pairs with K, M or G after each figure.
//
//   [Full GC (Ergonomics) [PSYoungGen: 1024K->0K(2048K)] [ParOldGen: 6991K->6990K(7168K)] 8015K->6990K(9216K), [Metaspace: 3021K->3021K(1056768K)], 0.03 secs]
//   [GC (Allocation Failure) [PSYoungGen: 33280K->5104K(38400K)] 33280K->14008K(125952K), 0.0122 secs]
//   [info][gc] GC(43) Pause Full (G1 Humongous Allocation) 701M->701M(1024M) 7.771ms
//   [gc] GC(168430) Garbage Collection (Allocation Rate) 6418M(52%)->1884M(15%)     (ZGC: each size's share of the heap)
//
// JDK 8 prints each generation's pair, then the whole heap's, then (ParallelGC)
// the Metaspace's, whose capacity is the largest on the line: the heap's pair
// is the one with the largest capacity outside the Metaspace's brackets.
// ZGC gives no capacity: the after figure over its share of the heap is it.
// Shared by jvm.cc (GC thrashing) and memory_series.cc (the heap after each
// collection as a series).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace aimem {

struct HeapPair {
  uint64_t before = 0, after = 0, capacity = 0;  // bytes
};

std::optional<HeapPair> heap_pair(std::string_view line);

}  // namespace aimem
