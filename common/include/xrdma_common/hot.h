// XRDMA_HOT marks a function that every hop runs: receive, dispatch, the
// forward or reply, the progress pass. GCC places hot functions in
// .text.hot.*, which the linker gathers in one run at the front of .text,
// so a hop's code lies on a few pages instead of scattered over the
// library. With more ranks than cores, a rank that receives a hop was just
// switched out, and its code comes back into the caches line by line and
// page by page. That costs more than the number of instructions suggests
// (benchmarks/drivers/code-footprint counts a hop's lines and pages;
// benchmarks/results/REPORT.md has them).
// Each starts on a 64-byte line, so that a hop's line count does not move
// with the code placed before it: two unchanged functions that started 48
// bytes into a line took 5 more lines.
#pragma once

#define XRDMA_HOT __attribute__((hot, aligned(64)))
