// The API fuzz harnesses (harness.h): the public MPI API with arbitrary
// values, in a one-process MPI job on a window of its own.
//
// What every call must give: MPI_SUCCESS or an error code whose class is a
// valid one (MPI's own or an MPIX_ERR_* class) and whose MPI_Error_string is
// text (UTF-8, no control characters, NUL-terminated at the length it
// reports); a handle only on success; and no crash, no hang, nothing that
// AddressSanitizer reports. The values the API cannot check (that a buffer
// holds what its count and datatype say, that args holds args_size bytes)
// are kept true; everything else is taken from the input.
#include "harness.h"

#include "mpix_xrdma.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

extern "C" const unsigned char fuzz_api_image[];  // api_ifunc.c, by xrdma-cc --c-array
extern "C" const size_t fuzz_api_image_size;

namespace xrdma_fuzz {

namespace {

constexpr int kWinWords = 512;               // the window: 4 KiB, disp_unit 8
constexpr MPI_Aint kOriginHalf = 32 * 1024;  // origin buffers: 64 KiB, used from the middle
const char *const kEntries[] = {"api_sum", "api_add", "api_fail", "api_echo", "api_count", "api_stream"};
constexpr int kNumEntries = int(sizeof(kEntries) / sizeof(kEntries[0]));

struct Api {
    MPI_Win win = MPI_WIN_NULL;  // XRDMA's
    MPI_Win raw = MPI_WIN_NULL;  // created past XRDMA (PMPI): not set up
    int64_t *mem = nullptr;
    int64_t *raw_mem = nullptr;
    MPIX_Ifunc fn[kNumEntries] = {};
    std::vector<MPI_Datatype> types;
    std::vector<uint8_t> origin = std::vector<uint8_t>(2 * kOriginHalf);
};
Api *g_api;

void finish()
{
    if (!g_api) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    MPI_Win_unlock_all(g_api->win);
    MPI_Win_free(&g_api->win);
    PMPI_Win_free(&g_api->raw);
    for (MPIX_Ifunc &f : g_api->fn) MPIX_Ifunc_free(&f);
    MPI_Finalize();
}

// Datatypes an application may pass: predefined ones, derived ones with
// holes, a negative lower bound, a negative stride, and MPI_DATATYPE_NULL.
void make_types(std::vector<MPI_Datatype> *types)
{
    MPI_Datatype t;
    for (MPI_Datatype p : {MPI_BYTE, MPI_INT, MPI_INT64_T, MPI_DOUBLE}) types->push_back(p);
    auto add = [&](MPI_Datatype d) {
        MPI_Type_commit(&d);
        types->push_back(d);
    };
    MPI_Type_contiguous(3, MPI_INT64_T, &t);
    add(t);
    MPI_Type_vector(3, 2, 5, MPI_INT, &t);
    add(t);
    MPI_Type_vector(3, 1, -2, MPI_INT64_T, &t);
    add(t);
    const int lens[] = {3, 5, 2}, displs[] = {0, 10, 30};
    MPI_Type_indexed(3, lens, displs, MPI_DOUBLE, &t);
    add(t);
    const int blens[] = {1, 1};
    const MPI_Aint bdisp[] = {0, 8};
    const MPI_Datatype btypes[] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, blens, bdisp, btypes, &t);
    add(t);
    MPI_Type_create_resized(MPI_INT64_T, -8, 24, &t);
    add(t);
    types->push_back(MPI_DATATYPE_NULL);
}

Api &api()
{
    if (g_api) return *g_api;
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) MPI_Init(nullptr, nullptr);
    g_api = new Api;
    Api &a = *g_api;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    FUZZ_CHECK(MPI_Win_allocate(kWinWords * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &a.mem, &a.win) == MPI_SUCCESS,
              "MPI_Win_allocate");
    FUZZ_CHECK(PMPI_Win_allocate(kWinWords * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &a.raw_mem, &a.raw) == MPI_SUCCESS,
              "PMPI_Win_allocate");
    MPI_Win_set_errhandler(a.win, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(a.raw, MPI_ERRORS_RETURN);
    for (int i = 0; i < kNumEntries; ++i)
        FUZZ_CHECK(MPIX_Ifunc_load_mem(fuzz_api_image, fuzz_api_image_size, kEntries[i], &a.fn[i]) == MPI_SUCCESS,
                  "load %s", kEntries[i]);
    make_types(&a.types);
    MPI_Win_lock_all(0, a.win);
    // MPI_Finalize at exit (libFuzzer ends with exit()), registered after
    // XRDMA's first window: its exit handlers run before XRDMA's state,
    // created on that first use, is destroyed.
    if (!inited) atexit(finish);
    return a;
}

// Well-formed UTF-8 without control characters, as long as it says.
bool is_text(const char *s, int len)
{
    if (len <= 0 || len >= MPI_MAX_ERROR_STRING || int(strnlen(s, MPI_MAX_ERROR_STRING)) != len) return false;
    const auto *u = reinterpret_cast<const unsigned char *>(s);
    for (int i = 0; i < len;) {
        const unsigned c = u[i];
        const int n = c < 0x80                     ? 1
                      : (c >= 0xc2 && c <= 0xdf) ? 2
                      : (c >= 0xe0 && c <= 0xef) ? 3
                      : (c >= 0xf0 && c <= 0xf4) ? 4
                                                 : 0;
        if (n == 0 || i + n > len) return false;
        uint32_t cp = n == 1 ? c : c & (0x7f >> n);
        for (int k = 1; k < n; ++k) {
            if ((u[i + k] & 0xc0) != 0x80) return false;
            cp = cp << 6 | (u[i + k] & 0x3f);
        }
        if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return false;
        if (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) return false;
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return false;
        i += n;
    }
    return true;
}

// A class an error of XRDMA may have: MPI's (but MPI_ERR_UNKNOWN, what Open
// MPI answers for a code it does not know) or an MPIX_ERR_* one.
bool valid_class(int cls)
{
    if (cls > MPI_SUCCESS && cls <= MPI_ERR_LASTCODE && cls != MPI_ERR_UNKNOWN) return true;
    for (int x : {MPIX_ERR_IFUNC_IMAGE, MPIX_ERR_IFUNC_LINK, MPIX_ERR_IFUNC_DENIED, MPIX_ERR_IFUNC_FAULT,
                  MPIX_ERR_IFUNC_RETURN, MPIX_ERR_IFUNC_TIMEOUT, MPIX_ERR_PEER})
        if (cls == x) return true;
    return false;
}

// What every return value of the API must be: a valid class, and a string
// that is text and says something after its last separator.
int check_code(int rc, const char *call)
{
    if (rc == MPI_SUCCESS) return MPI_SUCCESS;
    int cls = -1;
    FUZZ_CHECK(MPI_Error_class(rc, &cls) == MPI_SUCCESS, "%s: MPI_Error_class(%d) failed", call, rc);
    FUZZ_CHECK(valid_class(cls), "%s: error %d has class %d", call, rc, cls);
    char s[MPI_MAX_ERROR_STRING + 1];
    memset(s, 0x7f, sizeof(s));
    int len = -1;
    FUZZ_CHECK(MPI_Error_string(rc, s, &len) == MPI_SUCCESS, "%s: MPI_Error_string(%d) failed", call, rc);
    FUZZ_CHECK(is_text(s, len), "%s: error %d (class %d): the string is not text (%d bytes): %.*s", call, rc, cls,
              len, MPI_MAX_ERROR_STRING, s);
    FUZZ_CHECK(len < 2 || strcmp(s + len - 2, ": ") != 0, "%s: error %d: the string ends without its cause: '%s'",
              call, rc, s);
    return cls;
}

// The input, read front to back; zeros once it runs out.
struct Reader {
    const uint8_t *p;
    size_t n;
    uint64_t bytes(int k)
    {
        uint64_t v = 0;
        for (int i = 0; i < k && n; ++i, --n) v |= uint64_t(*p++) << (8 * i);
        return v;
    }
    uint8_t byte() { return uint8_t(bytes(1)); }
    // An int, often one a check must catch.
    int integer()
    {
        switch (byte() % 10) {
        case 0: return 0;
        case 1: return 1;
        case 2: return -1;
        case 3: return INT_MAX;
        case 4: return INT_MIN;
        case 5: return MPI_PROC_NULL;
        case 6: return MPI_ANY_SOURCE;
        case 7: return -int(byte()) - 1;
        case 8: return byte();
        default: return int(uint32_t(bytes(4)));
        }
    }
    MPI_Aint disp()
    {
        switch (byte() % 8) {
        case 0: return 0;
        case 1: return kWinWords;
        case 2: return -1;
        case 3: return INT64_MAX;
        case 4: return INT64_MIN;
        case 5: return INT64_MAX / 8 + 1;  // * disp_unit overflows
        case 6: return byte();
        default: return MPI_Aint(bytes(8));
        }
    }
};

// The span [lo, hi) that @p count items of @p t cover around their address.
bool span(MPI_Datatype t, int count, MPI_Aint *lo, MPI_Aint *hi)
{
    MPI_Aint lb, extent, tlb, textent;
    if (t == MPI_DATATYPE_NULL || count <= 0) return false;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &textent);
    const MPI_Aint step = MPI_Aint(count - 1) * extent;
    *lo = tlb + (step < 0 ? step : 0);
    *hi = tlb + textent + (step > 0 ? step : 0);
    return true;
}

