#include "run/fault.h"

#include "run/context.h"

#include "xrdma_common/bytes.h"
#include "xrdma_common/config.h"
#include "load/loader_native.h"
#include "xrdma_common/log.h"
#include "load/policy.h"
#include "xrdma_common/hot.h"

#include <csetjmp>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

namespace xrdma {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
const int kTimerSignal = SIGRTMIN + 3;
struct sigaction g_previous[64];
pthread_once_t g_install_once = PTHREAD_ONCE_INIT;  // (std::call_once costs TLS lookups per call)

// Executable segments of libc and libm, read before the first shipped call
// (the handler only compares addresses), and whether a fault there may be
// contained (the policy allows only lock-free library functions).
struct Range {
    uintptr_t lo, hi;
};
Range g_lib_text[16];
int g_lib_text_count = 0;
bool g_lib_containable = false;

bool in_lib_text(uintptr_t pc)
{
    for (int i = 0; i < g_lib_text_count; ++i)
        if (pc >= g_lib_text[i].lo && pc < g_lib_text[i].hi) return true;
    return false;
}

void find_lib_text()
{
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *) {
            const char *name = info->dlpi_name ? info->dlpi_name : "";
            const char *base = strrchr(name, '/');
            base = base ? base + 1 : name;
            if (strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libm.so", 7) != 0) return 0;
            for (int i = 0; i < info->dlpi_phnum && g_lib_text_count < 16; ++i) {
                const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
                    g_lib_text[g_lib_text_count++] = {uintptr_t(info->dlpi_addr + ph.p_vaddr),
                                                      uintptr_t(info->dlpi_addr + ph.p_vaddr + ph.p_memsz)};
            }
            return 0;
        },
        nullptr);
}


// This thread's alternate signal stack, if we installed one: handed back
// (the previous one restored) when the thread ends, so that threads which
// ran injected code do not each leave 64 KiB and a POSIX timer behind.
struct AltStack {
    void *mem = nullptr;
    stack_t previous{};
    ~AltStack()
    {
        if (!mem) return;
        stack_t cur{};
        if (sigaltstack(nullptr, &cur) != 0 || (cur.ss_flags & SS_ONSTACK)) return;  // keep it: in use
        if (cur.ss_sp == mem) {
            stack_t restore = previous;
            if (restore.ss_flags & SS_DISABLE) {
                restore = stack_t{};
                restore.ss_flags = SS_DISABLE;
            }
            if (sigaltstack(&restore, nullptr) != 0) return;
        }
        free(mem);
    }
};

// What the current thread is running, for the signal handler.
struct Guard {
    // Where a contained fault or timeout returns to (run_guarded): GCC's
    // __builtin_setjmp, which saves only what the compiler needs (frame,
    // stack, resume address: a few instructions, where sigsetjmp() costs
    // about 30 per invocation). No signal mask is saved either way: the
    // handler's signal is unblocked by hand.
    void *jump[5];
    // The code of the guarded call running now, null outside one: the
    // handlers' one test of "a shipped call runs on this thread".
    const LoadedCode *volatile code = nullptr;
    // checked_copy: a fault while copying returns there instead.
    sigjmp_buf probe_jump;
    volatile sig_atomic_t probing = 0;
    volatile sig_atomic_t probe_signal = 0;
    FaultInfo info;
    timer_t timer;
    bool timer_ready = false;
    bool timed = false;  // XRDMA_IFUNC_TIMEOUT set: a timer runs during each guarded call
    AltStack alt;  // one thread-local object: one TLS lookup per guarded call
    double limit = 0;    // XRDMA_IFUNC_TIMEOUT
    uintptr_t stack_hi = 0;  // top of this thread's stack (0: unknown)
    Guard() = default;
    explicit Guard(const LoadedCode *busy) : code(busy) {}
    ~Guard()
    {
        if (timer_ready) timer_delete(timer);
    }
};
thread_local Guard t_guard;
// The hot path (and the signal handlers) reach this thread's guard through
// an initial-exec pointer: one %fs-relative load instead of a
// __tls_get_addr() call per guarded call. 8 bytes of static TLS, which a
// library loaded by dlopen() has room for too. Null until the thread's
// guard is ready (prepare_guard()), so that one test tells both.
__thread Guard *t_guard_p __attribute__((tls_model("initial-exec"))) = nullptr;
// What a guarded call tests (run_guarded()): this thread's guard once it is
// ready and untimed; until then, and for good when XRDMA_IFUNC_TIMEOUT is
// set, g_not_fast, whose code is never null, so that the same one test
// that finds a call already running sends these to run_guarded_other().
// g_not_fast is never run under, and the handlers read t_guard_p only.
Guard g_not_fast{reinterpret_cast<const LoadedCode *>(&g_not_fast)};  // (any non-null code: never dereferenced)
__thread Guard *t_fast_guard __attribute__((tls_model("initial-exec"))) = &g_not_fast;

}  // namespace

