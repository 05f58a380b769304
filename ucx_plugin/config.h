// Every XRDMA_* environment knob, with its default and meaning, in one table
// (printed by xrdma_info -c). Code reads knobs only through config_get().
#pragma once

#include <cstddef>

namespace xrdma {

struct Knob {
    const char *name;
    const char *default_value;
    const char *description;
};

// All knobs; the table ends with a {nullptr, ...} entry.
const Knob *config_knobs();

// Value of a knob: the environment's if set, else its default. Asking for a
// name not in the table is a programming error (aborts).
const char *config_get(const char *name);

// Integer value (strtoull with base 0); the default if unparsable (warns).
unsigned long long config_get_ull(const char *name);

}  // namespace xrdma
