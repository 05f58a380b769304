// The compile helper process: both sides of its socket (jit_helper.h).
//
// Requests and answers on one AF_UNIX stream socket (the helper's stdin):
//   request  u32 magic 'XJH1', u32 opt level, u32 |what|, u64 |bitcode|, what, bitcode
//   answer   i32 status, u32 |why|, u64 |object|, u64 |meta|, why, object, meta
//            (meta: what the module imports, for the target's symbol policy)
// The helper's stderr is a pipe the target reads while it waits: what LLVM
// printed before it aborted ends up in the op's error message.
#include "load/jit_helper.h"

#include "image/image.h"
#include "xrdma_common/config.h"
#include "xrdma_common/log.h"
#include "xrdma_config.h"
#include "ucx_ifunc/runtime.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace xrdma {

namespace {

constexpr uint32_t kMagic = 0x31484a58;           // "XJH1"
constexpr uint64_t kMaxBytes = uint64_t(1) << 31;  // per bitcode or object
constexpr const char kHelperFile[] = "xrdma-jit-helper";
constexpr size_t kAnswerHeader = 24;  // status, |why|, |object|, |meta|

// ---- both sides ------------------------------------------------------

bool send_all(int fd, const void *p, size_t n)
{
    const char *c = static_cast<const char *>(p);
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);  // a dead helper: EPIPE, not SIGPIPE
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= size_t(k);
    }
    return true;
}

void put(std::string *out, const void *p, size_t n) { out->append(static_cast<const char *>(p), n); }

// ---- the helper's side -----------------------------------------------

bool read_all(int fd, void *p, size_t n)
{
    char *c = static_cast<char *>(p);
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= size_t(k);
    }
    return true;
}

// ---- the target's side -------------------------------------------------

double now()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