// RuntimeCall's depth (fault.h); and the top of this thread's stack once
// its guard is ready.
__thread sig_atomic_t t_runtime_depth __attribute__((tls_model("initial-exec"))) = 0;
__thread uintptr_t t_stack_hi __attribute__((tls_model("initial-exec"))) = 0;

namespace {

uintptr_t pc_of(void *uctx)
{
    auto *uc = static_cast<ucontext_t *>(uctx);
#if defined(__x86_64__)
    return uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return uintptr_t(uc->uc_mcontext.pc);
#else
    (void)uc;
    return 0;
#endif
}

void chain(int sig, siginfo_t *si, void *uctx)
{
    const struct sigaction &prev = g_previous[sig];
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction) {
            prev.sa_sigaction(sig, si, uctx);
            return;
        }
    } else if (prev.sa_handler == SIG_IGN) {
        return;
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler) {
        prev.sa_handler(sig);
        return;
    }
    // Default action: restore it and let the fault happen again, for real
    // (a synchronous fault re-executes; one sent by kill() is re-raised).
    signal(sig, SIG_DFL);
    if (si->si_code <= 0) raise(sig);
}

#if defined(__SANITIZE_ADDRESS__)
extern "C" void __asan_handle_no_return();
#endif

// Back to run_guarded() from a handler (on the alternate stack): the
// ifunc's frames are left behind, as siglongjmp() without a mask would.
[[noreturn]] __attribute__((noinline)) void jump_back(Guard &g)
{
#if defined(__SANITIZE_ADDRESS__)
    __asan_handle_no_return();  // (what ASan's siglongjmp() interceptor does: the left frames' shadow)
#endif
    __builtin_longjmp(g.jump, 1);
}

void on_fault(int sig, siginfo_t *si, void *uctx)
{
    if (!t_guard_p) {  // this thread never ran injected code
        chain(sig, si, uctx);
        return;
    }
    Guard &g = *t_guard_p;
    const bool synchronous = si->si_code > 0;  // raised by the instruction, not sent
    if (g.probing && synchronous) {
        g.probing = 0;
        g.probe_signal = sig;
        siglongjmp(g.probe_jump, 1);
    }
    uintptr_t pc = pc_of(uctx);
    const LoadedCode *const code = g.code;
    if (code && !t_runtime_depth) {
        bool own = code->contains(pc);
        bool library = !own && synchronous && g_lib_containable && in_lib_text(pc);
        if (own || library) {
            g.info = FaultInfo{};  // (reset here, not on the hot path)
            g.info.signal = sig;
            g.info.address = reinterpret_cast<uintptr_t>(si->si_addr);
            g.info.pc = pc;
            g.info.in_library = library;
            g.code = nullptr;
            jump_back(g);
        }
    }
    chain(sig, si, uctx);
}

