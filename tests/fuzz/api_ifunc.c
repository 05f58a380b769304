/* The functions the API fuzzer's X-operations ship (harness_api.cc),
 * compiled into it as a C array (xrdma-cc --c-array=fuzz_api_image). Each
 * takes any arguments and any region without faulting, so that what the
 * fuzzer checks is the MPI layer's handling of the values it was given.
 *   api_sum    Xget: replies the sum of the target region's bytes (int64).
 *   api_add    Xput: adds the incoming bytes to the target blocks, in order.
 *   api_fail   returns the int32 at the front of args (0 if shorter): any
 *              error value a function can give.
 *   api_echo   replies its args.
 *   api_count  counts its runs in a writable global: code with
 *              target-only state, which runs in the target process (here
 *              through UCX to itself), never in the origin.
 *   api_stream streaming (XRDMA_STREAM): its payload handler adds what
 *              arrives to the target, as api_add. */
#include <stdint.h>
#include <string.h>
#include <xrdma_ifunc.h>

XRDMA_IFUNC(api_sum)
{
    (void)args, (void)args_size;
    size_t n = 0;
    const uint8_t *t = xrdma_target(ctx, &n);
    int64_t s = 0;
    for (size_t i = 0; t && i < n; ++i) s += t[i];
    return xrdma_reply(ctx, &s, sizeof s) != 0;
}

XRDMA_IFUNC(api_add)
{
    (void)args, (void)args_size;
    size_t nblocks = 0, nin = 0, at = 0;
    const xrdma_block_t *b = xrdma_target_blocks(ctx, &nblocks);
    const uint8_t *in = xrdma_incoming(ctx, &nin);
    for (size_t k = 0; b && in && k < nblocks && at < nin; ++k)
        for (size_t i = 0; i < b[k].len && at < nin; ++i) ((uint8_t *)b[k].addr)[i] += in[at++];
    return 0;
}

XRDMA_IFUNC(api_fail)
{
    (void)ctx;
    int32_t code = 0;
    if (args && args_size >= sizeof code) memcpy(&code, args, sizeof code);
    return code;
}

XRDMA_IFUNC(api_echo) { return xrdma_reply(ctx, args, args_size) != 0; }

static int64_t runs;
XRDMA_IFUNC(api_count)
{
    (void)ctx, (void)args, (void)args_size;
    runs++;
    return 0;
}

static int stream_payload(xrdma_ctx_t *ctx, void *state, void *target, const void *data, size_t bytes,
                          size_t offset)
{
    (void)ctx, (void)state, (void)offset;
    for (size_t i = 0; target && i < bytes; ++i) ((uint8_t *)target)[i] += ((const uint8_t *)data)[i];
    return 0;
}
XRDMA_STREAM(api_stream, int64_t, NULL, stream_payload, NULL)
