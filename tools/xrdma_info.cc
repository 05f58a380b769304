// xrdma_info: what this XRDMA build is made of and what it can use here.
// In the spirit of ucx_info: versions (-v), UCX transports/devices (-d),
// machine topology (-t) and every XRDMA_* knob (-c). A section that fails
// prints why and lets the others run.

#include "xrdma_config.h"

#include "xrdma_common/config.h"
#include "ucx_ifunc.h"

#include <hwloc.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

// The library's own version function may not exist yet in every build of
// libucx_ifunc: a weak reference keeps the tool linkable and lets it use the
// function when the library provides one.
extern "C" const char *ucx_ifunc_version(void) __attribute__((weak));

namespace {

const char *program_name = "xrdma_info";

void usage(FILE *out)
{
    fprintf(out,
            "Usage: %s [-v] [-d] [-t] [-c] [-a] [-h]\n"
            "Show how XRDMA was built and what it can use on this machine.\n"
            "\n"
            "  -v  version and build configuration\n"
            "  -d  UCX transports and devices, one transport/device per line\n"
            "      (no option: -v -d)\n"
            "  -t  hardware topology summary and the CPUs this process may use\n"
            "  -c  every XRDMA_* environment knob: meaning, default, value\n"
            "  -a  all of the above\n"
            "  -h  this help\n",
            program_name);
}

// ---------------------------------------------------------------- -v

std::string hwloc_version_string(unsigned v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
    return buf;
}

bool print_version()
{
    const char *lib_version = ucx_ifunc_version ? ucx_ifunc_version() : nullptr;
    printf("# XRDMA version %s\n", PACKAGE_VERSION);
    printf("# libucx_ifunc version %s\n",
           lib_version ? lib_version : PACKAGE_VERSION);
    printf("# UCX version %s (running), built against %s\n",
           ucp_get_version_string(), XRDMA_UCX_VERSION);
    printf("# LLVM version %s\n", XRDMA_LLVM_VERSION);
    // hwloc exposes only its API version at run time, not its release.
    printf("# hwloc version %s (built against)\n", XRDMA_HWLOC_VERSION);
    printf("# hwloc API %s (running), built against %s\n",
           hwloc_version_string(hwloc_get_api_version()).c_str(),
           hwloc_version_string(HWLOC_API_VERSION).c_str());
    printf("# clang %s\n", XRDMA_CLANG);
    // The MPI layer serves one MPI (configure --with-mpi); the flush skip
    // needs Open MPI's one-sided component table (xrdma(7), MPI LIBRARIES).
    printf("# MPI: built for %s %s (%s); XRDMA_FLUSH_SKIP %s\n", XRDMA_MPI_NAME, XRDMA_MPI_VERSION, XRDMA_MPICC,
           XRDMA_HAVE_OSC_TABLE ? "takes effect" : "has no effect (no Open MPI component table to wrap)");
    return true;
}

// ---------------------------------------------------------------- -d

const char *device_type_name(uct_device_type_t type)
{
    switch (type) {
    case UCT_DEVICE_TYPE_NET:  return "network";
    case UCT_DEVICE_TYPE_SHM:  return "shared memory";
    case UCT_DEVICE_TYPE_ACC:  return "accelerator";
    case UCT_DEVICE_TYPE_SELF: return "loopback";
    default:                   return "unknown";
    }
}

struct ComponentListDeleter {
    void operator()(uct_component_h *list) const { uct_release_component_list(list); }
};
struct MdConfigDeleter {
    void operator()(uct_md_config_t *config) const { uct_config_release(config); }
};
struct MdDeleter {
    void operator()(uct_md *md) const { uct_md_close(md); }
};
struct TlResourceDeleter {
    void operator()(uct_tl_resource_desc_t *list) const { uct_release_tl_resource_list(list); }
};

void warn_ucx(const char *what, const char *name, ucs_status_t status)
{
    fprintf(stderr, "%s: %s %s: %s\n", program_name, what, name,
            ucs_status_string(status));
}

// Lists the transports of one memory domain; false if it could not be opened.
bool print_md_transports(uct_component_h component, const char *md_name)
{
    uct_md_config_t *raw_config = nullptr;
    ucs_status_t status = uct_md_config_read(component, nullptr, nullptr, &raw_config);
    if (status != UCS_OK) {
        warn_ucx("cannot read the configuration of memory domain", md_name, status);
        return false;
    }
    std::unique_ptr<uct_md_config_t, MdConfigDeleter> config(raw_config);

    uct_md_h raw_md = nullptr;
    status = uct_md_open(component, md_name, config.get(), &raw_md);
    if (status != UCS_OK) {
        warn_ucx("cannot open memory domain", md_name, status);
        return false;
    }
    std::unique_ptr<uct_md, MdDeleter> md(raw_md);

    uct_tl_resource_desc_t *raw_resources = nullptr;
    unsigned num_resources = 0;
    status = uct_md_query_tl_resources(md.get(), &raw_resources, &num_resources);
    if (status != UCS_OK) {
        warn_ucx("cannot query the transports of memory domain", md_name, status);
        return false;
    }
    std::unique_ptr<uct_tl_resource_desc_t, TlResourceDeleter> resources(raw_resources);

    for (unsigned i = 0; i < num_resources; ++i) {
        const uct_tl_resource_desc_t &r = resources.get()[i];
        char name[UCT_TL_NAME_MAX + UCT_DEVICE_NAME_MAX + 2];
        snprintf(name, sizeof(name), "%s/%s", r.tl_name, r.dev_name);
        printf("%-32s # %s, memory domain %s\n", name, device_type_name(r.dev_type),
               md_name);
    }
    return true;
}

bool print_devices()
{
    uct_component_h *raw_components = nullptr;
    unsigned num_components = 0;
    ucs_status_t status = uct_query_components(&raw_components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "%s: cannot list UCX components: %s\n", program_name,
                ucs_status_string(status));
        return false;
    }
    std::unique_ptr<uct_component_h, ComponentListDeleter> components(raw_components);

