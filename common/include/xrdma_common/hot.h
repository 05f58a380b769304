// XRDMA_HOT marks a function that every hop runs: receive, dispatch, the
// forward or reply, the progress pass. GCC places hot functions in
// .text.hot.*, which the linker gathers in one run at the front of .text,
// so a hop's code lies on a few pages instead of scattered over the
// library. With more ranks than cores, a rank that receives a hop was just
// switched out, and its code comes back into the caches line by line and
// page by page. That costs more than the number of instructions suggests
// (docs/RESULTS.md, issue 14: benchmarks/code-footprint counts the lines and pages).
// Each starts on a 64-byte line, so that its first line is whole whatever
// moves before it (at stop 35 two unchanged functions took 5 more lines
// when they started 48 bytes into one).
#pragma once

#define XRDMA_HOT __attribute__((hot, aligned(64)))
