// One logging facility for all of XRDMA; level from XRDMA_LOG_LEVEL.
#pragma once

namespace xrdma {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

LogLevel log_level();
void log_message(LogLevel level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace xrdma

#define XRDMA_LOG(lvl, ...)                                                    \
    do {                                                                       \
        if (static_cast<int>(lvl) <= static_cast<int>(::xrdma::log_level()))  \
            ::xrdma::log_message(lvl, __FILE__, __LINE__, __VA_ARGS__);        \
    } while (0)
#define XRDMA_ERROR(...) XRDMA_LOG(::xrdma::LogLevel::error, __VA_ARGS__)
#define XRDMA_WARN(...)  XRDMA_LOG(::xrdma::LogLevel::warn, __VA_ARGS__)
#define XRDMA_INFO(...)  XRDMA_LOG(::xrdma::LogLevel::info, __VA_ARGS__)
#define XRDMA_DEBUG(...) XRDMA_LOG(::xrdma::LogLevel::debug, __VA_ARGS__)