    printf("# UCX transports and devices (transport/device)\n");
    for (unsigned c = 0; c < num_components; ++c) {
        uct_component_h component = components.get()[c];
        uct_component_attr_t attr = {};
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        status = uct_component_query(component, &attr);
        if (status != UCS_OK) {
            fprintf(stderr, "%s: cannot query UCX component %u: %s\n", program_name, c,
                    ucs_status_string(status));
            continue;
        }
        if (attr.md_resource_count == 0) {
            continue; // compiled in, but nothing to drive on this machine
        }
        std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        attr.md_resources = mds.data();
        status = uct_component_query(component, &attr);
        if (status != UCS_OK) {
            warn_ucx("cannot list the memory domains of component", attr.name, status);
            continue;
        }
        for (const uct_md_resource_desc_t &md : mds) {
            print_md_transports(component, md.md_name); // failures already reported
        }
    }
    return true;
}

// ---------------------------------------------------------------- -t

struct TopologyDeleter {
    void operator()(hwloc_topology *topology) const { hwloc_topology_destroy(topology); }
};
struct BitmapDeleter {
    void operator()(hwloc_bitmap_s *bitmap) const { hwloc_bitmap_free(bitmap); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

std::string cpuset_string(hwloc_const_bitmap_t set)
{
    char *text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) {
        return "?";
    }
    std::string result = text;
    free(text);
    return result;
}

bool print_topology()
{
    hwloc_topology_t raw_topology = nullptr;
    if (hwloc_topology_init(&raw_topology) != 0) {
        fprintf(stderr, "%s: hwloc_topology_init failed: %s\n", program_name,
                strerror(errno));
        return false;
    }
    std::unique_ptr<hwloc_topology, TopologyDeleter> topology(raw_topology);
    if (hwloc_topology_load(topology.get()) != 0) {
        fprintf(stderr, "%s: hwloc_topology_load failed: %s\n", program_name,
                strerror(errno));
        return false;
    }

    struct {
        const char *label;
        hwloc_obj_type_t type;
    } const counts[] = {
        {"packages", HWLOC_OBJ_PACKAGE},
        {"NUMA nodes", HWLOC_OBJ_NUMANODE},
        {"cores", HWLOC_OBJ_CORE},
        {"PUs", HWLOC_OBJ_PU},
    };
    printf("# Topology\n");
    for (const auto &c : counts) {
        int n = hwloc_get_nbobjs_by_type(topology.get(), c.type);
        if (n < 0) {
            printf("#   %-12s several levels\n", c.label);
        } else {
            printf("#   %-12s %d\n", c.label, n);
        }
    }

    // What the OS (cgroups, the container) lets this process use at all.
    hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topology.get());
    printf("#   %-12s %s (%d PUs)\n", "allowed", cpuset_string(allowed).c_str(),
           hwloc_bitmap_weight(allowed));

    // What it is bound to (taskset, mpirun --bind-to): where it will run.
    Bitmap bound(hwloc_bitmap_alloc());
    if (!bound) {
        fprintf(stderr, "%s: out of memory\n", program_name);
        return false;
    }
    if (hwloc_get_cpubind(topology.get(), bound.get(), HWLOC_CPUBIND_PROCESS) != 0) {
        fprintf(stderr, "%s: cannot read the CPU binding: %s\n", program_name,
                strerror(errno));
        return false;
    }
    printf("#   %-12s %s (%d PUs)\n", "bound to", cpuset_string(bound.get()).c_str(),
           hwloc_bitmap_weight(bound.get()));
    return true;
}

// ---------------------------------------------------------------- -c

bool print_config()
{
    printf("# XRDMA environment knobs (meaning, default, value in effect)\n");
    for (const xrdma::Knob *k : xrdma::config_knobs()) {
        const char *env = getenv(k->name);
        bool from_env = env && *env; // config_get() ignores empty values too
        printf("#\n");
        printf("# %s\n", k->description);
        printf("# default: %s%s\n", k->default_value,
               from_env ? " (current value set in the environment)" : "");
        printf("%s=%s\n", k->name, xrdma::config_get(k->name));
    }
    return true;
}

}  // namespace

int main(int argc, char **argv)
{
    bool version = false, devices = false, topology = false, config = false;
    int opt;
    opterr = 0; // we print our own message
    while ((opt = getopt(argc, argv, "vdtcah")) != -1) {
        switch (opt) {
        case 'v': version = true; break;
        case 'd': devices = true; break;
        case 't': topology = true; break;
        case 'c': config = true; break;
        case 'a': version = devices = topology = config = true; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "%s: unknown option -%c\n", program_name, optopt);
            usage(stderr);
            return 1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", program_name, argv[optind]);
        usage(stderr);
        return 1;
    }
    // No option: the build and the transports, what a new user asks first.
    if (!version && !devices && !topology && !config) {
        version = devices = true;
    }

    // Sections run in a fixed order whatever the order of the options; a
    // failed section does not stop the next one.
    bool (*const sections[])() = {
        version ? print_version : nullptr,
        devices ? print_devices : nullptr,
        topology ? print_topology : nullptr,
        config ? print_config : nullptr,
    };
    bool ok = true, first = true;
    for (auto section : sections) {
        if (!section) {
            continue;
        }
        if (!first) {
            printf("#\n");
        }
        first = false;
        ok = section() && ok;
    }
    fflush(stdout);
    return ok ? 0 : 2;
}
