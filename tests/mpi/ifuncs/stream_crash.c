/* st_crash: a streaming function whose payload handler writes through a
 * null pointer at its third piece (test_stream: the fault ends the
 * operation with MPIX_ERR_IFUNC_FAULT, the target lives on). */
#include <stdint.h>
#include <xrdma_ifunc.h>

struct crash_state {
    int pieces;
};
static int crash_payload(xrdma_ctx_t *ctx, void *s, void *target, const void *data, size_t bytes, size_t offset)
{
    (void)ctx, (void)target, (void)data, (void)bytes, (void)offset;
    struct crash_state *st = s;
    if (++st->pieces == 3) {
        volatile int *p = (volatile int *)(uintptr_t)(st->pieces - 3); /* address 0 */
        *p = 1;
    }
    return 0;
}
XRDMA_STREAM(st_crash, struct crash_state, NULL, crash_payload, NULL)
