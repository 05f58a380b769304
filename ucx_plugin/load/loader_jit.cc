// The bitcode path: LLVM ORC LLJIT compiles an image's bitcode part for this
// process (man xrdma-image(5), part kind 2).
//
// One LLJIT per process; each image gets a JITDylib of its own (entry names
// repeat across images), linked against a runtime JITDylib that defines the
// runtime API (runtime_api.h: the plugin's and what layers above registered)
// at the addresses of its table and falls back to the symbols of the process
// (DynamicLibrarySearchGenerator). Binding the runtime API explicitly keeps
// it working when its library was loaded RTLD_LOCAL, where the process
// search would not see it.
//
// Built as a module of its own (libxrdma_jit.so: the only code that links
// LLVM), loaded on first need by jit_module.cc.
//
// Compiles run in the compile helper process (jit_helper.h: compile_object()
// is its side) and the target links the object file it returns, as it links
// one from XRDMA_JIT_CACHE_DIR; XRDMA_JIT_HELPER=none compiles in process
// (add_bitcode()). A target's progress does not wait for the helper: it
// starts the compile (compile_start()), parks the X-op and polls
// (compile_queue.h), and loads the image here once the object is there. A
// load that finds no finished compile waits for one (in process: always). A
// thread that asks for an image another thread is compiling waits for that
// result instead of compiling it again.
//
// Everything from the image is untrusted: the bitcode is parsed, its triple
// checked against this process and the IR verified before LLVM generates code
// (parse_checked(), on both paths). With the helper the target never parses
// bitcode (LLVM's reader can abort the process): the helper returns the
// imports, for XRDMA_SYMBOLS, with the object (and the disk cache keeps them
// beside it). In process, the imports are read lazily, declarations only.
// libtool compiles shared objects with -DPIC, a name LLVM's headers use.
#undef PIC

#include "load/loader_jit.h"

#include "xrdma_common/config.h"
#include "xrdma_common/file.h"
#include "load/jit_helper.h"
#include "load/library_path.h"
#include "xrdma_common/log.h"
#include "load/policy.h"
#include "run/runtime_api.h"
#include "image/sha256.h"
#include "xrdma_config.h"

#include <llvm/ADT/Triple.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <set>
#include <unistd.h>
#include <unordered_map>

namespace xrdma {

namespace {

using namespace llvm;
using namespace llvm::orc;

// The names a library-list part holds: one per line, '#' comments.
std::vector<std::string> listed_libraries(const ImageView &img)
{
    std::vector<std::string> out;
    for (const PartView &p : img.parts) {
        if (p.kind != PartKind::library_list) continue;
        name_lines(reinterpret_cast<const char *>(p.data), p.size, &out);
    }
    return out;
}

std::atomic<uint64_t> n_compiles{0}, n_cache_loads{0}, n_shared{0};

// Modules we compile carry this prefix in their identifier; LLJIT compiles
// small modules of its own too, which are neither counted nor cached.
const char kModulePrefix[] = "xrdma:";

// Where the code of one image lies, for fault containment (is this pc ours?).
struct CodeRanges {
    std::mutex mu;
    std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
    void add(const void *p, size_t n)
    {
        std::lock_guard<std::mutex> g(mu);
        ranges.emplace_back(uintptr_t(p), uintptr_t(p) + n);
    }
    bool contains(uintptr_t pc)
    {
        std::lock_guard<std::mutex> g(mu);
        for (const auto &r : ranges)
            if (pc >= r.first && pc < r.second) return true;
        return false;
    }
};

// Linking happens on the thread that looks the entries up (no compile
// threads), so the memory managers created meanwhile belong to this image.
thread_local std::shared_ptr<CodeRanges> tl_linking;
// Errors ORC reported (rather than returned) while this thread linked.
thread_local std::string tl_errors;

class RangeRecordingMemoryManager : public SectionMemoryManager {
public:
    RangeRecordingMemoryManager() : ranges_(tl_linking) {}
    uint8_t *allocateCodeSection(uintptr_t size, unsigned align, unsigned id, StringRef name) override
    {
        uint8_t *p = SectionMemoryManager::allocateCodeSection(size, align, id, name);
        if (p && ranges_) ranges_->add(p, size);
        return p;
    }

private:
    std::shared_ptr<CodeRanges> ranges_;
};

// Compiled objects go to XRDMA_JIT_CACHE_DIR (if set) under their module's
// key. Reading them back is done by load_bitcode itself, before it parses
// any bitcode, so getObject() never hits.
class DiskCache : public ObjectCache {
public:
    std::string dir;  // empty: no on-disk cache

    void notifyObjectCompiled(const Module *m, MemoryBufferRef obj) override
    {
        StringRef id = m->getModuleIdentifier();
        if (!id.startswith(kModulePrefix)) return;
        n_compiles++;
        if (!dir.empty()) store(id.drop_front(strlen(kModulePrefix)).str(), obj);
    }
    std::unique_ptr<MemoryBuffer> getObject(const Module *) override { return nullptr; }

    std::string path_of(const std::string &key) const { return dir + "/" + key + ".o"; }
    // What the object imports (as the compile helper returns it): a target
    // that compiles in the helper never reads bitcode itself.
    std::string imports_path_of(const std::string &key) const { return dir + "/" + key + ".imports"; }

