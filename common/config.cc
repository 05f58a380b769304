#include "xrdma_common/config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace xrdma {

namespace {

struct Registry {
    std::mutex mu;
    std::vector<const Knob *> tables;
};

Registry &registry()
{
    static Registry r;
    return r;
}

const Knob *find(const char *name)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> guard(r.mu);
    for (const Knob *t : r.tables)
        for (const Knob *k = t; k->name; ++k)
            if (strcmp(k->name, name) == 0) return k;
    return nullptr;
}

}  // namespace

void config_register(const Knob *table)
{
    Registry &r = registry();
    std::lock_guard<std::mutex> guard(r.mu);
    for (const Knob *t : r.tables)
        if (t == table) return;
    r.tables.push_back(table);
}

std::vector<const Knob *> config_knobs()
{
    Registry &r = registry();
    std::lock_guard<std::mutex> guard(r.mu);
    std::vector<const Knob *> all;
    for (const Knob *t : r.tables)
        for (const Knob *k = t; k->name; ++k) all.push_back(k);
    return all;
}

const char *config_get(const char *name)
{
    const Knob *k = find(name);
    if (!k) {
        fprintf(stderr, "xrdma: internal error: unknown knob %s\n", name);
        abort();
    }
    const char *v = getenv(name);
    return (v && *v) ? v : k->default_value;
}

unsigned long long config_get_ull(const char *name)
{
    const char *v = config_get(name);
    char *end = nullptr;
    unsigned long long x = strtoull(v, &end, 0);
    if (end == v || *end != '\0') {
        const char *dflt = find(name)->default_value;
        fprintf(stderr, "xrdma: %s=%s is not a number; using %s\n", name, v, dflt);
        return strtoull(dflt, nullptr, 0);
    }
    return x;
}

}  // namespace xrdma
