/* Published-API ifunc with a payload of any size: adds up the payload's
 * uint64 words into the uint64 target_args points to. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "copy_payload.h"

COPY_PAYLOAD_FUNCTIONS(bigsum)

void bigsum_main(void *payload, size_t payload_size, void *target_args)
{
    uint64_t sum = 0, w;
    for (size_t i = 0; i + 8 <= payload_size; i += 8) {
        memcpy(&w, (const char *)payload + i, 8);
        sum += w;
    }
    *(uint64_t *)target_args += sum;
}
