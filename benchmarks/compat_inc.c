/* A published-API ifunc library for compat_msg_rate: compat_inc.so, built
 * with plain `gcc -shared -fPIC`. Adds its 1-byte payload to the uint64
 * target_args points to. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

size_t compat_inc_payload_bound(void *source_args, size_t source_args_size)
{
    (void)source_args;
    return source_args_size;
}

int compat_inc_payload_init(void *source_args, size_t source_args_size, void *payload, size_t *payload_size)
{
    memcpy(payload, source_args, source_args_size);
    *payload_size = source_args_size;
    return 0;
}

void compat_inc_main(void *payload, size_t payload_size, void *target_args)
{
    if (payload_size == 1) *(uint64_t *)target_args += *(const uint8_t *)payload;
}
