; Bitcode that parses but is not valid IR (the verifier rejects it: %a is
; used in an instruction it does not dominate). Assembled with
; llvm-as --disable-verify for the JIT's bad-bitcode test.
define i32 @add_u64(i8* %ctx, i8* %args, i64 %args_size) {
entry:
  %b = add i32 %a, 1
  %a = add i32 %b, 1
  ret i32 %a
}

@__xrdma_entry_add_u64 = constant [8 x i8] c"add_u64\00"
