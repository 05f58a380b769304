// XRDMA_* environment knobs: each layer registers a table of its own, with
// default and meaning of every knob (these utilities': common/knobs.cc);
// xrdma_info -c prints them all. Code reads knobs only through config_get().
#pragma once

#include <cstddef>
#include <vector>

namespace xrdma {

struct Knob {
    const char *name;
    const char *default_value;
    const char *description;
};

// Add a layer's knobs: @p table ends with a {nullptr, ...} entry and lives
// as long as the process. Register before any of them is read (a load-time
// constructor); registering a table again does nothing.
void config_register(const Knob *table);

// Every registered knob, table by table in registration order.
std::vector<const Knob *> config_knobs();

// Value of a knob: the environment's if set, else its default. Asking for a
// name no registered table has is a programming error (aborts).
const char *config_get(const char *name);

// Integer value (strtoull with base 0); the default if unparsable (warns).
unsigned long long config_get_ull(const char *name);

}  // namespace xrdma