void on_timer(int, siginfo_t *, void *uctx)
{
    if (!t_guard_p) return;
    Guard &g = *t_guard_p;
    const LoadedCode *const code = g.code;
    if (!code) return;
    uintptr_t pc = pc_of(uctx);
    if (code->contains(pc)) {
        g.info = FaultInfo{};
        g.info.timeout = true;
        g.info.pc = pc;
        g.code = nullptr;
        jump_back(g);
    }
    // Inside a library call: stopping there could leave its locks held; try
    // again shortly, when the ifunc's own code runs.
    struct itimerspec again{};
    again.it_value.tv_nsec = 1000 * 1000;
    timer_settime(g.timer, 0, &again, nullptr);
}

void install()
{
    find_lib_text();
    g_lib_containable = policy_library_calls_lock_free();
    struct sigaction sa{};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int s : kSignals) sigaction(s, &sa, &g_previous[s]);
    sa.sa_sigaction = on_timer;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(kTimerSignal, &sa, nullptr);
}

// A stack overflow in injected code needs another stack to be reported on.
void ensure_altstack(AltStack &alt)
{
    if (alt.mem) return;
    stack_t ss{};
    ss.ss_size = 64 * 1024;
    ss.ss_sp = malloc(ss.ss_size);
    if (!ss.ss_sp) return;
    if (sigaltstack(&ss, &alt.previous) == 0)
        alt.mem = ss.ss_sp;
    else
        free(ss.ss_sp);
}

// Read once: on the hot path a getenv() scan of a large environment cost
// more than the rest of the guard.
double timeout_seconds()
{
    static const double limit = [] {
        double s = atof(config_get("XRDMA_IFUNC_TIMEOUT"));
        return s > 0 ? s : 0.0;
    }();
    return limit;
}

// Noinline, as disarm(): the guarded call only tests g.timed.
__attribute__((noinline)) void arm(Guard &g)
{
    const double seconds = g.limit;
    if (!g.timer_ready) {
        struct sigevent ev{};
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = kTimerSignal;
        ev._sigev_un._tid = pid_t(syscall(SYS_gettid));
        if (timer_create(CLOCK_MONOTONIC, &ev, &g.timer) != 0) return;
        g.timer_ready = true;
    }
    struct itimerspec its{};
    its.it_value.tv_sec = time_t(seconds);
    its.it_value.tv_nsec = long((seconds - double(its.it_value.tv_sec)) * 1e9);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    timer_settime(g.timer, 0, &its, nullptr);
}

__attribute__((noinline)) void disarm(Guard &g)
{
    if (!g.timer_ready) return;
    struct itimerspec off{};
    timer_settime(g.timer, 0, &off, nullptr);
}

// This thread's guard, ready for a guarded call (handlers installed, its
// alternate signal stack set, the limit read): the slow path of the first
// call per thread. nullptr if containment is off.
__attribute__((noinline, cold)) Guard *prepare_guard()
{
    if (!faults_contained()) return nullptr;
    pthread_once(&g_install_once, install);
    Guard &g = t_guard;
    ensure_altstack(g.alt);
    g.limit = timeout_seconds();
    g.timed = g.limit > 0;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo = nullptr;
        size_t size = 0;
        if (pthread_attr_getstack(&attr, &lo, &size) == 0) g.stack_hi = uintptr_t(lo) + size;
        pthread_attr_destroy(&attr);
    }
    t_stack_hi = g.stack_hi;
    t_guard_p = &g;  // (last: the handlers take a set pointer for a ready guard)
    if (!g.timed) t_fast_guard = &g;
    return &g;
}