    void store(const std::string &key, MemoryBufferRef obj) { store_file(path_of(key), obj); }
    void store_imports(const std::string &key, const std::string &meta)
    {
        store_file(imports_path_of(key), MemoryBufferRef(meta, key));
    }

    // Written beside its final name and renamed: a reader never sees half.
    void store_file(const std::string &path, MemoryBufferRef obj)
    {
        if (std::error_code ec = sys::fs::create_directories(dir)) {
            XRDMA_WARN("XRDMA_JIT_CACHE_DIR=%s: %s; compiled code is not cached on disk", dir.c_str(),
                       ec.message().c_str());
            return;
        }
        static std::atomic<unsigned> seq{0};
        const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(seq++);
        int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        bool ok = fd >= 0;
        size_t done = 0;
        while (ok && done < obj.getBufferSize()) {
            ssize_t n = write(fd, obj.getBufferStart() + done, obj.getBufferSize() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) ok = false;
            else done += size_t(n);
        }
        if (fd >= 0 && close(fd) != 0) ok = false;
        if (ok && rename(tmp.c_str(), path.c_str()) != 0) ok = false;
        if (!ok) {
            XRDMA_WARN("cannot write %s: %s", path.c_str(), strerror(errno));
            unlink(tmp.c_str());
            return;
        }
        XRDMA_DEBUG("cached %s (%zu bytes)", path.c_str(), obj.getBufferSize());
    }
};

struct JitImage;

// The process's JIT: created on first use, never destroyed (code may still
// be referenced while static destructors run).
struct Jit {
    std::unique_ptr<LLJIT> lljit;
    JITDylib *runtime = nullptr;
    DiskCache *cache = nullptr;  // owned by the compile function creator's closure
    std::unique_ptr<JITTargetMachineBuilder> jtmb;
    unsigned opt_level = 2;
    std::string triple, cpu, features;
    std::string key_suffix;  // ".<triple>.<cpu>.<features>.llvm<version>.O<n>"

    std::mutex mu;
    std::condition_variable cv;
    std::map<std::string, std::weak_ptr<JitImage>> live;
    std::set<std::string> compiling;
    uint64_t next_id = 0;
};

// One image's compiled code, shared by every context of the process.
struct JitImage {
    Jit *jit;
    JITDylib *jd = nullptr;
    std::shared_ptr<CodeRanges> ranges = std::make_shared<CodeRanges>();
    std::mutex mu;
    std::unordered_map<std::string, void *> symbols;  // the image's entries, then any asked for
    // What XRDMA_SYMBOLS decides on for every load of it, and why it may run
    // only here (LoadedCode::why_pinned).
    std::vector<std::string> imports;
    std::string pinned;