std::string dir_of(const void *addr)
{
    Dl_info info{};
    if (!dladdr(const_cast<void *>(addr), &info) || !info.dli_fname) return "";
    std::string p = info.dli_fname;
    size_t slash = p.rfind('/');
    return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::string file_of(const void *addr)
{
    Dl_info info{};
    return dladdr(const_cast<void *>(addr), &info) && info.dli_fname ? info.dli_fname : "";
}

// One compile: its request (header and bitcode, written as the socket
// takes it) and the result it ends in.
struct Request {
    std::string key, what;
    std::string out;  // the request's bytes
    size_t sent = 0;
};

struct Result {
    bool done = false;
    ucx_ifunc_status_t status = UCX_IFUNC_INPROGRESS;
    std::string object, meta, why;
    unsigned refs = 0;  // jit_helper_submit()s not yet released
    unsigned waiting = 0;  // compile()s waiting for it
};

class Helper {
public:
    void submit(const std::string &key, const uint8_t *bc, size_t size, unsigned opt, const std::string &what,
                bool ref)
    {
        std::lock_guard<std::mutex> g(mu_);
        queue(key, bc, size, opt, what, ref);
    }

    unsigned poll_now()
    {
        std::unique_lock<std::mutex> g(mu_, std::try_to_lock);
        if (!g.owns_lock()) return 0;  // a thread waits for a compile: it moves the queue along
        return pump(0);
    }

    bool done(const std::string &key)
    {
        std::lock_guard<std::mutex> g(mu_);
        auto it = results_.find(key);
        return it != results_.end() && it->second.done;
    }

    void release(const std::string &key)
    {
        std::lock_guard<std::mutex> g(mu_);
        auto it = results_.find(key);
        if (it == results_.end()) return;
        if (it->second.refs) it->second.refs--;
        if (!it->second.refs && it->second.done) results_.erase(it);
    }

    ucx_ifunc_status_t compile(const std::string &key, const uint8_t *bc, size_t size, unsigned opt,
                               const std::string &what, std::string *object, std::string *meta, std::string *why)
    {
        std::lock_guard<std::mutex> g(mu_);
        queue(key, bc, size, opt, what, false);
        auto it = results_.find(key);
        it->second.waiting++;
        while (!it->second.done) pump(-1);
        Result &r = it->second;
        r.waiting--;
        ucx_ifunc_status_t st = r.status;
        if (st == UCX_IFUNC_OK) {
            *object = r.object;
            *meta = r.meta;
        } else {
            *why = r.why;
        }
        if (!r.refs && !r.waiting) results_.erase(it);  // nobody else waits for it
        return st;
    }

private:
    // Queue a compile of @p key unless one is queued or done.
    void queue(const std::string &key, const uint8_t *bc, size_t size, unsigned opt, const std::string &what,
               bool ref)
    {
        auto ins = results_.emplace(key, Result{});
        if (ref) ins.first->second.refs++;
        if (!ins.second) return;
        if (size > kMaxBytes) {
            ins.first->second.done = true;
            ins.first->second.status = UCX_IFUNC_ERR_BAD_CODE;
            ins.first->second.why = what + " is too large to compile";
            return;
        }
        Request rq;
        rq.key = key;
        rq.what = what;
        uint32_t hdr[3] = {kMagic, opt, uint32_t(what.size())};
        uint64_t n = size;
        rq.out.reserve(sizeof(hdr) + sizeof(n) + what.size() + size);
        put(&rq.out, hdr, sizeof(hdr));
        put(&rq.out, &n, sizeof(n));
        rq.out += what;
        put(&rq.out, bc, size);
        requests_.push_back(std::move(rq));
    }

    // The request in front ended with @p st.
    unsigned finish(ucx_ifunc_status_t st, std::string object, std::string why, std::string meta = "")
    {
        Result &r = results_[requests_.front().key];
        r.done = true;
        r.status = st;
        r.object = std::move(object);
        r.meta = std::move(meta);
        r.why = std::move(why);
        if (!r.refs && !r.waiting) results_.erase(requests_.front().key);  // all who asked are gone
        requests_.pop_front();
        started_ = false;
        return 1;
    }

    // Move the front request along: wait up to @p wait_ms (-1: until
    // something happens) for the helper; the number of requests finished.
    unsigned pump(int wait_ms)
    {
        if (requests_.empty()) return 0;
        Request &rq = requests_.front();
        if (!started_) {
            if (pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == pid_) {  // died since (killed from outside)
                pid_ = -1;
                stop();
            }
            if (pid_ < 0) {
                std::string why;
                ucx_ifunc_status_t st = start(&why);
                if (st != UCX_IFUNC_OK) return finish(st, "", why);
            }
            started_ = true;
            const double limit = atof(config_get("XRDMA_JIT_TIMEOUT"));
            deadline_ = limit > 0 ? now() + limit : 0;
            ans_.clear();
            want_ = kAnswerHeader;
            have_header_ = false;
            err_tail_.clear();
        }
        if (deadline_ > 0) {
            double left = deadline_ - now();
            if (left <= 0) {
                stop();
                return finish(UCX_IFUNC_ERR_BAD_CODE, "",
                              "compiling " + rq.what + " took longer than XRDMA_JIT_TIMEOUT=" +
                                  config_get("XRDMA_JIT_TIMEOUT") + " s: the compiler was stopped");
            }
            if (wait_ms < 0 || left * 1000 < wait_ms) wait_ms = int(left * 1000) + 1;
        }
        const bool writing = rq.sent < rq.out.size();
        struct pollfd pf[2] = {{fd_, short(POLLIN | (writing ? POLLOUT : 0)), 0}, {err_fd_, POLLIN, 0}};
        int r = poll(pf, 2, wait_ms);
        if (r < 0 && errno == EINTR) return 0;
        if (r < 0) return died("while compiling " + rq.what);
        if (pf[1].revents) drain_stderr();
        if (writing && (pf[0].revents & (POLLOUT | POLLERR | POLLHUP))) {
            while (rq.sent < rq.out.size()) {  // a dead helper: EPIPE, not SIGPIPE
                ssize_t k = send(fd_, rq.out.data() + rq.sent, rq.out.size() - rq.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno == EINTR) continue;
                if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                if (k <= 0) return died("while receiving " + rq.what);
                rq.sent += size_t(k);
            }
            if (rq.sent == rq.out.size()) std::string().swap(rq.out);  // sent: free the copy
        }
        if (!(pf[0].revents & (POLLIN | POLLERR | POLLHUP))) return 0;
        while (ans_.size() < want_) {
            char buf[65536];
            ssize_t k = recv(fd_, buf, std::min(sizeof(buf), want_ - ans_.size()), MSG_DONTWAIT);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
            if (k <= 0) return died("while compiling " + rq.what);
            ans_.append(buf, size_t(k));
            if (!have_header_ && ans_.size() >= kAnswerHeader) {
                uint32_t why_len;
                uint64_t obj_len, meta_len;
                memcpy(&why_len, ans_.data() + 4, 4);
                memcpy(&obj_len, ans_.data() + 8, 8);
                memcpy(&meta_len, ans_.data() + 16, 8);
                if (why_len > 65536 || obj_len > kMaxBytes || meta_len > kMaxBytes) return died("(malformed answer)");
                want_ = kAnswerHeader + size_t(why_len) + size_t(obj_len) + size_t(meta_len);
                ans_.reserve(want_);
                have_header_ = true;
            }
        }
        int32_t status;
        uint32_t why_len;
        uint64_t obj_len;
        memcpy(&status, ans_.data(), 4);
        memcpy(&why_len, ans_.data() + 4, 4);
        memcpy(&obj_len, ans_.data() + 8, 8);
        std::string ans;
        ans.swap(ans_);
        if (status != UCX_IFUNC_OK) return finish(ucx_ifunc_status_t(status), "", ans.substr(kAnswerHeader, why_len));
        const size_t obj_at = kAnswerHeader + why_len;
        return finish(UCX_IFUNC_OK, ans.substr(obj_at, obj_len), "", ans.substr(obj_at + obj_len));
    }

private:
    // Where the helper program is: XRDMA_JIT_HELPER, else beside this module
    // (installed: both in pkglibdir) or one folder up (the build tree, where
    // the module is in .libs), else the configured pkglibdir.
    std::string helper_path(std::string *tried)
    {
        std::string env = config_get("XRDMA_JIT_HELPER");
        if (!env.empty()) return env;
        std::string dir = dir_of(reinterpret_cast<const void *>(&jit_helper_compile));
        std::vector<std::string> candidates;
        if (!dir.empty()) {
            candidates.push_back(dir + "/" + kHelperFile);
            candidates.push_back(dir + "/../" + kHelperFile);
        }
        candidates.push_back(std::string(XRDMA_PKGLIBDIR) + "/" + kHelperFile);
        for (const std::string &c : candidates) {
            if (access(c.c_str(), X_OK) == 0) return c;
            *tried += (tried->empty() ? "" : ", ") + c;
        }
        return "";
    }

    ucx_ifunc_status_t start(std::string *why)
    {
        std::string tried;
        const std::string path = helper_path(&tried);
        if (path.empty()) {
            *why = "cannot compile bitcode: the compile helper " + std::string(kHelperFile) +
                   " is not installed (looked for " + tried + "; XRDMA_JIT_HELPER names it)";
            return UCX_IFUNC_ERR_LINK;
        }
        // The helper loads this library and this module as they are here.
        const std::string lib = file_of(reinterpret_cast<const void *>(&xrdma_reply));
        const std::string module = file_of(reinterpret_cast<const void *>(&jit_helper_compile));
        unsigned long long mib = config_get_ull("XRDMA_JIT_MEMORY_LIMIT");
        int sv[2], ep[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            *why = std::string("cannot start the compile helper: socketpair: ") + strerror(errno);
            return UCX_IFUNC_ERR_LINK;
        }
        if (pipe2(ep, O_CLOEXEC) != 0) {
            *why = std::string("cannot start the compile helper: pipe: ") + strerror(errno);
            close(sv[0]);
            close(sv[1]);
            return UCX_IFUNC_ERR_LINK;
        }
        // posix_spawn (a vfork, no copy of the target's page tables, nothing
        // of the target runs in the child); the helper limits itself and
        // arranges to die with the target (jit_helper_main.cc): with the
        // thread that started it, in fact, so a helper started by a thread
        // that has ended since is found dead and started again.
        const std::string limit = std::to_string(mib), parent = std::to_string(getpid());
        const char *argv[] = {path.c_str(), lib.c_str(), module.c_str(), limit.c_str(), parent.c_str(), nullptr};
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
        posix_spawn_file_actions_adddup2(&fa, ep[1], 2);
        posix_spawn_file_actions_addclosefrom_np(&fa, 3);  // none of the target's sockets
        pid_t pid = -1;
        int rc = posix_spawn(&pid, path.c_str(), &fa, nullptr, const_cast<char *const *>(argv), environ);
        posix_spawn_file_actions_destroy(&fa);
        close(sv[1]);
        close(ep[1]);
        if (rc != 0) {
            *why = "cannot start the compile helper " + path + ": " + strerror(rc);
            close(sv[0]);
            close(ep[0]);
            return UCX_IFUNC_ERR_LINK;
        }
        fcntl(ep[0], F_SETFL, O_NONBLOCK);
        pid_ = pid;
        fd_ = sv[0];
        err_fd_ = ep[0];
        XRDMA_DEBUG("started the compile helper %s (pid %d)", path.c_str(), int(pid));
        return UCX_IFUNC_OK;
    }

    void drain_stderr()
    {
        char buf[4096];
        ssize_t k;
        while ((k = read(err_fd_, buf, sizeof(buf))) > 0) {
            err_tail_.append(buf, size_t(k));
            if (err_tail_.size() > 2048) err_tail_.erase(0, err_tail_.size() - 2048);
        }
    }

    // Kill and reap the helper (if running) and close its descriptors;
    // returns its wait status (-1: none).
    int stop()
    {
        int status = -1;
        if (pid_ > 0) {
            kill(pid_, SIGKILL);
            while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
        if (err_fd_ >= 0) drain_stderr();
        if (fd_ >= 0) close(fd_);
        if (err_fd_ >= 0) close(err_fd_);
        pid_ = -1;
        fd_ = err_fd_ = -1;
        return status;
    }

    // The helper died (or must): the request in front fails.
    unsigned died(const std::string &when)
    {
        // It may still be writing its last words: give it a moment to exit.
        for (int i = 0; i < 100 && pid_ > 0; ++i) {
            int st;
            if (waitpid(pid_, &st, WNOHANG) == pid_) {
                pid_ = -1;
                stop();
                return finish(UCX_IFUNC_ERR_BAD_CODE, "", report(st, when));
            }
            usleep(1000);
        }
        return finish(UCX_IFUNC_ERR_BAD_CODE, "", report(stop(), when));
    }

    std::string report(int status, const std::string &when)
    {
        std::string how = "died";
        if (status != -1 && WIFSIGNALED(status)) {
            int s = WTERMSIG(status);
            how = "was killed by signal " + std::to_string(s) + " (" + strsignal(s) + ")";
        } else if (status != -1 && WIFEXITED(status)) {
            how = "exited with status " + std::to_string(WEXITSTATUS(status));
        }
        std::string last = err_tail_;
        while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
        size_t nl = last.rfind('\n');
        if (nl != std::string::npos && last.size() - nl < 40 && nl > 0) nl = last.rfind('\n', nl - 1);
        if (nl != std::string::npos) last.erase(0, nl + 1);
        for (char &c : last)
            if (c == '\n') c = ' ';
        last = printable(last, last.size());  // what LLVM printed may quote the bitcode
        return "the bitcode compiler " + how + " " + when + (last.empty() ? "" : ": " + last) +
               " (it is started again for the next image)";
    }

    std::mutex mu_;
    pid_t pid_ = -1;
    int fd_ = -1, err_fd_ = -1;
    std::string err_tail_;
    std::deque<Request> requests_;  // the front one is the helper's once started_
    std::unordered_map<std::string, Result> results_;
    bool started_ = false;
    double deadline_ = 0;
    std::string ans_;  // the front request's answer so far
    size_t want_ = kAnswerHeader;
    bool have_header_ = false;
};

Helper &the_helper()
{
    static Helper *h = new Helper;  // never destroyed: the helper dies with us
    return *h;
}

}  // namespace

bool jit_helper_enabled() { return strcmp(config_get("XRDMA_JIT_HELPER"), "none") != 0; }

void jit_helper_submit(const std::string &key, const uint8_t *bitcode, size_t size, unsigned opt_level,
                       const std::string &what)
{
    the_helper().submit(key, bitcode, size, opt_level, what, true);
}

unsigned jit_helper_poll() { return the_helper().poll_now(); }
bool jit_helper_done(const std::string &key) { return the_helper().done(key); }
void jit_helper_release(const std::string &key) { the_helper().release(key); }

ucx_ifunc_status_t jit_helper_compile(const std::string &key, const uint8_t *bitcode, size_t size,
                                      unsigned opt_level, const std::string &what, std::string *object,
                                      std::string *meta, std::string *why)
{
    return the_helper().compile(key, bitcode, size, opt_level, what, object, meta, why);
}

int jit_helper_serve(int fd, JitCompileFn compile)
{
    for (;;) {
        uint32_t hdr[3];
        uint64_t n;
        if (!read_all(fd, hdr, sizeof(hdr))) return 0;  // the target closed: done
        if (hdr[0] != kMagic || hdr[2] > 65536 || !read_all(fd, &n, sizeof(n)) || n > kMaxBytes) return 2;
        std::string what(hdr[2], '\0');
        std::vector<uint8_t> bc(n);
        if (!read_all(fd, what.data(), what.size()) || !read_all(fd, bc.data(), bc.size())) return 2;
        std::string object, meta, why;
        ucx_ifunc_status_t st = compile(bc.data(), bc.size(), hdr[1], what, &object, &meta, &why);
        if (why.size() > 65536) why.resize(65536);
        std::string ans;
        int32_t status = st;
        uint32_t why_len = uint32_t(st == UCX_IFUNC_OK ? 0 : why.size());
        uint64_t obj_len = st == UCX_IFUNC_OK ? object.size() : 0, meta_len = st == UCX_IFUNC_OK ? meta.size() : 0;
        put(&ans, &status, 4);
        put(&ans, &why_len, 4);
        put(&ans, &obj_len, 8);
        put(&ans, &meta_len, 8);
        if (st != UCX_IFUNC_OK) ans += why;
        if (!send_all(fd, ans.data(), ans.size())) return 3;
        if (st == UCX_IFUNC_OK && (!send_all(fd, object.data(), object.size()) || !send_all(fd, meta.data(), meta.size())))
            return 3;
    }
}

}  // namespace xrdma
