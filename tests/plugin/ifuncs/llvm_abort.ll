; Valid IR that LLVM 14 cannot compile for x86-64: a 1024-bit division has
; no library call, and code generation aborts the process ("LLVM ERROR:
; Unsupported library call operation!"). A target compiles it in its helper
; process: only the image fails.
target triple = "x86_64-pc-linux-gnu"

define i64 @add_u64(i1024 %a, i1024 %b) {
  %q = udiv i1024 %a, %b
  %t = trunc i1024 %q to i64
  ret i64 %t
}
