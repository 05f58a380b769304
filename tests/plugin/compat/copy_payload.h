/* The payload functions of a published-API ifunc whose payload is a copy
 * of its source arguments: <name>_payload_bound and <name>_payload_init. */
#ifndef XRDMA_TEST_COPY_PAYLOAD_H
#define XRDMA_TEST_COPY_PAYLOAD_H
#include <stddef.h>
#include <string.h>

#define COPY_PAYLOAD_FUNCTIONS(name)                                                           \
    size_t name##_payload_bound(void *source_args, size_t source_args_size)                    \
    {                                                                                           \
        (void)source_args;                                                                      \
        return source_args_size;                                                                \
    }                                                                                           \
    int name##_payload_init(void *source_args, size_t source_args_size, void *payload,         \
                            size_t *payload_size)                                               \
    {                                                                                           \
        memcpy(payload, source_args, source_args_size);                                         \
        *payload_size = source_args_size;                                                       \
        return 0;                                                                               \
    }
#endif