    explicit JitImage(Jit *j) : jit(j) {}
    // Entries are resolved at load; other symbols (the published API's
    // payload functions) on first request.
    void *symbol(const std::string &name)
    {
        std::lock_guard<std::mutex> g(mu);
        auto it = symbols.find(name);
        if (it != symbols.end()) return it->second;
        void *p = nullptr;
        if (auto sym = jit->lljit->lookup(*jd, name))
            p = jitTargetAddressToPointer<void *>(sym->getAddress());
        else
            consumeError(sym.takeError());
        symbols.emplace(name, p);
        return p;
    }
    ~JitImage()
    {
        if (!jd) return;
        if (Error e = jit->lljit->getExecutionSession().removeJITDylib(*jd))
            XRDMA_WARN("unloading JIT code: %s", toString(std::move(e)).c_str());
    }
};

class JitCode : public LoadedCode {
public:
    explicit JitCode(std::shared_ptr<JitImage> img) : img_(std::move(img)) {}
    void *symbol(const std::string &name) const override { return img_->symbol(name); }
    // For fault containment: whether @p pc is an instruction of this code.
    bool contains(uintptr_t pc) const override { return img_->ranges->contains(pc); }

private:
    std::shared_ptr<JitImage> img_;
};

std::string sanitize(std::string s)
{
    for (char &c : s)
        if (!isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
    return s.empty() ? "none" : s;
}

CodeGenOpt::Level codegen_level(unsigned n)
{
    switch (n) {
    case 0: return CodeGenOpt::None;
    case 1: return CodeGenOpt::Less;
    case 2: return CodeGenOpt::Default;
    default: return CodeGenOpt::Aggressive;
    }
}

unsigned opt_level_knob()
{
    unsigned long long v = config_get_ull("XRDMA_JIT_OPT_LEVEL");
    if (v > 3) {
        XRDMA_WARN("XRDMA_JIT_OPT_LEVEL=%llu is above 3; using 3", v);
        v = 3;
    }
    return unsigned(v);
}

// The runtime API (runtime_api.h: the plugin's and what layers above
// registered), bound to the addresses in its table.
SymbolMap runtime_symbols(LLJIT &j)
{
    MangleAndInterner mangle(j.getExecutionSession(), j.getDataLayout());
    SymbolMap m;
    for (const auto &s : runtime_api_symbols())
        m[mangle(s.first)] = JITEvaluatedSymbol(pointerToJITTargetAddress(s.second),
                                                JITSymbolFlags::Exported | JITSymbolFlags::Callable);
    return m;
}

Jit *create_jit(std::string *why)
{
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
    InitializeNativeTargetAsmParser();

    auto jit = std::make_unique<Jit>();
    jit->opt_level = opt_level_knob();
    auto jtmb = JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
        *why = "LLVM cannot target this machine: " + toString(jtmb.takeError());
        return nullptr;
    }
    // PIC: calls and data references to the process go through stubs and a
    // GOT, which reach any address (the process may be far from JIT memory).
    jtmb->setRelocationModel(Reloc::PIC_);
    jtmb->setCodeModel(CodeModel::Small);
    jtmb->setCodeGenOptLevel(codegen_level(jit->opt_level));
    jit->triple = jtmb->getTargetTriple().str();
    jit->cpu = jtmb->getCPU().empty() ? "generic" : jtmb->getCPU();
    jit->features = jtmb->getFeatures().getString();
    jit->jtmb = std::make_unique<JITTargetMachineBuilder>(*jtmb);

    auto cache = std::make_shared<DiskCache>();
    cache->dir = config_get("XRDMA_JIT_CACHE_DIR");
    jit->cache = cache.get();

    auto built = LLJITBuilder()
                     .setJITTargetMachineBuilder(std::move(*jtmb))
                     .setObjectLinkingLayerCreator([](ExecutionSession &es, const Triple &) {
                         return std::make_unique<RTDyldObjectLinkingLayer>(
                             es, [] { return std::make_unique<RangeRecordingMemoryManager>(); });
                     })
                     .setCompileFunctionCreator([cache](JITTargetMachineBuilder b)
                                                    -> Expected<std::unique_ptr<IRCompileLayer::IRCompiler>> {
                         auto tm = b.createTargetMachine();
                         if (!tm) return tm.takeError();
                         return std::make_unique<TMOwningSimpleCompiler>(std::move(*tm), cache.get());
                     })
                     .create();
    if (!built) {
        *why = "cannot create the LLVM JIT: " + toString(built.takeError());
        return nullptr;
    }
    jit->lljit = std::move(*built);
    ExecutionSession &es = jit->lljit->getExecutionSession();
    es.setErrorReporter([](Error e) {
        if (!tl_errors.empty()) tl_errors += "; ";
        tl_errors += toString(std::move(e));
    });

    auto rt = jit->lljit->createJITDylib("xrdma-runtime");
    if (!rt) {
        *why = "cannot create the JIT's runtime library: " + toString(rt.takeError());
        return nullptr;
    }
    jit->runtime = &*rt;
    if (Error e = jit->runtime->define(absoluteSymbols(runtime_symbols(*jit->lljit)))) {
        *why = "cannot define the runtime API for JIT code: " + toString(std::move(e));
        return nullptr;
    }
    auto gen = DynamicLibrarySearchGenerator::GetForCurrentProcess(jit->lljit->getDataLayout().getGlobalPrefix());
    if (!gen) {
        *why = "cannot search this process's symbols: " + toString(gen.takeError());
        return nullptr;
    }
    jit->runtime->addGenerator(std::move(*gen));

    // The features string is long: a short hash of it keeps file names sane.
    auto fh = Sha256::of(jit->features.data(), jit->features.size());
    Hash fhash;
    std::copy(fh.begin(), fh.end(), fhash.begin());
    jit->key_suffix = "." + sanitize(jit->triple) + "." + sanitize(jit->cpu) + "." + hash_hex(fhash, 4) +
                      ".llvm" + sanitize(LLVM_VERSION_STRING) + ".O" + std::to_string(jit->opt_level);
    XRDMA_DEBUG("JIT for %s, cpu %s, opt level %u, object cache %s", jit->triple.c_str(), jit->cpu.c_str(),
                jit->opt_level, cache->dir.empty() ? "off" : cache->dir.c_str());
    static std::shared_ptr<DiskCache> keep;  // lives as long as the JIT
    keep = cache;
    return jit.release();
}

Jit *the_jit(std::string *why)
{
    static std::once_flag once;
    static Jit *jit = nullptr;
    static std::string error;
    std::call_once(once, [] { jit = create_jit(&error); });
    if (!jit && why) *why = error;
    return jit;
}

std::string key_of(const Jit &jit, const Hash &h) { return hash_hex(h) + jit.key_suffix; }

void optimize(JITTargetMachineBuilder &jtmb, unsigned opt_level, Module &m)
{
    if (opt_level == 0) return;
    auto tm = jtmb.createTargetMachine();
    if (!tm) {
        XRDMA_DEBUG("no target machine for IR optimisation: %s", toString(tm.takeError()).c_str());
        return;
    }
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    ModuleAnalysisManager mam;
    PassBuilder pb(tm->get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    OptimizationLevel level = opt_level == 1   ? OptimizationLevel::O1
                              : opt_level == 2 ? OptimizationLevel::O2
                                               : OptimizationLevel::O3;
    pb.buildPerModuleDefaultPipeline(level).run(m, mam);
}

// LLVM's message, on one line and printable: it quotes names and attribute
// values from the (untrusted) bitcode (fuzz_bitcode found raw bytes in one).
std::string first_lines(const std::string &s, size_t max = 400)
{
    std::string out = s.substr(0, max);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    for (char &c : out)
        if (c == '\n') c = ' ';
    return printable(out, max) + (s.size() > max ? "..." : "");
}

// What the module's code binds to outside itself (XRDMA_SYMBOLS decides):
// the functions and variables it declares, LLVM intrinsics aside. Helpers
// that code generation adds (memcpy for a struct copy) are not the code's
// choice and are not checked, on either path.
std::vector<std::string> ir_imports(const Module &m)
{
    std::vector<std::string> out;
    for (const Function &f : m.functions())
        if (f.isDeclaration() && !f.isIntrinsic() && !f.isMaterializable()) out.push_back(f.getName().str());
    for (const GlobalVariable &g : m.globals())
        if (g.isDeclaration() && !g.isMaterializable()) out.push_back(g.getName().str());
    return out;
}

// Why the module's code only means what it means in the process it was
// sent to (see LoadedCode::movable), or "" if it may run in any process:
// writable globals of its own, or imports of target-only state.
std::string why_pinned(const Module &m, const std::vector<std::string> &imports)
{
    std::string pin = policy_target_state_import(imports);
    if (!pin.empty()) return "it calls " + pin;
    for (const GlobalVariable &g : m.globals())
        if (!g.isDeclaration() && !g.isConstant() && !g.getName().startswith("llvm."))
            return "it has writable data: global '" + printable(g.getName().str(), 64) + "'";
    return "";
}

bool has_static_initializers(const Module &m)
{
    for (const char *name : {"llvm.global_ctors", "llvm.global_dtors"}) {
        const GlobalVariable *g = m.getNamedGlobal(name);
        if (g && g->hasInitializer() && !g->getInitializer()->isNullValue()) return true;
    }
    return false;
}

// Parse and check bitcode from an image (@p what names it) for a process
// of @p triple and data layout @p dl: the module, or BAD_CODE.
ucx_ifunc_status_t parse_checked(const uint8_t *data, size_t size, const std::string &what, LLVMContext &ctx,
                                 const std::string &triple, const DataLayout &dl, std::unique_ptr<Module> *out,
                                 std::string *why)
{
    if (size == 0) {
        *why = what + " is empty";
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    MemoryBufferRef ref(StringRef(reinterpret_cast<const char *>(data), size), what);
    auto mod = parseBitcodeFile(ref, ctx);
    if (!mod) {
        *why = what + " is not valid LLVM bitcode: " + first_lines(toString(mod.takeError()));
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    Module &m = **mod;
    std::string verr;
    raw_string_ostream vs(verr);
    if (verifyModule(m, &vs)) {
        vs.flush();
        *why = what + " is invalid IR: " + first_lines(verr);
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    const Triple mt(m.getTargetTriple()), pt(triple);
    if (mt.getArch() != pt.getArch() || mt.getOS() != pt.getOS()) {
        *why = what + " holds a module for '" + printable(m.getTargetTriple(), 64) + "', not for this process (" +
               triple + ")";
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    if (!m.getDataLayout().isDefault() && m.getDataLayout() != dl) {
        *why = what + " has data layout '" + printable(m.getDataLayoutStr(), 200) + "', this process needs '" +
               dl.getStringRepresentation() + "'";
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    if (has_static_initializers(m)) {
        *why = what + " has static constructors or destructors, which injected code may not have";
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    *out = std::move(*mod);
    return UCX_IFUNC_OK;
}

// Parse, check and add the bitcode of @p part to @p jd (compiled on lookup):
// the in-process compile (XRDMA_JIT_HELPER=none).
ucx_ifunc_status_t add_bitcode(Jit &jit, JITDylib &jd, const ImageView &img, const PartView &part,
                               const std::string &key, std::vector<std::string> *defined, std::string *why)
{
    const std::string what = "bitcode part for " + std::string(part.triple);
    auto ctx = std::make_unique<LLVMContext>();
    std::unique_ptr<Module> mod;
    ucx_ifunc_status_t st = parse_checked(part.data, part.size, what, *ctx, jit.triple,
                                          jit.lljit->getDataLayout(), &mod, why);
    if (st != UCX_IFUNC_OK) return st;
    Module &m = *mod;
    for (std::string_view e : img.entries) {
        const Function *f = m.getFunction(StringRef(e.data(), e.size()));
        if (f && !f->isDeclaration()) defined->emplace_back(e);
    }
    optimize(*jit.jtmb, jit.opt_level, m);
    m.setModuleIdentifier(kModulePrefix + key);
    if (Error e = jit.lljit->addIRModule(jd, ThreadSafeModule(std::move(mod), std::move(ctx)))) {
        *why = what + " cannot be added to the JIT: " + first_lines(toString(std::move(e)));
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    return UCX_IFUNC_OK;
}

// The entries an object from the disk cache defines; false if it is no
// object this LLVM can read.
bool object_entries(MemoryBufferRef buf, const ImageView &img, std::vector<std::string> *defined)
{
    auto obj = object::ObjectFile::createObjectFile(buf);
    if (!obj) {
        consumeError(obj.takeError());
        return false;
    }
    for (const object::SymbolRef &s : (*obj)->symbols()) {
        auto flags = s.getFlags();
        auto name = s.getName();
        if (!flags || !name) {
            if (!flags) consumeError(flags.takeError());
            if (!name) consumeError(name.takeError());
            return false;
        }
        if (*flags & object::SymbolRef::SF_Undefined) continue;
        if (img.has_entry(std::string_view(name->data(), name->size()))) defined->push_back(name->str());
    }
    return true;
}

// The libraries a library-list part names are loaded before the bitcode is
// linked: their constructors run, so the policy decides on each shared
// object an entry comes to (library_path.h). What is found nowhere loads
// nothing: build() warns about it.
ucx_ifunc_status_t check_libraries(const ImageView &img, std::string *why)
{
    for (const std::string &lib : listed_libraries(img)) {
        for (const std::string &obj : resolve_library(lib).objects) {
            ucx_ifunc_status_t st = policy_check_library(obj, why);
            if (st == UCX_IFUNC_OK) continue;
            if (obj != lib) *why = "library list entry '" + lib + "': " + *why;
            return st;
        }
    }
    return UCX_IFUNC_OK;
}

// Load the libraries the image lists (the published API's <name>.deps) into
// the process, where the symbol search finds them: each entry resolved as
// the link editor resolves it (a linker script such as libc.so or GCC's
// libgcc_s.so followed to the shared objects it names; library_path.h). A
// library already loaded is opened again (nothing runs twice), which makes
// its symbols global if they were not. Like the published API, one that
// cannot be found or loaded is warned about: the code fails to link only if
// it needs a symbol of it.
void load_libraries(const ImageView &img, const std::string &label)
{
    for (const std::string &lib : listed_libraries(img)) {
        const ResolvedLibrary r = resolve_library(lib);
        for (const std::string &obj : r.objects) {
            if (dlopen(obj.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
                XRDMA_DEBUG("%s: loaded %s for library list entry '%s'", label.c_str(), obj.c_str(), lib.c_str());
                continue;
            }
            const char *err = dlerror();
            XRDMA_WARN("%s: library list entry '%s': cannot load %s (%s); going on without it", label.c_str(),
                       lib.c_str(), obj.c_str(), err ? err : "dlopen failed");
        }
        for (const std::string &a : r.archives)
            XRDMA_DEBUG("%s: library list entry '%s' names the static archive %s: nothing to load", label.c_str(),
                        lib.c_str(), a.c_str());
        for (const ResolvedLibrary::Unfound &u : r.unfound) {
            // What no directory holds, the dynamic loader may still find
            // (LD_LIBRARY_PATH, its cache), where the policy lets injected
            // code load new libraries.
            std::string ignored;
            if (u.name.find('/') == std::string::npos && policy_check_library(u.name, &ignored) == UCX_IFUNC_OK &&
                dlopen(u.name.c_str(), RTLD_NOW | RTLD_GLOBAL))
                continue;
            dlerror();
            const std::string what = u.name == lib ? "" : ": " + u.name;
            XRDMA_WARN("%s: library list entry '%s'%s: %s; going on without it (code that needs a symbol of it "
                       "fails to link)", label.c_str(), lib.c_str(), what.c_str(), u.why.c_str());
        }
    }
}

// What the policy needs of the bitcode, read here: its imports, from the
// declarations of a lazily read module (function bodies are skipped, but a
// large constant is read: a compile in the helper returns the same, so a
// target avoids this). Bitcode that does not even parse is reported by the
// compile.
void read_imports(const PartView &part, const std::string &label, std::vector<std::string> *imports,
                  std::string *pinned)
{
    *pinned = "its bitcode does not parse";
    LLVMContext lctx;
    MemoryBufferRef ref(StringRef(reinterpret_cast<const char *>(part.data), part.size), label);
    auto lazy = getLazyBitcodeModule(ref, lctx);
    if (!lazy) {
        consumeError(lazy.takeError());
        return;
    }
    *imports = ir_imports(**lazy);
    *pinned = why_pinned(**lazy, *imports);
}

// What the helper returns beside the object (compile_object()): why the code
// is pinned, then its imports, each as <length>:<bytes> (names may hold any
// byte).
std::string encode_imports(const std::vector<std::string> &imports, const std::string &pinned)
{
    std::string meta = std::to_string(pinned.size()) + ":" + pinned;
    for (const std::string &i : imports) meta += std::to_string(i.size()) + ":" + i;
    return meta;
}

// False if @p meta is not what encode_imports() writes.
bool decode_imports(const std::string &meta, std::vector<std::string> *imports, std::string *pinned)
{
    imports->clear();
    for (size_t at = 0, n = 0; at < meta.size(); ++n) {
        size_t colon = meta.find(':', at);
        if (colon == std::string::npos || colon == at || colon - at > 10) return false;
        unsigned long long len = 0;
        for (size_t i = at; i < colon; ++i) {
            if (meta[i] < '0' || meta[i] > '9') return false;
            len = len * 10 + unsigned(meta[i] - '0');
        }
        if (len > meta.size() - colon - 1) return false;
        (n == 0 ? *pinned : imports->emplace_back()) = meta.substr(colon + 1, len);
        at = colon + 1 + len;
    }
    return true;
}

// @p checked: the imports were read and checked already (in @p ji_imports,
// @p ji_pinned); else they come with the helper's object, or are read now,
// and are checked before anything is linked (unless @p trusted).
ucx_ifunc_status_t build(Jit &jit, const ImageView &img, const PartView &part, const std::string &label,
                         const std::string &key, bool trusted, bool checked, std::vector<std::string> imports,
                         std::string pinned, std::shared_ptr<JitImage> *out, std::string *why)
{
    auto ji = std::make_shared<JitImage>(&jit);
    auto check = [&]() {
        checked = true;
        return trusted ? UCX_IFUNC_OK : policy_check_imports(imports, why);
    };
    uint64_t id;
    {
        std::lock_guard<std::mutex> g(jit.mu);
        id = jit.next_id++;
    }
    auto jd = jit.lljit->createJITDylib("xrdma:" + label + "#" + std::to_string(id));
    if (!jd) {
        *why = "cannot create a JIT library: " + toString(jd.takeError());
        return UCX_IFUNC_ERR_LINK;
    }
    ji->jd = &*jd;
    ji->jd->addToLinkOrder(*jit.runtime);
    ji->jd->addToLinkOrder(jit.lljit->getMainJITDylib());

    std::vector<std::string> defined;
    bool from_disk = false;
    // A cached object is used with its imports file; without one only by a
    // target that reads bitcode itself (XRDMA_JIT_HELPER=none).
    auto meta_file = jit.cache->dir.empty() ? nullptr
                                            : MemoryBuffer::getFile(jit.cache->imports_path_of(key), false, false);
    if (!jit.cache->dir.empty() && (meta_file || !jit_helper_enabled())) {
        const std::string path = jit.cache->path_of(key);
        auto buf = MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
        if (buf) {
            if (object_entries((*buf)->getMemBufferRef(), img, &defined)) {
                if (Error e = jit.lljit->addObjectFile(*ji->jd, std::move(*buf))) {
                    XRDMA_WARN("%s is unusable (%s): compiling again", path.c_str(), toString(std::move(e)).c_str());
                    defined.clear();
                } else {
                    from_disk = true;
                }
            } else {
                XRDMA_WARN("%s is not an object file: removed, compiling again", path.c_str());
                unlink(path.c_str());
                defined.clear();
            }
        }
    }
    if (from_disk && meta_file && !checked) {
        if (!decode_imports((*meta_file)->getBuffer().str(), &imports, &pinned)) {
            *why = jit.cache->imports_path_of(key) + " is damaged: remove it";
            return UCX_IFUNC_ERR_LINK;
        }
        ucx_ifunc_status_t st = check();
        if (st != UCX_IFUNC_OK) return st;
    }
    bool compiled_here = false;
    if (!checked && !from_disk && !jit_helper_enabled()) {  // compiled here: read here
        read_imports(part, label, &imports, &pinned);
        ucx_ifunc_status_t st = check();
        if (st != UCX_IFUNC_OK) return st;
    }
    if (!from_disk && jit_helper_enabled()) {
        // Out of process (jit_helper.h): an abort, crash or runaway compile
        // ends only this image. The object is linked like a cached one.
        const std::string what = "bitcode part for " + std::string(part.triple);
        std::string object, meta;
        ucx_ifunc_status_t st = jit_helper_compile(key, part.data, part.size, jit.opt_level, what, &object, &meta, why);
        if (st != UCX_IFUNC_OK) return st;
        if (!checked) {
            if (!decode_imports(meta, &imports, &pinned)) {
                *why = "the compile helper returned no imports for the " + what;
                return UCX_IFUNC_ERR_LINK;
            }
            if ((st = check()) != UCX_IFUNC_OK) return st;
        }
        auto buf = MemoryBuffer::getMemBufferCopy(object, kModulePrefix + key);
        if (!object_entries(buf->getMemBufferRef(), img, &defined)) {
            *why = "the compile helper returned no object file for the " + what;
            return UCX_IFUNC_ERR_LINK;
        }
        if (Error e = jit.lljit->addObjectFile(*ji->jd, std::move(buf))) {
            *why = "the object compiled from the " + what + " cannot be added: " + first_lines(toString(std::move(e)));
            return UCX_IFUNC_ERR_LINK;
        }
        n_compiles++;
        compiled_here = true;
        if (!jit.cache->dir.empty()) {
            jit.cache->store_imports(key, meta);  // first: an object is used only with it
            jit.cache->store(key, MemoryBufferRef(object, key));
        }
    } else if (!from_disk) {
        if (!jit.cache->dir.empty()) jit.cache->store_imports(key, encode_imports(imports, pinned));
        ucx_ifunc_status_t st = add_bitcode(jit, *ji->jd, img, part, key, &defined, why);
        if (st != UCX_IFUNC_OK) return st;
    }
    if (!checked) {  // from disk without an imports file, compiled in process
        read_imports(part, label, &imports, &pinned);
        ucx_ifunc_status_t st = check();
        if (st != UCX_IFUNC_OK) return st;
    }
    ji->imports = std::move(imports);
    ji->pinned = std::move(pinned);

    load_libraries(img, label);

    // Compile (unless the object came from disk) and link every entry now,
    // so that errors reach the origin as errors of this invocation.
    tl_linking = ji->ranges;
    tl_errors.clear();
    for (const std::string &name : defined) {
        auto sym = jit.lljit->lookup(*ji->jd, name);
        if (!sym) {
            std::string msg = toString(sym.takeError());
            *why = "linking the bitcode part for " + std::string(part.triple) + " failed: " +
                   first_lines(tl_errors.empty() ? msg : tl_errors + "; " + msg);
            tl_linking.reset();
            return UCX_IFUNC_ERR_LINK;
        }
        ji->symbols[name] = jitTargetAddressToPointer<void *>(sym->getAddress());
    }
    tl_linking.reset();
    if (from_disk) n_cache_loads++;
    XRDMA_DEBUG("%s bitcode of %s for %s (%zu entries)",
                from_disk ? "loaded cached" : compiled_here ? "compiled (helper)" : "compiled", label.c_str(),
                jit.triple.c_str(), defined.size());
    *out = std::move(ji);
    return UCX_IFUNC_OK;
}

// The compile helper's work (jit_helper.h): bitcode to an object file for
// this machine, with the checks of the in-process path.
ucx_ifunc_status_t compile_object(const uint8_t *bc, size_t size, unsigned opt_level, const std::string &what,
                                  std::string *object, std::string *meta, std::string *why)
{
    static std::once_flag once;
    std::call_once(once, [] {
        InitializeNativeTarget();
        InitializeNativeTargetAsmPrinter();
        InitializeNativeTargetAsmParser();
    });
    auto jtmb = JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
        *why = "LLVM cannot target this machine: " + toString(jtmb.takeError());
        return UCX_IFUNC_ERR_LINK;
    }
    jtmb->setRelocationModel(Reloc::PIC_);  // as create_jit()
    jtmb->setCodeModel(CodeModel::Small);
    jtmb->setCodeGenOptLevel(codegen_level(std::min(opt_level, 3u)));
    auto tm = jtmb->createTargetMachine();
    if (!tm) {
        *why = "LLVM cannot target this machine: " + toString(tm.takeError());
        return UCX_IFUNC_ERR_LINK;
    }
    LLVMContext ctx;
    std::unique_ptr<Module> m;
    ucx_ifunc_status_t st = parse_checked(bc, size, what, ctx, jtmb->getTargetTriple().str(),
                                          (*tm)->createDataLayout(), &m, why);
    if (st != UCX_IFUNC_OK) return st;
    const std::vector<std::string> imports = ir_imports(*m);  // before the optimiser adds or drops any
    *meta = encode_imports(imports, why_pinned(*m, imports));
    optimize(*jtmb, std::min(opt_level, 3u), *m);
    if (m->getDataLayout().isDefault()) m->setDataLayout((*tm)->createDataLayout());
    SimpleCompiler compile(**tm);
    auto obj = compile(*m);
    if (!obj) {
        *why = what + " cannot be compiled: " + first_lines(toString(obj.takeError()));
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    object->assign((*obj)->getBufferStart(), (*obj)->getBufferSize());
    return UCX_IFUNC_OK;
}

}  // namespace

// The module's functions, behind struct JitModule (loader_jit.h); distinct
// names from jit_module.cc's, which forward to them.
namespace jit {

ucx_ifunc_status_t load_bitcode(const ImageView &img, const PartView &part, const std::string &label,
                                std::unique_ptr<LoadedCode> *out, std::string *why, bool trusted)
{
    // XRDMA_SYMBOLS decides for every load, whether the code is compiled,
    // shared or read from the disk cache (written under another policy
    // perhaps), on the code's imports.
    if (!trusted) {
        ucx_ifunc_status_t st = check_libraries(img, why);
        if (st != UCX_IFUNC_OK) return st;
    }
    std::string err;
    Jit *jit = the_jit(&err);
    if (!jit) {
        *why = "this target cannot compile bitcode: " + err;
        return UCX_IFUNC_ERR_LINK;
    }
    const std::string key = key_of(*jit, img.hash);
    // With the compile helper the target never reads bitcode itself: LLVM's
    // reader aborts the process on some malformed input (fuzz_bitcode found
    // one), and a large constant takes long to read (compile_queue.h). The
    // helper returns the imports with the object; the policy decides on them
    // before anything is linked. Compiling in process (XRDMA_JIT_HELPER=none)
    // they are read first, and a refused image is not compiled.
    std::vector<std::string> imports;
    std::string pinned;
    const bool checked = !jit_helper_enabled();
    if (checked) {
        read_imports(part, label, &imports, &pinned);
        if (!trusted) {
            ucx_ifunc_status_t st = policy_check_imports(imports, why);
            if (st != UCX_IFUNC_OK) return st;
        }
    }
    auto result = [&](ucx_ifunc_status_t st, const std::shared_ptr<JitImage> &ji) {
        if (st == UCX_IFUNC_OK) {
            *out = std::make_unique<JitCode>(ji);
            (*out)->why_pinned = ji->pinned;
            (*out)->movable = ji->pinned.empty();
            (*out)->imports = ji->imports;
            std::sort((*out)->imports.begin(), (*out)->imports.end());
            (*out)->imports_known = true;
        }
        return st;
    };
    {
        std::unique_lock<std::mutex> lk(jit->mu);
        for (;;) {
            auto it = jit->live.find(key);
            if (it != jit->live.end()) {
                if (auto shared = it->second.lock()) {
                    lk.unlock();
                    if (!checked && !trusted) {
                        ucx_ifunc_status_t st = policy_check_imports(shared->imports, why);
                        if (st != UCX_IFUNC_OK) return st;
                    }
                    n_shared++;
                    return result(UCX_IFUNC_OK, shared);
                }
                jit->live.erase(it);
            }
            if (!jit->compiling.count(key)) break;
            jit->cv.wait(lk);  // another thread compiles this image: take its result
        }
        jit->compiling.insert(key);
    }
    std::shared_ptr<JitImage> ji;
    ucx_ifunc_status_t st = build(*jit, img, part, label, key, trusted, checked, std::move(imports),
                                  std::move(pinned), &ji, why);
    {
        std::lock_guard<std::mutex> g(jit->mu);
        jit->compiling.erase(key);
        if (st == UCX_IFUNC_OK) jit->live[key] = ji;
    }
    jit->cv.notify_all();
    return result(st, ji);
}

// A compile the target's progress need not wait for (compile_queue.h): sent
// to the helper now if the image is neither compiled in this process nor on
// disk. UCX_IFUNC_INPROGRESS with its @p key; UCX_IFUNC_OK for "load it now"
// (no compile, or no helper). The bitcode is not read here (XRDMA_SYMBOLS
// decides on the imports the compile returns, before anything is linked).
ucx_ifunc_status_t compile_start(const ImageView &img, const PartView &part, const std::string &,
                                 std::string *key)
{
    if (!jit_helper_enabled()) return UCX_IFUNC_OK;
    Jit *jit = the_jit(nullptr);
    if (!jit) return UCX_IFUNC_OK;
    *key = key_of(*jit, img.hash);
    {
        std::lock_guard<std::mutex> g(jit->mu);
        auto it = jit->live.find(*key);
        if ((it != jit->live.end() && !it->second.expired()) || jit->compiling.count(*key)) return UCX_IFUNC_OK;
    }
    if (!jit->cache->dir.empty() && access(jit->cache->path_of(*key).c_str(), R_OK) == 0 &&
        access(jit->cache->imports_path_of(*key).c_str(), R_OK) == 0)
        return UCX_IFUNC_OK;
    if (jit_helper_done(*key)) return UCX_IFUNC_OK;  // compiled: load_bitcode() takes it
    jit_helper_submit(*key, part.data, part.size, jit->opt_level, "bitcode part for " + std::string(part.triple));
    return UCX_IFUNC_INPROGRESS;
}

JitCounters jit_counters() { return JitCounters{n_compiles.load(), n_cache_loads.load(), n_shared.load()}; }

ucx_ifunc_status_t bitcode_entries(const uint8_t *data, size_t size, std::vector<std::string> *entries,
                                   std::string *why)
{
    LLVMContext ctx;
    MemoryBufferRef ref(StringRef(reinterpret_cast<const char *>(data), size), "bitcode");
    auto mod = parseBitcodeFile(ref, ctx);
    if (!mod) {
        *why = "not valid LLVM bitcode: " + first_lines(toString(mod.takeError()));
        return UCX_IFUNC_ERR_BAD_CODE;
    }
    const std::string marker = "__xrdma_entry_";
    for (const GlobalVariable &g : (*mod)->globals()) {
        if (g.isDeclaration() || !g.getName().startswith(marker)) continue;
        std::string name = g.getName().drop_front(marker.size()).str();
        const Function *f = (*mod)->getFunction(name);
        if (!f || f->isDeclaration()) {
            *why = "entry " + name + " has a marker but no function definition";
            return UCX_IFUNC_ERR_NO_ENTRY;
        }
        entries->push_back(name);
    }
    std::sort(entries->begin(), entries->end());
    return UCX_IFUNC_OK;
}

std::string jit_target_description()
{
    std::string err;
    Jit *jit = the_jit(&err);
    return jit ? jit->triple + " " + jit->cpu : "unavailable: " + err;
}

std::string jit_cache_key(const Hash &hash)
{
    Jit *jit = the_jit(nullptr);
    return jit ? key_of(*jit, hash) : std::string();
}

}  // namespace jit

}  // namespace xrdma

// The compile helper program's entry (xrdma-jit-helper loads this module and
// calls it): serve compile requests on socket @p fd.
extern "C" __attribute__((visibility("default"))) int xrdma_jit_helper_main(int fd)
{
    return xrdma::jit_helper_serve(fd, xrdma::compile_object);
}

// The module's table (built with -fvisibility=hidden: these two are its only
// exports).
extern "C" __attribute__((visibility("default"))) const xrdma::JitModule *xrdma_jit_module_v1(void)
{
    static const xrdma::JitModule table = {
        sizeof(xrdma::JitModule), xrdma::kJitModuleVersion, PACKAGE_VERSION,
        xrdma::jit::load_bitcode, xrdma::jit::jit_counters, xrdma::jit::bitcode_entries,
        xrdma::jit::jit_target_description, xrdma::jit::jit_cache_key,
        xrdma::jit::compile_start, xrdma::jit_helper_poll, xrdma::jit_helper_done, xrdma::jit_helper_release,
    };
    return &table;
}
