/* An ifunc library in the published ifunc API's form: counter.so. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

size_t counter_payload_bound(void *source_args, size_t source_args_size)
{
    (void)source_args;
    return source_args_size;
}

int counter_payload_init(void *source_args, size_t source_args_size, void *payload,
                         size_t *payload_size)
{
    memcpy(payload, source_args, source_args_size);
    *payload_size = source_args_size;
    return 0;
}

/* Adds the payload (a uint64) to the uint64 target_args points to. */
void counter_main(void *payload, size_t payload_size, void *target_args)
{
    uint64_t v;
    if (payload_size != sizeof(v) || !target_args) return;
    memcpy(&v, payload, sizeof(v));
    *(uint64_t *)target_args += v;
}