// After a siglongjmp out of a handler (no signal mask saved: that is a
// syscall per invocation), the handler's signal is still blocked.
void unblock(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

// Where run_guarded() lands after a handler jumped back: the timer
// stopped, the handler's signal unblocked; what happened.
__attribute__((noinline, cold)) const FaultInfo &contained()
{
    Guard &g = *t_guard_p;
    disarm(g);
    unblock(g.info.timeout ? kTimerSignal : g.info.signal);
    return g.info;
}

// The frame of a guarded call: Op::call(a...) for the code @p code under
// guard @p g (ready, no call running), with a timer when kTimed (g and code
// last: the arguments stay in the registers they came in); after a
// contained fault or timeout, Op::failed(what happened, a...) instead.
// Op's functions inline here, so that the function that holds the setjmp
// is the only frame between the caller and the ifunc's (the setjmp makes it
// save every callee-saved register: one such frame, not two).
template <typename Op, bool kTimed, typename... A>
__attribute__((noinline)) XRDMA_HOT int call_guarded(A... a, Guard *g, const LoadedCode *code)
{
    // No signal mask saved (that is a syscall per invocation): after a
    // contained fault the handler's signal is unblocked by hand instead.
    if (__builtin_expect(__builtin_setjmp(g->jump) != 0, 0)) return Op::failed(contained(), a...);
    g->code = code;
    if (kTimed) arm(*g);  // (after code is set: a timer that fires sees the call)
    const int rc = Op::call(a...);
    g->code = nullptr;
    if (kTimed) disarm(*g);
    return rc;
}

// run_guarded() when its one test fails: the thread's guard is not ready
// yet, containment is off, a timer runs during each call, the call is
// nested, or there is no code of ours.
template <typename Op, typename... A>
__attribute__((noinline)) int run_guarded_other(const LoadedCode *code, A... a)
{
    Guard *g = t_guard_p;
    if (!code || (!g && !(g = prepare_guard()))) return Op::call(a...);  // no code of ours, or containment off
    // Not nested (one ifunc at a time per thread, see t_dispatching): a
    // nested call runs unguarded rather than replace the jump target.
    if (g->code) return Op::call(a...);
    return g->timed ? call_guarded<Op, true, A...>(a..., g, code) : call_guarded<Op, false, A...>(a..., g, code);
}

// Run Op::call(a...) under this thread's guard, for the code @p code
// (see call_guarded()). One test per call: t_fast_guard's code is null only
// when an untimed call can start on a ready guard. (The code is not one of
// a...: with the guard, up to six arguments, the registers that carry them.)
template <typename Op, typename... A>
inline int run_guarded(const LoadedCode *code, A... a)
{
    Guard *const g = t_fast_guard;
    if (__builtin_expect(code && !g->code, 1)) return call_guarded<Op, false, A...>(a..., g, code);
    return run_guarded_other<Op>(code, a...);
}
// guarded_entry's Op: the chain of run_chain() for the image's code; a
// fault fails the invocation.
struct EntryOp {
    static int call(xrdma_ctx *x, const void *args, size_t len) { return run_chain(x, args, len); }
    __attribute__((noinline, cold)) static int failed(const FaultInfo &info, xrdma_ctx *x, const void *, size_t)
    {
        x->fail_status = fault_status(info, *x->entry, &x->fail_message);
        return -1;
    }
};

// guarded_call_compat's Op: the published API's void entry.
struct CompatOp {
    using Fn = void (*)(void *, size_t, void *);
    static int call(Fn fn, void *payload, size_t size, void *target_args)
    {
        fn(payload, size, target_args);
        return 0;
    }
    static int failed(const FaultInfo &, Fn, void *, size_t, void *) { return -1; }
};

// Names the library function around @p pc: the runtime set's function
// whose address (as the process binds it: an IFUNC's chosen variant, e.g.
// memcpy's) is the closest below pc, unless an exported symbol lies between
// them, then that one. Aliases bound to the same address are all named.
std::string library_function(uintptr_t pc, std::string *object)
{
    Dl_info di{};
    uintptr_t sym = 0;
    if (dladdr(reinterpret_cast<void *>(pc), &di)) {
        if (di.dli_fname) {
            const char *slash = strrchr(di.dli_fname, '/');
            *object = slash ? slash + 1 : di.dli_fname;
        }
        sym = uintptr_t(di.dli_saddr);
    }
    uintptr_t best = 0;
    std::string names;
    for (const std::string &n : policy_runtime_symbols()) {
        if (n.compare(0, 6, "xrdma_") == 0) continue;
        uintptr_t a = uintptr_t(dlsym(RTLD_DEFAULT, n.c_str()));
        if (!a || a > pc || a < best) continue;
        if (a > best) names.clear();
        best = a;
        names += (names.empty() ? "" : "/") + n;
    }
    if (best && best >= sym) return names;
    if (di.dli_sname) return di.dli_sname;
    return "?";
}

}  // namespace

