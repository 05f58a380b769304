/* Source of extra ELF seeds for fuzz_elf (tests/fuzz/local.mk links it with
 * several linkers and options): relative relocations from pointer tables,
 * thread-local storage (PT_TLS, DTPMOD/DTPOFF or TLSDESC), a weak undefined
 * symbol (GLOB_DAT), PLT calls, so that the seeds reach every table the
 * ELF reader checks. Never loaded by a test. */
#include <string.h>
#include <xrdma_ifunc.h>

static const char *const names[] = {"zero", "one", "two", "three", "four", "five", "six", "seven"};
static const char *const *const tables[] = {names, names + 2, names + 4};
static __thread unsigned long calls;
static __thread char scratch[64] = "tls image";
extern int optional_hook(int) __attribute__((weak));

XRDMA_IFUNC(pick)
{
    unsigned i = (unsigned)args_size;
    calls++;
    if (optional_hook) optional_hook((int)calls);
    const char *n = tables[i % 3][i & 1];
    memcpy(scratch, n, strlen(n) + 1);
    (void)args;
    return xrdma_reply(ctx, scratch, strlen(scratch));
}

XRDMA_IFUNC(count_calls)
{
    unsigned long c = calls;
    (void)args, (void)args_size;
    return xrdma_reply(ctx, &c, sizeof c);
}