// @p count, or the largest smaller count whose items fit [-half, half).
int fitting(MPI_Datatype t, int count, MPI_Aint half)
{
    MPI_Aint lo, hi;
    if (!span(t, count, &lo, &hi) || (lo >= -half && hi <= half)) return count;
    int good = 0, bad = count;
    while (bad - good > 1) {
        const int mid = good + (bad - good) / 2;
        (span(t, mid, &lo, &hi) && lo >= -half && hi <= half ? good : bad) = mid;
    }
    return good;
}

enum Op { kXput, kXget, kXinvoke, kRxput, kRxget, kRxinvoke, kOps };

void one_xop(Api &a, Reader &r)
{
    const int op = r.byte() % kOps;
    const uint8_t wsel = r.byte();
    MPI_Win win = wsel == 255 ? a.raw : wsel == 254 ? MPI_WIN_NULL : a.win;
    const int fsel = r.byte() % (kNumEntries + 1);
    MPIX_Ifunc f = fsel == kNumEntries ? MPIX_IFUNC_NULL : a.fn[fsel];
    MPI_Datatype otype = a.types[r.byte() % a.types.size()];
    MPI_Datatype ttype = a.types[r.byte() % a.types.size()];
    const bool no_origin = r.byte() % 8 == 0;
    int ocount = r.integer();
    if (!no_origin) ocount = fitting(otype, ocount, kOriginHalf);
    void *origin = no_origin ? nullptr : a.origin.data() + kOriginHalf;
    const int rank = r.integer();
    MPI_Aint disp = r.disp();
    int tcount = r.integer();
    if (f == MPIX_IFUNC_NULL && op != kXinvoke && op != kRxinvoke) {
        // Plain MPI_Put/MPI_Get: MPI's rules, which do not check that the
        // region lies in the window or that the two sides match. Keep both.
        MPI_Aint lo, hi;
        ttype = otype;
        tcount = ocount;
        if (span(ttype, tcount, &lo, &hi) && (disp < 0 || disp > kWinWords || disp * 8 + lo < 0 ||
                                              disp * 8 + hi > kWinWords * 8))
            return;
    }
    // args: exactly as many bytes as the input gives, on the heap (a read
    // past them is reported); args_size that many, fewer, or any value with
    // NULL args.
    const size_t alen = r.byte();
    std::unique_ptr<uint8_t[]> abuf(new uint8_t[alen ? alen : 1]);
    for (size_t i = 0; i < alen; ++i) abuf[i] = r.byte();
    const uint8_t asel = r.byte() % 4;
    const void *args = asel == 3 ? nullptr : abuf.get();
    const int args_size = asel == 0   ? int(alen)
                          : asel == 1 ? int(r.byte() % (alen + 1))
                          : asel == 2 ? -int(r.byte()) - 1
                                      : r.integer();
    const bool no_request = r.byte() % 16 == 0;

    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *reqp = no_request ? nullptr : &req;
    int rc;
    static const char *const names[] = {"MPIX_Xput", "MPIX_Xget", "MPIX_Xinvoke", "MPIX_Rxput", "MPIX_Rxget",
                                        "MPIX_Rxinvoke"};
    switch (op) {
    case kXput: rc = MPIX_Xput(origin, ocount, otype, rank, disp, tcount, ttype, f, args, args_size, win); break;
    case kXget: rc = MPIX_Xget(origin, ocount, otype, rank, disp, tcount, ttype, f, args, args_size, win); break;
    case kXinvoke: rc = MPIX_Xinvoke(f, args, args_size, rank, win); break;
    case kRxput:
        rc = MPIX_Rxput(origin, ocount, otype, rank, disp, tcount, ttype, f, args, args_size, win, reqp);
        break;
    case kRxget:
        rc = MPIX_Rxget(origin, ocount, otype, rank, disp, tcount, ttype, f, args, args_size, win, reqp);
        break;
    default: rc = MPIX_Rxinvoke(f, args, args_size, rank, win, reqp); break;
    }
    const int cls = check_code(rc, names[op]);
    // Values the API documents as errors are refused.
    const bool rx = op == kRxput || op == kRxget || op == kRxinvoke;
    if (rx && no_request) FUZZ_CHECK(cls == MPI_ERR_REQUEST, "%s without a request: class %d", names[op], cls);
    if (win == a.raw || win == MPI_WIN_NULL)
        FUZZ_CHECK(cls != MPI_SUCCESS, "%s on a window XRDMA did not set up", names[op]);
    const bool code = f != MPIX_IFUNC_NULL || op == kXinvoke || op == kRxinvoke;
    if (code && (args_size < 0 || (args_size > 0 && !args)))
        FUZZ_CHECK(cls != MPI_SUCCESS, "%s with args %p, args_size %d", names[op], args, args_size);
    // What the operation did at the target comes back here.
    if (req != MPI_REQUEST_NULL) {
        FUZZ_CHECK(rc == MPI_SUCCESS, "%s failed but gave a request", names[op]);
        check_code(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    }
    check_code(MPI_Win_flush_all(a.win), "MPI_Win_flush_all");
}

}  // namespace