// Only a thread that runs injected code has a guard to mark (t_guard_p):
// the one seen at the start is the one unmarked at the end.
// The copy itself. A sanitizer would check (and report, and abort on) the
// ifunc's bad pointer before touching it: there, copy uninstrumented so that
// the fault happens and the probe catches it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
__attribute__((no_sanitize("address", "thread"), noinline)) void probe_copy(void *dst, const void *src, size_t n)
{
    auto *d = static_cast<volatile unsigned char *>(dst);
    auto *s = static_cast<const volatile unsigned char *>(src);
    for (size_t i = 0; i < n; ++i) d[i] = s[i];
}
#else
void probe_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif

bool checked_copy(void *dst, const void *src, size_t n)
{
    if (n == 0) return true;
    Guard *const gp = __builtin_expect(t_guard_p != nullptr, 1) ? t_guard_p : prepare_guard();
    if (!gp) {  // containment off (XRDMA_CONTAIN_FAULTS=0)
        memcpy(dst, src, n);
        return true;
    }
    Guard &g = *gp;
    if (sigsetjmp(g.probe_jump, 0) == 0) {
        g.probing = 1;
        probe_copy(dst, src, n);
        g.probing = 0;
        return true;
    }
    unblock(g.probe_signal);
    return false;
}

bool faults_contained()
{
    static const bool on = config_get_ull("XRDMA_CONTAIN_FAULTS") != 0;
    return on;
}

XRDMA_HOT int guarded_entry(xrdma_ctx *x, const void *args, size_t len)
{
    return run_guarded<EntryOp>(x->image ? x->image->code.get() : nullptr, x, args, len);
}

XRDMA_HOT int guarded_call_compat(void (*fn)(void *, size_t, void *), void *payload, size_t size, void *target_args,
                                  const LoadedCode *code)
{
    return run_guarded<CompatOp>(code, fn, payload, size, target_args);
}

const FaultInfo &last_fault()
{
    static const FaultInfo none;
    return t_guard_p ? t_guard_p->info : none;
}

ucx_ifunc_status_t fault_status(const FaultInfo &info, const std::string &entry, std::string *why)
{
    *why = "ifunc '" + entry + "': " + describe(info);
    return info.timeout ? UCX_IFUNC_ERR_TIMEOUT : UCX_IFUNC_ERR_FAULT;
}

std::string describe(const FaultInfo &info)
{
    char buf[256];
    if (info.timeout) {
        snprintf(buf, sizeof(buf), "stopped after XRDMA_IFUNC_TIMEOUT=%s s (pc %#lx)",
                 config_get("XRDMA_IFUNC_TIMEOUT"), (unsigned long)info.pc);
    } else {
        const char *name = info.signal == SIGSEGV ? "SIGSEGV"
                           : info.signal == SIGBUS ? "SIGBUS"
                           : info.signal == SIGFPE ? "SIGFPE"
                           : info.signal == SIGILL ? "SIGILL"
                                                   : "signal";
        if (info.in_library) {
            std::string object = "?";
            std::string fn = library_function(info.pc, &object);
            snprintf(buf, sizeof(buf), "%s at address %#lx in %s (%s, pc %#lx) called by the ifunc", name,
                     (unsigned long)info.address, fn.c_str(), object.c_str(), (unsigned long)info.pc);
        } else {
            snprintf(buf, sizeof(buf), "%s at address %#lx (pc %#lx)", name, (unsigned long)info.address,
                     (unsigned long)info.pc);
        }
    }
    return buf;
}

}  // namespace xrdma
