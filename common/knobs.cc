// The knobs of the common utilities (xrdma_common/config.h explains tables).
#include "xrdma_common/config.h"

namespace xrdma {

namespace {

const Knob knobs[] = {
    {"XRDMA_LOG_LEVEL", "warn", "Logging threshold: error, warn, info or debug."},
    {nullptr, nullptr, nullptr},
};

// First of all (the layers' tables use later priorities), before any static
// initialiser could read a knob.
__attribute__((constructor(101))) void register_knobs() { config_register(knobs); }

}  // namespace

}  // namespace xrdma