void fuzz_api_init() { api(); }

void fuzz_api_load(const uint8_t *data, size_t size)
{
    api();
    std::unique_ptr<uint8_t[]> copy(new uint8_t[size ? size : 1]);  // exact size: ASan sees a read past it
    if (size) memcpy(copy.get(), data, size);
    for (const char *name : {static_cast<const char *>(nullptr), "api_sum", ""}) {
        for (const uint8_t *image : {static_cast<const uint8_t *>(copy.get()), static_cast<const uint8_t *>(nullptr)}) {
            if (!image && size) continue;
            MPIX_Ifunc f = reinterpret_cast<MPIX_Ifunc>(&f);  // must become MPIX_IFUNC_NULL on failure
            const int rc = MPIX_Ifunc_load_mem(image, size, name, &f);
            const int cls = check_code(rc, "MPIX_Ifunc_load_mem");
            // The classes MPIX_Ifunc_load(3) lists for bytes in memory.
            if (!(cls == MPI_SUCCESS || cls == MPI_ERR_ARG || cls == MPIX_ERR_IFUNC_IMAGE || cls == MPI_ERR_NO_MEM)) {
                char s[MPI_MAX_ERROR_STRING];
                int len = 0;
                MPI_Error_string(rc, s, &len);
                FUZZ_CHECK(false, "MPIX_Ifunc_load_mem of %zu bytes: error %d, class %d: %s", size, rc, cls, s);
            }
            if (rc != MPI_SUCCESS) {
                FUZZ_CHECK(f == MPIX_IFUNC_NULL || !image, "failed load left a handle");
                continue;
            }
            // Loaded, not run: these bytes are code from nowhere.
            FUZZ_CHECK(f != MPIX_IFUNC_NULL && f != reinterpret_cast<MPIX_Ifunc>(&f), "no handle after a load");
            FUZZ_CHECK(MPIX_Ifunc_free(&f) == MPI_SUCCESS && f == MPIX_IFUNC_NULL, "free");
        }
    }
}

void fuzz_api_xop(const uint8_t *data, size_t size)
{
    Api &a = api();
    Reader r{data, size};
    for (int i = 0; i < 8 && r.n; ++i) one_xop(a, r);
}

}  // namespace xrdma_fuzz
