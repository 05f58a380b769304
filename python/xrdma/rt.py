"""What a function written in Python may call at the target: the runtime of
xrdma_ifunc(3) for Numba-compiled code (@xrdma.function).

Inside such a function `ctx` is the xrdma_ctx_t pointer (numba voidptr):

    rt.rank(ctx), rt.size(ctx), rt.origin(ctx)       -> int32
    rt.target(ctx), rt.incoming(ctx), rt.win_base(ctx) -> (voidptr, nbytes)
    rt.reply(ctx, ptr, nbytes), rt.forward(ctx, rank, ptr, nbytes) -> int32
    rt.reply_value(ctx, v), rt.forward_value(ctx, rank, v)          -> int32
        v: a number or a tuple of numbers, sent as its C layout (a tuple
        of uint64 is a uint64 array)

Window memory and args are viewed with numba.carray(ptr, count, dtype).
The calls compile to calls of the C runtime functions by name; the target
links them like those of a C function. They mean nothing at the origin.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_i8p = ir.IntType(8).as_pointer()
_i32 = ir.IntType(32)
_i64 = ir.IntType(64)

#: Names of the C functions this module's calls compile to.
RUNTIME = ("xrdma_rank", "xrdma_size", "xrdma_origin", "xrdma_target", "xrdma_incoming",
           "xrdma_win_base", "xrdma_reply", "xrdma_forward")

rank = types.ExternalFunction("xrdma_rank", types.int32(types.voidptr))
size = types.ExternalFunction("xrdma_size", types.int32(types.voidptr))
origin = types.ExternalFunction("xrdma_origin", types.int32(types.voidptr))
reply = types.ExternalFunction("xrdma_reply", types.int32(types.voidptr, types.voidptr, types.uintp))
forward = types.ExternalFunction("xrdma_forward",
                                 types.int32(types.voidptr, types.int32, types.voidptr, types.uintp))


def _region(cname):
    """(pointer, bytes) from one of the void *f(ctx, size_t *bytes) calls."""
    def typer(typingctx, ctx):
        sig = types.Tuple((types.voidptr, types.uintp))(types.voidptr)

        def codegen(context, builder, signature, args):
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_i8p, [_i8p, _i64.as_pointer()]),
                                                cname)
            slot = cgutils.alloca_once_value(builder, ir.Constant(_i64, 0))
            ptr = builder.call(fn, [args[0], slot])
            return context.make_tuple(builder, signature.return_type, [ptr, builder.load(slot)])
        return sig, codegen
    typer.__name__ = cname
    return intrinsic(typer)


target = _region("xrdma_target")
incoming = _region("xrdma_incoming")
win_base = _region("xrdma_win_base")


def _spill(context, builder, ty, value):
    """A stack copy of @p value and its size in bytes (C layout)."""
    llty = context.get_value_type(ty)
    slot = cgutils.alloca_once(builder, llty)
    builder.store(value, slot)
    return builder.bitcast(slot, _i8p), ir.Constant(_i64, context.get_abi_sizeof(llty))


def _sendable(ty):
    if isinstance(ty, (types.Integer, types.Float)):
        return True
    return isinstance(ty, types.BaseTuple) and all(isinstance(t, (types.Integer, types.Float)) for t in ty)


@intrinsic
def reply_value(typingctx, ctx, value):
    if not _sendable(value):
        return None
    sig = types.int32(types.voidptr, value)

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_i32, [_i8p, _i8p, _i64]),
                                            "xrdma_reply")
        ptr, n = _spill(context, builder, signature.args[1], args[1])
        return builder.call(fn, [args[0], ptr, n])
    return sig, codegen


@intrinsic
def forward_value(typingctx, ctx, to, value):
    if not isinstance(to, types.Integer) or not _sendable(value):
        return None
    sig = types.int32(types.voidptr, to, value)

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_i32, [_i8p, _i32, _i8p, _i64]),
                                            "xrdma_forward")
        to_v = context.cast(builder, args[1], signature.args[1], types.int32)
        ptr, n = _spill(context, builder, signature.args[2], args[2])
        return builder.call(fn, [args[0], to_v, ptr, n])
    return sig, codegen
