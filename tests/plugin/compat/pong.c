/* The answer to ping (ping.c): adds its payload to the origin's counter. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "copy_payload.h"

COPY_PAYLOAD_FUNCTIONS(pong)

void pong_main(void *payload, size_t payload_size, void *target_args)
{
    uint64_t v;
    if (payload_size != 8) return;
    memcpy(&v, payload, 8);
    *(uint64_t *)target_args += v & ~(1ull << 63); /* without ping.c's "more" flag */
}
