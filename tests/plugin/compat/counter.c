/* An ifunc library in the published ifunc API's form: counter.so.
 * -DCOUNTER_SLACK=n: the payload bound is n bytes larger than what
 * counter_payload_init writes (a payload it shrinks).
 * -DCOUNTER_CTOR: with a constructor of the author's own (targets refuse it).
 * -DCOUNTER_FAULT: a payload with its top bit set is an address counter_main
 * stores to (shifted left by one: 1 << 63 is a store to address 0). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef COUNTER_SLACK
#define COUNTER_SLACK 0
#endif

#ifdef COUNTER_CTOR
uint64_t counter_loaded;
__attribute__((constructor)) static void counter_setup(void) { counter_loaded = 1; }
#endif

size_t counter_payload_bound(void *source_args, size_t source_args_size)
{
    (void)source_args;
    return source_args_size + COUNTER_SLACK;
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
#ifdef COUNTER_FAULT
    if (v >> 63) *(volatile uint64_t *)(uintptr_t)(v << 1) = v;
#endif
    *(uint64_t *)target_args += v;
}
