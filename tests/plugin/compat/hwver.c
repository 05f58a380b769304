/* A published-API ifunc shipped as LLVM bitcode (llvm_bc = 1) that calls a
 * library the target process does not link: hwver.deps names it, so the
 * target loads it before linking the compiled code. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

unsigned hwloc_get_api_version(void);

size_t hwver_payload_bound(void *source_args, size_t source_args_size)
{
    (void)source_args;
    return source_args_size;
}

int hwver_payload_init(void *source_args, size_t source_args_size, void *payload, size_t *payload_size)
{
    memcpy(payload, source_args, source_args_size);
    *payload_size = source_args_size;
    return 0;
}

/* Adds the payload (a uint64) and hwloc's API version to *target_args. */
void hwver_main(void *payload, size_t payload_size, void *target_args)
{
    uint64_t v;
    if (payload_size != sizeof(v) || !target_args) return;
    memcpy(&v, payload, sizeof(v));
    *(uint64_t *)target_args += v + hwloc_get_api_version();
}
